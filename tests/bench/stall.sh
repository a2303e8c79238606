#!/bin/bash
# A client that stalls the controller's output (not part of make check at
# this size; t420-stall.sh runs it smaller):
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/stall.sh [JOBS [LISTS [SECS]]]
#
# On a cohort-local cluster (2 nodes of 4 GPUs, heartbeat 1 s, node_timeout
# 5 s), bob runs a 1-node job; JOBS jobs (default 100000) that cannot
# start while it runs (2 whole nodes each; a job no node could ever hold
# is refused at submit) are queued by users u1.. (5,000 each, under any per-user
# pending limit); then alice opens one connection, sends one submit and
# LISTS ListJobs (default 300), and never reads a reply. For SECS seconds
# (default 20) the script samples the controller's RSS, counts nodes
# DOWN (as the admin) and times bob's `cohort jobs` and `cohort show` (a
# new process and connection each time, COHORT_MUX=no). Prints key=value
# figures:
#   rss_before_kib rss_max_kib rss_delta_kib  the controller's VmRSS
#   nodes_down_max                             most nodes DOWN at once
#   down_events                                "node X: DOWN" log lines
#   bob_restarts bob_state                     bob's job at the end
#   jobs_ms_p50 jobs_ms_max show_ms_p50 show_ms_max  bob's commands
#   bob_failures                               bob's commands that failed
#   before_attack: ...                         bob's commands, no attack
#   stall_sent                                 requests alice got written
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

JOBS=${1:-100000}
LISTS=${2:-300}
SECS=${3:-20}
PER_USER=5000
for v in "$JOBS" "$LISTS" "$SECS"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "JOBS, LISTS and SECS must be positive integers, not '$v'"
done
need_python_protobuf

C=$T/cluster
# Filling the queue is not the attack: lift the per-user submit rate for
# it (each filler stays under the default pending limit).
COHORT_LOCAL_CONTROLLER_CONF=$'[tenants]\nsubmit_rate = 0'
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 2 --gpus 4
ctl_pid=$(cat "$C/cohortd.pid")
ctl_rss_kib() {
	rss_kib "$ctl_pid"
}

# Bob's running job: the attack must not restart it.
as_user "$C" bob
W=$(world_dir out)
bob_job=$(job_submit --name steady --nodes 1 --workdir "$W" -- sleep 600)
wait_state 20 "$bob_job" RUNNING

# The queue, from users u1..uN in parallel.
nusers=$(((JOBS + PER_USER - 1) / PER_USER))
users=$(seq -f 'u%g' 1 "$nusers" | paste -sd, -)
cohort-pki "$C" --controller 127.0.0.1 --users "$users" >"$T/pki.out" 2>&1 ||
	fail "cohort-pki --users $users: $(cat "$T/pki.out")"
t0=${EPOCHREALTIME/./}
fill_as() {	# USER COUNT
	(
		eval "$(cohort-local env "$C" --as "$1")"
		exec "$PYTHON" "$PYCLIENT" --timeout 120 fill --count "$2" --nodes 2 \
			>"$T/fill-$1.out" 2>"$T/fill-$1.err"
	)
}
if [ "${FILL:-api}" = copy ] && [ "$nusers" -gt 1 ]; then
	fill_as u1 "$PER_USER" || fail "filling as u1 failed: $(cat "$T/fill-u1.err")"
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
	left=$((JOBS - PER_USER))
	{
		echo "BEGIN;"
		for ((u = 2; u <= nusers; u++)); do
			n=$((left < PER_USER ? left : PER_USER))
			left=$((left - n))
			echo "CREATE TEMP TABLE t AS SELECT * FROM jobs WHERE user = 'u1' ORDER BY id LIMIT $n;"
			echo "UPDATE t SET id = id + $u * 1000000, user = 'u$u';"
			echo "INSERT INTO jobs SELECT * FROM t; DROP TABLE t;"
			echo "$n" >"$T/fill-u$u.out"
		done
		echo "COMMIT;"
	} | sqlite3 "$C/cohort.db" || fail "cannot copy the queue's rows"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
	ctl_pid=$(cat "$C/cohortd.pid")
	_all_up() {
		eval "$(cohort-local env "$C" --as admin)"
		cohort nodes --json >"$T/nodes.json" 2>/dev/null &&
			[ "$(json_get "$T/nodes.json" 'len([n for n in d["nodes"] if n["state"] == "UP"])')" = 2 ]
	}
	wait_for 60 _all_up || fail "the nodes are not UP after the restart"
else
	left=$JOBS
	pids=()
	for ((u = 1; u <= nusers; u++)); do
		n=$((left < PER_USER ? left : PER_USER))
		left=$((left - n))
		fill_as "u$u" "$n" &
		pids+=($!)
		if [ "${#pids[@]}" -ge 4 ]; then
			wait "${pids[0]}" || fail "filling the queue failed: $(cat "$T"/fill-*.err)"
			pids=("${pids[@]:1}")
		fi
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "filling the queue failed: $(cat "$T"/fill-*.err)"
	done
