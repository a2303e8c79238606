#!/bin/bash
# An elastic --nodes 1:3 training job on 3 nodes:
#  - one node FAILs: the job shrinks and restarts on the 2 left (from its
#    checkpoint, with WORLD_SIZE 2) instead of waiting;
#  - the node is healed and resumed: the job grows back to 3 (RESIZING
#    on the way) and completes, rank 0 verifying that no step was skipped.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: A failed node shrinks the job; growing back restarts it.
expect_log_error 'cohort-agent: warning: health: node FAILED: elastic test'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*(health FAILED: elastic test|growing from [0-9]+ toward [0-9]+ nodes)'

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 2 --nodes-per-leaf 3
W=$(world_dir work)
FT=$(fake_train "$W")

# Rank 0 notes the gang size of each run.
id=$(job_submit --name t250 --nodes 1:3 --max-restarts 3 --checkpoint-dir "$W/ckpt" \
	--workdir "$W" -- sh -c '[ "$RANK" != 0 ] || echo "$COHORT_NNODES $WORLD_SIZE" >>sizes; exec sh "$0" 600 0.1 10' "$FT")
wait_state 20 "$id" RUNNING
[ "$(json_get "$T/job-$id.json" 'len(d["placement"])')" = 3 ] ||
	fail "job $id (1:3) started on $(json_get "$T/job-$id.json" 'd["placement"]'), not 3 nodes"
wait_job 20 "$id" 'd["checkpoint"] is not None and d["checkpoint"]["step"] >= 10'
node=$(json_get "$T/job-$id.json" 'd["placement"][2]["node"]')
log "job $id runs on $(json_get "$T/job-$id.json" '[p["node"] for p in d["placement"]]'); $node fails"

cohort-local fail "$C" "$node" node elastic test || fail "cohort-local fail $node"
wait_node 30 "$node" 'n["health"] == "FAILED" and n["drain"] in ("DRAINING", "DRAINED")'
wait_job 40 "$id" 'd["state"] == "RUNNING" and d["restarts"] >= 1 and len(d["placement"]) == 2'
json_get "$T/job-$id.json" '[p["node"] for p in d["placement"]]' | grep -q "\"$node\"" &&
	fail "job $id kept the failed node $node: $(json_get "$T/job-$id.json" 'd["placement"]')"
[ "$(json_get "$T/job-$id.json" 'd["nodes_now"]')" = 2 ] ||
	fail "job $id runs on 2 nodes but nodes_now is $(json_get "$T/job-$id.json" 'd["nodes_now"]')"
step_shrunk=$(json_get "$T/job-$id.json" 'd["checkpoint"]["step"]')
log "job $id shrank to 2 nodes (checkpoint step $step_shrunk)"
# It keeps running at 2: a new checkpoint comes while it is that size.
wait_job 30 "$id" "d['checkpoint']['step'] > $step_shrunk and d['state'] == 'RUNNING' and len(d['placement']) == 2"

cohort-local heal "$C" "$node" || fail "cohort-local heal $node"
as_user "$C" admin
wait_for 30 cohort resume "$node" || fail "cohort resume $node (admin) kept failing: $(cohort resume "$node" 2>&1)"
as_user "$C" alice
wait_job 40 "$id" 'd["state"] in ("RUNNING", "COMPLETED") and len(d["placement"]) == 3'
log "job $id grew back to $(json_get "$T/job-$id.json" 'd["nodes_now"]') nodes"
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	[ "$(json_get "$T/job-$id.json" 'd["nodes_now"]')" = 3 ] ||
	fail "job $id runs on 3 nodes but nodes_now is $(json_get "$T/job-$id.json" 'd["nodes_now"]')"
# Grown back: the rest of the steps are only a wait.
ft_hurry "$W/ckpt"

wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
expect_exit 0 cohort logs "$id" --rank 0
grep -q '^fake-train: verified 600 steps over 3 run(s)' "$OUT" ||
	fail "rank 0 of job $id did not verify 600 steps over 3 runs: $(tail -n 5 "$OUT")"
log "$(grep '^fake-train: verified' "$OUT")"
[ "$(paste -sd ' ' "$W/sizes")" = "3 3 2 2 3 3" ] ||
	fail "job $id's runs had NNODES/WORLD_SIZE '$(paste -sd ' ' "$W/sizes")', not '3 3 2 2 3 3'"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id has $(json_get "$T/job-$id.json" 'd["restarts"]') restarts: growing must not count"

# The story: restart (shrink), then a resize, then running again.
expect_exit 0 cohort events --job "$id" --json
json_get "$OUT" '[e["kind"] for e in d["events"]]' >"$T/kinds"
"$PYTHON" -c 'import json,sys
k = json.load(open(sys.argv[1]))
r = k.index("restart")
z = k.index("resize", r)
sys.exit(0 if "running" in k[r:z] and "running" in k[z:] else 1)' "$T/kinds" ||
	fail "job $id's events do not show restart, running, resize, running: $(cat "$T/kinds")"
exit 0
