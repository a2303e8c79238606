#!/bin/bash
# Backup and restore of a replicated controller (docs/OPERATIONS.md, "A
# replicated controller"): `cohortd --backup FILE` with a follower's
# configuration fetches the leader's database (the follower names the
# leader); the file is a cohortd database with every acknowledged job; an
# existing FILE is refused without --force. Restores: a single controller
# runs on the file as its database, and `cohortd --bootstrap --restore
# FILE` starts a new replicated cluster whose database is the file (the
# next id follows the restored ones). --restore without --bootstrap is a
# usage error, and --restore into a data_dir that holds a log does
# nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# A free port of 127.0.0.1 (a replica's address is fixed, not port 0).
free_port() {
	"$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

C=$T/cluster
cluster_up "$C" --controllers 3 --no-agents
ids=()
for i in 1 2 3 4 5; do
	ids+=("$(job_submit -J "bk-$i" --hold -- true)")
done
leader=$(ctl_leader "$C")
follower=$((leader % 3 + 1))
B=$(cd "$T" && pwd)/backup.db

### 1. The backup, through a follower's configuration.
expect_exit 0 cohortd -c "$C/ctl$follower/cohortd.conf" --backup "$B"
grep -q "wrote $B from the leader through 127.0.0.1:[0-9]*: 5 jobs (ids up to ${ids[4]})" "$OUT" ||
	fail "the backup said: $(cat "$OUT")"
[ "$(sqlite3 "$B" 'SELECT group_concat(name) FROM (SELECT name FROM jobs ORDER BY id)')" = bk-1,bk-2,bk-3,bk-4,bk-5 ] ||
	fail "the backup holds: $(sqlite3 "$B" 'SELECT id, name FROM jobs')"
[ "$(stat -c %a "$B")" = 600 ] || fail "the backup's mode is $(stat -c %a "$B"), not 600"
expect_exit 1 cohortd -c "$C/ctl$follower/cohortd.conf" --backup "$B"
grep -q "exists; give --force" "$ERR" || fail "an existing backup was not refused: $(cat "$ERR")"
expect_exit 0 cohortd -c "$C/ctl$leader/cohortd.conf" --backup "$B" --force
expect_exit 2 cohortd -c "$C/ctl1/cohortd.conf" --restore "$B"
grep -q -- "--restore FILE goes with --bootstrap" "$ERR" || fail "--restore alone: $(cat "$ERR")"
log "backup of ${#ids[@]} jobs through replica $follower (leader $leader)"

### 2. A single controller on the copy.
mkdir -p "$T/single"
S=$(cd "$T/single" && pwd)	# the configuration's paths are its own
cp "$B" "$S/cohort.db"
port=$(free_port)
# cohort-local's replica configuration ends with [replication].
sed -e '/^\[replication\]/,$d' \
	-e "s|^listen = 127\.0\.0\.1:[1-9][0-9]*\$|listen = 127.0.0.1:$port\ndatabase = $S/cohort.db|" \
	-e "s|^port_file = cohortd.port|port_file = $S/port|" \
	-e "s|^port_file = http.port|port_file = $S/http.port|" "$C/ctl1/cohortd.conf" >"$S/cohortd.conf"
grep -q '^\[replication\]' "$S/cohortd.conf" && fail "the single controller's configuration kept [replication]"
cohortd -f -c "$S/cohortd.conf" >"$S/log" 2>&1 &
spid=$!
track_pid "$spid"
wait_for 20 test -s "$S/port" || fail "the single controller did not start: $(tail -n 5 "$S/log")"
names=$(COHORT_SERVER=127.0.0.1:$port COHORT_MUX=off cohort jobs --all --json |
	python3 -c 'import json,sys; print(",".join(j["name"] for j in sorted(json.load(sys.stdin)["jobs"], key=lambda j: j["id"])))')
[ "$names" = bk-1,bk-2,bk-3,bk-4,bk-5 ] || fail "the single controller on the backup lists: $names"
kill "$spid"
wait_for 20 proc_gone "$spid" || fail "the single controller did not stop"

### 3. A new replicated cluster from the copy.
mkdir -p "$T/new"
N=$(cd "$T/new" && pwd)
nport=$(free_port)
rport=$(free_port)
sed -e "s|^address = .*|address = 127.0.0.1:$nport|" \
	-e "s|^raft_address = .*|raft_address = 127.0.0.1:$rport|" \
	-e "s|^data_dir = .*|data_dir = $N/raft|" -e "s|^id = .*|id = 1|" \
	-e "s|^port_file = cohortd.port|port_file = $N/port|" \
	-e "s|^port_file = http.port|port_file = $N/http.port|" \
	-e '/^listen = 127\.0\.0\.1:[1-9]/d' "$C/ctl1/cohortd.conf" >"$N/cohortd.conf"
cohortd -f -c "$N/cohortd.conf" --bootstrap --restore "$B" >"$N/log" 2>&1 &
npid=$!
track_pid "$npid"
_restored() {
	COHORT_SERVER=127.0.0.1:$nport COHORT_MUX=off cohort jobs --all --json >"$T/new.json" 2>/dev/null
}
wait_for 30 _restored || fail "the restored cluster does not serve: $(tail -n 5 "$N/log")"
[ "$(json_get "$T/new.json" '",".join(j["name"] for j in sorted(d["jobs"], key=lambda j: j["id"]))')" = bk-1,bk-2,bk-3,bk-4,bk-5 ] ||
	fail "the restored cluster lists: $(cat "$T/new.json")"
next=$(COHORT_SERVER=127.0.0.1:$nport COHORT_MUX=off cohort submit -J after --hold -- true) ||
	fail "no submit on the restored cluster"
[ "$next" -gt "${ids[4]}" ] || fail "the restored cluster handed out id $next, not past ${ids[4]}"
kill "$npid"
wait_for 20 proc_gone "$npid" || fail "the restored replica did not stop"
# Started again: the log is there, --restore does nothing.
cohortd -f -c "$N/cohortd.conf" --bootstrap --restore "$B" >>"$N/log" 2>&1 &
npid=$!
track_pid "$npid"
wait_for 30 _restored || fail "the restored replica did not serve again: $(tail -n 5 "$N/log")"
grep -q "already holds a Raft log; --restore does nothing" "$N/log" ||
	fail "a restart with --restore did not say it does nothing: $(tail -n 5 "$N/log")"
[ "$(json_get "$T/new.json" 'len(d["jobs"])')" = 6 ] || fail "after the restart: $(cat "$T/new.json")"
kill "$npid"
wait_for 20 proc_gone "$npid" || fail "the restored replica did not stop"
log "restored into a single controller and into a new replicated cluster (next id $next)"
