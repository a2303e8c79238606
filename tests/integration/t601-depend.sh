#!/bin/bash
# Dependencies: a chain a -> b -> c of afterok runs in order;
# afternotok on a job that COMPLETED is cancelled (DependencyNeverSatisfied)
# and so, in turn, is what depended on it; singleton runs two jobs of one
# name one after the other though both fit; a dependency on an unknown
# job, or on another user's, is refused at submit.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# The job this test fails on purpose.
expect_log_error 'cohortd: warning: job [0-9]+: FAILED'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir out)

# Refused at submit, nothing recorded.
expect_exit 1 cohort submit --dependency afterok:9999 -- true
stderr_one_line "cohort: submit" "--dependency afterok:9999: no job 9999"
expect_exit 1 cohort submit --dependency afterok:x -- true
stderr_one_line "cohort: submit" "--dependency 'afterok:x'"
expect_exit 1 cohort submit --dependency aftercorr:1 -- true
stderr_one_line "cohort: submit" "aftercorr is for arrays"
[ "$(job_count --all)" = 0 ] || fail "a refused submit left a job behind"

# a -> b -> c.
a=$(job_submit --gpus-per-node 1 --workdir "$W" -- sh -c "$(gate a-go)")
b=$(job_submit --gpus-per-node 1 --workdir "$W" --dependency "afterok:$a" -- sleep 1)
c=$(job_submit --gpus-per-node 1 --workdir "$W" --dependency "afterok:$b" -- true)
wait_job 10 "$b" 'd["state"] == "PENDING" and d["reason"] == "Dependency"'
touch "$W/a-go"
wait_state 30 "$c" COMPLETED
for j in "$a" "$b"; do
	[ "$(job_state "$j")" = COMPLETED ] || fail "job $j is not COMPLETED"
done
ta_end=$(json_get "$T/job-$a.json" 'd["end_time"]')
tb_start=$(json_get "$T/job-$b.json" 'd["start_time"]')
tb_end=$(json_get "$T/job-$b.json" 'd["end_time"]')
tc_start=$(json_get "$T/job-$c.json" 'd["start_time"]')
[[ ! "$tb_start" < "$ta_end" ]] || fail "b started ($tb_start) before a ended ($ta_end)"
[[ ! "$tc_start" < "$tb_end" ]] || fail "c started ($tc_start) before b ended ($tb_end)"
[ "$(json_get "$T/job-$b.json" 'd["dependency"]')" = "afterok:$a" ] || fail "show $b lost its dependency"

# afternotok on a job that completed: never; what follows it as well.
x=$(job_submit --dependency "afternotok:$a" -- true)
y=$(job_submit --dependency "afterok:$x" -- true)
wait_state 10 "$x" CANCELLED
[ "$(json_get "$T/job-$x.json" 'd["reason"]')" = DependencyNeverSatisfied ] ||
	fail "job $x: reason $(json_get "$T/job-$x.json" 'd["reason"]')"
wait_state 10 "$y" CANCELLED
[ "$(json_get "$T/job-$y.json" 'd["reason"]')" = DependencyNeverSatisfied ] ||
	fail "job $y: reason $(json_get "$T/job-$y.json" 'd["reason"]')"
expect_exit 0 cohort events --job "$x"
grep -q "dependency.*afternotok:$a" "$OUT" || fail "no dependency event for $x: $(cat "$OUT")"

# afterany and afternotok on a job that failed.
f=$(job_submit --max-restarts 0 -- false)
g=$(job_submit --dependency "afternotok:$f" -- true)
h=$(job_submit --dependency "afterany:$f?afterok:$f" -- true)
wait_state 20 "$g" COMPLETED
wait_state 20 "$h" COMPLETED

# On arrays: afterok on an array waits for every task; aftercorr pairs
# tasks by index (task i of the failing array fails when its job id is
# odd: the task of the same index that follows it never runs).
arr=$(job_submit --array 0-2 --workdir "$W" -- sh -c "$(gate arr-go)")
whole=$(job_submit --dependency "afterok:$arr" -- true)
wait_job 10 "$whole" 'd["reason"] == "Dependency"'
touch "$W/arr-go"
wait_state 30 "$whole" COMPLETED
for i in 0 1 2; do
	expect_exit 0 cohort show "${arr}_$i" --json
	[[ ! "$(json_get "$T/job-$whole.json" 'd["start_time"]')" < "$(json_get "$OUT" 'd["end_time"]')" ]] ||
		fail "job $whole started before task ${arr}_$i ended"
done
bad=$(job_submit --array 0-1 --max-restarts 0 -- sh -c 'test $((COHORT_JOB_ID % 2)) = 0')
corr=$(job_submit --array 0-1 --dependency "aftercorr:$bad" -- true)
for i in 0 1; do
	if [ $(((bad + i) % 2)) = 0 ]; then want=COMPLETED; else want=CANCELLED; fi
	wait_state 30 "${corr}_$i" "$want"
	[ "$want" = COMPLETED ] ||
		[ "$(json_get "$T/job-${corr}_$i.json" 'd["reason"]')" = DependencyNeverSatisfied ] ||
		fail "task ${corr}_$i: reason $(json_get "$T/job-${corr}_$i.json" 'd["reason"]')"
done

# singleton: both fit at once on the two nodes, yet run one by one.
s1=$(job_submit --name solo --gpus-per-node 1 --workdir "$W" --dependency singleton -- sh -c "$(gate s1-go)")
s2=$(job_submit --name solo --gpus-per-node 1 --workdir "$W" --dependency singleton -- sleep 1)
wait_job 10 "$s2" 'd["reason"] == "Dependency"'
touch "$W/s1-go"
wait_state 30 "$s2" COMPLETED
job_show "$s1"
[[ ! "$(json_get "$T/job-$s2.json" 'd["start_time"]')" < "$(json_get "$T/job-$s1.json" 'd["end_time"]')" ]] ||
	fail "singleton $s2 started before $s1 ended"

# Another user's job may not be named (an admin's may name anyone's).
as_user "$C" bob
expect_exit 1 cohort submit --dependency "afterok:$a" -- true
stderr_one_line "cohort: submit" "job $a belongs to alice"
as_user "$C" admin
z=$(job_submit --dependency "afterok:$a" -- true)
wait_state 20 "$z" COMPLETED
