#!/bin/bash
# Start failures are classified (a refused start retried blindly would
# go ~1,000 times a second):
#  1. a command that does not exist, or a script whose interpreter line
#     names no program: FAILED at once, the reason naming it, one
#     attempt and no restart although --max-restarts 3;
#  2. a workdir that does not exist: the same;
#  3. a start refused by policy on every node (min_uid above the account
#     tasks run as): FAILED within 2 s, at most one attempt per node;
#  4. a start that fails for a reason that may pass (the node's spool is
#     unusable): it backs off (1 s, 2 s, 4 s, ...), its pending reason
#     says so, and only a few attempts happen; once the node is fixed it
#     runs;
#  5. (root) users mapped to a system account (daemon, uid 1): refused
#     for good; with allow_system_users = daemon the job runs as uid 1.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Every start failure this test provokes is logged.
expect_log_error 'warning: job [0-9]+: start refused: refusing to run tasks as .(nobody|daemon).'
expect_log_error 'cohortd: warning: job [0-9]+: start failed: rank [0-9]+ on node0[0-9]: (refusing to run tasks as .(nobody|daemon).|.*/spool/jobs/[0-9]+\.[0-9]+: Not a directory)'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: rank 0 could not start: (cannot change directory to the working directory|cannot run the command)'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir out)

# events_of ID KIND: how many KIND events job ID has.
events_of() {
	cohort events --job "$1" --json >"$T/ev-$1.json" || fail "cohort events --job $1 failed"
	json_get "$T/ev-$1.json" "len([e for e in d['events'] if e['kind'] == '$2'])"
}

# expect_failed_at_once ID TEXT: job ID is FAILED with TEXT in its reason,
# after one allocation and no restart.
expect_failed_at_once() {
	local id="$1" text="$2" reason n
	wait_state 15 "$id" FAILED COMPLETED CANCELLED TIMEOUT
	reason=$(json_get "$T/job-$id.json" 'd["reason"]')
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
		fail "job $id ended $(json_get "$T/job-$id.json" 'd["state"]'): $reason"
	grep -qF -- "$text" <<<"$reason" || fail "job $id: reason '$reason' does not name '$text'"
	grep -q "could not start" <<<"$reason" || fail "job $id: reason '$reason' does not say it could not start"
	[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 0 ] ||
		fail "job $id was restarted $(json_get "$T/job-$id.json" 'd["restarts"]') times"
	n=$(events_of "$id" allocate)
	[ "$n" -eq 1 ] || fail "job $id was placed $n times, expected once"
}

### 1. No such command.
# --export NONE: the agent's PATH. With the default ALL this test's PATH
# travels, and as root it holds directories (/root/...) that the task
# user cannot search, so execvp's answer would be EACCES, not ENOENT.
id=$(job_submit --name nocmd --export NONE --max-restarts 3 --workdir "$W" -- cohort-no-such-command-t411 arg)
expect_failed_at_once "$id" "cannot run the command: No such file or directory"
# The reason is public: it does not name the command line, which is
# private; the task's log (its owner's to read) does.
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
not grep -qF cohort-no-such-command-t411 <<<"$reason" || fail "job $id: the public reason names the command: $reason"
expect_exit 0 cohort logs "$id" --stderr
grep -qF "cannot run 'cohort-no-such-command-t411': No such file or directory" "$OUT" ||
	fail "job $id: its log does not say which command could not run: $(cat "$OUT")"
log "no such command: $(json_get "$T/job-$id.json" 'd["reason"]')"
# A script whose interpreter line names no program: the same (execve's
# ENOENT for the interpreter, not for the script).
printf '#!/bin/no-such-shell-t411\necho never\n' >"$W/typo.sh"
id=$(job_submit --name typo --max-restarts 3 --workdir "$W" "$W/typo.sh")
expect_failed_at_once "$id" "cannot run the command"

### 2. No such workdir.
id=$(job_submit --name nowd --max-restarts 3 --workdir "$W/no-such-dir-t411" -- true)
expect_failed_at_once "$id" "cannot change directory to the working directory: No such file or directory"
# Public too: the path is in the owner's log only.
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
not grep -qF no-such-dir-t411 <<<"$reason" || fail "job $id: the public reason names the working directory: $reason"
log "no such workdir: $(json_get "$T/job-$id.json" 'd["reason"]')"

### 3. Refused by policy on every node: min_uid above the account's uid.
if [ "$(id -u)" -eq 0 ]; then acct_uid=$(id -u nobody); else acct_uid=$(id -u); fi
min=$((acct_uid + 1))
for n in node01 node02; do
	cohort-local kill "$C" "$n" >"$T/kill.out" 2>&1 || fail "cohort-local kill $n: $(cat "$T/kill.out")"
	sed -i -e '/^min_uid/d' -e '/^allow_system_users/d' "$C/$n.conf"
	sed -i "s|^\[agent\]|[agent]\nmin_uid = $min|" "$C/$n.conf"
	grep -q "^min_uid = $min" "$C/$n.conf" || fail "cannot set min_uid in $C/$n.conf"
	cohort-local start "$C" "$n" >"$T/start.out" 2>&1 || fail "cohort-local start $n: $(cat "$T/start.out")"
