#!/bin/bash
# A health check program that hangs is killed after the agent's health
# timeout, and counts as a failure: the node is FAILED ("timed out") and
# drained. Once the program answers again and an admin resumes the node,
# it is back in service.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the health check this test makes hang
# is killed, and the node reported FAILED.
expect_log_error 'cohort-agent: warning: health: .*/health still running after [0-9]+ ms; killed'
expect_log_error 'cohort-agent: warning: health: node FAILED: health check timed out after 1 s'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
MARK="cohort-t270-$$-$RANDOM"

# node02 again, by hand, with a health program that hangs while
# $T/hang exists, and a 1 s timeout.
cat >"$T/health" <<SCRIPT
#!/bin/sh
if [ -e $T/hang ]; then
	sh -c 'sleep 300; : $MARK'
fi
exit 0
SCRIPT
chmod 755 "$T/health"
cohort-local kill "$C" node02 >"$T/kill.out" 2>&1 || fail "cohort-local kill node02: $(cat "$T/kill.out")"
conf=$T/node02.conf
sed -e "s|^spool = .*|spool = $T/spool|" \
	-e "s|^ca = |ca = $C/|; s|^cert = |cert = $C/|; s|^key = |key = $C/|" \
	-e "s|^program = .*|program = $T/health|; s|^timeout = .*|timeout = 1s|" \
	"$C/node02.conf" >"$conf"
grep -qx "program = $T/health" "$conf" && grep -qx 'timeout = 1s' "$conf" ||
	fail "cannot derive an agent config from $C/node02.conf"
offset=$(stat -c %s "$C/cohortd.log")
watch_log "$T/node02-hand.log"
cohort-agent -f -c "$conf" >>"$T/node02-hand.log" 2>&1 &
track_pid $!
_registered() { tail -c +"$((offset + 1))" "$C/cohortd.log" | grep -q 'node node02: registered'; }
wait_for 15 _registered || fail "the hand-started agent did not register"
wait_node 5 node02 'n["state"] == "UP" and n["health"] == "OK" and n["drain"] is None'

touch "$T/hang"
wait_node 10 node02 'n["health"] == "FAILED" and n["drain"] in ("DRAINING", "DRAINED")'
node_expr node02 '"timed out" in n["reason"]' ||
	fail "node02's reason does not say 'timed out': $(cohort nodes --json)"
log "node02: $(cohort nodes --json | "$PYTHON" -c 'import json,sys; print([x["reason"] for x in json.load(sys.stdin)["nodes"] if x["name"] == "node02"][0])')"
# The hung program is killed at the timeout, not left behind: every run
# hanging now is gone within the timeout (plus slack) while the hang goes on.
wait_for 5 marker_alive "$MARK" || fail "no health check hangs while $T/hang exists"
mapfile -t hung < <(pgrep -f -- "$MARK")
_all_gone() {
	local p
	for p in "$@"; do
		proc_gone "$p" || return 1
	done
}
wait_for 10 _all_gone "${hung[@]}" || fail "hung health check(s) ${hung[*]} outlived the 1 s timeout"
rm -f "$T/hang"
wait_for 5 not marker_alive "$MARK" || fail "a hung health check is still running: $(pgrep -af -- "$MARK")"
grep -q 'timed out' "$T/node02-hand.log" || fail "the agent's log does not report the timeout"

# Healthy again: the admin resumes it.
as_user "$C" admin
wait_for 10 cohort resume node02 || fail "cohort resume node02 kept failing: $(cohort resume node02 2>&1)"
as_user "$C" alice
wait_node 5 node02 'n["state"] == "UP" and n["health"] == "OK" and n["drain"] is None'
exit 0
