#!/bin/bash
# Revocation. cohort-pki revoke + SIGHUP: bob's open connection is cut and
# his next command is refused (exit 3, "certificate revoked"), alice goes
# on; a revoked agent is cut off, cannot come back, and its node goes DOWN
# while the other stays UP; a broken CRL at SIGHUP is logged and the old
# one kept, the controller serving on; an agent leaves a controller whose
# certificate is revoked; a crl that is missing or broken at start stops
# either daemon with one line naming the file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Revoked certificates are refused, their nodes go DOWN, bad CRL files are kept out.
expect_log_error 'warning: (conn [0-9]+: |controller: )?certificate of (user bob|agent node02|controller 127\.0\.0\.1): certificate revoked'
expect_log_error 'cohortd: warning: node node0[12]: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: SIGHUP: CRL file .*: (no PEM CRL in it|CRL 1 is not signed by the cluster CA); keeping the certificates'
expect_log_error 'cohortd: warning: CRL file .*: CRL 1 expires in 10 day\(s\)'

# configure requires openssl: without it here the environment is broken.
command -v openssl >/dev/null || fail "no openssl on PATH"
own_runtime_dir
unset COHORT_MUX

export COHORT_LOCAL_NODE_TIMEOUT=5s
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
grep -qxF "crl = $C/ca.crl" "$C/cohortd.conf" || fail "cohort-local wrote no crl = into cohortd.conf"
grep -qxF "crl = $C/ca.crl" "$C/node01.conf" || fail "cohort-local wrote no crl = into node01.conf"
[ -s "$C/ca.crl" ] || fail "cohort-pki wrote no ca.crl"
grep -q "checking peer certificates against the CRLs in $C/ca.crl" "$C/cohortd.log" ||
	fail "cohortd does not say it checks the CRL"
wait_node 20 node01 'n["state"] == "UP"'
wait_node 20 node02 'n["state"] == "UP"'
CTL=$(cat "$C/cohortd.pid")

# count_at_least N REGEX FILE: FILE has at least N lines matching REGEX.
count_at_least() {
	[ "$(grep -c -- "$2" "$3")" -ge "$1" ]
}

# hup PID LOG: send SIGHUP and wait for the daemon to say in LOG that it
# reloaded (or kept the old files).
hup() {
	local pid="$1" log="$2" before
	before=$(grep -c "SIGHUP: " "$log" || true)
	kill -HUP "$pid" || fail "cannot signal $pid"
	wait_for 10 count_at_least $((before + 1)) "SIGHUP: " "$log" ||
		fail "$log shows no reaction to SIGHUP: $(tail -n 3 "$log")"
}

# Bob and alice both work; bob's mux keeps a connection open.
as_user "$C" bob
expect_exit 0 cohort jobs
as_user "$C" alice
expect_exit 0 cohort submit --name before -- true

expect_exit 0 cohort-pki revoke "$C" bob
grep -q "revoked user-bob.crt" "$OUT" || fail "revoke did not name user-bob.crt: $(cat "$OUT")"
grep -qF "$C/ca.crl" "$OUT" || fail "revoke did not say where the CRL is: $(cat "$OUT")"
# Not yet reloaded: the controller still has the old CRL.
as_user "$C" bob
expect_exit 0 env COHORT_MUX=no cohort jobs
hup "$CTL" "$C/cohortd.log"
grep -q "certificate of user bob: certificate revoked; closing" "$C/cohortd.log" ||
	fail "bob's open connection was not cut: $(tail -n 5 "$C/cohortd.log")"
expect_exit 3 cohort jobs
stderr_one_line "cohort: " "certificate revoked"
expect_exit 3 env COHORT_MUX=no cohort submit -- true
stderr_one_line "cohort: " "certificate revoked"
as_user "$C" alice
expect_exit 0 cohort jobs
expect_exit 0 env COHORT_MUX=no cohort submit --name after -- true

# A revoked agent: node02 is cut off, cannot come back, goes DOWN.
expect_exit 0 cohort-pki revoke "$C" node02
grep -q "revoked agent-node02.crt" "$OUT" || fail "revoke did not name agent-node02.crt: $(cat "$OUT")"
hup "$CTL" "$C/cohortd.log"
hup "$(cat "$C/node02.pid")" "$C/node02.log"
grep -q "certificate of agent node02: certificate revoked; closing" "$C/cohortd.log" ||
	fail "node02's connection was not cut: $(tail -n 5 "$C/cohortd.log")"
wait_node 30 node02 'n["state"] == "DOWN"'
# It keeps trying, and every try is refused.
wait_for 20 count_at_least 2 "alert certificate revoked" "$C/node02.log" ||
	fail "node02 was not refused on reconnecting: $(tail -n 5 "$C/node02.log")"
