#!/bin/bash
# Job arrays: --array 0-5%2 on four nodes never runs more than
# two tasks at once (JobArrayTaskLimit for the rest), every task knows
# its index, cohort jobs folds an array's pending tasks into one row
# (N_[...]), cancel N_3 cancels one task and cancel N the rest, and bad
# specs are refused with a message naming --array.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 1
W=$(world_dir out)

# Refused at submit, nothing recorded.
for bad in 5-1 1,1 0-9:0 x 0-100000 '0-3%0'; do
	expect_exit 1 cohort submit --array "$bad" -- true
	stderr_one_line "cohort: submit" "--array"
done
[ "$(job_count --all)" = 0 ] || fail "a refused array left jobs behind"

# A throttled array: six tasks, at most two at once, on four free GPUs.
a=$(job_submit --array 0-5%2 --gpus-per-node 1 --workdir "$W" -- \
	sh -c 'echo "${COHORT_ARRAY_TASK_ID-unset}" >"task-$COHORT_JOB_ID"; sleep 2')
most=0
folded=0
deadline=$(($(date +%s) + 90))
while :; do
	cohort jobs --json >"$T/poll.json" || fail "cohort jobs --json failed"
	running=$(json_get "$T/poll.json" "len([j for j in d['jobs'] if j['array_id'] == $a and j['state'] == 'RUNNING'])")
	left=$(json_get "$T/poll.json" "len([j for j in d['jobs'] if j['array_id'] == $a])")
	[ "$running" -le "$most" ] || most=$running
	# The pending rest, one row, waiting for the array's limit.
	if [ "$folded" = 0 ] && cohort jobs >"$T/table.txt" 2>&1 &&
		grep -Eq "^${a}_\[[0-9,-]+%2\] .*JobArrayTaskLimit" "$T/table.txt"; then
		folded=1
		cp "$T/table.txt" "$T/folded.txt"
	fi
	[ "$left" != 0 ] || break
	[ "$(date +%s)" -lt "$deadline" ] || fail "array $a not done after 90 s: $(cat "$T/poll.json")"
	sleep 0.1
done
[ "$most" -le 2 ] || fail "array $a ran $most tasks at once (limit %2)"
[ "$most" -ge 1 ] || fail "never saw a task of array $a running"
[ "$folded" = 1 ] || fail "cohort jobs never showed ${a}_[...%2] with JobArrayTaskLimit"

# Every task COMPLETED; from the times, never three at once.
expect_exit 0 cohort show "$a" --json
cp "$OUT" "$T/array.json"
[ "$(json_get "$T/array.json" 'len(d["jobs"])')" = 6 ] || fail "show $a: not six tasks: $(cat "$OUT")"
[ "$(json_get "$T/array.json" 'sorted(j["array_task"] for j in d["jobs"])')" = "[0, 1, 2, 3, 4, 5]" ] ||
	fail "task indices: $(json_get "$T/array.json" '[j["array_task"] for j in d["jobs"]]')"
[ "$(json_get "$T/array.json" 'sorted(set(j["state"] for j in d["jobs"]))')" = '["COMPLETED"]' ] ||
	fail "not all COMPLETED: $(json_get "$T/array.json" '[(j["id"], j["state"], j["reason"]) for j in d["jobs"]]')"
ids=$(json_get "$T/array.json" '" ".join(str(j["id"]) for j in d["jobs"])')
[ "$ids" = "$a $((a + 1)) $((a + 2)) $((a + 3)) $((a + 4)) $((a + 5))" ] || fail "ids not consecutive from $a: $ids"
"$PYTHON" - "$T/array.json" <<'PY' || fail "more than two tasks overlapped"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
for j in jobs:
    n = sum(1 for k in jobs if k["start_time"] <= j["start_time"] < k["end_time"])
    if n > 2:
        sys.exit(f"{n} tasks ran at {j['start_time']}")
PY
# Each task's index in its environment.
for id in $ids; do
	wait_for 5 test -s "$W/task-$id" || fail "task $id wrote nothing"
done
for id in $ids; do
	[ "$(cat "$W/task-$id")" = "$((id - a))" ] ||
		fail "task $id saw COHORT_ARRAY_TASK_ID=$(cat "$W/task-$id"), want $((id - a))"
done
# wait and logs take references too: an array waits for every task.
expect_exit 0 cohort wait "$a" --timeout 10
expect_exit 0 cohort wait "${a}_4" --timeout 10
expect_exit 0 cohort logs "${a}_4"
expect_exit 2 cohort logs "$a"
stderr_one_line "cohort: logs: '$a' names 6 jobs (an array)"
# A task by its reference, and a plain job id of a task.
expect_exit 0 cohort show "${a}_3" --json
[ "$(json_get "$OUT" 'd["id"]')" = $((a + 3)) ] || fail "show ${a}_3 is not job $((a + 3))"
expect_exit 1 cohort show "${a}_9"
stderr_one_line "cohort: show: array $a has no task 9"
expect_exit 2 cohort show "${a}_x"
stderr_one_line "cohort: show: invalid job '${a}_x'"

# Waiting arrays fold into one row; cancel one task, then the rest.
blocker=$(job_submit --gpus-per-node 1 --workdir "$W" -- sleep 300)
wait_state 20 "$blocker" RUNNING
b=$(job_submit --array 0-9 --gpus-per-node 1 --dependency "afterok:$blocker" --workdir "$W" -- true)
wait_for 10 sh -c "cohort jobs | grep -Eq '^${b}_\[0-9\] .*Dependency'" ||
	fail "no folded row ${b}_[0-9]: $(cohort jobs 2>&1)"
[ "$(cohort jobs | grep -c "^${b}_")" = 1 ] || fail "array $b is not one row: $(cohort jobs)"
expect_exit 0 cohort cancel "${b}_3"
[ "$(job_state $((b + 3)))" = CANCELLED ] || fail "task ${b}_3 is not CANCELLED"
[ "$(job_state $((b + 4)))" = PENDING ] || fail "task ${b}_4 is not PENDING"
wait_for 10 sh -c "cohort jobs | grep -Eq '^${b}_\[0-2,4-9\] '" ||
	fail "no row ${b}_[0-2,4-9]: $(cohort jobs 2>&1)"
expect_exit 0 cohort cancel "$b"
cohort jobs --all --json >"$T/all.json" || fail "cohort jobs --all --json failed"
[ "$(json_get "$T/all.json" "sorted(set(j['state'] for j in d['jobs'] if j['array_id'] == $b))")" = '["CANCELLED"]' ] ||
	fail "cancel $b left tasks: $(json_get "$T/all.json" "[(j['id'], j['state']) for j in d['jobs'] if j['array_id'] == $b]")"
expect_exit 1 cohort cancel "$b"
stderr_one_line "cohort: cancel: nothing left to cancel: every task named has ended"
expect_exit 1 cohort wait "$b" --timeout 10
stderr_has "job ended CANCELLED"
# Another user may not cancel the array.
c=$(job_submit --array 1-2 --dependency "afterok:$blocker" -- true)
as_user "$C" bob
expect_exit 1 cohort cancel "$c"
stderr_has "belongs to alice"
as_user "$C" alice
expect_exit 0 cohort show "${c}_1" --json
[ "$(json_get "$OUT" 'd["state"]')" = PENDING ] || fail "bob's cancel changed array $c"
expect_exit 0 cohort cancel "$c" "$blocker"
wait_state 20 "$blocker" CANCELLED
