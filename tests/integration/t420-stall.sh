#!/bin/bash
# A stalling client: one user sends a submit and 300 ListJobs on a queue
# of 20,000 jobs and never reads a reply. Before the fix the replies
# waiting behind the submit's commit were invisible to the output throttle
# and every frame was decoded in one go: the controller grew by hundreds
# of MB and blocked its loop until the nodes timed out (bob's running job
# restarted). Now the replies owed count toward the peer's limits, it is
# no longer read, and every other client is served: no node DOWN, bob's
# job untouched, bob's commands answered (their times reported), the
# controller below +64 MiB. The figures come from tests/bench/stall.sh.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf
# A load test: 20,000 jobs queued, 300 requests never read, commands timed
# against the controller's pace. Under ASan on a 2-core CI machine running
# three other tests (three replicas among them) listing 20,000 jobs alone
# passed its 30 s bound (seen: one of bob's commands failed that way).
# The normal build runs it; the sanitizers run the rest of the suite.
if grep -q __asan_init "$COHORT_BINDIR/cohortd"; then
	echo "SKIP: $TEST_NAME is a load test, run by the normal build; cohortd here is built with ASan"
	exit 77
fi

# The queue: 5,000 jobs through the API, the rest copied in SQLite with
# the controller stopped (FILL=copy: the same queue, a third of the time).
FILL=copy bash "$top_srcdir/tests/bench/stall.sh" 20000 300 10 >"$T/bench.out" 2>"$T/bench.err" ||
	fail "the stall bench failed: $(tail -n 30 "$T/bench.err")"
cat "$T/bench.out"
fig() {
	local v
	v=$(grep -o "\b$1=[-0-9A-Z]*" "$T/bench.out" | tail -n 1)
	[ -n "$v" ] || fail "no figure $1 in: $(cat "$T/bench.out")"
	echo "${v#*=}"
}
[ "$(fig stall_sent)" -ge 2 ] || fail "the stalling client got fewer than 2 requests written"
[ "$(fig down_events)" -eq 0 ] || fail "nodes went DOWN during the stall"
[ "$(fig nodes_down_max)" -eq 0 ] || fail "the admin saw nodes DOWN during the stall"
[ "$(fig bob_state)" = RUNNING ] || fail "bob's job is $(fig bob_state), not RUNNING"
[ "$(fig bob_restarts)" -eq 0 ] || fail "bob's job was restarted $(fig bob_restarts) times"
[ "$(fig bob_failures)" -eq 0 ] || fail "$(fig bob_failures) of bob's commands failed"
# Every one of bob's commands was answered (each has its own 30 s net,
# a failure counted in bob_failures); how long they took is the bench's
# figure, printed above, never compared: a loaded machine is slow at
# listing 20,000 jobs with or without an attack.
[ "$(fig samples)" -ge 1 ] || fail "bob ran no command during the stall"
[ "$(fig rss_delta_kib)" -lt 65536 ] || fail "the controller grew by $(fig rss_delta_kib) KiB"
exit 0
