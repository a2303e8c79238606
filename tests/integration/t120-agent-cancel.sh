#!/bin/bash
# Cancel of a running 2-node gang: the job is CANCELLED and, within a
# bound, no process of it is left on any node: neither the task shells
# (found by a marker in their command line) nor the children they spawned
# (found by the task process groups of the agents' rank pid files).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

STOP_S=15        # bound on the gang being gone (kill_wait is 3s)

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)
MARK="cohort-t120-$$-$RANDOM"

# Each task: a shell with a child shell (both carry the marker), each
# running a sleep (which does not).
id=$(job_submit --name gang --nodes 2 --workdir "$W" -- \
	sh -c "sh -c 'sleep 300; : $MARK-child' & sleep 300; : $MARK-parent")

wait_state 20 "$id" RUNNING
wait_pidfiles 10 "$C" "$id" 2
mapfile -t pgids < <(job_pgids "$C" "$id")
[ "${#pgids[@]}" -eq 2 ] || fail "expected 2 task process groups, got ${#pgids[@]}"
[ "${pgids[0]}" != "${pgids[1]}" ] || fail "both tasks share process group ${pgids[0]}"
for g in "${pgids[@]}"; do
	pgid_alive "$g" || fail "task process group $g is not running while the job is RUNNING"
done
_four_marked() { [ "$(marker_count "$MARK")" -ge 4 ]; }
wait_for 10 _four_marked || fail "expected 4 marked task processes (2 shells on each of 2 nodes), saw $(marker_count "$MARK")"

expect_exit 0 cohort cancel "$id"
wait_state 10 "$id" CANCELLED
wait_for "$STOP_S" not marker_alive "$MARK" ||
	fail "processes of the cancelled job are still there after ${STOP_S}s: $(pgrep -af -- "$MARK")"
wait_for "$STOP_S" not any_pgid_alive "${pgids[@]}" ||
	fail "the task process groups ${pgids[*]} still have live members after ${STOP_S}s: $(ps -o pid,pgid,stat,args -g "$(IFS=,; echo "${pgids[*]}")" 2>&1)"

# The nodes are free again: a job needing all three nodes runs.
id2=$(job_submit --name after --nodes 3 --gpus-per-node 4 --workdir "$W" -- true)
wait_state 20 "$id2" COMPLETED FAILED
[ "$(json_get "$T/job-$id2.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id2 after the cancel ended $(json_get "$T/job-$id2.json" '[d["state"], d["reason"]]')"
exit 0
