#!/bin/bash
# Job arrays through the real CLI, wire and agent: every task knows its
# index (COHORT_ARRAY_TASK_ID), references N_K reach show, wait, logs and
# cancel, cohort jobs folds an array's pending tasks into one row
# (N_[...%N], its limit through the wire), and the CLI's own lines (an
# array named where one job is wanted, nothing left to cancel). The
# rules (%N, bad specs, cancel of a task and of the rest, who may) are
# check_jobs_array's, in virtual time.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir out)

a=$(job_submit --array 0-2 --workdir "$W" -- \
	sh -c 'echo "${COHORT_ARRAY_TASK_ID-unset}" >"task-$COHORT_JOB_ID"')
# wait takes an array: it waits for every task.
expect_exit 0 cohort wait "$a" --timeout 60
expect_exit 0 cohort show "$a" --json
cp "$OUT" "$T/array.json"
[ "$(json_get "$T/array.json" '[(j["array_task"], j["state"]) for j in d["jobs"]]')" = \
	'[[0, "COMPLETED"], [1, "COMPLETED"], [2, "COMPLETED"]]' ] ||
	fail "show $a: $(json_get "$T/array.json" '[(j["id"], j["array_task"], j["state"]) for j in d["jobs"]]')"
ids=$(json_get "$T/array.json" '" ".join(str(j["id"]) for j in d["jobs"])')
[ "$ids" = "$a $((a + 1)) $((a + 2))" ] || fail "ids not consecutive from $a: $ids"
# Each task's index in its environment.
for id in $ids; do
	wait_for 5 test -s "$W/task-$id" || fail "task $id wrote nothing"
	[ "$(cat "$W/task-$id")" = "$((id - a))" ] ||
		fail "task $id saw COHORT_ARRAY_TASK_ID=$(cat "$W/task-$id"), want $((id - a))"
done
expect_exit 0 cohort wait "${a}_2" --timeout 10
expect_exit 0 cohort logs "${a}_2"
expect_exit 2 cohort logs "$a"
stderr_one_line "cohort: logs: '$a' names 3 jobs (an array)"
expect_exit 0 cohort show "${a}_1" --json
[ "$(json_get "$OUT" 'd["id"]')" = $((a + 1)) ] || fail "show ${a}_1 is not job $((a + 1))"
expect_exit 1 cohort show "${a}_9"
stderr_one_line "cohort: show: array $a has no task 9"
expect_exit 2 cohort show "${a}_x"
stderr_one_line "cohort: show: invalid job '${a}_x'"

# A waiting array folds into one row with its limit; cancel one task,
# then the rest.
blocker=$(job_submit --workdir "$W" -- sleep 300)
wait_state 20 "$blocker" RUNNING
b=$(job_submit --array 0-9%2 --dependency "afterok:$blocker" --workdir "$W" -- true)
wait_for 10 sh -c "cohort jobs | grep -Eq '^${b}_\[0-9%2\] .*Dependency'" ||
	fail "no folded row ${b}_[0-9%2]: $(cohort jobs 2>&1)"
expect_exit 0 cohort cancel "${b}_3"
[ "$(job_state $((b + 3)))" = CANCELLED ] || fail "task ${b}_3 is not CANCELLED"
wait_for 10 sh -c "cohort jobs | grep -Eq '^${b}_\[0-2,4-9%2\] '" ||
	fail "no row ${b}_[0-2,4-9%2]: $(cohort jobs 2>&1)"
as_user "$C" bob
expect_exit 1 cohort cancel "$b"
stderr_has "belongs to alice"
as_user "$C" alice
expect_exit 0 cohort cancel "$b"
cohort jobs --all --json >"$T/all.json" || fail "cohort jobs --all --json failed"
[ "$(json_get "$T/all.json" "sorted(set(j['state'] for j in d['jobs'] if j['array_id'] == $b))")" = '["CANCELLED"]' ] ||
	fail "cancel $b left tasks: $(json_get "$T/all.json" "[(j['id'], j['state']) for j in d['jobs'] if j['array_id'] == $b]")"
expect_exit 1 cohort cancel "$b"
stderr_one_line "cohort: cancel: nothing left to cancel: every task named has ended"
expect_exit 1 cohort wait "$b" --timeout 10
stderr_has "job ended CANCELLED"
expect_exit 0 cohort cancel "$blocker"
wait_state 20 "$blocker" CANCELLED
