#!/bin/bash
# Who tasks run as when the agent is root (root only):
#  1. cohort-local maps every user to nobody: the task runs with nobody's
#     uid, never root's;
#  2. an agent without a user map, where the submitting user does not
#     exist: the job fails with a reason saying so;
#  3. an agent mapping users to an account that does not exist: the same.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Jobs of users this node does not know are refused.
expect_log_error 'warning: job [0-9]+: start (failed|refused): .*user .(alice|nosuchuser). does not exist on this node'
need_root

getent passwd nobody >/dev/null || { echo "SKIP: no user 'nobody' here"; exit 77; }
! getent passwd alice >/dev/null || { echo "SKIP: a user 'alice' exists here"; exit 77; }
! getent passwd nosuchuser >/dev/null || { echo "SKIP: a user 'nosuchuser' exists here"; exit 77; }
NOBODY_UID=$(id -u nobody)

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 2
W=$(world_dir out)

### 1. Mapped to nobody.
id=$(job_submit --name whoami --workdir "$W" -- sh -c 'id -u >uid.tmp && id -g >gid.tmp && mv uid.tmp uid && mv gid.tmp gid')
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ -s "$W/uid" ] || fail "the task wrote no uid"
[ "$(cat "$W/uid")" = "$NOBODY_UID" ] || fail "the task ran as uid $(cat "$W/uid"), not nobody's ($NOBODY_UID)"
[ "$(cat "$W/gid")" != 0 ] || fail "the task ran with gid 0"

# run_agent_with_map MAP_LINE: replace node01 by an agent of our own whose
# config has MAP_LINE instead of cohort-local's user map.
HAND_PID=
run_agent_with_map() {
	local conf="$T/node01-$2.conf" offset
	if [ -n "$HAND_PID" ]; then
		{ kill -9 "$HAND_PID" && wait "$HAND_PID"; } 2>/dev/null || true
		HAND_PID=
	else
		cohort-local kill "$C" node01 >"$T/kill.out" 2>&1 || fail "cohort-local kill node01: $(cat "$T/kill.out")"
	fi
	grep -v '^user_map' "$C/node01.conf" |
		sed -e "s|^spool = .*|spool = $T/spool-$2|" \
			-e "s|^ca = |ca = $C/|; s|^cert = |cert = $C/|; s|^key = |key = $C/|" >"$conf"
	[ -z "$1" ] || sed -i "s|^\[tls\]|$1\n\n[tls]|" "$conf"
	grep -q '^name = node01' "$conf" || fail "cannot derive an agent config from $C/node01.conf"
	offset=$(stat -c %s "$C/cohortd.log")
	watch_log "$T/node01-$2.log"
	cohort-agent -f -c "$conf" >>"$T/node01-$2.log" 2>&1 &
	HAND_PID=$!
	track_pid "$HAND_PID"
	_registered() { tail -c +"$((offset + 1))" "$C/cohortd.log" | grep -q 'node node01: registered'; }
	wait_for 15 _registered || fail "the hand-started agent ($2) did not register"
}

# expect_user_refused LABEL: a job on node01 fails, saying the user does
# not exist.
expect_user_refused() {
	local id
	id=$(job_submit --name "$1" --max-restarts 0 --workdir "$W" -- touch "$W/ran-$1")
	wait_state 20 "$id" FAILED COMPLETED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
		fail "job $id ($1) ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]'), not FAILED"
	json_get "$T/job-$id.json" 'd["reason"]' | grep -q 'does not exist' ||
		fail "job $id ($1): reason '$(json_get "$T/job-$id.json" 'd["reason"]')' does not say 'does not exist'"
	[ ! -e "$W/ran-$1" ] || fail "job $id ($1) ran anyway"
}

### 2. No user map: alice has no account here.
run_agent_with_map "" nomap
expect_user_refused nomap

### 3. Mapped to an account that does not exist.
run_agent_with_map "user_map = *:nosuchuser" badmap
expect_user_refused badmap
exit 0
