#!/bin/bash
# A task that ignores SIGTERM is killed kill_wait (3 s in cohort-local)
# after its stop, even though the controller repeats the stop with every
# heartbeat that still lists it (each repeat used to re-arm the agent's
# SIGKILL timer, putting it off for as long as heartbeats came); its exit
# is reported only once it is gone, so the next job waits for its GPU.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
W=$(world_dir work)
cat >"$W/deaf.sh" <<'SH'
#!/bin/sh
trap '' TERM
echo $$ >"$1/pid"
while :; do sleep 0.2; done
SH
chmod 755 "$W/deaf.sh"

id=$(job_submit --name t471 --workdir "$W" -- "$W/deaf.sh" "$W")
wait_state 20 "$id" RUNNING
wait_for 10 test -s "$W/pid" || fail "job $id's task did not start"
pid=$(cat "$W/pid")
expect_exit 0 cohort cancel "$id"
# The agent reports the task's exit only once it is gone: until then its
# GPU, the node's only one, is not given to the next job.
next=$(job_submit --name t471-next --workdir "$W" -- true)
# started_while_alive: next has started while the task still lives.
started_while_alive() {
	local s
	s=$(job_state "$next")
	[ "$s" != PENDING ] && proc_alive "$pid"
}
# kill_wait is 3 s; heartbeats come every second meanwhile.
wait_for 10 sh -c '! kill -0 "$1" 2>/dev/null || [ "$(cut -d" " -f3 /proc/"$1"/stat 2>/dev/null)" = Z ]' _ "$pid" &
waiter=$!
while kill -0 "$waiter" 2>/dev/null; do
	not started_while_alive ||
		fail "job $next started on node01 while job $id's task (pid $pid) still ran there"
	sleep 0.1
done
wait "$waiter" ||
	fail "job $id's task (pid $pid) ignores SIGTERM and was not killed 10 s after its cancel: $(grep -c 'stop requested' "$C/node01.log") stop requests"
wait_state 20 "$next" COMPLETED
n=$(grep -c "job $id rank 0: SIGTERM" "$C/node01.log")
[ "$n" -eq 1 ] || fail "job $id's task got SIGTERM $n times, not once"
grep -q "job $id rank 0: still running after the grace period; killed" "$C/node01.log" ||
	fail "the agent did not log the SIGKILL of job $id rank 0"
