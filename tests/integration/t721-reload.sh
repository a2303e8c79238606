#!/bin/bash
# SIGHUP re-reads the configuration: a per-user limit, a queue's quota and
# the log level change at once, each change logged on its own line, with
# no connection dropped (the agent stays registered once, a `cohort wait`
# started before the reload finishes after it), and debug lines appear;
# a file that does not
# load, or a queue added, changes nothing and the log says why. The
# agent re-reads its log level the same way.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_CONTROLLER_CONF=$(printf '[tenants]\nmax_pending_per_user = 2\nsubmit_rate = 0\n\n[queue gpu-a]\ngpus = 16\n')
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 1 --gpus 8
unset COHORT_LOCAL_CONTROLLER_CONF
CONF=$C/cohortd.conf
CLOG=$C/cohortd.log
read -r cpid <"$C/cohortd.pid" || fail "no $C/cohortd.pid"

registrations() { grep -c 'node node01: registered' "$CLOG" || true; }
hup() { kill -HUP "$cpid" || fail "cannot signal cohortd ($cpid)"; }
# set_key KEY VALUE: rewrite the first "KEY = ..." line of cohortd.conf.
set_key() {
	sed -i "0,/^$1 = .*/s//$1 = $2/" "$CONF"
	grep -qx "$1 = $2" "$CONF" || fail "cannot set $1 = $2 in $CONF"
}
wait_log() {
	wait_for 10 grep -qF -- "$1" "$CLOG" || fail "cohortd.log has no line '$1': $(grep SIGHUP "$CLOG" | tail -5)"
}

### 1. The limit as started: two waiting jobs, the third refused.
j1=$(job_submit --hold -- true)
job_submit --hold -- true >/dev/null
expect_exit 1 cohort submit --hold -- true
grep -qF 'alice has 2 pending jobs, the limit is 2' "$ERR" || fail "third submit: $(cat "$ERR")"
[ "$(registrations)" = 1 ] || fail "node01 registered $(registrations) times before the reload"

# At the level info, a new connection (COHORT_MUX=no: a connection of
# its own) logs nothing.
COHORT_MUX=no cohort jobs >/dev/null || fail "cohort jobs (COHORT_MUX=no)"
! grep -q ': debug: ' "$CLOG" || fail "debug lines at log_level info: $(grep ': debug: ' "$CLOG" | head -3)"

# A client waiting across the reload.
cohort wait "$j1" --timeout 300 >"$T/wait.out" 2>&1 &
waiter=$!
track_pid "$waiter"

### 2. Reload: a higher limit, a bigger quota, debug logging.
### Two start-up keys changed too: one warning each, the rest applied.
set_key max_pending_per_user 3
set_key gpus 32
sed -i '0,/^\[controller\]$/s//[controller]\nlog_level = debug/' "$CONF"
set_key node_timeout 6s
set_key max_connections 1000
expect_log_error 'SIGHUP: \[controller\] node_timeout changed in .*: restart cohortd to apply it'
expect_log_error 'SIGHUP: \[limits\] max_connections changed in .*: restart cohortd to apply it'
hup
wait_log 'SIGHUP: max_pending_per_user 2 -> 3'
wait_log 'SIGHUP: queue gpu-a nominal 16 -> 32'
wait_log 'SIGHUP: log_level info -> debug'
wait_log 'SIGHUP: [controller] node_timeout changed in'
wait_log 'SIGHUP: [limits] max_connections changed in'
COHORT_MUX=no cohort jobs >/dev/null || fail "cohort jobs (COHORT_MUX=no)"
wait_for 10 grep -qE ': debug: conn [0-9]+: alice \(user\) connected' "$CLOG" ||
	fail "no debug line after the reload to log_level debug"
job_submit --hold -- true >/dev/null
expect_exit 1 cohort submit --hold -- true
grep -qF 'the limit is 3' "$ERR" || fail "fourth submit after the reload: $(cat "$ERR")"
cohort queues --json >"$T/queues.json" || fail "cohort queues --json"
[ "$(json_get "$T/queues.json" '[q["nominal"] for q in d["queues"] if q["name"] == "gpu-a"][0]')" = 32 ] ||
	fail "gpu-a's nominal after the reload: $(cat "$T/queues.json")"

### 3. A file that does not load changes nothing, and says why.
set_key max_pending_per_user lots
expect_log_error 'SIGHUP: .*max_pending_per_user.*nothing changed'
hup
wait_log 'nothing changed'
grep -E 'SIGHUP: .*max_pending_per_user.*nothing changed' "$CLOG" >/dev/null ||
	fail "the refused reload does not name the key: $(grep 'nothing changed' "$CLOG")"
expect_exit 1 cohort submit --hold -- true
grep -qF 'the limit is 3' "$ERR" || fail "a broken file changed the limit: $(cat "$ERR")"

### 4. Adding a queue needs a restart: refused, nothing changed.
set_key max_pending_per_user 10
printf '\n[queue gpu-b]\ngpus = 8\n' >>"$CONF"
expect_log_error 'SIGHUP: .*restart cohortd to apply; nothing changed'
hup
wait_log 'restart cohortd to apply; nothing changed'
expect_exit 1 cohort submit --hold -- true
grep -qF 'the limit is 3' "$ERR" || fail "a refused reload changed the limit: $(cat "$ERR")"

### 4b. A CA file that does not vouch for cohortd's own certificate (a
### rotation that dropped the old CA too soon) would cut off every peer
### and let none back: refused, nothing changed.
sed -i '/^\[queue gpu-b\]$/,$d' "$CONF"
cohort-pki "$T/other" --controller 127.0.0.1 >/dev/null 2>&1 ||
	fail "cohort-pki $T/other"
ca_line=$(grep -m1 '^ca = ' "$CONF") && crl_line=$(grep -m1 '^crl = ' "$CONF") ||
	fail "no ca and crl lines in $CONF"
sed -i -e "s|^ca = .*|ca = $T/other/ca.pem|" -e "s|^crl = .*|crl = $T/other/ca.crl|" "$CONF"
expect_log_error 'SIGHUP: certificate of this daemon is not signed by the CA in .*nothing changed'
hup
wait_log 'certificate of this daemon is not signed by the CA in'
expect_exit 1 cohort submit --hold -- true
grep -qF 'the limit is 3' "$ERR" || fail "a refused CA changed something: $(cat "$ERR")"
sed -i -e "s|^ca = .*|$ca_line|" -e "s|^crl = .*|$crl_line|" "$CONF"

### 5. No connection was dropped: the agent registered once, the waiter
### is still there and sees its job end.
[ "$(registrations)" = 1 ] || fail "node01 registered $(registrations) times: a reload dropped its connection"
proc_alive "$waiter" || fail "cohort wait died during the reloads: $(cat "$T/wait.out")"
expect_exit 0 cohort release "$j1"
wait "$waiter" || fail "cohort wait $j1 after the reloads: $(cat "$T/wait.out")"

### 6. The agent re-reads its log level.
read -r apid <"$C/node01.pid" || fail "no $C/node01.pid"
sed -i '0,/^\[agent\]$/s//[agent]\nlog_level = debug/' "$C/node01.conf"
kill -HUP "$apid"
wait_for 10 grep -qF 'SIGHUP: log_level info -> debug' "$C/node01.log" ||
	fail "the agent did not log its new level: $(tail -3 "$C/node01.log")"
[ "$(registrations)" = 1 ] || fail "the agent's reload dropped its connection"
exit 0
