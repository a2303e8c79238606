#!/bin/bash
# Scale benchmark (not part of make check): one controller against 1,000
# and 10,000 simulated nodes (cohort-simnodes, one process, one TLS
# connection and certificate per node, 8 simulated GPUs each).
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/scale.sh \
#       [--nodes "1000 10000"] [--jobs 1000] [--submitters 4] \
#       [--seconds 5] [--crashes 10] [--per-leaf 32] [--idle-only]
#
# --idle-only stops after step 2 (registration and the idle controller):
# enough for the memory figures, and much shorter at 10,000 nodes.
#
# For each node count N, on a fresh controller (its own cohortd.conf:
# max_connections 20000, heartbeat 2s, node_timeout 10s, the topology
# cohort-simnodes writes, 32 nodes per leaf, 16 leaves per spine):
#   1. start cohort-simnodes and wait (bounded) until `cohort nodes
#      --json` lists N nodes UP: the time that took;
#   2. the controller's RSS, and its CPU over an idle 10 s window
#      (utime + stime from /proc/PID/stat), and the same for simnodes;
#      the time of a GET /metrics (median of 20);
#   3. submit JOBS gang jobs of 1, 2, 4, 8 and 16 whole 8-GPU nodes (in
#      turn) from SUBMITTERS parallel `cohort submit` loops, each job
#      running SECONDS simulated seconds; report the time from the first
#      submit to every job started (cohort_jobs_started_total on
#      /metrics) and to every job COMPLETED, and the scheduling passes in
#      that window (count, mean = cohort_sched_pass_seconds_sum / passes_total,
#      largest cohort_sched_last_pass_seconds seen while polling);
# then, at the smallest N (1,000): a failure measurement. CRASHES times,
# a simulated node running one of ten 2-node jobs is crashed (SIGUSR1 to
# cohort-simnodes: its connection drops, its heartbeats stop), and the
# time from the crash to the job RUNNING again is taken from the job's
# events (the 'running' event after the crash); the controller detects
# the crash only at node_timeout (10 s), which dominates: the detection
# and the restart are printed separately. Median and p99 (of so few
# samples p99 is about the largest).
#
# Every wait is bounded; every process started is stopped on exit.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

NODES_LIST="1000 10000"
JOBS=1000
SUBMITTERS=4
SECONDS_PER_JOB=5
CRASHES=10
PER_LEAF=32
IDLE_ONLY=0
while [ $# -gt 0 ]; do
	case "$1" in
	--nodes) NODES_LIST="$2"; shift 2 ;;
	--jobs) JOBS="$2"; shift 2 ;;
	--submitters) SUBMITTERS="$2"; shift 2 ;;
	--seconds) SECONDS_PER_JOB="$2"; shift 2 ;;
	--crashes) CRASHES="$2"; shift 2 ;;
	--per-leaf) PER_LEAF="$2"; shift 2 ;;
	--idle-only) IDLE_ONLY=1; shift ;;
	*) fail "unknown argument '$1' (see the head of $0)" ;;
	esac
done
for v in "$JOBS" "$SUBMITTERS" "$PER_LEAF"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "not a positive integer: '$v'"
done
[[ "$CRASHES" =~ ^[0-9]+$ ]] || fail "--crashes: not a number: '$CRASHES'"

SIM=$top_builddir/cohort-simnodes
# COHORTD=PATH runs another controller binary (to compare builds).
COHORTD=${COHORTD:-$top_builddir/cohortd}
[ -x "$SIM" ] || fail "$SIM is not built (make cohort-simnodes)"
command -v curl >/dev/null || fail "curl is needed to read /metrics"
HZ=$(getconf CLK_TCK)
C=$T/cluster
mkdir -p "$C"
cohort-pki "$C" --controller 127.0.0.1 --admins ops >"$T/pki.out" 2>&1 ||
	fail "cohort-pki: $(cat "$T/pki.out")"
