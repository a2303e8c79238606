#!/bin/bash
# Connection floods, the authenticated side: a cap per identity and an
# idle timeout for users and admins.
#  1. max_connections_per_user = 3: alice opens 5 connections; 3 are
#     served, 2 refused with ERROR_LIMIT and a text that says why;
#     alice's CLI is refused the same way while they are held; bob is
#     unaffected.
#  2. idle_timeout = 1s: a connection that sends nothing after Hello is
#     closed after about a second (and counted in /metrics), which also
#     gives alice her slots back; `cohort events --follow` (which polls)
#     is never closed as idle while it runs.
#  3. Room kept for agents: with max_connections = 32 and agent_reserve =
#     20, people (users and admins) get 8 connections (32 less the
#     reserve, less the handshake budget of 32/8); the ninth is refused
#     with ERROR_UNAVAILABLE, yet a restarted agent gets back in.
#  4. A fair loop: 500 requests written at once are all answered, in
#     order, while the controller handles at most 32 of them per round
#     (it counts the rounds it cut short).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf
# Each command on its own connection, so each goes through admission.
export COHORT_MUX=no

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 4
restart_with() {
	local a
	cp "$C/cohortd.conf.orig" "$C/cohortd.conf"
	for a in "$@"; do
		[ "${a%% *}" != max_connections ] || sed -i '/^max_connections = /d' "$C/cohortd.conf"
	done
	printf '%s\n' "$@" >>"$C/cohortd.conf"
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
}
cp "$C/cohortd.conf" "$C/cohortd.conf.orig"
alice_env=$(cohort-local env "$C" --as alice)
bob_env=$(cohort-local env "$C" --as bob)
metric() {
	"$PYTHON" - "$(tr -dc 0-9 <"$C/http.port")" "$1" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode()
for line in body.splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(line.split()[-1]); break
else:
    print(0)
PY
}

### 1. Per-identity cap.
restart_with "max_connections_per_user = 3"
eval "$alice_env"
"$PYTHON" "$PYCLIENT" hold --count 5 --hold 120 >"$T/hold.out" 2>"$T/hold.err" &
hold=$!
track_pid "$hold"
wait_for 20 grep -q '^ok ' "$T/hold.out" || fail "hold printed nothing: $(cat "$T/hold.err")"
[ "$(head -n 1 "$T/hold.out")" = "ok 3 refused 2" ] || fail "alice's 5 connections: $(cat "$T/hold.out")"
grep -qx "ERROR_LIMIT: too many connections for 'alice': the limit is 3 per identity; close some and retry" "$T/hold.out" ||
	fail "the refusal does not say why: $(cat "$T/hold.out")"
expect_exit 3 cohort jobs
stderr_has "too many connections for 'alice'"
eval "$bob_env"
expect_exit 0 cohort jobs
[ "$(metric 'cohort_connections_refused_total{reason="identity"}')" -ge 3 ] ||
	fail "identity refusals not counted"
[ "$(metric 'cohort_connections_by_state{state="user"}')" -ge 3 ] ||
	fail "alice's connections are not in the gauge"
kill "$hold"

### 2. Idle timeout.
restart_with "max_connections_per_user = 3" "idle_timeout = 1s"
eval "$alice_env"
"$PYTHON" "$PYCLIENT" idle --wait 20 >"$T/idle.out" 2>"$T/idle.err" ||
	fail "pyclient idle failed: $(cat "$T/idle.err")"
grep -q '^closed after ' "$T/idle.out" || fail "an idle connection was not closed: $(cat "$T/idle.out")"
secs=$(sed -n 's/^closed after \([0-9]*\)\..*/\1/p' "$T/idle.out")
# Not before its timeout; when after it is reported (pyclient's 20 s
# wait is the net), not compared.
[ "$secs" -ge 1 ] || fail "the idle connection was closed after $secs s, before idle_timeout 1s"
log "an idle connection was closed after $secs s (idle_timeout 1s)"
[ "$(metric 'cohort_connections_timed_out_total{reason="idle_timeout"}')" -ge 1 ] ||
	fail "idle closures not counted"