fi
queued=$(awk '{s += $1} END {print s + 0}' "$T"/fill-u*.out)
t1=${EPOCHREALTIME/./}
echo "queued=$queued fill_s=$(((t1 - t0) / 1000000))"
[ "$queued" -eq "$JOBS" ] || fail "queued $queued of $JOBS jobs"

# cmd_ms CMD...: run CMD as bob, print its wall time in ms (-1: failed).
cmd_ms() {
	local a b
	a=${EPOCHREALTIME/./}
	if COHORT_MUX=no timeout 30 "$@" >/dev/null 2>>"$T/bob.err"; then
		b=${EPOCHREALTIME/./}
		echo $(((b - a) / 1000))
	else
		echo -1
	fi
}
# Bob's commands before the attack, for comparison.
bob_env=$(cohort-local env "$C" --as bob)
eval "$bob_env"
: >"$T/jobs0.ms"
: >"$T/show0.ms"
: >"$T/mine0.ms"
for i in 1 2 3 4 5; do
	cmd_ms cohort jobs >>"$T/jobs0.ms"
	cmd_ms cohort show "$bob_job" >>"$T/show0.ms"
	cmd_ms cohort jobs --user bob >>"$T/mine0.ms"
done

rss_before=$(ctl_rss_kib)
log_before=$(wc -l <"$C/cohortd.log")
as_user "$C" alice
"$PYTHON" "$PYCLIENT" stall --lists "$LISTS" --nodes 3 --hold 3600 \
	>"$T/stall.out" 2>"$T/stall.err" &
stall_pid=$!
track_pid "$stall_pid"
wait_for 30 grep -q '^sent' "$T/stall.out" || fail "the stalling client sent nothing: $(cat "$T/stall.err")"

admin_env=$(cohort-local env "$C" --as admin)
bob_env=$(cohort-local env "$C" --as bob)
rss_max=$rss_before
down_max=0
: >"$T/jobs.ms"
: >"$T/show.ms"
: >"$T/mine.ms"
end=$((${EPOCHREALTIME/./} + SECS * 1000000))
while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
	r=$(ctl_rss_kib)
	[ "$r" -le "$rss_max" ] || rss_max=$r
	eval "$admin_env"
	if COHORT_MUX=no timeout 30 cohort nodes --json >"$T/nodes.json" 2>>"$T/admin.err"; then
		d=$(json_get "$T/nodes.json" 'len([n for n in d["nodes"] if n["state"] != "UP"])')
		[ "$d" -le "$down_max" ] || down_max=$d
	fi
	eval "$bob_env"
	cmd_ms cohort jobs >>"$T/jobs.ms"
	cmd_ms cohort show "$bob_job" >>"$T/show.ms"
	cmd_ms cohort jobs --user bob >>"$T/mine.ms"
	sleep 0.2
done
r=$(ctl_rss_kib)
[ "$r" -le "$rss_max" ] || rss_max=$r
eval "$bob_env"
job_show "$bob_job"

stats() {
	"$PYTHON" - "$1" <<'EOF'
import sys
v = [int(x) for x in open(sys.argv[1]).read().split()]
ok = sorted(x for x in v if x >= 0)
p50 = ok[len(ok) // 2] if ok else -1
print(p50, ok[-1] if ok else -1, len(v) - len(ok))
EOF
}
read -r j0p50 j0max j0fail < <(stats "$T/jobs0.ms")
read -r s0p50 s0max s0fail < <(stats "$T/show0.ms")
read -r jp50 jmax jfail < <(stats "$T/jobs.ms")
read -r sp50 smax sfail < <(stats "$T/show.ms")
read -r m0p50 m0max m0fail < <(stats "$T/mine0.ms")
read -r mp50 mmax mfail < <(stats "$T/mine.ms")
echo "before_attack: jobs_ms_p50=$j0p50 jobs_ms_max=$j0max show_ms_p50=$s0p50 show_ms_max=$s0max own_jobs_ms_p50=$m0p50 own_jobs_ms_max=$m0max"
echo "stall_sent=$(sed -n 's/^sent //p' "$T/stall.out")"
echo "rss_before_kib=$rss_before rss_max_kib=$rss_max rss_delta_kib=$((rss_max - rss_before))"
down_events=$(tail -n +"$((log_before + 1))" "$C/cohortd.log" | grep -c ': DOWN: ' || true)
echo "nodes_down_max=$down_max down_events=$down_events"
echo "bob_state=$(json_get "$T/job-$bob_job.json" 'd["state"]') bob_restarts=$(json_get "$T/job-$bob_job.json" 'd.get("restarts", 0)')"
echo "jobs_ms_p50=$jp50 jobs_ms_max=$jmax show_ms_p50=$sp50 show_ms_max=$smax own_jobs_ms_p50=$mp50 own_jobs_ms_max=$mmax bob_failures=$((jfail + sfail + mfail)) samples=$(wc -l <"$T/jobs.ms")"
kill "$stall_pid" 2>/dev/null || true
exit 0
