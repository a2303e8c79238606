#!/bin/bash
# Connection admission for agents: one agent
# certificate used to take every connection slot, since after Hello an
# agent's connection had no deadline, no cap and no stall timeout, and
# any CA-signed agent certificate got a session.
#  1. max_connections = 64: 63 connections with node01's certificate
#     (the real agent may hold one more): at most 2 per node, the rest
#     refused with ERROR_LIMIT; the admin is served; those that never
#     register are closed after hello_timeout; the real agent, killed
#     and restarted, registers again.
#  2. A connection that registers node01 again supersedes the agent's
#     older one (closed, logged), and the agent comes back.
#  3. An agent certificate for a node in neither the topology nor
#     `nodes` is refused at Hello (ERROR_DENIED, closed).
#  4. max_connections = 8 with agent_reserve = 20: people keep a slot
#     (max_connections / 16 would be 0), so the admin is served.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Connections over the per-agent limit and an unknown node are refused.
expect_log_error 'cohort-agent: warning: controller: (too many connections for node .node01.: the limit is 2 per agent|this node registered again on a newer connection)'
expect_log_error 'cohortd: warning: node node01: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: node evil01: refused \(register\): the node is neither in the topology nor in .nodes.'
need_python_protobuf
# Each command on its own connection, so each goes through admission.
export COHORT_MUX=no

C=$T/cluster
# The agent killed in step 1 is meant to go DOWN.
COHORT_LOCAL_NODE_TIMEOUT=5s cluster_up "$C" --nodes 1 --gpus 1
cp "$C/cohortd.conf" "$C/cohortd.conf.orig"
restart_with() {
	local a
	cp "$C/cohortd.conf.orig" "$C/cohortd.conf"
	sed -i '/^max_connections = /d' "$C/cohortd.conf"
	# The [limits] section is the file's last.
	printf '%s\n' "$@" >>"$C/cohortd.conf"
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
}
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
admin_env=$(cohort-local env "$C" --as admin)
node=node01
[ -e "$C/agent-$node.crt" ] || fail "no certificate for $node"

### 1. One agent certificate holds 63 connections.
restart_with "max_connections = 64" "hello_timeout = 2s"
eval "$admin_env"
wait_node 20 "$node" 'n["state"] == "UP"'
COHORT_CERT="$C/agent-$node.crt" COHORT_KEY="$C/agent-$node.key" \
	"$PYTHON" "$PYCLIENT" hold --count 63 --hold 600 >"$T/hold.out" 2>"$T/hold.err" &
hold=$!
track_pid "$hold"
wait_for 30 grep -q '^ok ' "$T/hold.out" || fail "hold printed nothing: $(cat "$T/hold.err")"
set -- $(head -n 1 "$T/hold.out")
[ "$2" -le 2 ] || fail "node01's certificate held $2 more connections: $(cat "$T/hold.out")"
grep -qx "ERROR_LIMIT: too many connections for node '$node': the limit is 2 per agent" "$T/hold.out" ||
	fail "the refusal does not say why: $(cat "$T/hold.out")"
eval "$admin_env"
expect_exit 0 timeout 20 cohort nodes
grep -q "$node" "$OUT" || fail "cohort nodes did not list $node: $(cat "$OUT")"
# The connection that said Hello but never registered is closed.
_no_register() { grep -q "($node): no registration within 2000 ms; closing" "$C/cohortd.log"; }
wait_for 20 _no_register || fail "the unregistered agent connection was not closed: $(tail -5 "$C/cohortd.log")"
[ "$(metric 'cohort_connections_timed_out_total{reason="hello_timeout"}')" -ge 1 ] ||
	fail "hello_timeout not counted"
[ "$(metric 'cohort_connections_refused_total{reason="identity"}')" -ge 61 ] ||
	fail "refusals not counted: $(metric 'cohort_connections_refused_total{reason="identity"}')"
# The real agent restarts (while the hold still runs) and registers.
cohort-local kill "$C" "$node" >"$T/kill.out" 2>&1 || fail "cohort-local kill $node: $(cat "$T/kill.out")"
wait_node 20 "$node" 'n["state"] != "UP"'
cohort-local start "$C" "$node" >"$T/start.out" 2>&1 || fail "agent $node could not restart: $(cat "$T/start.out")"
wait_node 20 "$node" 'n["state"] == "UP"'
proc_alive "$hold" || fail "the hold ended before the checks did"
kill "$hold"

### 2. A new registration of the node supersedes the older connection.
n0=$(grep -c "superseded by conn" "$C/cohortd.log" || true)
pyclient --cert "$C/agent-$node.crt" --key "$C/agent-$node.key" agent --name "$node" \
	--gpus 1 --quiet 1 register >"$T/reg.out" 2>"$T/reg.err" || true
[ "$(head -n 1 "$T/reg.out")" = "register: registered" ] || fail "re-registration: $(cat "$T/reg.out" "$T/reg.err")"
[ "$(grep -c "superseded by conn" "$C/cohortd.log")" -gt "$n0" ] ||
	fail "the older connection of $node was not closed: $(tail -5 "$C/cohortd.log")"
# The agent notices and comes back (its link reconnects).
_agent_back() { [ "$(grep -c "node $node: registered" "$C/cohortd.log")" -ge 4 ]; }
wait_for 30 _agent_back || fail "the agent did not register again: $(tail -5 "$C/cohortd.log")"
wait_node 20 "$node" 'n["state"] == "UP"'

### 3. An agent certificate for an unknown node.
mkdir -p "$T/evil"
cp "$C/ca.pem" "$C/ca.key" "$T/evil/" || fail "cannot copy the CA"
cohort-pki "$T/evil" --controller 127.0.0.1 --agents evil01 >"$T/pki.out" 2>&1 ||
	fail "cohort-pki evil01: $(cat "$T/pki.out")"
pyclient --cert "$T/evil/agent-evil01.crt" --key "$T/evil/agent-evil01.key" \
	agent --name evil01 --gpus 1 --quiet 1 register >"$T/evil.out" 2>"$T/evil.err" || true
[ "$(head -n 1 "$T/evil.out")" = "hello: ERROR_DENIED closed" ] ||
	fail "an unknown node's Hello got: $(cat "$T/evil.out" "$T/evil.err")"
grep -q "not known to this controller" "$T/evil.err" || fail "the refusal does not say why: $(cat "$T/evil.err")"

### 4. A tiny max_connections still leaves the admin a slot.
restart_with "max_connections = 8" "agent_reserve = 20"
eval "$admin_env"
expect_exit 0 timeout 20 cohort nodes
exit 0