node_expr node02 'n["state"] == "DOWN"' || fail "node02 came back"
node_expr node01 'n["state"] == "UP"' || fail "node01 is not UP"
# The agent's own reload kept the controller (not revoked).
grep -q "SIGHUP: reloaded" "$C/node02.log" || fail "node02 did not reload its CRL"
grep -q "certificate of controller" "$C/node02.log" &&
	fail "node02 refused the controller's (valid) certificate"

# A broken CRL at SIGHUP: logged, the old one kept, service goes on.
cp "$C/ca.crl" "$T/good.crl"
echo "not a CRL" >"$C/ca.crl"
hup "$CTL" "$C/cohortd.log"
grep -q "SIGHUP: CRL file $C/ca.crl: .*keeping the certificates and CRL loaded before" "$C/cohortd.log" ||
	fail "a broken CRL was not reported: $(tail -n 3 "$C/cohortd.log")"
expect_exit 0 env COHORT_MUX=no cohort jobs
as_user "$C" bob
expect_exit 3 env COHORT_MUX=no cohort jobs
stderr_one_line "cohort: " "certificate revoked"
as_user "$C" alice
# A CRL of another CA is refused the same way.
cohort-pki "$T/other" --controller 127.0.0.1 >/dev/null || fail "cohort-pki for another CA failed"
cp "$T/other/ca.crl" "$C/ca.crl"
hup "$CTL" "$C/cohortd.log"
grep -q "SIGHUP: CRL file $C/ca.crl: CRL 1 is not signed by the cluster CA" "$C/cohortd.log" ||
	fail "a foreign CRL was not reported: $(tail -n 3 "$C/cohortd.log")"
expect_exit 0 env COHORT_MUX=no cohort jobs
node_expr node01 'n["state"] == "UP"' || fail "node01 is not UP after the bad reloads"
kill -0 "$CTL" || fail "cohortd died"
cp "$T/good.crl" "$C/ca.crl"
# A CRL that expires within a month is taken, with a warning at every
# load: once it has expired, every peer would be refused.
expect_exit 0 cohort-pki crl "$C" --days 10
hup "$CTL" "$C/cohortd.log"
grep -q "CRL file $C/ca.crl: CRL 1 expires in [0-9]* day(s); renew it" "$C/cohortd.log" ||
	fail "a CRL that expires soon was not warned about: $(tail -n 3 "$C/cohortd.log")"
expect_exit 0 env COHORT_MUX=no cohort jobs

# The agents check the controller too: once its certificate is revoked,
# node01 leaves it on SIGHUP, refuses it on every reconnect, goes DOWN.
expect_exit 0 cohort-pki revoke "$C" controller
hup "$(cat "$C/node01.pid")" "$C/node01.log"
grep -q "certificate of controller 127.0.0.1: certificate revoked" "$C/node01.log" ||
	fail "node01 kept a revoked controller: $(tail -n 3 "$C/node01.log")"
wait_for 15 grep -q "cannot verify the server certificate of 127.0.0.1: certificate revoked" "$C/node01.log" ||
	fail "node01 did not refuse the revoked controller on reconnecting: $(tail -n 3 "$C/node01.log")"
wait_node 30 node01 'n["state"] == "DOWN"'

# At start, a crl that is missing or broken stops the daemon with one line
# naming the file.
B=$T/bad
mkdir -p "$B"
cp "$C/ca.pem" "$C/controller.crt" "$C/controller.key" "$C/agent-node01.crt" \
	"$C/agent-node01.key" "$B/"
# start_ctl CRL: cohortd with crl = CRL, expected to fail.
start_ctl() {
	cat >"$B/cohortd.conf" <<EOF
[controller]
listen = 127.0.0.1:0
database = cohort.db
[tls]
ca = ca.pem
cert = controller.crt
key = controller.key
crl = $1
EOF
	expect_exit 1 timeout 10 cohortd -f -c "$B/cohortd.conf"
	stderr_one_line_with "$B/$1" "${2:-}"
}
start_ctl missing.crl "No such file"
echo "garbage" >"$B/garbage.crl"
start_ctl garbage.crl "no PEM CRL"
cp "$T/other/ca.crl" "$B/foreign.crl"
start_ctl foreign.crl "not signed by the cluster CA"
head -c 200 "$C/ca.crl" >"$B/cut.crl"
start_ctl cut.crl "does not parse"
sed -e "s/^crl = .*/crl = missing.crl/" -e "s|^spool = .*|spool = $B/spool|" \
	"$C/node01.conf" >"$B/node01.conf"
expect_exit 1 timeout 10 cohort-agent -f -c "$B/node01.conf"
# (after its inventory line)
tail -n 1 "$ERR" | grep -qF "CRL file $B/missing.crl: No such file" ||
	fail "the agent did not name the missing CRL: $(cat "$ERR")"
exit 0