done
wait_node 20 node01 'n["state"] == "UP"'
wait_node 20 node02 'n["state"] == "UP"'
t0=$(_now_us)
id=$(job_submit --name policy --nodes 2 --max-restarts 3 --workdir "$W" -- touch "$W/ran-policy")
wait_state 10 "$id" FAILED COMPLETED CANCELLED TIMEOUT
t1=$(_now_us)
ms=$(((t1 - t0) / 1000))
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] || fail "policy job $id ended $(json_get "$T/job-$id.json" 'd["state"]'): $reason"
grep -q "min_uid $min" <<<"$reason" || fail "policy job $id: reason '$reason' does not name min_uid"
# Refused for good on the first placement (not retried with backoff): the
# placements are counted below; the time is reported, not asserted.
n=$(events_of "$id" allocate)
[ "$n" -le 1 ] || fail "policy job $id was placed $n times (refused for good on the first)"
[ ! -e "$W/ran-policy" ] || fail "policy job $id ran"
log "refused by policy on every node: FAILED after $ms ms, $n placement(s): $reason"
# The events table does not grow: a little later, nothing new.
before=$(cohort events --json | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))')
sleep 2
after=$(cohort events --json | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))')
[ "$after" -le "$((before + 4))" ] || fail "events grew from $before to $after in 2 s after the job failed"

# Back to a policy that lets the account run.
for n in node01 node02; do
	cohort-local kill "$C" "$n" >"$T/kill.out" 2>&1 || fail "cohort-local kill $n: $(cat "$T/kill.out")"
	sed -i '/^min_uid/d' "$C/$n.conf"
	[ "$acct_uid" -ge 1000 ] || sed -i "s|^\[agent\]|[agent]\nmin_uid = $acct_uid|" "$C/$n.conf"
	cohort-local start "$C" "$n" >"$T/start.out" 2>&1 || fail "cohort-local start $n: $(cat "$T/start.out")"
done
wait_node 20 node01 'n["state"] == "UP"'
wait_node 20 node02 'n["state"] == "UP"'

### 4. A failure that may pass backs off. node01 alone: node02 drained.
as_user "$C" admin
expect_exit 0 cohort drain node02 --reason "t411: one node only"
as_user "$C" alice
rm -rf "$C/node01/spool/jobs"
echo "not a directory" >"$C/node01/spool/jobs"
id=$(job_submit --name transient --workdir "$W" -- true)
_backing_off() { job_expr "$id" '"StartBackoff" in d["reason"] and "node01" in d["reason"]'; }
wait_for 10 _backing_off || { job_show "$id"; fail "job $id: reason '$(json_get "$T/job-$id.json" 'd["reason"]')' does not say it backs off"; }
job_show "$id"
log "backing off: $(json_get "$T/job-$id.json" 'd["reason"]')"
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = PENDING ] || fail "job $id is $(json_get "$T/job-$id.json" 'd["state"]'), not PENDING"
# Attempts at about 0, 1, 3 and 7 s: in 6 s at most four (before the
# back-off, some 6,000).
sleep 6
n=$(events_of "$id" allocate)
log "transient failure: $n start attempts in ~6 s"
[ "$n" -ge 2 ] || fail "job $id was tried $n times in 6 s: it is not retried at all"
[ "$n" -le 4 ] || fail "job $id was tried $n times in 6 s: no back-off"
job_show "$id"
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
grep -Eq 'retry in (2|4|8) s' <<<"$reason" || fail "job $id: the back-off does not grow: '$reason'"
# The node is fixed: the job runs at its next try.
rm -f "$C/node01/spool/jobs"
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') once the node was fixed"

### 5. A system account (root only: only a root agent maps users).
if [ "$(id -u)" -ne 0 ] || ! getent passwd daemon >/dev/null; then
	log "5: skipped (needs root and an account 'daemon')"
	exit 0
fi
daemon_uid=$(id -u daemon)
[ "$daemon_uid" -lt 1000 ] || { log "5: skipped ('daemon' has uid $daemon_uid)"; exit 0; }
# restart_node01 EXTRA: node01 with user_map = *:daemon and EXTRA.
restart_node01() {
	cohort-local kill "$C" node01 >"$T/kill.out" 2>&1 || fail "cohort-local kill node01: $(cat "$T/kill.out")"
	sed -i -e '/^min_uid/d' -e '/^allow_system_users/d' -e 's|^user_map = .*|user_map = *:daemon|' "$C/node01.conf"
	[ -z "$1" ] || sed -i "s|^\[agent\]|[agent]\n$1|" "$C/node01.conf"
	cohort-local start "$C" node01 >"$T/start.out" 2>&1 || fail "cohort-local start node01: $(cat "$T/start.out")"
	wait_node 20 node01 'n["state"] == "UP"'
}
restart_node01 ""
id=$(job_submit --name sys --max-restarts 3 --workdir "$W" -- sh -c "id -u >'$W/uid-sys'")
wait_state 10 "$id" FAILED COMPLETED CANCELLED TIMEOUT
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] || fail "job $id as daemon ended $(json_get "$T/job-$id.json" 'd["state"]'): $reason"
grep -q "'daemon' (uid $daemon_uid)" <<<"$reason" || fail "job $id: reason '$reason' does not name daemon"
[ ! -e "$W/uid-sys" ] || fail "job $id ran as uid $(cat "$W/uid-sys")"
log "5: mapped to daemon: $reason"
restart_node01 "allow_system_users = daemon"
id=$(job_submit --name sys-ok --workdir "$W" -- sh -c "id -u >'$W/uid-ok.tmp' && mv '$W/uid-ok.tmp' '$W/uid-ok'")
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id with allow_system_users = daemon ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(cat "$W/uid-ok")" = "$daemon_uid" ] || fail "job $id ran as uid $(cat "$W/uid-ok"), not daemon's"
exit 0
