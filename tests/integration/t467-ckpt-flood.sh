#!/bin/bash
# Checkpoint reports are applied once per job per heartbeat, and a job's
# checkpoint changes at most once a second: with the node of rank 0's own
# agent certificate (its agent stopped), one heartbeat listing 4,096
# checkpoints of the job (the highest step not last) records the highest
# step with one event; 40 such heartbeats in about 2 s record a few, not
# 160,000 rows and events; the last one still gets recorded.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
# A 30 s node timeout: between the pyclient runs that stand in for the
# killed agent, nothing heartbeats for the node.
COHORT_LOCAL_NODE_TIMEOUT=30s cluster_up "$C" --nodes 1 --gpus 2
W=$(world_dir work)
id=$(job_submit --name victim --nodes 1 --gpus-per-node 2 --checkpoint-dir "$W/ckpt" -- sleep 600)
wait_state 20 "$id" RUNNING
X=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
wait_pidfiles 10 "$C" "$id" 1
pidfile=$(job_pidfiles "$C" "$id")
d=${pidfile%/rank-*}
att=${d##*.}
[[ "$att" =~ ^[1-9][0-9]*$ ]] || fail "cannot read the attempt from $pidfile"
cohort-local kill "$C" "$X" >"$T/kill.out" 2>&1 || fail "cohort-local kill $X: $(cat "$T/kill.out")"
hbflood() {
	pyclient --server "$COHORT_SERVER" --cert "$C/agent-$X.crt" --key "$C/agent-$X.key" \
		--ca "$C/ca.pem" hbflood --gpus 2 --task "$id:$att:0" --ckpt "$id:$att:4096" "$@"
}
ckpt_events() {
	expect_exit 0 cohort events --job "$id" --json
	json_get "$OUT" 'sum(1 for e in d["events"] if e["kind"] == "checkpoint")'
}
has_step() {
	job_show "$id"
	[ "$(json_get "$T/job-$id.json" '(d["checkpoint"] or {}).get("step")')" = "$1" ]
}

hbflood --beats 1 --hold 1 >"$T/h1.out" 2>&1 || fail "pyclient hbflood: $(cat "$T/h1.out")"
wait_for 10 has_step 4096 || fail "the highest step of the heartbeat was not recorded: $(json_get "$T/job-$id.json" 'd["checkpoint"]')"
n=$(ckpt_events)
[ "$n" = 1 ] || fail "one heartbeat of 4,096 checkpoints made $n checkpoint events, expected 1"

# 40 heartbeats, 8 every 0.4 s: steps up to 41 * 4096.
t0=$(_now_us)
hbflood --beats 40 --every-s 0.4 --hold 1.5 >"$T/h2.out" 2>&1 || fail "pyclient hbflood: $(cat "$T/h2.out")"
secs=$((($(_now_us) - t0 + 999999) / 1000000))
n=$(ckpt_events)
log "40 heartbeats of 4,096 checkpoints each over $secs s: $n checkpoint events in all"
# At most about one a second (the first heartbeat's, then the rate
# limit), however long a loaded machine took to send them.
[ "$n" -le $((secs + 3)) ] || fail "$n checkpoint events for 41 heartbeats in $secs s, expected a few"
[ "$n" -ge 2 ] || fail "the checkpoints of later heartbeats were never recorded ($n events)"
job_show "$id"
step=$(json_get "$T/job-$id.json" 'd["checkpoint"]["step"]')
[ "$step" -gt 4096 ] || fail "the job's checkpoint stayed at step $step"
exit 0
