#!/bin/bash
# The example job of docs/USER-GUIDE.md: examples/train.sbatch running
# examples/train_ddp.py (PyTorch DDP on CPU, gloo) on 2 of 3 simulated
# nodes through the real CLI. It checkpoints; a GPU of one of its nodes
# fails and it restarts on the other two from its last checkpoint; it is
# requeued, checkpoints on the signal and resumes from that one; it
# finishes, with the same weights on both ranks, equal to those of a run
# that was never interrupted (the data of each step comes from a fixed
# seed, so a resume that lost or redid a step would differ).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

"$PYTHON" -c 'import torch, torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null || {
	echo "SKIP: $PYTHON cannot import torch with gloo (apt-get install python3-torch)"
	exit 77
}
# The failure, the requeue and the restarts are what this test is about.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING'
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu 0 FAILED'

STEPS=100
TRAIN_ARGS="--step-time 0.05 --checkpoint-every 20"
export STEPS TRAIN_ARGS

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 1 --nodes-per-leaf 3
W=$(world_dir work)
CK=$(world_dir ckpt)
# Copies: the tasks may run as nobody, who may not read the checkout.
install -m 644 "$top_srcdir/examples/train_ddp.py" "$top_srcdir/examples/train.sbatch" "$W/" ||
	fail "cannot copy the examples"

cd "$W"
id=$(job_submit --checkpoint-dir "$CK/ddp" train.sbatch)
cd "$T"
wait_job 30 "$id" 'd["state"] == "RUNNING" and d["checkpoint"] is not None and d["checkpoint"]["step"] >= 20'
first_ckpt=$(json_get "$T/job-$id.json" 'd["checkpoint"]["step"]')
node=$(json_get "$T/job-$id.json" 'd["placement"][1]["node"]')
log "checkpoint at step $first_ckpt; failing GPU 0 of $node"

# A hardware failure: the job restarts on the two healthy nodes.
cohort-local fail "$C" "$node" gpu 0 xid=79 || fail "cohort-local fail $node"
wait_job 30 "$id" 'd["restarts"] >= 1 and d["state"] == "RUNNING"'
job_expr "$id" "'$node' not in [p['node'] for p in d['placement']]" ||
	fail "job $id restarted on the failed node $node: $(json_get "$T/job-$id.json" 'd["placement"]')"

# A requeue: the checkpoint signal (USR1), a new checkpoint, back to
# PENDING, and on again from that checkpoint.
# (At once: the more steps are left, the surer the signal comes first.)
wait_for 30 grep -q "resumed from checkpoint step" "$C"/node*/spool/jobs/"$id".2/rank-0.log ||
	fail "the restarted run did not say it resumed"
job_show "$id"
before=$(json_get "$T/job-$id.json" 'd["checkpoint"]["step"]')
expect_exit 0 cohort requeue "$id"
wait_job 30 "$id" "d['checkpoint']['step'] > $before"
wait_job 60 "$id" 'd["state"] == "COMPLETED"'

# The story, from rank 0's ledger in the checkpoint directory and its
# logs: three runs, each from the checkpoint the controller handed over.
runs=$(cut -d' ' -f1 "$CK/ddp/runs" | paste -sd' ' -)
log "runs started at steps: $runs; checkpoints: $(paste -sd' ' - <"$CK/ddp/checkpoints")"
[ "$(wc -l <"$CK/ddp/runs")" -eq 3 ] || fail "expected 3 runs (first, after the failure, after the requeue), got: $runs"
read -r r0 r1 r2 <<<"$runs"
[ "$r0" -eq 0 ] || fail "the first run started at step $r0"
[ "$r1" -ge 20 ] && grep -qx "$r1" "$CK/ddp/checkpoints" ||
	fail "the run after the failure started at step $r1, not at a checkpoint the first run wrote"
[ "$r2" -gt "$r1" ] && grep -qx "$r2" "$CK/ddp/checkpoints" ||
	fail "the run after the requeue started at step $r2, not at a later checkpoint"
cat "$C"/node*/spool/jobs/"$id".*/rank-0.log >"$T/rank0.log"
# The signal's checkpoint, or a later one the agent saw first (it reads
# LATEST about once a second): what the requeue waited for.
usr1=$(sed -n 's/^train_ddp: rank 0: checkpoint at step \([0-9]*\): .*(asked for by SIGUSR1)$/\1/p' "$T/rank0.log")
[ -n "$usr1" ] || fail "rank 0 wrote no checkpoint on SIGUSR1: $(grep checkpoint "$T/rank0.log")"
[ "$usr1" -gt "$before" ] && [ "$r2" -ge "$usr1" ] ||
	fail "requeued at checkpoint $before, SIGUSR1 checkpoint at $usr1, resumed from $r2"
grep -q "resumed from checkpoint step $r2 " "$T/rank0.log" || fail "no resume from step $r2 in rank 0's log"
grep -q "SIGTERM: stopping" "$T/rank0.log" || fail "rank 0 did not stop on SIGTERM at the requeue"

# The same weights on both ranks, and as if never interrupted.
final() {
	cat "$C"/node*/spool/jobs/"$id".*/rank-"$1".log |
		sed -n "s/^train_ddp: rank $1: finished: step $STEPS\/$STEPS, .* weights \([-0-9.]*\)$/\1/p"
}
w0=$(final 0)
w1=$(final 1)
[ -n "$w0" ] && [ "$w0" = "$w1" ] || fail "ranks finished with weights '$w0' and '$w1'"
# The uninterrupted run, here: two processes, no sleeps.
port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for r in 0 1; do
	env -u COHORT_CHECKPOINT_DIR -u COHORT_RESUME_CHECKPOINT RANK=$r WORLD_SIZE=2 \
		MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
		"$PYTHON" "$top_srcdir/examples/train_ddp.py" --steps "$STEPS" --step-time 0 \
		>"$T/ref.$r" 2>&1 &
	track_pid $!
done
wait_for 60 grep -q finished "$T/ref.0" ||
	fail "the reference run did not finish: $(tail -n 3 "$T/ref.0" "$T/ref.1")"
wait_for 60 grep -q finished "$T/ref.1" || fail "rank 1 of the reference run did not finish: $(tail -n 3 "$T/ref.1")"
ref=$(sed -n 's/^train_ddp: rank 0: finished: .* weights \([-0-9.]*\)$/\1/p' "$T/ref.0")
[ "$w0" = "$ref" ] || fail "the job finished with weights $w0; an uninterrupted run gives $ref"
log "weights $w0 on both ranks, as uninterrupted; ok"
