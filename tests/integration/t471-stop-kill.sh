#!/bin/bash
# A task that ignores SIGTERM is killed kill_wait (3 s in cohort-local)
# after its stop, even though the controller repeats the stop with every
# heartbeat that still lists it (each repeat used to re-arm the agent's
# SIGKILL timer, putting it off for as long as heartbeats came).
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
# kill_wait is 3 s; heartbeats come every second meanwhile.
wait_for 10 proc_gone "$pid" ||
	fail "job $id's task (pid $pid) ignores SIGTERM and was not killed 10 s after its cancel: $(grep -c 'stop requested' "$C/node01.log") stop requests"
n=$(grep -c "job $id rank 0: SIGTERM" "$C/node01.log")
[ "$n" -eq 1 ] || fail "job $id's task got SIGTERM $n times, not once"
grep -q "job $id rank 0: still running after the grace period; killed" "$C/node01.log" ||
	fail "the agent did not log the SIGKILL of job $id rank 0"
