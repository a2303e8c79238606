#!/bin/bash
# Two queues of 4 GPUs on 4 nodes of 2 GPUs:
#  - alice's 8-GPU job in queue a borrows b's idle quota;
#  - bob submits 4 GPUs to b: alice's job gets its checkpoint signal,
#    writes LATEST, is requeued PENDING "Preempted by JOB of b" (no restart
#    counted) and bob's job runs on the freed GPUs within the grace + 1 s;
#  - alice's job resumes from that checkpoint later and completes with no
#    step lost beyond it;
#  - a borrower of a queue with min_runtime is not preempted before it;
#  - a --service of higher priority preempts a training job of its queue;
#  - cohort queues --json adds up.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

export COHORT_LOCAL_CONTROLLER_CONF='[queue a]
gpus = 4
users = alice
admins = admin
preempt = both
[queue b]
gpus = 4
users = bob
[queue c]
gpus = 0
users = alice
min_runtime = 1h'
C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2
W=$(world_dir work)
FT=$(fake_train "$W")

# queues_expr EXPR: EXPR (Python; q maps a queue's name to its row of
# cohort queues --json) holds.
queues_expr() {
	cohort queues --json 2>/dev/null | "$PYTHON" -c 'import json,sys
q = {r["name"]: r for r in json.load(sys.stdin)["queues"]}
sys.exit(0 if eval(sys.argv[1], {"q": q, "sum": sum}) else 1)' "$1" 2>/dev/null
}

# ---- Borrowing, then reclaim with a checkpoint ----
as_user "$C" alice
a=$(job_submit --queue a --name borrower --nodes 4 --checkpoint-signal USR1@20 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$FT" 600 0.1 1000000)
wait_state 20 "$a" RUNNING
# No checkpoints of its own (every 1,000,000 steps): the one it writes is
# the signal's. 600 steps: it cannot end before bob comes.
ten_steps() { [ "$(wc -l <"$W/ckpt/run-0.steps" 2>/dev/null || echo 0)" -ge 10 ]; }
wait_for 30 ten_steps || fail "job $a did not get 10 steps done"
wait_for 10 queues_expr 'q["a"]["used"] == 8 and q["a"]["borrowed"] == 4 and q["b"]["used"] == 0 and q["b"]["lent"] == 4' || {
	cohort queues --json >&2
	fail "cohort queues does not show a borrowing 4 GPUs from b"
}

as_user "$C" bob
t0=$(_now_us)
# Bob's job runs until the test has looked at alice's.
b=$(job_submit --queue b --name reclaim --nodes 2 --time 10m --workdir "$W" -- sh -c "$(gate b-go)")
wait_job 40 "$b" 'd["state"] == "RUNNING"'
ms=$((($(_now_us) - t0) / 1000))
log "reclaim: bob's job $b ran $ms ms after its submit (grace 20 s)"
# The stop followed the checkpoint, not the grace running out: the
# controller says which (its log line for the preemption names why).
grep -E "job $a: PENDING: .*\(checkpoint written\)" "$C/cohortd.log" >/dev/null ||
	fail "alice's job was not preempted on its checkpoint: $(grep "job $a: PENDING" "$C/cohortd.log" | tail -n 2)"
job_show "$a"
json_get "$T/job-$a.json" 'd["state"]' | grep -qx PENDING ||
	fail "alice's job is $(json_get "$T/job-$a.json" '[d["state"], d["reason"]]') after the reclaim"
json_get "$T/job-$a.json" 'd["reason"]' | grep -q "^Preempted by $b of b" ||
	fail "alice's job does not say who preempted it: $(json_get "$T/job-$a.json" 'd["reason"]')"
[ "$(json_get "$T/job-$a.json" 'd["restarts"]')" = 0 ] ||
	fail "a preemption counted as a restart"
job_expr "$a" 'd["checkpoint"] is not None and d["checkpoint"]["step"] >= 10' ||
	fail "alice's job was stopped without the checkpoint its signal asks for: $(json_get "$T/job-$a.json" 'd["checkpoint"]')"
sig_step=$(json_get "$T/job-$a.json" 'd["checkpoint"]["step"]')
log "alice's job $a checkpointed at step $sig_step on the signal, then stopped"
# What is left of it is only a wait: 0.01 s a step once it runs again.
ft_hurry "$W/ckpt"
expect_exit 0 cohort show "$a"
grep -q "Preempted by $b" "$OUT" || fail "cohort show $a does not list the preemption: $(cat "$OUT")"
touch "$W/b-go"

wait_state 30 "$b" COMPLETED FAILED CANCELLED TIMEOUT
as_user "$C" alice
wait_state 60 "$a" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$a.json" 'd["state"]')" = COMPLETED ] ||
	fail "alice's job ended $(json_get "$T/job-$a.json" '[d["state"], d["reason"]]')"
expect_exit 0 cohort logs "$a" --rank 0
grep -q '^fake-train: verified 600 steps over 2 run(s)' "$OUT" ||
	fail "alice's job did not verify its steps: $(tail -n 5 "$OUT")"
grep -qx "1 $((sig_step + 1))" "$W/ckpt/runs" ||
	fail "the second run did not resume after step $sig_step: $(cat "$W/ckpt/runs")"
log "$(grep '^fake-train: verified' "$OUT")"

# ---- min_runtime: c's borrower is not preempted in its first hour ----
c=$(job_submit --queue c --name young --nodes 4 --checkpoint-signal USR1@5 \
	--checkpoint-dir "$W/ckpt-c" --workdir "$W" -- sh "$FT" 100000 0.1 1000000)
wait_state 20 "$c" RUNNING
as_user "$C" bob
b2=$(job_submit --queue b --name waits --nodes 1 --time 10m -- true)
# Passes have looked at it (it has a reason), and nothing was preempted.
wait_job 10 "$b2" 'd["state"] == "PENDING" and d["reason"] not in ("", "Launching")'
job_expr "$b2" '"Preempting" not in d["reason"]' ||
	fail "bob's job preempts a job younger than min_runtime: $(json_get "$T/job-$b2.json" 'd["reason"]')"
job_expr "$c" 'd["state"] == "RUNNING" and d["checkpoint"] is None' ||
	fail "c's job was signalled or stopped before its min_runtime"
expect_exit 0 cohort cancel "$b2"
as_user "$C" alice
expect_exit 0 cohort cancel "$c"
wait_state 20 "$c" CANCELLED

# ---- A service preempts lower-priority training of its queue ----
t=$(job_submit --queue a --name train --priority 50 --nodes 4 --checkpoint-signal USR1@20 \
	--checkpoint-dir "$W/ckpt-t" --workdir "$W" -- sh "$FT" 100000 0.1 1000000)
wait_state 20 "$t" RUNNING
as_user "$C" admin
s=$(job_submit --queue a --name infer --service --priority 500 --nodes 2 -- sh -c 'sleep 1000')
wait_job 25 "$s" 'd["state"] == "RUNNING"'
job_expr "$t" "d['state'] == 'PENDING' and d['reason'].startswith('Preempted by $s of a') and d['checkpoint'] is not None" ||
	fail "the service did not preempt the training job: $(cohort show "$t" --json)"
# Usage: a holds the service's 4 GPUs; the trainer's 4 whole nodes (8 GPUs) wait.
wait_for 10 queues_expr 'q["a"]["used"] == 4 and q["a"]["pending"] >= 8 and q["b"]["used"] == 0' || {
	cohort queues --json >&2
	fail "cohort queues does not add up"
}
expect_exit 0 cohort cancel "$s"
expect_exit 0 cohort cancel "$t"
wait_state 20 "$s" CANCELLED
exit 0