export COHORT_CA=$C/ca.pem COHORT_CERT=$C/admin-ops.crt \
	COHORT_KEY=$C/admin-ops.key

CTL_PID=
SIM_PID=
RESULTS=()

say() {
	echo "$*"
	RESULTS+=("$*")
}

# cpu_ticks PID: utime + stime of PID.
cpu_ticks() {
	local stat
	stat=$(cat "/proc/$1/stat") || return 1
	read -r -a f <<<"${stat##*) }"
	echo $((f[11] + f[12]))
}

rss_mib() {
	awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

hwm_mib() {
	awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# metric NAME: the value of NAME (without labels, or with the given
# label set written out) on /metrics.
metric() {
	curl -s --max-time 5 "$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2; exit }'
}

stop_pid() {
	local pid="$1"
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	wait_for 20 proc_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

start_controller() {
	local n="$1"
	rm -f "$C"/cohort.db* "$C/cohortd.port" "$C/http.port"
	"$SIM" --nodes "$n" --write-topology "$C/topology.conf" \
		--nodes-per-leaf "$PER_LEAF" --leaves-per-spine 16 ||
		fail "cannot write the topology"
	cat >"$C/cohortd.conf" <<EOF
[controller]
listen = 127.0.0.1:0
port_file = cohortd.port
database = cohort.db
topology = topology.conf
node_timeout = 10s
heartbeat_interval = 2s
[tls]
ca = ca.pem
cert = controller.crt
key = controller.key
[http]
listen = 127.0.0.1:0
port_file = http.port
[limits]
max_connections = 20000
# Every simulated agent connects from 127.0.0.1, up to 128 handshakes
# at once (cohort-simnodes --max-connecting): above the per-source cap
# meant for one real host.
max_handshakes_per_source = 1024
[tenants]
# A benchmark submits faster and more than a person would.
submit_rate = 0
max_pending_per_user = 0
EOF
	(
		ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
		exec "$COHORTD" -c "$C/cohortd.conf" -f >"$C/cohortd-$n.log" 2>&1
	) &
	CTL_PID=$!
	track_pid "$CTL_PID"
	wait_for 20 test -s "$C/http.port" ||
		fail "cohortd did not start: $(tail -5 "$C/cohortd-$n.log")"
	wait_for 5 test -s "$C/cohortd.port" || fail "no port file"
	PORT=$(tr -dc 0-9 <"$C/cohortd.port")
	HTTP=http://127.0.0.1:$(tr -dc 0-9 <"$C/http.port")
	export COHORT_SERVER=127.0.0.1:$PORT
	echo "# cohortd pid $CTL_PID on 127.0.0.1:$PORT, open files $(awk '/Max open files/ { print $4 }' "/proc/$CTL_PID/limits")"
}

controller_answers() {
	timeout 10 cohort nodes --json >/dev/null 2>&1
}

nodes_up() {
	timeout 60 cohort nodes --json 2>/dev/null | "$PYTHON" -c 'import json, sys
print(sum(1 for n in json.load(sys.stdin)["nodes"] if n["state"] == "UP"))' 2>/dev/null || echo 0
}

# submitter K: jobs K, K+S, K+2S, ... of the batch, sizes in turn.
submitter() {
	local k="$1" i sizes=(1 2 4 8 16) bad=0
	for ((i = k; i < JOBS; i += SUBMITTERS)); do
		cohort submit --name "scale$i" --nodes "${sizes[i % 5]}" \
			--gpus-per-node 8 --env "SIM_SECONDS=$SECONDS_PER_JOB" \
			-- train >/dev/null 2>>"$T/submit-$k.err" || bad=$((bad + 1))
	done
	[ "$bad" -eq 0 ] || echo "# submitter $k: $bad submits failed" >&2
}

run_scale() {
	local n="$1" base_kib rss t0 t1 up i c0 c1 s0 s1 started0 started passes0 \
		passes1 psec0 psec1 maxpass lp t_first deadline completed subs \
		alive t_started='' t_done='' t_submitted=''
	echo "# ---- $n simulated nodes ----"
	start_controller "$n"
	# The controller's own memory before any agent: what the nodes and
	# their connections add is measured against it.
	wait_for 10 controller_answers || fail "cohortd does not answer"
	base_kib=$(rss_kib "$CTL_PID")
	t0=$(_now_us)
	"$SIM" --server "$COHORT_SERVER" --ca "$C/ca.pem" --ca-key "$C/ca.key" \
		--nodes "$n" --stats 30 >"$C/sim-$n.out" 2>"$C/sim-$n.log" &
	SIM_PID=$!
	track_pid "$SIM_PID"
	# Registration: bounded by 60 s plus 20 ms a node.
	deadline=$(($(_now_us) + (60 + n / 50) * 1000000))
	up=0
	while [ "$(_now_us)" -lt "$deadline" ]; do
		# The cheap check first: every node has its RegisterReply.
		if grep -q '^ready ' "$C/sim-$n.out"; then
			up=$(nodes_up)
			[ "$up" -lt "$n" ] || break
		fi
		proc_alive "$SIM_PID" || fail "cohort-simnodes died: $(tail -5 "$C/sim-$n.log")"
		sleep 1
	done
	t1=$(_now_us)
	say "N=$n: $(grep '^minted' "$C/sim-$n.out")"
	if [ "$up" -ge "$n" ]; then
		say "N=$n: all $n nodes UP $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s after cohort-simnodes started ($(grep '^ready' "$C/sim-$n.out"))"
	else
		# Measured on, with the nodes that are UP.
		[ "$up" -gt 0 ] || fail "no node UP in time"
		say "N=$n: only $up of $n nodes UP after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s ($(grep '^ready' "$C/sim-$n.out" || echo 'not all registered')); the controller marked $(grep -c 'DOWN: no heartbeat' "$C/cohortd-$n.log") DOWN for missed heartbeats"
	fi

	# Idle: 10 s of heartbeats only.
	sleep 2
	c0=$(cpu_ticks "$CTL_PID")
	s0=$(cpu_ticks "$SIM_PID")
	sleep 10
	c1=$(cpu_ticks "$CTL_PID")
	s1=$(cpu_ticks "$SIM_PID")
	say "N=$n: idle controller: RSS $(rss_mib "$CTL_PID") MiB, CPU $(awk -v d=$((c1 - c0)) -v hz="$HZ" 'BEGIN { printf "%.1f", d / hz / 10 * 100 }')% of one core (heartbeat 2 s)"
	rss=$(rss_kib "$CTL_PID")
	say "N=$n: idle controller memory: RSS $(rss_mib "$CTL_PID") MiB (peak $(hwm_mib "$CTL_PID") MiB), $((base_kib / 1024)) MiB before any agent; $(awk -v r="$rss" -v b="$base_kib" -v n="$up" 'BEGIN { printf "%.1f KiB a node and its connection, %.2f KiB a GPU (8 a node); %.1f KiB a node all in", (r - b) / n, (r - b) / n / 8, r / n }')"
	say "N=$n: idle cohort-simnodes: RSS $(rss_mib "$SIM_PID") MiB ($(awk -v k="$(rss_mib "$SIM_PID")" -v n="$n" 'BEGIN { printf "%.1f", k * 1024 / n }') KiB a node), CPU $(awk -v d=$((s1 - s0)) -v hz="$HZ" 'BEGIN { printf "%.1f", d / hz / 10 * 100 }')%"
	# The cost of a scrape: 20 GETs of /metrics in a row, their median
	# and largest time (curl's, so a floor of a few hundred µs).
	for ((i = 0; i < 20; i++)); do
		curl -s --max-time 5 -o /dev/null -w '%{time_total}\n' "$HTTP/metrics"
	done | sort -n >"$T/scrape-$n"
	say "N=$n: GET /metrics ($(curl -s --max-time 5 "$HTTP/metrics" | wc -c) bytes): median $(sed -n 10p "$T/scrape-$n") s, largest $(tail -n 1 "$T/scrape-$n") s of 20"
	[ "$IDLE_ONLY" = 0 ] || return 0

	# The batch.
	started0=$(metric cohort_jobs_started_total)
	passes0=$(metric cohort_sched_passes_total)
	psec0=$(metric cohort_sched_pass_seconds_sum)
	c0=$(cpu_ticks "$CTL_PID")
	t_first=$(_now_us)
	subs=()
	for ((i = 0; i < SUBMITTERS; i++)); do
		submitter "$i" &
		subs+=($!)
	done
	maxpass=0
	deadline=$(($(_now_us) + (180 + JOBS / 4 + JOBS * SECONDS_PER_JOB * 14 / n) * 1000000))
	while [ "$(_now_us)" -lt "$deadline" ]; do
		started=$(metric cohort_jobs_started_total)
		lp=$(metric cohort_sched_last_pass_seconds)
		maxpass=$(awk -v a="$maxpass" -v b="${lp:-0}" 'BEGIN { print (b > a ? b : a) }')
		if [ -z "$t_started" ] && [ $((${started:-0} - started0)) -ge "$JOBS" ]; then
			t_started=$(_now_us)
			passes1=$(metric cohort_sched_passes_total)
			psec1=$(metric cohort_sched_pass_seconds_sum)
		fi
		if [ -z "$t_submitted" ]; then
			alive=0
			for i in "${subs[@]}"; do
				! kill -0 "$i" 2>/dev/null || alive=1
			done
			[ "$alive" = 1 ] || t_submitted=$(_now_us)
		fi
		completed=$(metric 'cohort_jobs{state="COMPLETED"}')
		if [ "${completed:-0}" -ge "$JOBS" ]; then
			t_done=$(_now_us)
			break
		fi
		sleep 0.2
	done
	for i in "${subs[@]}"; do
		wait "$i" || true
	done
	c1=$(cpu_ticks "$CTL_PID")
	if [ -z "$t_started" ]; then
		say "N=$n: only $((started - started0)) of $JOBS jobs started in time ($(awk -v a="$t_first" -v b="$(_now_us)" 'BEGIN { printf "%.0f", (b - a) / 1e6 }') s)"
		return 0
	fi
	[ -n "$t_submitted" ] || t_submitted=$(_now_us)
	say "N=$n: $JOBS gang jobs (1/2/4/8/16 nodes x 8 GPUs, $SECONDS_PER_JOB s each, $SUBMITTERS submitters): all submitted after $(awk -v a="$t_first" -v b="$t_submitted" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s, all started $(awk -v a="$t_first" -v b="$t_started" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s after the first submit (the cluster holds $n nodes; the batch needs $((JOBS / 5 * 31)) node-runs of $SECONDS_PER_JOB s)"
	if [ -n "$t_done" ]; then
		say "N=$n: all $JOBS COMPLETED $(awk -v a="$t_first" -v b="$t_done" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s after the first submit; controller CPU over the batch $(awk -v d=$((c1 - c0)) -v hz="$HZ" -v s="$(awk -v a="$t_first" -v b="$t_done" 'BEGIN { print (b - a) / 1e6 }')" 'BEGIN { printf "%.0f", d / hz / s * 100 }')% of one core"
	else
		say "N=$n: not all jobs COMPLETED in time ($completed)"
	fi
	say "N=$n: scheduling passes while starting them: $((passes1 - passes0)), mean $(awk -v a="$psec0" -v b="$psec1" -v p=$((passes1 - passes0)) 'BEGIN { printf "%.2f", (p > 0 ? (b - a) / p * 1000 : 0) }') ms, largest seen $(awk -v m="$maxpass" 'BEGIN { printf "%.2f", m * 1000 }') ms; controller RSS now $(rss_mib "$CTL_PID") MiB"
}

# crash_once K: crash a node under one of the long jobs; print
# "detect_ms restart_ms total_ms".
crash_once() {
	local line node ms job
	: >"$T/crash.line"
	local before
	before=$(grep -c '^crash ' "$C/sim-$FAIL_N.out" || true)
	kill -USR1 "$SIM_PID"
	wait_for 5 sh -c "[ \$(grep -c '^crash ' '$C/sim-$FAIL_N.out') -gt $before ]" ||
		fail "cohort-simnodes printed no crash line"
	line=$(grep '^crash ' "$C/sim-$FAIL_N.out" | tail -n 1)
	read -r _ node _ ms _ job <<<"$line"
	job=${job%%,*}
	[[ "$job" =~ ^[0-9]+$ ]] || fail "the crashed node $node ran no job: $line"
	"$PYTHON" - "$job" "$ms" <<'EOF'
import datetime, json, subprocess, sys, time
job, crash = sys.argv[1], int(sys.argv[2])
def ev():
    out = subprocess.run(["cohort", "events", "--job", job, "--json"],
                         capture_output=True, check=True).stdout
    r = []
    for e in json.loads(out)["events"]:
        t = datetime.datetime.strptime(e["time"].rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f")
        r.append((e["kind"], int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)))
    return r
t0 = time.monotonic()
while time.monotonic() - t0 < 60:
    e = ev()
    restart = [t for k, t in e if k == "restart" and t >= crash - 5]
    running = [t for k, t in e if k == "running" and restart and t >= restart[0]]
    if running:
        print(restart[0] - crash, running[0] - restart[0], running[0] - crash)
        sys.exit(0)
    time.sleep(0.2)
print("timeout")
sys.exit(1)
EOF
}

failures() {
	local n="$1" i j ids=() out det=() rst=() tot=()
	FAIL_N=$n
	[ "$CRASHES" -gt 0 ] || return 0
	echo "# ---- failures at $n nodes ----"
	for ((i = 0; i < 10; i++)); do
		ids+=("$(cohort submit --name long$i --nodes 2 --gpus-per-node 8 \
			--max-restarts 100 --env SIM_SECONDS=3600 -- train)")
	done
	for j in "${ids[@]}"; do
		wait_for 30 _job_in_state "$j" RUNNING || fail "job $j did not start"
	done
	for ((i = 0; i < CRASHES; i++)); do
		out=$(crash_once) || fail "crash $i: $out"
		read -r a b c <<<"$out"
		det+=("$a")
		rst+=("$b")
		tot+=("$c")
		echo "# crash $((i + 1)): detected after $a ms, running again $b ms later: $c ms"
		for j in "${ids[@]}"; do
			wait_for 30 _job_in_state "$j" RUNNING || fail "job $j is not running"
		done
	done
	stats() {
		printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			p = int(0.99 * NR + 0.999999); if (p < 1) p = 1; if (p > NR) p = NR
			printf "median %.0f ms, p99 %.0f ms", m, v[p] }'
	}
	say "N=$n failures ($CRASHES node crashes under running 2-node jobs; node_timeout 10 s, heartbeat 2 s): crash -> running again: $(stats "${tot[@]}")"
	say "N=$n failures: of which crash -> detected (node DOWN): $(stats "${det[@]}"); detected -> running again: $(stats "${rst[@]}")"
	say "N=$n failures: controller's cohort_failure_to_restart_seconds: median $(metric 'cohort_failure_to_restart_seconds{quantile="0.5"}') s, p99 $(metric 'cohort_failure_to_restart_seconds{quantile="0.99"}') s"
}

echo "# $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); cohort-simnodes and cohortd on the same machine"
first=1
for n in $NODES_LIST; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || fail "--nodes: not a number: '$n'"
	run_scale "$n"
	if [ "$first" = 1 ] && [ "$IDLE_ONLY" = 0 ]; then
		failures "$n"
		first=0
	fi
	stop_pid "$SIM_PID"
	stop_pid "$CTL_PID"
done
echo
echo "== scale results =="
printf '%s\n' "${RESULTS[@]}"