# Held connections go idle too: alice gets her slots back.
# Files of its own: the shell truncates a reused one only once the
# background job starts, and the wait could read the first hold's line.
"$PYTHON" "$PYCLIENT" hold --count 3 --hold 120 >"$T/hold2.out" 2>"$T/hold2.err" &
hold=$!
track_pid "$hold"
wait_for 20 grep -q '^ok ' "$T/hold2.out" || fail "hold printed nothing: $(cat "$T/hold2.err")"
[ "$(head -n 1 "$T/hold2.out")" = "ok 3 refused 0" ] || fail "alice's 3 connections: $(cat "$T/hold2.out")"
_alice_served() { cohort jobs >/dev/null 2>&1; }
wait_for 10 _alice_served || fail "alice's idle connections were not reclaimed"
kill "$hold"
# A --follow stream polls, so it is never idle.
idle0=$(metric 'cohort_connections_timed_out_total{reason="idle_timeout"}')
cohort events --follow >"$T/follow.out" 2>"$T/follow.err" &
follow=$!
track_pid "$follow"
wait_for 10 test -s "$T/follow.out" || fail "events --follow printed nothing"
sleep 3.5	# more than three idle timeouts: the point of this test
proc_alive "$follow" || fail "events --follow ended: $(cat "$T/follow.err")"
[ "$(metric 'cohort_connections_timed_out_total{reason="idle_timeout"}')" = "$idle0" ] ||
	fail "the --follow stream's connection was closed as idle"
kill "$follow"

### 4. (first, while alice has room) Frames per round.
eval "$alice_env"
y0=$(metric cohort_read_yields_total)
"$PYTHON" "$PYCLIENT" pipeline --count 500 >"$T/pipe.out" 2>"$T/pipe.err" ||
	fail "pipeline failed: $(cat "$T/pipe.err")"
[ "$(cat "$T/pipe.out")" = "answered 500 in order" ] || fail "pipelined requests: $(cat "$T/pipe.out")"
[ "$(metric cohort_read_yields_total)" -gt "$y0" ] || fail "500 buffered requests were handled in one round"

### 3. Room kept for agents.
restart_with "max_connections = 32" "agent_reserve = 20" "max_connections_per_user = 3"
hold_as() {
	eval "$(cohort-local env "$C" --as "$1")"
	"$PYTHON" "$PYCLIENT" hold --count "$2" --hold 120 >"$T/hold-$1.out" 2>"$T/hold-$1.err" &
	track_pid $!
	wait_for 20 grep -q '^ok ' "$T/hold-$1.out" || fail "hold as $1 printed nothing: $(cat "$T/hold-$1.err")"
}
hold_as alice 3
hold_as bob 3
hold_as admin 3
[ "$(head -n 1 "$T/hold-alice.out")" = "ok 3 refused 0" ] || fail "alice: $(cat "$T/hold-alice.out")"
[ "$(head -n 1 "$T/hold-bob.out")" = "ok 3 refused 0" ] || fail "bob: $(cat "$T/hold-bob.out")"
[ "$(head -n 1 "$T/hold-admin.out")" = "ok 2 refused 1" ] || fail "admin (the 9th person): $(cat "$T/hold-admin.out")"
grep -qx "ERROR_UNAVAILABLE: the controller is full: the connections left are kept for its agents; retry later" "$T/hold-admin.out" ||
	fail "the refusal does not say why: $(cat "$T/hold-admin.out")"
[ "$(metric 'cohort_connections_refused_total{reason="reserve"}')" -ge 1 ] || fail "reserve refusals not counted"
n0=$(grep -c 'registered with the controller' "$C/node01.log")
cohort-local kill "$C" node01 >"$T/kill.out" 2>&1 || fail "cohort-local kill node01: $(cat "$T/kill.out")"
# Its wait for the node to be UP asks as the admin, who has no room now:
# watch the agent's log instead.
cohort-local start "$C" node01 >"$T/start.out" 2>&1 &
track_pid $!
_back() { [ "$(grep -c 'registered with the controller' "$C/node01.log")" -gt "$n0" ]; }
wait_for 20 _back || fail "node01 did not get back in while people filled their share: $(tail -n 5 "$C/node01.log")"
exit 0
