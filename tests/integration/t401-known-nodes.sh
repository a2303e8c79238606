#!/bin/bash
# Only known nodes register: with neither a topology nor
# `nodes =`, every agent is refused (and the controller says so when it
# starts); with `nodes = gpu[01-02]` those two register and gpu03 is
# refused (ERROR_DENIED at Hello, connection closed, never listed); with
# accept_unknown_nodes = yes, gpu03 registers too. A node dropped from
# the list is named at start as one that cannot register again.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Unknown nodes are refused, and the configurations that allow or refuse them are warned about.
expect_log_error 'cohortd: warning: node gpu0[0-9]: refused \(register\): the node is neither in the topology nor in .nodes.'
expect_log_error 'cohortd: warning: node gpu02 is in the database but neither in the topology nor in .nodes.'
expect_log_error 'cohortd: warning: neither a topology nor .nodes. is configured: every agent registration will be refused'
expect_log_error 'cohortd: warning: accept_unknown_nodes = yes: any agent certificate may register'
need_python_protobuf

C=$T/cluster
cluster_up "$C" --nodes 0
[ ! -e "$C/topology.conf" ] || fail "cohort-local wrote a topology for an empty cluster"
mkdir -p "$T/pki"
cp "$C/ca.pem" "$C/ca.key" "$T/pki/" || fail "cannot copy the CA"
cohort-pki "$T/pki" --controller 127.0.0.1 --agents gpu01,gpu02,gpu03 >"$T/pki.out" 2>&1 ||
	fail "cohort-pki: $(cat "$T/pki.out")"

register() {
	pyclient --server "$COHORT_SERVER" --cert "$T/pki/agent-$1.crt" \
		--key "$T/pki/agent-$1.key" --ca "$C/ca.pem" agent --name "$1" \
		--gpus 1 --quiet 1 register 2>"$T/reg-$1.err" | head -n 1
}
listed() {
	cohort nodes --json >"$T/nodes.json" || fail "cohort nodes failed"
	json_get "$T/nodes.json" '",".join(sorted(x["name"] for x in d["nodes"]))'
}
restart_with() {
	if [ -s "$C/cohortd.pid" ]; then
		cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
	fi
	sed -i '/^nodes = /d; /^accept_unknown_nodes = /d' "$C/cohortd.conf"
	[ -z "$1" ] || sed -i "/^\[controller\]$/a $1" "$C/cohortd.conf"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
	as_user "$C" alice
}

# 1. Nothing configured: refused, and the controller warned.
grep -q "every agent registration will be refused" "$C/cohortd.log" ||
	fail "no warning about refusing every node: $(cat "$C/cohortd.log")"
[ "$(register gpu01)" = "hello: ERROR_DENIED closed" ] || fail "gpu01 without a nodes list: $(cat "$T/reg-gpu01.err")"
grep -q "not known to this controller" "$T/reg-gpu01.err" || fail "the refusal does not say why: $(cat "$T/reg-gpu01.err")"
[ "$(listed)" = "" ] || fail "nodes listed after refusals: $(listed)"

# 2. nodes = gpu[01-02].
restart_with 'nodes = gpu[01-02]'
[ "$(register gpu01)" = "register: registered" ] || fail "gpu01 in the nodes list: $(cat "$T/reg-gpu01.err")"
[ "$(register gpu02)" = "register: registered" ] || fail "gpu02 in the nodes list: $(cat "$T/reg-gpu02.err")"
[ "$(register gpu03)" = "hello: ERROR_DENIED closed" ] || fail "gpu03, not in the list: $(cat "$T/reg-gpu03.err")"
[ "$(listed)" = "gpu01,gpu02" ] || fail "with nodes = gpu[01-02], cohort nodes lists '$(listed)'"
# gpu02 leaves the list: the controller says it cannot register again,
# and it cannot; the admin can delete it once it is DOWN.
restart_with 'nodes = gpu01'
grep -q "node gpu02 is in the database but neither in the topology nor in 'nodes'" "$C/cohortd.log" ||
	fail "no warning about gpu02: $(tail -5 "$C/cohortd.log")"
[ "$(register gpu02)" = "hello: ERROR_DENIED closed" ] || fail "gpu02, no longer listed: $(cat "$T/reg-gpu02.err")"
# A malformed list stops the controller with the line named.
cohort-local kill "$C" controller >/dev/null 2>&1 || fail "cannot stop the controller"
sed -i 's/^nodes = .*/nodes = gpu[01-/' "$C/cohortd.conf"
expect_exit 1 cohortd -f -c "$C/cohortd.conf"
grep -q "cohortd.conf:[0-9]*: .*not a hostlist" "$ERR" || fail "a malformed nodes list: $(cat "$ERR")"

# 3. accept_unknown_nodes = yes.
restart_with 'accept_unknown_nodes = yes'
[ "$(register gpu03)" = "register: registered" ] || fail "gpu03 with accept_unknown_nodes: $(cat "$T/reg-gpu03.err")"
grep -q "accept_unknown_nodes = yes" "$C/cohortd.log" || fail "no warning about accept_unknown_nodes"
[ "$(listed)" = "gpu01,gpu02,gpu03" ] || fail "with accept_unknown_nodes, cohort nodes lists '$(listed)'"
exit 0
