#!/bin/bash
# A change is authorized against where it leads, not only where it
# starts. bob is an admin of bteam only; ateam's users do not include
# him. alice's job runs in ateam on every GPU. bob's held job in bteam
# may not be moved into ateam, at any priority, nor with the priority
# he gave it in bteam carried into cteam (where he is a user, not an
# admin); each refusal is one clear line and changes nothing, and
# alice's job is never preempted. The cases of the same table without
# processes are check_jobs_control's authorization matrix.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_CONTROLLER_CONF='[queue ateam]
gpus = 2
users = alice
preempt = borrowers
[queue bteam]
gpus = 2
users = bob
admins = bob
[queue cteam]
gpus = 0
users = bob'
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 1 --gpus 2
unset COHORT_LOCAL_CONTROLLER_CONF
W=$(world_dir work)

# alice's job holds both GPUs (ateam borrows bteam's idle ones).
as_user "$C" alice
a=$(job_submit --name a --queue ateam --gpus-per-node 2 --workdir "$W" -- sh -c "$(gate a.end)")
wait_state 30 "$a" RUNNING

as_user "$C" bob
b=$(job_submit --name b --queue bteam --gpus-per-node 2 --hold --workdir "$W" -- true)
snap() {
	job_show "$b"
	json_get "$T/job-$b.json" '[d["queue"], d["priority"], d["state"]]'
}
before=$(snap)

# 1. The finding: into ateam at the highest priority.
expect_exit 1 cohort update "$b" --queue ateam --priority 1000000
stderr_one_line_with "bob may not"
# 2. Into ateam at the default priority: bob is not among its users.
expect_exit 1 cohort update "$b" --queue ateam
stderr_one_line_with "bob may not submit to queue ateam"
# 3. A priority granted in bteam does not travel into cteam.
expect_exit 0 cohort update "$b" --priority 5000
before=$(snap)
expect_exit 1 cohort update "$b" --queue cteam
stderr_one_line_with "in queue cteam only an admin"
expect_exit 1 cohort update "$b" --queue cteam --priority 4000
stderr_one_line_with "may raise its priority in queue cteam (bob may not)"
[ "$(snap)" = "$before" ] || fail "a refused update changed job $b: $(snap), was $before"

# Released, bob's job waits; it must not take alice's GPUs.
expect_exit 0 cohort release "$b"
as_user "$C" alice
job_show "$a"
[ "$(json_get "$T/job-$a.json" 'd["state"]')" = RUNNING ] || fail "alice's job is not RUNNING"
[ "$(json_get "$T/job-$a.json" 'd.get("restarts", 0)')" = 0 ] || fail "alice's job was restarted"
expect_exit 0 cohort events --job "$a" --json
grep -q '"preempt"' "$OUT" && fail "alice's job was preempted: $(cat "$OUT")"

# 4. Moved where bob is a user, at the default priority: allowed.
as_user "$C" bob
expect_exit 0 cohort hold "$b"
expect_exit 0 cohort update "$b" --queue cteam --priority 100
job_show "$b"
[ "$(json_get "$T/job-$b.json" 'd["queue"]')" = cteam ] || fail "job $b is not in cteam"
touch "$W/a.end"
wait_state 30 "$a" COMPLETED
echo "PASS: moves are authorized in the queue they lead to"
