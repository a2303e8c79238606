#!/bin/bash
# Goodput of a job restarted once after a GPU failure (cohort-local fail
# ... gpu 3 xid=79):
#  - cohort show --json's goodput: 0 < ettr < 1, work lost and restart
#    time counted, and the parts add up to the time from its first start
#    (the first "running" event) to its end;
#  - cohort show prints the Goodput line with the reported checkpoint
#    cost (--json: checkpoint_cost_s 0.05), cohort jobs --format has ettr;
#  - every start of the job found $COHORT_CHECKPOINT_ADVICE_FILE holding
#    a positive number of seconds, as checkpoint_advice_s says;
#  - the job reports its checkpoints' cost (CKPT_MS): it counts as
#    checkpoint time, the advice falls from what the launch assumed, and
#    the file the running job reads is rewritten to the new advice;
#  - /metrics has the cluster's goodput by kind.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The injected XID 79 fails a GPU; its job restarts.
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 1 of [0-9]+, .*xid=79'

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 4 --nodes-per-leaf 2
W=$(world_dir work)
FT=$(fake_train "$W")
# Each start says what the advice file held, then trains, reporting each
# checkpoint's cost as 50 ms; meanwhile it says whenever the file changes
# (until the training ends).
cat >"$W/advised.sh" <<'SH'
f=${COHORT_CHECKPOINT_ADVICE_FILE:-}
echo "advice: file='$f' value='$(cat "$f" 2>/dev/null)'"
(
	last=
	while kill -0 $$ 2>/dev/null; do
		v=$(cat "$f" 2>/dev/null)
		if [ -n "$v" ] && [ "$v" != "$last" ]; then
			echo "advice now: $v"
			last=$v
		fi
		sleep 0.2
	done
) &
FT_CKPT_MS=50 exec sh "$@"
SH
chmod 644 "$W/advised.sh"

id=$(job_submit --name t860 --nodes 2 --max-restarts 3 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$W/advised.sh" "$FT" 300 0.1 10)
wait_state 20 "$id" RUNNING
wait_job 20 "$id" 'd["checkpoint"] is not None and d["checkpoint"]["step"] >= 10'
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
# The first start found a positive advice in the file its environment
# names (cohort logs shows the current start's output).
advised() {
	expect_exit 0 cohort logs "$id" --rank 0
	grep -Eq "^advice: file='[^']+/checkpoint-advice' value='[1-9][0-9]*'\$" "$OUT" ||
		fail "job $id's $1 start found no positive advice: $(grep '^advice' "$OUT")"
}
advised first
# The cost reported (50 ms, where the launch assumed the job's
# --checkpoint-signal SECS) is checkpoint time, the advice falls, and the
# running job's file follows it.
launched=$(sed -n "s/^advice: file='[^']*' value='\([0-9]*\)'\$/\1/p" "$OUT" | head -n 1)
wait_job 20 "$id" "d['goodput']['checkpoint_s'] > 0 and 0 < d['goodput']['checkpoint_advice_s'] < $launched and d['goodput']['checkpoint_cost_s'] == 0.05"
file_follows() {
	local cur
	cur=$(cohort show "$id" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["goodput"]["checkpoint_advice_s"])') &&
		cohort logs "$id" --rank 0 | grep -qx "advice now: $cur"
}
wait_for 20 file_follows ||
	fail "job $id's advice file never held checkpoint_advice_s ($(json_get "$T/job-$id.json" 'd["goodput"]["checkpoint_advice_s"]')): $(cohort logs "$id" --rank 0 | grep '^advice')"
cohort-local fail "$C" "$node" gpu 3 xid=79 || fail "cohort-local fail $node gpu 3"
wait_job 40 "$id" 'd["restarts"] >= 1 and d["state"] in ("RUNNING", "COMPLETED")'

# While it runs: its ETTR in the listing and the Goodput line.
expect_exit 0 cohort jobs --format id,ettr
grep -Eq "^ *$id +(0\.[0-9]{3}|1\.000)\$" "$OUT" ||
	fail "cohort jobs --format id,ettr has no ETTR for job $id: $(cat "$OUT")"
expect_exit 0 cohort show "$id"
grep -Eq '^ *Goodput: +ETTR [01]\.[0-9]{3}: productive .*, lost .*, restart .*, wait .*, checkpoint [^;]*; last checkpoint took [^;]+; checkpoint every .* advised$' "$OUT" ||
	fail "cohort show $id has no Goodput line: $(grep -i goodput "$OUT")"

ft_hurry "$W/ckpt"
wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id has $(json_get "$T/job-$id.json" 'd["restarts"]') restarts, not 1"
log "job $id: goodput $(json_get "$T/job-$id.json" 'd["goodput"]')"
json_get "$T/job-$id.json" '0 < d["goodput"]["ettr"] < 1 and d["goodput"]["lost_s"] > 0 and d["goodput"]["restart_s"] > 0 and d["goodput"]["checkpoint_advice_s"] > 0' |
	grep -qx true || fail "job $id restarted once: goodput $(json_get "$T/job-$id.json" 'd["goodput"]')"

# The parts add up to its wall time since the first start: from the first
# running event (ms) to the end (the job's end_time, whole seconds).
expect_exit 0 cohort events --job "$id" --json
cp "$OUT" "$T/events.json"
"$PYTHON" - "$T/job-$id.json" "$T/events.json" <<'PY' || fail "job $id: the goodput parts do not add up to its wall time"
import datetime, json, sys
job = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))["events"]
def t(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
first = min(t(e["time"]) for e in ev if e["kind"] == "running")
end = t(job["end_time"])
g = job["goodput"]
parts = sum(g[k] for k in ("productive_s", "lost_s", "restart_s", "wait_s", "checkpoint_s"))
print("parts %.3f s, wall %.3f s (end_time in whole seconds)" % (parts, end - first))
# end_time is cut to the second: the wall time is up to 1 s more.
sys.exit(0 if end - first - 0.01 <= parts <= end - first + 1.01 else 1)
PY

# And so did the restart.
advised second

# The cluster's totals by kind.
curl -fsS "$COHORT_HTTP/metrics" >"$T/metrics" || fail "GET /metrics"
for k in productive lost restart wait checkpoint; do
	grep -Eq "^cohort_goodput_seconds\{kind=\"$k\"\} [0-9.]+\$" "$T/metrics" ||
		fail "/metrics has no cohort_goodput_seconds of kind $k"
done
grep -Eq '^cohort_goodput_seconds\{kind="lost"\} [0-9]*[1-9][0-9]*\.|^cohort_goodput_seconds\{kind="lost"\} 0\.[0-9]*[1-9]' "$T/metrics" ||
	fail "/metrics counts no lost work: $(grep goodput "$T/metrics")"
exit 0
