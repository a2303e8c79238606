#!/bin/bash
# cohortd --backup FILE while the controller runs (and while it does not),
# and the restore of docs/OPERATIONS.md "Backup and restore": stop, put the
# copy in place of the database (no -wal, -shm), start. The jobs of the
# copy are back (a running one still running, untouched); a job submitted
# after the backup is unknown to the restored controller, and the agent is
# told to stop its task. An existing FILE is refused without --force.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
expect_log_error "runs on a node but is not in the database"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir out)
for n in node01 node02; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done
CONF=$C/cohortd.conf
B=$T/backup.db

### 1. Before the backup: a running job, a held one, a finished one, and
# one that runs at the backup and ends after it.
a=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 -- sleep 300)
p=$(job_submit --time 5m --workdir "$W" --hold -- true)
c=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 -- true)
e=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 -- \
	sh -c "while [ ! -e '$W/go' ]; do sleep 0.1; done")
wait_state 20 "$a" RUNNING
wait_state 20 "$e" RUNNING
wait_state 20 "$c" COMPLETED
wait_pidfiles 10 "$C" "$a" 1
a_pgids=$(job_pgids "$C" "$a")

### 2. The backup of the live database: a report, exit 0, a database
# file readable by its owner only, and the controller undisturbed.
expect_exit 0 cohortd -c "$CONF" --backup "$B"
grep -Eq "^cohortd: wrote $B from .*cohort\\.db: 4 jobs \\(ids up to $e\\), 2 nodes, [0-9]+ events, schema version [0-9]+, [0-9]+ bytes; integrity ok\$" "$OUT" ||
	fail "cohortd --backup printed: $(cat "$OUT")"
[ "$(stat -c %a "$B")" = 600 ] || fail "the backup has mode $(stat -c %a "$B"), not 600"
[ ! -e "$B.tmp" ] || fail "the backup left $B.tmp behind"
expect_exit 0 cohort jobs

# An existing FILE is refused and left as it was; --force replaces it.
sum=$(cksum <"$B")
expect_exit 1 cohortd -c "$CONF" --backup "$B"
stderr_has "$B exists; give --force to replace it"
[ "$(cksum <"$B")" = "$sum" ] || fail "a refused backup changed $B"
expect_exit 0 cohortd -c "$CONF" --backup "$B" --force
# Never onto the database itself, whatever the flags.
expect_exit 1 cohortd -c "$CONF" --backup "$C/cohort.db" --force
stderr_has "is the database or a file SQLite keeps beside it"
# A directory that cannot take the file: an error, nothing written.
expect_exit 1 cohortd -c "$CONF" --backup "$T/no-such-dir/b.db"
stderr_has "no-such-dir/b.db.tmp: No such file or directory"
expect_exit 2 cohortd -c "$CONF" --force
stderr_has "--force goes with --backup FILE"

### 3. After the backup: a job the copy does not have; e ends.
d=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 -- sleep 300)
wait_state 20 "$d" RUNNING
wait_pidfiles 10 "$C" "$d" 1
d_pgids=$(job_pgids "$C" "$d")
touch "$W/go"
wait_state 20 "$e" COMPLETED

### 4. A backup of a stopped controller's database works as well (and
# has d). Then the restore as documented: stopped, the copy in place of
# the database and without its -wal and -shm, started again.
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
expect_exit 0 cohortd -c "$CONF" --backup "$T/stopped.db"
grep -q ": 5 jobs (ids up to $d)" "$OUT" || fail "backup of the stopped database: $(cat "$OUT")"
cp "$B" "$C/cohort.db"
rm -f "$C/cohort.db-wal" "$C/cohort.db-shm"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
as_user "$C" alice

### 5. The copy's jobs are back; the running one was not disturbed.
expect_exit 0 cohort jobs --all
for j in "$a" "$p" "$c" "$e"; do
	grep -Eq "^ *$j " "$OUT" || fail "job $j is missing after the restore: $(cat "$OUT")"
done
[ "$(job_state "$p")" = PENDING ] || fail "held job $p is $(job_state "$p") after the restore"
log "job $e (ended after the backup) after the restore: $(job_state "$e")"
[ "$(job_state "$c")" = COMPLETED ] || fail "job $c is $(job_state "$c") after the restore"
for n in node01 node02; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done
[ "$(job_state "$a")" = RUNNING ] || fail "job $a is $(job_state "$a") after the restore"
# shellcheck disable=SC2086
any_pgid_alive $a_pgids || fail "job $a's task did not survive the restore"

### 6. d is unknown to the restored controller, and its task is stopped
# by the agent it ran on.
expect_exit 1 cohort show "$d"
stderr_has "no job $d"
# shellcheck disable=SC2086
wait_for 20 not any_pgid_alive $d_pgids || fail "the task of job $d, unknown after the restore, still runs"
grep -q "tasks not wanted here (job $d " "$C/cohortd.log" ||
	fail "the controller did not log stopping job $d's task: $(tail -n 20 "$C/cohortd.log")"

### 7. e ended after the backup, and the old controller acknowledged its
# end, so no agent reports it any more: the copy's RUNNING stands until
# its time limit, or until cancelled, as OPERATIONS.md says.
expect_exit 0 cohort cancel "$a" "$e"
wait_state 20 "$a" CANCELLED
wait_state 20 "$e" CANCELLED
n=$(job_submit --time 5m --workdir "$W" -- true)
# d's task, reported by its agent, kept d's id from being handed out
# again (jobs_note_foreign_id).
[ "$n" -gt "$d" ] || fail "job id $n after the restore is not above $d, the job lost with the restore"
grep -q "job $d runs on a node but is not in the database" "$C/cohortd.log" ||
	fail "the controller did not log reserving job $d's id"
log "the first id after the restore: $n (d, lost with the restore, was $d)"
exit 0
