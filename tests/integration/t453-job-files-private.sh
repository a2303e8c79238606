#!/bin/bash
# What a job leaves on a node is private to the job's user. A batch job
# of alice's (its tasks run as nobody) holds a token in its script, its
# log and its error log. While it runs, every directory of its start in
# the agent's spool is 0700 or 0711 and every file 0600 (the script
# 0700), each owned by root or the task's user; and a process of another
# uid on the node (not root, not nobody, in nobody's group, as on sites
# where every user shares one) can neither list the start's directory
# nor read any file in it. The task's user reads its script; the job
# ends COMPLETED, and `cohort logs` shows alice her log.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_root
getent passwd nobody >/dev/null || { echo "SKIP: no user 'nobody' here"; exit 77; }
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 2
W=$(world_dir work)
SECRET=tok-$$-$RANDOM
NOBODY_UID=$(id -u nobody)
NOBODY_GID=$(id -g nobody)
OTHER=$((60000 + RANDOM % 1000))

cat >"$W/job.sh" <<EOF
#!/bin/sh
# token: $SECRET
echo "log token $SECRET"
echo "err token $SECRET" >&2
$(gate job.end)
EOF
id=$(cd "$W" && job_submit --name private "$W/job.sh")
wait_state 30 "$id" RUNNING
D=
_start_dir() {
	D=$(ls -d "$C"/node01/spool/jobs/"$id".* 2>/dev/null | head -n 1)
	[ -n "$D" ] && grep -q "$SECRET" "$D/rank-0.log" 2>/dev/null
}
wait_for 30 _start_dir || fail "job $id has no spool directory with its log on node01"
[ -f "$D/script" ] || fail "no batch script in $D: $(ls -la "$D")"

# Modes and owners.
bad=$(find "$C/node01/spool/jobs" \( -type d ! -perm 0711 ! -perm 0700 -printf 'dir %m %u %p\n' \) -o \
	\( -type f ! -perm 0600 ! \( -name script -perm 0700 \) ! \( -name step-cred -perm 0400 \) ! \( -name checkpoint-advice -perm 0400 \) -printf 'file %m %u %p\n' \) -o \
	\( ! -uid 0 ! -uid "$NOBODY_UID" -printf 'owner %m %u %p\n' \) -o \
	\( ! -type d ! -type f -printf 'kind %m %u %p\n' \))
[ -z "$bad" ] || fail "not private: $bad"

# As another uid: nothing listed, nothing read.
as_other() { setpriv --reuid="$OTHER" --regid="$NOBODY_GID" --clear-groups "$@"; }
! as_other ls "$D" >/dev/null 2>&1 || fail "uid $OTHER lists $D: $(as_other ls "$D" 2>&1)"
n=0
for f in "$D"/* "$C"/node01/spool/jobs/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	! as_other cat "$f" >"$T/other.out" 2>/dev/null ||
		fail "uid $OTHER reads $f: $(head -c 200 "$T/other.out")"
done
[ "$n" -ge 3 ] || fail "only $n files in $D to try: $(ls -la "$D")"
# The step credential (srun's proof that it runs in the job) is the
# task's user's alone: another uid did not read it above.
[ -f "$D/step-cred" ] || fail "no step credential in $D: $(ls -la "$D")"
setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_GID" --clear-groups cat "$D/step-cred" 2>&1 |
	grep -qE '^[0-9a-f]{64}$' || fail "the task's user cannot read its step credential"
# The task's user reads its own script.
setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_GID" --clear-groups cat "$D/script" 2>&1 | grep -q "$SECRET" ||
	fail "the task's user cannot read its script"

touch "$W/job.end"
wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
expect_exit 0 cohort logs "$id"
grep -q "log token $SECRET" "$OUT" || fail "alice's cohort logs lacks her log: $(head -c 300 "$OUT")"
echo "PASS: a job's spool files are its user's alone"
