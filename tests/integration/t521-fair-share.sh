#!/bin/bash
# Fair share between two borrowing queues: x and y own no GPUs
# (everything they use is borrowed); x has used the cluster, y has not.
# When both wait for the same GPUs, y's job goes first although x's was
# submitted first with the same limit; cohort queues shows x's lower
# fair-share factor.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

export COHORT_LOCAL_CONTROLLER_CONF='[queue x]
gpus = 0
users = alice
[queue y]
gpus = 0
users = bob'
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)

queues_expr() {
	cohort queues --json 2>/dev/null | "$PYTHON" -c 'import json,sys
q = {r["name"]: r for r in json.load(sys.stdin)["queues"]}
sys.exit(0 if eval(sys.argv[1], {"q": q}) else 1)' "$1" 2>/dev/null
}

# x uses the whole cluster until $W/go exists: its usage grows.
as_user "$C" alice
hold=$(job_submit --queue x --name hold --nodes 2 --time 10m -- \
	sh -c "while [ ! -e '$W/go' ]; do sleep 0.1; done")
wait_state 20 "$hold" RUNNING
wait_for 15 queues_expr 'q["x"]["factor"] < q["y"]["factor"]' || {
	cohort queues --json >&2
	fail "x's fair-share factor does not fall below y's while x runs"
}
# Both wait for the whole cluster; x's job first.
first=$(job_submit --queue x --name x-next --nodes 2 --time 10m -- true)
as_user "$C" bob
second=$(job_submit --queue y --name y-next --nodes 2 --time 10m -- sh -c 'sleep 1')
wait_job 10 "$second" 'd["state"] == "PENDING" and d["reason"] not in ("", "Launching")'
touch "$W/go"
wait_state 20 "$second" RUNNING COMPLETED
as_user "$C" alice
wait_state 30 "$first" COMPLETED
# By their start times (ISO seconds): y's job sleeps 1 s and holds the
# whole cluster, so x's, started after it, shows a later second. (Not
# "x's is still PENDING when y's runs": on a loaded machine y's second
# may be over before this script looks.)
cohort show "$second" --json >"$T/second.json" || fail "cohort show $second"
y_start=$(json_get "$T/second.json" 'd["start_time"]')
x_start=$(json_get "$T/job-$first.json" 'd["start_time"]')
[[ "$x_start" > "$y_start" ]] || fail "x's job ran before y's: x started $x_start, y $y_start"
log "y's job $second went first ($y_start; x's $first at $x_start): x has used more ($(cohort queues 2>&1 | tr '\n' ' '))"
exit 0
