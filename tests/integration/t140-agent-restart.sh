#!/bin/bash
# Restarts do not stop tasks:
#  1. kill -9 of the controller while a job runs, start it again: the job
#     still ends COMPLETED (the agents reconnect and report);
#  2. the same, but the tasks end while the controller is down: their
#     outcome reaches the restarted controller;
#  3. kill -9 of an agent while its task runs, start it again: the task
#     survives the agent and the job still COMPLETES.
# Tasks wait for a "go" file the test creates, so nothing hangs on timing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
# The agent restarts below must come back within node_timeout, or the
# job is restarted: 20 s, not the harness's 5 s, which a loaded machine
# (kill, start, hwloc, TLS; 8 s seen) can take.
COHORT_LOCAL_NODE_TIMEOUT=20s cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)
MARK="cohort-t140-$$-$RANDOM"

# gated NAME: a task that waits (at most 120 s) for $W/NAME.go, records
# that it saw it in $W/NAME.done.RANK, and exits 0 (3 if it never came).
gated() {
	printf '%s' "i=0
while [ ! -e $1.go ]; do
	[ \$i -lt 2400 ] || exit 3
	sleep 0.05; i=\$((i + 1))
done
touch $1.done.\$RANK; : $MARK-$1"
}

_files_at_least() {
	local n
	n=$(find "$W" -maxdepth 1 -name "$1" | wc -l)
	[ "$n" -ge "$2" ]
}

restart_controller() {
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
	expect_exit 3 cohort jobs
	"$@"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
	as_user "$C" alice
}

### 1. The controller restarts while the gang runs.
id=$(job_submit --name ctl1 --nodes 2 --workdir "$W" -- sh -c "$(gated a)")
wait_state 20 "$id" RUNNING
wait_pidfiles 10 "$C" "$id" 2
mapfile -t pgids < <(job_pgids "$C" "$id")
restart_controller true
for g in "${pgids[@]}"; do
	pgid_alive "$g" || fail "task group $g died with the controller"
done
touch "$W/a.go"
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after a controller restart"
_files_at_least 'a.done.*' 2 || fail "the tasks of job $id did not both finish: $(ls "$W")"

### 2. The tasks end while the controller is down.
id=$(job_submit --name ctl2 --nodes 2 --workdir "$W" -- sh -c "$(gated b)")
wait_state 20 "$id" RUNNING
wait_pidfiles 10 "$C" "$id" 2
_go_and_wait_b() {
	touch "$W/b.go"
	wait_for 10 _files_at_least 'b.done.*' 2 || fail "the tasks of job $id did not finish while the controller was down"
	mapfile -t pgids < <(job_pgids "$C" "$id")
	wait_for 10 not any_pgid_alive "${pgids[@]}" || fail "the tasks of job $id did not exit"
}
restart_controller _go_and_wait_b
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id, whose tasks ended while the controller was down, ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"

### 3. An agent restarts while its task runs.
id=$(job_submit --name agent --nodes 1 --workdir "$W" -- sh -c "$(gated c)")
wait_state 20 "$id" RUNNING
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
wait_pidfiles 10 "$C" "$id" 1
pidfile=$(job_pidfiles "$C" "$id")
read -r sup pgid <"$pidfile"
cohort-local kill "$C" "$node" >"$T/kill.out" 2>&1 || fail "cohort-local kill $node: $(cat "$T/kill.out")"
proc_alive "$sup" || fail "the task supervisor ($sup) died with the agent"
pgid_alive "$pgid" || fail "the task ($pgid) died with the agent"
cohort-local start "$C" "$node" >"$T/start.out" 2>&1 || fail "cohort-local start $node: $(cat "$T/start.out")"
pgid_alive "$pgid" || fail "the task ($pgid) died when the agent restarted"
[ "$(job_state "$id")" = RUNNING ] ||
	fail "job $id is $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after its agent restarted, not RUNNING"
touch "$W/c.go"
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after its agent restarted"
[ -e "$W/c.done.0" ] || fail "the task of job $id did not finish: $(ls "$W")"
exit 0
