#!/bin/bash
# kill -9 of the agent of a running job's rank-0 node (node_timeout 5s):
#  - the node is DOWN within the node timeout (plus a heartbeat);
#  - the job restarts elsewhere from its checkpoint and completes, rank 0
#    verifying that no step was skipped;
#  - the tasks the agent ran survive it (by design), but when the agent
#    comes back after being declared DOWN, it stops them: the attempt that
#    was restarted elsewhere does not run twice.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The agent this test kills goes DOWN; its job restarts.
expect_log_error 'cohortd: warning: node node[0-9]+: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*went DOWN \(no heartbeat'

export COHORT_LOCAL_NODE_TIMEOUT=5s
C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2 --nodes-per-leaf 2
W=$(world_dir work)
FT=$(fake_train "$W")

# 600 steps of 0.1 s: the old attempt would run ~60 s on its own, long
# enough to see whether the returning agent stops it (150 steps were
# not: under ASan on a loaded machine DOWN came 7 s after the kill, and
# the old attempt reached its end before its agent was back).
id=$(job_submit --name t220 --nodes 2 --max-restarts 3 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$FT" 600 0.1 10)
wait_state 20 "$id" RUNNING
wait_job 20 "$id" 'd["checkpoint"] is not None and d["checkpoint"]["step"] >= 10'
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
attempt1=$(find "$C/$node/spool/jobs" -maxdepth 1 -name "$id.*" | head -n 1)
[ -r "$attempt1/rank-0.pid" ] || fail "no rank-0.pid under $C/$node/spool/jobs for job $id: $(ls -R "$C/$node/spool")"
read -r sup pgid <"$attempt1/rank-0.pid"
log "job $id rank 0 runs on $node (supervisor $sup, task group $pgid); killing its agent"

t0=$(_now_us)
cohort-local kill "$C" "$node" >"$T/kill.out" 2>&1 || fail "cohort-local kill $node: $(cat "$T/kill.out")"
pgid_alive "$pgid" || fail "the task ($pgid) died with its agent"

# DOWN within node_timeout (5 s) plus a heartbeat; a loaded sanitizer
# run has taken 7 s.
wait_node 30 "$node" 'n["state"] == "DOWN"'
log "$node DOWN $((($(_now_us) - t0) / 1000)) ms after the kill"
expect_exit 0 cohort events --node "$node" --json
json_get "$OUT" '[e["detail"] for e in d["events"] if e["kind"] == "node-down"]' >"$T/down"
grep -q . "$T/down" && [ "$(cat "$T/down")" != "[]" ] || fail "no node-down event for $node: $(cat "$OUT")"
log "node-down: $(cat "$T/down")"

# The job restarts on the other nodes.
wait_job 30 "$id" 'd["restarts"] >= 1 and d["state"] in ("RUNNING", "COMPLETED")'
json_get "$T/job-$id.json" '[p["node"] for p in d["placement"]]' | grep -q "\"$node\"" &&
	fail "job $id restarted on the DOWN node $node: $(json_get "$T/job-$id.json" 'd["placement"]')"
pgid_alive "$pgid" ||
	fail "the old attempt's task ($pgid) ended before its agent came back: nothing left to check"

# The agent comes back; the old attempt's task must go.
cohort-local start "$C" "$node" >"$T/start.out" 2>&1 || fail "cohort-local start $node: $(cat "$T/start.out")"
wait_for 20 not pgid_alive "$pgid" ||
	fail "the returning agent on $node left the old attempt of job $id running (task group $pgid, $(pgrep -g "$pgid" -a | head -n 3))"
wait_for 15 proc_gone "$sup" || fail "the old attempt's supervisor ($sup) is still there"
wait_node 15 "$node" 'n["state"] == "UP"'
# The old attempt is gone: the rest of the steps are only a wait.
ft_hurry "$W/ckpt"

# The restarted attempt was not disturbed and completes.
wait_state 40 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after its node went DOWN"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id has $(json_get "$T/job-$id.json" 'd["restarts"]') restarts, not 1"
expect_exit 0 cohort logs "$id" --rank 0
grep -q '^fake-train: verified 600 steps' "$OUT" ||
	fail "rank 0 of job $id did not verify its steps: $(tail -n 5 "$OUT")"
log "$(grep '^fake-train: verified' "$OUT")"
# Two runs in the ledger, and the old one never reached the end.
[ "$(wc -l <"$W/ckpt/runs")" -eq 2 ] || fail "job $id ran $(wc -l <"$W/ckpt/runs") times, not 2: $(cat "$W/ckpt/runs")"
[ "$(tail -n 1 "$W/ckpt/run-0.steps")" -lt 600 ] || fail "the old attempt of job $id ran to the end"
exit 0
