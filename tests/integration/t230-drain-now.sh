#!/bin/bash
# cohort drain NODE --reason maint --now (admin) under a running 2-node
# training job with --checkpoint-signal USR1@60:
#  - the job is signalled, writes a new checkpoint, and is moved as soon
#    as the controller learns of it (well before the 60 s deadline);
#  - it resumes from that checkpoint elsewhere and completes verified;
#  - a planned move is not a failure: restarts stays 0;
#  - the node is DRAINED once empty, with the reason; users may not drain;
#    resume puts it back.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: drain --now restarts the job elsewhere.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*drained by ops: maint \(checkpoint written\)'

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2 --nodes-per-leaf 2
W=$(world_dir work)
FT=$(fake_train "$W")

# No checkpoints of its own (every 1,000,000 steps): the one it writes
# can only come from the signal. 300 steps, so it cannot end first.
id=$(job_submit --name t230 --nodes 2 --checkpoint-signal USR1@60 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$FT" 300 0.1 1000000)
wait_state 20 "$id" RUNNING
ten_steps() { [ "$(wc -l <"$W/ckpt/run-0.steps" 2>/dev/null || echo 0)" -ge 10 ]; }
wait_for 30 ten_steps || fail "job $id did not get 10 steps done"
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
log "job $id runs on $(json_get "$T/job-$id.json" '[p["node"] for p in d["placement"]]'); draining $node now"

# Users may not drain.
expect_exit 1 cohort drain "$node" --reason maint --now
node_expr "$node" 'n["drain"] is None' || fail "alice's refused drain drained $node"

as_user "$C" admin
t0=$(_now_us)
expect_exit 0 cohort drain "$node" --reason maint --now
as_user "$C" alice
wait_node 15 "$node" 'n["drain"] in ("DRAINING", "DRAINED")'

# The job checkpoints on the signal, then moves. The signal's checkpoint
# is the first checkpoint event of the job.
_sig_step() {
	cohort events --job "$id" --kind checkpoint --json >"$T/ckpt-events.json" 2>"$T/ckpt-events.err" &&
		"$PYTHON" - "$T/ckpt-events.json" >"$T/sig_step" <<'PY'
import json, re, sys
steps = [int(m.group(1)) for e in json.load(open(sys.argv[1]))["events"]
         for m in [re.match(r"step=([0-9]+)\b", e.get("detail") or "")] if m]
if not steps:
    sys.exit(1)
print(min(steps))
PY
}
wait_for 30 _sig_step ||
	fail "job $id: no checkpoint (the signal's) within 30 s: $(cat "$T/ckpt-events.json" "$T/ckpt-events.err")"
sig_step=$(cat "$T/sig_step")
log "checkpoint at step $sig_step after the signal"
wait_for 30 job_expr "$id" "d['state'] in ('RUNNING', 'COMPLETED') and '$node' not in [p['node'] for p in d['placement']]" || {
	job_show "$id"
	fail "job $id did not move off $node within 30 s of its checkpoint: $(json_get "$T/job-$id.json" '[d["state"], d["placement"]]')"
}
ms=$((($(_now_us) - t0) / 1000))
log "job $id moved off $node $ms ms after drain --now"
[ "$ms" -lt 45000 ] || fail "job $id took $ms ms to move: it waited for the deadline, not the checkpoint"
# Moved: the rest of the steps are only a wait.
ft_hurry "$W/ckpt"

wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after drain --now"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 0 ] ||
	fail "a planned move counted as a restart: job $id has $(json_get "$T/job-$id.json" 'd["restarts"]') restarts"
expect_exit 0 cohort logs "$id" --rank 0
grep -q '^fake-train: verified 300 steps over 2 run(s)' "$OUT" ||
	fail "rank 0 of job $id did not verify its steps: $(tail -n 5 "$OUT")"
log "$(grep '^fake-train: verified' "$OUT")"
# The second run started right after the signalled checkpoint.
grep -qx "1 $((sig_step + 1))" "$W/ckpt/runs" ||
	fail "the second run did not resume after step $sig_step: $(cat "$W/ckpt/runs")"

# DRAINED once empty, with who and why.
wait_node 10 "$node" 'n["drain"] == "DRAINED" and not n["jobs"]'
node_expr "$node" '"maint" in n["reason"]' || fail "$node's reason does not say maint: $(cohort nodes --json)"

# Resume: admin only.
expect_exit 1 cohort resume "$node"
as_user "$C" admin
expect_exit 0 cohort resume "$node"
as_user "$C" alice
wait_node 5 "$node" 'n["state"] == "UP" and n["drain"] is None'
exit 0
