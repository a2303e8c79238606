#!/bin/bash
# A failing rank stops the gang: rank 1 exits 3 while rank 0 sleeps; the
# job is FAILED, its exit code or reason names the failure and the rank,
# and rank 0's processes are gone. A job past its --time ends TIMEOUT and
# its processes are gone too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The jobs this test makes fail are logged as FAILED.
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: '

STOP_S=15        # bound on a gang being gone (kill_wait is 3s)

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)
MARK="cohort-t130-$$-$RANDOM"

### 1. Rank 1 exits 3 once rank 0 is running; rank 0 would sleep 300 s.
# (--max-restarts 0: this is about the gang's stop, not the restarts the
# fault-recovery work adds.)
id=$(job_submit --name failer --nodes 2 --max-restarts 0 --workdir "$W" -- sh -c "
if [ \"\$RANK\" = 1 ]; then
	i=0
	while [ ! -e r0.up ] && [ \$i -lt 1200 ]; do sleep 0.05; i=\$((i + 1)); done
	exit 3
fi
touch r0.up
sleep 300; : $MARK-r0")

wait_state 30 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ -e "$W/r0.up" ] || fail "rank 0 never started"
st=$(json_get "$T/job-$id.json" 'd["state"]')
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
code=$(json_get "$T/job-$id.json" 'd["exit_code"]')
[ "$st" = FAILED ] || fail "job $id ended $st (reason '$reason'), not FAILED"
[ "$code" = 3 ] || echo "$reason" | grep -Eq '(exit|status)[^0-9]*3' ||
	fail "job $id: neither the exit code ($code) nor the reason ('$reason') says 3"
echo "$reason" | grep -Eqi 'rank 1' ||
	fail "job $id: the reason '$reason' does not name rank 1"
wait_for "$STOP_S" not marker_alive "$MARK-r0" ||
	fail "rank 0 of the failed job is still running after ${STOP_S}s: $(pgrep -af -- "$MARK")"

### 2. A time limit: --time 10s with sleep 60 ends TIMEOUT. (10 s, not
# less: the tasks' pid files, read below, go once the agent has reported
# their end, and a loaded machine can take seconds to look.)
id=$(job_submit --name slow --nodes 2 --time 10s --max-restarts 0 --workdir "$W" -- \
	sh -c "sleep 60; : $MARK-slow")
wait_state 10 "$id" RUNNING TIMEOUT
wait_pidfiles 10 "$C" "$id" 2
mapfile -t pgids < <(job_pgids "$C" "$id")
[ "${#pgids[@]}" -eq 2 ] || fail "expected 2 task process groups, got ${#pgids[@]}"
wait_state 40 "$id" TIMEOUT FAILED COMPLETED CANCELLED
st=$(json_get "$T/job-$id.json" 'd["state"]')
[ "$st" = TIMEOUT ] ||
	fail "job $id with --time 10s ended $st (reason '$(json_get "$T/job-$id.json" 'd["reason"]')'), not TIMEOUT"
wait_for "$STOP_S" not marker_alive "$MARK-slow" ||
	fail "the timed-out job's tasks still run after ${STOP_S}s: $(pgrep -af -- "$MARK")"
wait_for "$STOP_S" not any_pgid_alive "${pgids[@]}" ||
	fail "the timed-out job's process groups ${pgids[*]} still have live members"

### 3. A task that cannot start: the job's reason says why, not just 127.
missing=$T/no-such-workdir
id=$(job_submit --name nowd --max-restarts 0 --workdir "$missing" -- true)
wait_state 15 "$id" FAILED COMPLETED CANCELLED
st=$(json_get "$T/job-$id.json" 'd["state"]')
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
[ "$st" = FAILED ] || fail "job $id with a missing workdir ended $st ('$reason')"
# Without the path: the reason is shown to every user, the path only in
# the owner's log.
echo "$reason" | grep -Fq "rank 0 could not start: cannot change directory to the working directory: No such file or directory" ||
	fail "job $id: the reason '$reason' does not say why rank 0 could not start"
! echo "$reason" | grep -Fq "$missing" || fail "job $id: the reason '$reason' names the private working directory"
exit 0
