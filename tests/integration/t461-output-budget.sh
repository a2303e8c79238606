#!/bin/bash
# The fair loop's output budgets: a stall limit per connection alone
# (16 MiB) would let a user with 32 connections pin ~530 MB, so a user's
# connections share an output budget (max_output_per_user) and all
# people share another (max_output_total).
#  1. max_output_per_user = 8M: alice opens NC (8) connections that
#     pipeline job listings and read nothing: the controller's RSS grows
#     by less than 40 MiB (8 x 16 MiB before), and all are throttled.
#     alice's own new request waits on her budget while bob is served;
#     once her stalling connections are gone it is answered (throttled
#     connections resume).
#  2. max_output_total = 4M (no per-user budget): alice stalls again; the
#     RSS is bounded the same way, and the admin is still served (a
#     connection with nothing buffered gets a request at a time).
# Bench knobs: N (jobs, default 2000), NC (connections, default 8),
# MAX_GROW (MiB, default 40); NOBUDGET=1 turns the budgets off (64G), as
# before them.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: A cluster of no nodes: the controller warns that it refuses every agent.
expect_log_error 'cohortd: warning: neither a topology nor .nodes. is configured: every agent registration will be refused'
need_python_protobuf
export COHORT_MUX=no
N=${N:-2000}
NC=${NC:-8}

C=$T/cluster
# Under AddressSanitizer freed replies wait in its quarantine and would
# count as held: none, so that RSS measures what is really kept.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
cluster_up "$C" --nodes 0
as_user "$C" alice
# --export NONE: the page size this test is tuned for is that of a job
# without the submitter's environment (ALL adds this shell's, ~4 KB).
expect_exit 0 cohort submit --name seed --export NONE -- /bin/true
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
# N copies of the seed job: every listing reply is a full page. Without
# its idempotency key (one job per user and key).
cols=$(sqlite3 "$C/cohort.db" "SELECT group_concat(name, ',') FROM pragma_table_info('jobs')") || fail "sqlite3"
sel=$(echo "$cols" | sed 's/^id,/s.i,/' | sed 's/\([,]\)\([a-z_]*\)/\1t.\2/g')
sqlite3 "$C/cohort.db" "BEGIN; CREATE TEMP TABLE t AS SELECT * FROM jobs LIMIT 1; UPDATE t SET idem_key = NULL; WITH RECURSIVE s(i) AS (SELECT 2 UNION ALL SELECT i+1 FROM s WHERE i < $N) INSERT INTO jobs ($cols) SELECT $sel FROM s, t; COMMIT;" ||
	fail "cannot copy the seed job"
cp "$C/cohortd.conf" "$C/cohortd.conf.orig"
pid=
restart_with() {
	cp "$C/cohortd.conf.orig" "$C/cohortd.conf"
	sed -i '/^max_connections = /d' "$C/cohortd.conf"
	# The [limits] section is the file's last.
	printf '%s\n' "max_connections = 1024" "$@" >>"$C/cohortd.conf"
	[ -z "$pid" ] || { cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"; }
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
	pid=$(cat "$C/cohortd.pid")
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
# stall USER: NC connections of USER that pipeline listings and read
# nothing, all throttled; their pids in $stallers; the RSS growth logged
# and checked.
stall() {
	local i rss0 rss1 grow
	as_user "$C" "$1"
	expect_exit 0 cohort jobs
	rss0=$(rss_kib "$pid")
	stallers=
	rm -f "$T"/stall-*.out
	for i in $(seq 1 "$NC"); do
		"$PYTHON" "$PYCLIENT" --timeout 30 stall --lists 300 --send-s 3 --hold 120 >"$T/stall-$i.out" 2>&1 &
		track_pid $!
		stallers="$stallers $!"
	done
	wait_for 30 _all_sent || fail "the stalling clients did not start: $(cat "$T"/stall-*.out)"
	wait_for 20 _throttled || fail "$(metric cohort_connections_throttled) connections throttled, not $NC"
	rss1=$(rss_kib "$pid")
	grow=$(((rss1 - rss0) / 1024))
	log "$1's $NC stalling connections ($2): RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB (+$grow MiB)"
	[ "$grow" -lt "${MAX_GROW:-40}" ] || fail "RSS grew by $grow MiB under $1's stalling connections ($2)"
}
_all_sent() { [ "$(cat "$T"/stall-*.out 2>/dev/null | grep -c '^sent ')" -eq "$NC" ]; }
_throttled() { [ "$(metric cohort_connections_throttled)" -ge "$NC" ]; }
if [ -n "${NOBUDGET:-}" ]; then B1=64G; B2=64G; else B1=8M; B2=4M; fi

### 1. The per-user budget.
restart_with "max_output_per_user = $B1" "max_output_total = 64G"
stall alice "max_output_per_user = $B1"
# alice's own request waits on her budget; bob is served meanwhile.
timeout 60 cohort jobs >"$T/alice.out" 2>"$T/alice.err" &
alice_cli=$!
track_pid "$alice_cli"
as_user "$C" bob
for i in 1 2 3; do
	expect_exit 0 timeout 20 cohort jobs
done
proc_alive "$alice_cli" || fail "alice's request was answered while her budget was spent: $(cat "$T/alice.out" "$T/alice.err")"
# Her stallers go: her waiting request is answered.
kill $stallers
wait "$alice_cli" || fail "alice's request failed once her stallers were gone: $(cat "$T/alice.err")"
grep -q . "$T/alice.out" || fail "alice's request printed nothing"

### 2. The budget of all people together.
restart_with "max_output_per_user = 64G" "max_output_total = $B2"
stall alice "max_output_total = $B2"
as_user "$C" admin
for i in 1 2 3; do
	expect_exit 0 timeout 20 cohort jobs --all
done
expect_exit 0 timeout 20 cohort nodes
kill $stallers
exit 0
