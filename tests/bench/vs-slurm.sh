#!/bin/bash
# vs-slurm.sh: Cohort and Slurm side by side, on this machine, in one run.
#
#   tests/bench/vs-slurm.sh [--jobs N] [--parallel P] [--builddir DIR]
#                           [--gangs G] [--keep] [--cohort-only]
#                           [--slurm-timeout S] [--array-tasks A]
#                           [--chain D] [--steps-repeat R]
#                           [--short-steps K]
#
# Installs Debian's Slurm (slurm-wlm, munge) when absent, starts a private
# munged and a private Slurm cluster on 127.0.0.1 (4 nodes node[1-4], one
# slurmd each via 'slurmd -N', GRES gpu:8 on File= links to /dev/null,
# all state, spool and logs under a temporary directory; the spool in a
# short one of its own under /tmp where that path is too long for the
# slurmstepds' sockets), starts a
# Cohort cluster of 4 nodes x 8 GPUs with scripts/cohort-local, and
# measures each pair:
#
#   (a) submission rate of N trivial jobs, sequential and with P parallel
#       submitters: 'sbatch --wrap true' against 'cohort submit -- true'
#       (both a new process per job; the cohort CLI's go through its
#       cohort-mux, started by the first), the same again with jobs
#       that stay pending (sbatch --hold; cohort submit --hold),
#       plus tests/bench/bench_submit with 1, P and 16
#       clients, at most N (one process, one kept TLS connection per
#       client; its jobs take whole nodes); client CPU per submit from
#       'times';
#   (b) from the first submit until N fresh trivial jobs have all finished
#       on the 4 nodes (P submitters; polling squeue / cohort jobs);
#   (c) from submitting a 2-node x 8-GPU gang until it is seen running
#       (polling squeue / cohort show in a tight loop), median of G;
#   (d) a job array of A trivial tasks ('sbatch --array=0-(A-1) --wrap
#       true' against 'cohort submit --array 0-(A-1) -- true'): from the
#       submit until every task has finished;
#   (e) a chain of D trivial jobs, each 'afterok' the one before: from
#       the first submit until the last has finished, per link;
#   (f) job steps: inside one 4-node batch job (sbatch -N4, no GPUs, the
#       same script on both sides, its srun Slurm's or Cohort's as the
#       job's PATH has it), R times 'srun -N4 -n4' of a task that writes
#       'date +%s.%N' to a file of its own: from just before srun
#       ($EPOCHREALTIME in the script) to the last of the 4 tasks'
#       timestamps, median and p90 of R. Every task runs on this machine,
#       so all the clocks are one;
#   (g) in another such job, K short steps one after the other
#       ('srun -N1 -n1 true' in a loop), timed inside the script: steps
#       per second.
#
# Slurm's 4 nodes are 4 slurmds on this one machine ('slurmd -N nodeN',
# each on its own port): a step of -N4 is 4 slurmstepds here, just as
# Cohort's 4 nodes are 4 cohort-agents here. Where Debian's slurmd cannot
# run several at once (see below), Slurm falls back to one node, says so,
# and its step rows are for -N1.
#
# Slots: a Slurm node has CPUs=8 (SlurmdParameters=config_overrides) and a
# trivial job takes one CPU; a Cohort trivial job asks --gpus-per-node 1.
# So both clusters run at most 32 trivial jobs at once.
#
# Defaults: N=500 jobs, P=4 submitters, G=10 gangs, A=1000 tasks, D=100
# links, R=20 step launches, K=1000 short steps. Small sizes (say
# --jobs 6 --parallel 2 --gangs 1 --steps-repeat 2 --short-steps 5) make
# a seconds-long smoke run, as make check does
# (tests/integration/t090-vs-slurm-smoke.sh).
#
# --slurm-timeout S bounds the wait for slurmctld and the slurmds to be
# idle (default 90).
#
# --cohort-only: no Slurm at all (nothing installed, started or needed,
# root not needed): the same measurements on Cohort alone; the table has
# the Cohort column only and every ratio is "-".
#
# Every process started here is stopped on exit, error or signal: the
# Slurm jobs are cancelled, then slurmds, slurmctld, the private munged
# and the Cohort cluster (cohort-local down). Every wait is bounded.
# Everything lives in a fresh directory under $TMPDIR (default /tmp),
# removed after a successful run (kept with --keep or on failure).
# Needs root (slurmd runs as root; apt-get when Slurm is absent), except
# with --cohort-only.
set -eu
set -o pipefail

PROG=vs-slurm
JOBS=500
PAR=4
GANGS=10
ATASKS=1000
CHAIN=100
STEPS_R=20
SHORT_K=1000
BUILDDIR=
KEEP=0
COHORT_ONLY=0
NODES=4
GPUS=8
SLURM_UP_TIMEOUT_S=90   # bound on slurmctld + slurmds becoming idle
DRAIN_TIMEOUT_S=600     # bound on a batch of trivial jobs finishing
GANG_TIMEOUT_S=60       # bound on one gang starting
STOP_TIMEOUT_S=15       # bound on a daemon exiting after SIGTERM

usage() {
	sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--jobs) JOBS="${2:?}"; shift 2 ;;
	--parallel) PAR="${2:?}"; shift 2 ;;
	--gangs) GANGS="${2:?}"; shift 2 ;;
	--array-tasks) ATASKS="${2:?}"; shift 2 ;;
	--chain) CHAIN="${2:?}"; shift 2 ;;
	--steps-repeat) STEPS_R="${2:?}"; shift 2 ;;
	--short-steps) SHORT_K="${2:?}"; shift 2 ;;
	--builddir) BUILDDIR="${2:?}"; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--cohort-only) COHORT_ONLY=1; shift ;;
	--slurm-timeout) SLURM_UP_TIMEOUT_S="${2:?}"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for v in "$JOBS" "$PAR" "$GANGS" "$SLURM_UP_TIMEOUT_S" "$ATASKS" "$CHAIN" \
    "$STEPS_R" "$SHORT_K"; do
	[[ "$v" =~ ^[1-9][0-9]{0,5}$ ]] || die "not a positive integer: $v"
done
[ "$COHORT_ONLY" = 1 ] || [ "$(id -u)" = 0 ] ||
    die "run as root (slurmd must be root), or pass --cohort-only"

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -z "$BUILDDIR" ]; then
	if [ -x "$SRCDIR/cohortd" ]; then BUILDDIR=$SRCDIR; else BUILDDIR=$PWD; fi
fi
BUILDDIR=$(cd "$BUILDDIR" && pwd)
for p in cohortd cohort cohort-agent slurm/sbatch tests/bench/bench_submit; do
	[ -x "$BUILDDIR/$p" ] || die "$BUILDDIR/$p missing (build it, or pass --builddir)"
done
COHORT="$BUILDDIR/cohort"
COHORT_LOCAL="$SRCDIR/scripts/cohort-local"
export COHORT_BINDIR="$BUILDDIR"

# ---------------------------------------------------------------- helpers

now() { printf '%s\n' "$EPOCHREALTIME"; }
# sub A B: B - A, in seconds.
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# div A B: A / B (2 decimals), "-" when B is 0.
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (s == 0) print "-"; else printf "%.1f", n / s }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# p90: the 90th percentile (nearest rank) of the numbers on stdin.
p90() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else { i = int((NR * 9 + 9) / 10); printf "%.3f\n", v[i] } }'; }
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

alive() {
	local stat
	[ -n "${1:-}" ] || return 1
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# stop_pid PID NAME: SIGTERM, bounded wait, then SIGKILL.
stop_pid() {
	local pid="$1" name="$2" i
	alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		alive "$pid" || return 0
		sleep 0.1
	done
	log "$name ($pid) ignored SIGTERM; SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
}

# free_port: a TCP port nobody listens on (checked with ss).
USED_PORTS=" "
free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 30000))
		case "$USED_PORTS" in *" $p "*) continue ;; esac
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			USED_PORTS="$USED_PORTS$p "
			printf '%s\n' "$p"
			return 0
		fi
	done
	die "no free port found"
}

# ---------------------------------------------------------------- cleanup

T=$(mktemp -d "${TMPDIR:-/tmp}/vs-slurm.XXXXXX")
chmod 755 "$T"
MUNGED_PID=
SLURMCTLD_PID=
SLURMD_PIDS=()
SPOOL_TMP=
COHORT_UP=0
FAILED=1

cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM HUP
	set +e
	# Submitters of an interrupted batch: stop them first.
	: >"$T/stop"
	if [ -s "$T/submitters" ]; then
		while read -r pid; do alive "$pid" && kill -TERM "$pid" 2>/dev/null; done <"$T/submitters"
	fi
	if [ -n "$SLURMCTLD_PID" ] && alive "$SLURMCTLD_PID"; then
		# Cancel what is left so the slurmstepds end with their jobs.
		timeout 10 scancel --full --quiet --user root >/dev/null 2>&1
		timeout 15 bash -c 'while [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.2; done'
	fi
	for pid in "${SLURMD_PIDS[@]}"; do stop_pid "$pid" slurmd; done
	[ -n "$SLURMCTLD_PID" ] && stop_pid "$SLURMCTLD_PID" slurmctld
	[ -n "$MUNGED_PID" ] && stop_pid "$MUNGED_PID" munged
	[ -z "$SPOOL_TMP" ] || rm -rf "$SPOOL_TMP"
	if [ "$COHORT_UP" = 1 ]; then
		"$COHORT_LOCAL" down "$T/cohort" >/dev/null 2>&1 || log "cohort-local down failed"
	fi
	if [ "$FAILED" = 1 ] || [ "$rc" != 0 ]; then
		log "failed (rc=$rc); logs kept in $T"
		[ "$rc" = 0 ] && rc=1
	elif [ "$KEEP" = 1 ]; then
		log "logs kept in $T"
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---------------------------------------------------------------- Slurm
# slurm_up: install Slurm when absent, start a private munged, slurmctld
# and the slurmds; sets SLURM_VERSION, SLURM_NODES and the *_PID variables.
SLURM_VERSION=
SLURM_NODES=$NODES
S="$T/slurm"
slurm_up() {
	if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
	    ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
		log "installing slurm-wlm and munge with apt-get"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge \
		    >"$T/apt.log" 2>&1 || {
			DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$T/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge \
			    >>"$T/apt.log" 2>&1
		} || die "apt-get install slurm-wlm munge failed (see $T/apt.log)"
	fi
	SLURM_VERSION=$(slurmctld -V 2>/dev/null | awk '{ print $2 }')

	# munged: a private one (own key, socket, pid, log and seed) under $T.
	M="$T/munge"
	mkdir -p "$M"
	chmod 700 "$M"
	dd if=/dev/urandom of="$M/munge.key" bs=1024 count=1 status=none
	chmod 400 "$M/munge.key"
	MUNGE_SOCKET="$M/munge.socket"
	munged --foreground --force --socket="$MUNGE_SOCKET" --key-file="$M/munge.key" \
	    --pid-file="$M/munged.pid" --log-file="$M/munged.log" \
	    --seed-file="$M/munged.seed" --num-threads=4 >"$M/munged.out" 2>&1 &
	MUNGED_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -S "$MUNGE_SOCKET" ] && break
		alive "$MUNGED_PID" || die "munged exited: $(tail -n 3 "$M/munged.out" "$M/munged.log" 2>/dev/null)"
		sleep 0.1
	done
	[ -S "$MUNGE_SOCKET" ] || die "munged did not create $MUNGE_SOCKET within 10 s"
	munge -S "$MUNGE_SOCKET" -n | unmunge -S "$MUNGE_SOCKET" >/dev/null ||
	    die "munge round trip through $MUNGE_SOCKET failed"

	mkdir -p "$S/state" "$S/out"
	# A slurmstepd listens on SlurmdSpoolDir/NODE_JOB.STEP, and a Unix
	# socket's path has 108 bytes at most: under a deep $TMPDIR (make
	# check's, in the build tree) slurmd cannot start a job and requeues
	# it for ever. The spool is then a short directory of its own.
	SLURM_SPOOL=$S/spool
	if [ "${#SLURM_SPOOL}" -gt 60 ]; then
		SLURM_SPOOL=$(mktemp -d /tmp/vs-spool.XXXXXX)
		SPOOL_TMP=$SLURM_SPOOL
	fi
	CTLD_PORT=$(free_port)
	export SLURM_CONF="$S/slurm.conf"
	{
		cat <<-EOF
	ClusterName=vsbench
	SlurmctldHost=localhost(127.0.0.1)
	SlurmctldPort=$CTLD_PORT
	AuthType=auth/munge
	AuthInfo=socket=$MUNGE_SOCKET
	CredType=cred/munge
	SlurmUser=root
	SlurmdUser=root
	StateSaveLocation=$S/state
	SlurmdSpoolDir=$SLURM_SPOOL/%n
	SlurmctldPidFile=$S/slurmctld.pid
	SlurmdPidFile=$S/slurmd-%n.pid
	SlurmctldLogFile=$S/slurmctld.log
	SlurmdLogFile=$S/slurmd-%n.log
	SlurmctldDebug=info
	SlurmdDebug=info
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	SchedulerType=sched/backfill
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	MpiDefault=none
	ReturnToService=2
	SlurmdParameters=config_overrides
	GresTypes=gpu
	MailProg=/bin/true
	InactiveLimit=0
	KillWait=5
	EOF
		for ((n = 1; n <= NODES; n++)); do
			port=$(free_port)
			echo "NodeName=node$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$port CPUs=8 RealMemory=1000 Gres=gpu:$GPUS State=UNKNOWN"
			mkdir -p "$SLURM_SPOOL/node$n"
		done
		echo "PartitionName=bench Nodes=node[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
	} >"$SLURM_CONF"
	# GRES gpu:8 backed by /dev/null: the gpu plugin wants one File per GPU
	# ("Name=gpu Count=8" alone registers 0 GPUs in 22.05), so File= names
	# symbolic links to /dev/null.
	mkdir -p "$S/dev"
	for ((g = 0; g < GPUS; g++)); do ln -sf /dev/null "$S/dev/gpu$g"; done
	echo "Name=gpu File=$S/dev/gpu[0-$((GPUS - 1))]" >"$S/gres.conf"

	slurmctld -D -i -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
	SLURMCTLD_PID=$!

	# Several slurmds on one machine: 'slurmd -N NAME' (each finds its own
	# Port= in slurm.conf). Debian's build may lack --enable-multiple-slurmd;
	# then only node1 can register and we fall back to one node.
	SLURM_NODES=$NODES
	start_slurmds() {
		local n pid
		for ((n = 1; n <= $1; n++)); do
			slurmd -D -N "node$n" -f "$SLURM_CONF" >"$S/slurmd-node$n.out" 2>&1 &
			pid=$!
			SLURMD_PIDS+=("$pid")
		done
	}
	start_slurmds "$NODES"

	# slurm_idle_count: nodes sinfo shows idle.
	slurm_idle_count() {
		sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle" { n++ } END { print n + 0 }'
	}
	deadline=$((SECONDS + SLURM_UP_TIMEOUT_S))
	while :; do
		alive "$SLURMCTLD_PID" || die "slurmctld exited: $(tail -n 5 "$S/slurmctld.out" "$S/slurmctld.log" 2>/dev/null)"
		[ "$(slurm_idle_count)" = "$NODES" ] && break
		dead=0
		for pid in "${SLURMD_PIDS[@]}"; do alive "$pid" || dead=$((dead + 1)); done
		if [ "$dead" -gt 0 ] && [ "$SLURM_NODES" = "$NODES" ] && alive "${SLURMD_PIDS[0]}"; then
			log "only the first slurmd stayed up (no multiple-slurmd support?):"
			tail -n 3 "$S/slurmd-node2.out" >&2 || true
			SLURM_NODES=1
		fi
		if [ "$SLURM_NODES" = 1 ] && [ "$(slurm_idle_count)" -ge 1 ]; then
			break
		fi
		[ "$SECONDS" -lt "$deadline" ] || {
			sinfo -N >&2 || true
			die "Slurm nodes not idle within ${SLURM_UP_TIMEOUT_S}s (see $S)"
		}
		sleep 0.5
	done
	log "Slurm $SLURM_VERSION up: $(sinfo -h -N -o '%N=%T' | tr '\n' ' ')"
	[ "$SLURM_NODES" = "$NODES" ] || log "WARNING: Slurm runs ONE slurmd (node1) only; its end-to-end figures are for one node"
}
if [ "$COHORT_ONLY" = 1 ]; then
	log "--cohort-only: no Slurm"
else
	slurm_up
fi

# ---------------------------------------------------------------- Cohort

mkdir -p "$T/cohort"
COHORT_UP=1
# A benchmark submits far faster and more than a person: no per-user
# submit rate or pending cap (Slurm's defaults have none either).
COHORT_LOCAL_CONTROLLER_CONF=$'[tenants]\nsubmit_rate = 0\nmax_pending_per_user = 0' \
"$COHORT_LOCAL" up "$T/cohort" --nodes "$NODES" --gpus "$GPUS" >"$T/cohort-up.log" 2>&1 ||
    die "cohort-local up failed: $(tail -n 5 "$T/cohort-up.log")"
# The Slurm side is Debian's Slurm: the PATH cohort-local env would put
# Cohort's sbatch and squeue on is not taken.
keep_path=$PATH
eval "$("$COHORT_LOCAL" env "$T/cohort")"
PATH=$keep_path
log "Cohort up: $("$COHORT" nodes | awk 'NR > 1 { printf "%s=%s ", $1, $2 }')"

# Cohort tasks run as 'nobody' when root runs the cluster: a workdir it
# may enter. Slurm's batch output goes under $S/out (its default name).
CWORK=/tmp
SB=(sbatch --quiet --chdir="$S/out" --output="$S/out/slurm-%j.out")
CS=("$COHORT" submit --workdir "$CWORK" --gpus-per-node 1)

slurm_active() { squeue -h -o %i 2>/dev/null | wc -l; }
cohort_active() {
	"$COHORT" jobs --json 2>/dev/null | grep -cE '"state": "(PENDING|RUNNING)"' || true
}

# wait_drained WHICH TIMEOUT: until no job of that side is queued/running.
wait_drained() {
	local side="$1" limit="$2" deadline=$((SECONDS + $2)) n
	while :; do
		if [ "$side" = slurm ]; then n=$(slurm_active); else n=$(cohort_active); fi
		[ "$n" = 0 ] && return 0
		[ "$SECONDS" -lt "$deadline" ] || die "$side: $n jobs still active after ${limit}s"
		sleep 0.05
	done
}

# submit_batch SIDE COUNT P [held]: COUNT trivial jobs from P submitters,
# each a new process per job. "held": jobs that stay pending (Slurm's
# --hold on both sides), so that running them does not
# compete with the submitters for the CPU. Prints the seconds taken and
# the client CPU per submit; dies on any failure.
submit_batch() {
	local side="$1" count="$2" p="$3" i t0 t1 per extra k fails=0 pids=() cpu
	local -a hs=() hc=()
	if [ "${4:-}" = held ]; then
		hs=(--hold)
		hc=(--hold)
	fi
	rm -f "$T"/fail.* "$T"/cpu.*
	t0=$(now)
	for ((k = 0; k < p; k++)); do
		per=$((count / p))
		extra=$((k < count % p ? 1 : 0))
		(
			f=0
			for ((i = 0; i < per + extra; i++)); do
				[ ! -e "$T/stop" ] || exit 1
				if [ "$side" = slurm ]; then
					"${SB[@]}" "${hs[@]}" --wrap true >/dev/null 2>>"$T/submit.err" || f=$((f + 1))
				else
					"${CS[@]}" "${hc[@]}" -- true >/dev/null 2>>"$T/submit.err" || f=$((f + 1))
				fi
			done
			echo "$f" >"$T/fail.$k"
			# CPU of this submitter's children (the sbatch / cohort
			# processes): second line of 'times', "0m0.120s 0m0.030s".
			# (Not in a pipe: a forked 'times' sees no children.)
			times >"$T/cpu.$k"
		) &
		pids+=($!)
		echo "$!" >>"$T/submitters"
	done
	wait "${pids[@]}"
	t1=$(now)
	: >"$T/submitters"
	for ((k = 0; k < p; k++)); do fails=$((fails + $(cat "$T/fail.$k"))); done
	[ "$fails" = 0 ] || die "$side: $fails of $count submits failed: $(tail -n 3 "$T/submit.err")"
	cpu=$(for k in "$T"/cpu.*; do sed -n 2p "$k"; done | tr ' ' '\n' |
	    awk -F'[ms]' 'NF >= 2 { t += $1 * 60 + $2 } END { printf "%.2f", t }')
	echo "$(sub "$t0" "$t1") $(awk -v c="$cpu" -v n="$count" 'BEGIN { printf "%.1f", c * 1000 / n }')"
}

RESULTS=()
# row LABEL SLURM COHORT RATIO: one line of the table (--cohort-only
# leaves the Slurm column out).
row() {
	local line
	if [ "$COHORT_ONLY" = 1 ]; then
		line=$(printf '%-46s %12s %8s' "$1" "$3" "$4")
	else
		line=$(printf '%-46s %12s %12s %8s' "$@")
	fi
	RESULTS+=("$line")
	printf '%s\n' "$line"
}
# ratio A B: "A/B" with an x; "-" when a side has no figure.
ratio() {
	local r
	if [ "$1" = - ] || [ "$2" = - ]; then
		echo -
		return
	fi
	r=$(div "$1" "$2")
	if [ "$r" = - ]; then echo -; else echo "${r}x"; fi
}

echo
if [ "$COHORT_ONLY" = 1 ]; then
	echo "Cohort only (--cohort-only, no Slurm): $NODES nodes x $GPUS GPUs, N=$JOBS jobs, P=$PAR submitters"
else
	echo "Cohort vs Slurm $SLURM_VERSION: $NODES nodes x $GPUS GPUs, N=$JOBS jobs, P=$PAR submitters"
fi
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r)"
echo "load average before (other processes on the machine): $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$SLURM_NODES" = "$NODES" ] || echo "NOTE: Slurm with ONE slurmd (no multiple-slurmd support)"
echo
row "" Slurm Cohort ratio

# ---- (a) submission rate
SUBMITTERS=(1)
[ "$PAR" = 1 ] || SUBMITTERS+=("$PAR")
for p in "${SUBMITTERS[@]}"; do
	r_slurm=- c_slurm=-
	if [ "$COHORT_ONLY" = 0 ]; then
		out=$(submit_batch slurm "$JOBS" "$p")
		read -r s_slurm c_slurm <<<"$out"
		wait_drained slurm "$DRAIN_TIMEOUT_S"
		r_slurm=$(rate "$JOBS" "$s_slurm")
	fi
	out=$(submit_batch cohort "$JOBS" "$p")
	read -r s_cohort c_cohort <<<"$out"
	wait_drained cohort "$DRAIN_TIMEOUT_S"
	r_cohort=$(rate "$JOBS" "$s_cohort")
	if [ "$p" = 1 ]; then what="(a) submits/s, sequential (CLI)"; else what="(a) submits/s, $p submitters (CLI)"; fi
	row "$what" "$r_slurm" "$r_cohort" "$(ratio "$r_cohort" "$r_slurm")"
	row "    client CPU per submit, ms" "$c_slurm" "$c_cohort" "$(ratio "$c_slurm" "$c_cohort")"
done

# The same with jobs that stay pending: the submission path alone, while
# neither cluster runs anything (Cohort runs the jobs of the rows above
# as they arrive, on the same two cores as its submitters; Slurm starts
# few before the submits end). Cancelled afterwards.
cancel_held() {
	if [ "$1" = slurm ]; then
		scancel --quiet --state=PENDING --user="$(id -un)" 2>/dev/null || true
	else
		"$COHORT" jobs | awk 'NR > 1 { print $1 }' | xargs -r -n 200 "$COHORT" cancel >/dev/null
	fi
	wait_drained "$1" "$DRAIN_TIMEOUT_S"
}
for p in "${SUBMITTERS[@]}"; do
	r_slurm=- c_slurm=-
	if [ "$COHORT_ONLY" = 0 ]; then
		out=$(submit_batch slurm "$JOBS" "$p" held)
		read -r s_slurm c_slurm <<<"$out"
		cancel_held slurm
		r_slurm=$(rate "$JOBS" "$s_slurm")
	fi
	out=$(submit_batch cohort "$JOBS" "$p" held)
	read -r s_cohort c_cohort <<<"$out"
	cancel_held cohort
	r_cohort=$(rate "$JOBS" "$s_cohort")
	if [ "$p" = 1 ]; then what="(a) submits/s, sequential, jobs held"; else what="(a) submits/s, $p submitters, jobs held"; fi
	row "$what" "$r_slurm" "$r_cohort" "$(ratio "$r_cohort" "$r_slurm")"
done

# In-process client: one connection per client kept open; durable acks.
# bench_submit wants no more clients than jobs: at most N clients.
CLIENTS=()
for c in 1 "$PAR" 16; do
	((c <= JOBS)) || c=$JOBS
	case " ${CLIENTS[*]} " in *" $c "*) ;; *) CLIENTS+=("$c") ;; esac
done
for c in "${CLIENTS[@]}"; do
	out=$("$BUILDDIR/tests/bench/bench_submit" --clients "$c" --jobs "$JOBS" 2>&1) ||
	    die "bench_submit --clients $c failed: $out"
	r=$(printf '%s\n' "$out" | sed -n 's/.*submits_per_s=\([0-9.]*\).*/\1/p')
	p50=$(printf '%s\n' "$out" | sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p')
	row "    bench_submit --clients $c (kept conn.)" "-" "$r" "p50 ${p50}ms"
	wait_drained cohort "$DRAIN_TIMEOUT_S"
done

# ---- (b) first submit to all N finished, fresh N each, P submitters
# Prints "TOTAL AFTER": first submit to all done, and the part of it after
# the last submit was acknowledged.
e2e() {
	local side="$1" t0 t1 t2
	t0=$(now)
	submit_batch "$side" "$JOBS" "$PAR" >/dev/null
	t1=$(now)
	wait_drained "$side" "$DRAIN_TIMEOUT_S"
	t2=$(now)
	echo "$(sub "$t0" "$t2") $(sub "$t1" "$t2")"
}
e_slurm=- a_slurm=- j_slurm=-
if [ "$COHORT_ONLY" = 0 ]; then
	out=$(e2e slurm)
	read -r e_slurm a_slurm <<<"$out"
	j_slurm=$(rate "$JOBS" "$e_slurm")
fi
out=$(e2e cohort)
read -r e_cohort a_cohort <<<"$out"
j_cohort=$(rate "$JOBS" "$e_cohort")
row "(b) $JOBS jobs first submit->all done, s" "$e_slurm" "$e_cohort" "$(ratio "$e_slurm" "$e_cohort")"
row "    (as jobs/s end to end)" "$j_slurm" "$j_cohort" "$(ratio "$j_cohort" "$j_slurm")"
row "    of which after the last submit, s" "$a_slurm" "$a_cohort" "$(ratio "$a_slurm" "$a_cohort")"

# ---- (c) 2-node x 8-GPU gang: submit until seen running, median of G
gang_slurm() {
	local id t0 t1 st deadline
	t0=$(now)
	id=$(sbatch --parsable --chdir="$S/out" --output="$S/out/slurm-%j.out" -N2 --gres=gpu:$GPUS --wrap 'sleep 1') ||
	    die "slurm gang submit failed"
	id=${id%%;*}
	deadline=$((SECONDS + GANG_TIMEOUT_S))
	while :; do
		st=$(squeue -h -j "$id" -o %t 2>/dev/null || true)
		[ "$st" = R ] && break
		case "$st" in CG|CD|F|CA|NF|TO|OOM) die "slurm gang $id ended ($st) before seen running" ;; esac
		[ "$SECONDS" -lt "$deadline" ] || die "slurm gang $id not running within ${GANG_TIMEOUT_S}s"
	done
	t1=$(now)
	sub "$t0" "$t1"
}
gang_cohort() {
	local id t0 t1 st deadline
	t0=$(now)
	id=$("$COHORT" submit --workdir "$CWORK" --nodes 2 --gpus-per-node "$GPUS" -- sleep 1) ||
	    die "cohort gang submit failed"
	deadline=$((SECONDS + GANG_TIMEOUT_S))
	while :; do
		st=$("$COHORT" show "$id" --json 2>/dev/null | sed -n 's/^  "state": "\([A-Z_]*\)".*/\1/p')
		[ "$st" = RUNNING ] && break
		case "$st" in COMPLETED|FAILED|CANCELLED) die "cohort gang $id ended ($st) before seen running" ;; esac
		[ "$SECONDS" -lt "$deadline" ] || die "cohort gang $id not running within ${GANG_TIMEOUT_S}s"
	done
	t1=$(now)
	sub "$t0" "$t1"
}
: >"$T/gang.slurm"
: >"$T/gang.cohort"
for ((g = 0; g < GANGS; g++)); do
	if [ "$COHORT_ONLY" = 0 ]; then
		gang_slurm >>"$T/gang.slurm"
		echo >>"$T/gang.slurm"
		wait_drained slurm 60
	fi
	gang_cohort >>"$T/gang.cohort"
	echo >>"$T/gang.cohort"
	wait_drained cohort 60
done
g_slurm=$(median <"$T/gang.slurm")
g_cohort=$(median <"$T/gang.cohort")
row "(c) 2x$GPUS gang submit->running, median s" "$g_slurm" "$g_cohort" "$(ratio "$g_slurm" "$g_cohort")"

# ---- (d) an array of A trivial tasks: submit until all done
array_run() {
	local side="$1" t0 t1
	t0=$(now)
	if [ "$side" = slurm ]; then
		"${SB[@]}" --array="0-$((ATASKS - 1))" --wrap true >/dev/null ||
		    die "slurm array submit failed"
	else
		"${CS[@]}" --array "0-$((ATASKS - 1))" -- true >/dev/null ||
		    die "cohort array submit failed"
	fi
	wait_drained "$side" "$DRAIN_TIMEOUT_S"
	t1=$(now)
	sub "$t0" "$t1"
}
d_slurm=-
[ "$COHORT_ONLY" = 1 ] || d_slurm=$(array_run slurm)
d_cohort=$(array_run cohort)
row "(d) array of $ATASKS tasks submit->all done, s" "$d_slurm" "$d_cohort" "$(ratio "$d_slurm" "$d_cohort")"

# ---- (e) a chain of D jobs, each afterok the previous: per link
chain_run() {
	local side="$1" t0 t1 i prev=
	t0=$(now)
	for ((i = 0; i < CHAIN; i++)); do
		if [ "$side" = slurm ]; then
			prev=$("${SB[@]}" --parsable ${prev:+--dependency=afterok:$prev} --wrap true) ||
			    die "slurm chain submit failed"
			prev=${prev%%;*}
		else
			prev=$("${CS[@]}" ${prev:+--dependency afterok:$prev} -- true) ||
			    die "cohort chain submit failed"
		fi
	done
	wait_drained "$side" "$DRAIN_TIMEOUT_S"
	t1=$(now)
	awk -v s="$(sub "$t0" "$t1")" -v n="$CHAIN" 'BEGIN { printf "%.3f", s / n }'
}
e_slurm=-
[ "$COHORT_ONLY" = 1 ] || e_slurm=$(chain_run slurm)
e_cohort=$(chain_run cohort)
row "(e) afterok chain of $CHAIN jobs, s per link" "$e_slurm" "$e_cohort" "$(ratio "$e_slurm" "$e_cohort")"

# ---- (f), (g) job steps inside a batch job
# The batch script, the same for both sides: R launches of a 4-node step
# whose tasks write their start time, or K short steps in a row. It
# writes its figures under its directory and "done" last; the bench reads
# them once the job has ended. Each measurement has a job of its own, so
# that (g) starts in a fresh allocation and a job holds no more steps
# than the larger of R and K.
STEP_TIMEOUT_S=$((120 + STEPS_R * 10 + SHORT_K * 2))  # bound on a job
steps_script() {
	local dir="$1" nodes="$2" what="$3"
	echo '#!/bin/bash'
	echo 'set -u'
	echo "D=$dir"
	if [ "$what" = launch ]; then
		cat <<-EOF
		for ((i = 0; i < $STEPS_R; i++)); do
		    mkdir "\$D/l\$i" || exit 1
		    printf '%s\n' "\$EPOCHREALTIME" >"\$D/l\$i/t0"
		    srun -N$nodes -n$nodes sh -c 'date +%s.%N >"\$1/\$SLURM_PROCID"' sh "\$D/l\$i" ||
		        { echo "launch \$i: srun exited \$?" >&2; exit 1; }
		done
		EOF
	else
		cat <<-EOF
		f=0
		t0=\$EPOCHREALTIME
		for ((i = 0; i < $SHORT_K; i++)); do
		    srun -N1 -n1 true || f=\$((f + 1))
		done
		t1=\$EPOCHREALTIME
		echo "\$t0 \$t1 \$f" >"\$D/short"
		EOF
	fi
	echo ': >"$D/done"'
}

# steps_job SIDE WHAT: runs the job (WHAT: launch or short) on that
# side, in $T/steps-SIDE-WHAT; prints that directory and the node count
# of the job.
steps_job() {
	local side="$1" what="$2" d="$T/steps-$1-$2" nodes="$NODES" id out
	mkdir -p "$d"
	if [ "$side" = slurm ]; then
		nodes=$SLURM_NODES
		steps_script "$d" "$nodes" "$what" >"$d/steps.sh"
		out="$d/slurm.out"
		# Debian's srun, first on the PATH the job inherits.
		id=$(sbatch --parsable -N "$nodes" --chdir="$d" --output="$out" "$d/steps.sh") ||
		    die "slurm: steps job submit failed"
	else
		# The job's user (nobody under root) writes here and reads its
		# client.conf in $T/jobcfg.
		chmod 777 "$d"
		steps_script "$d" "$nodes" "$what" >"$d/steps.sh"
		out="$d/cohort.out"
		id=$("$BUILDDIR/slurm/sbatch" --parsable -N "$nodes" --chdir="$d" --output="$out" \
		    --export=XDG_CONFIG_HOME="$T/jobcfg" "$d/steps.sh") ||
		    die "cohort: steps job submit failed"
	fi
	wait_drained "$side" "$STEP_TIMEOUT_S"
	[ -e "$d/done" ] || die "$side: steps job ${id%%;*} ($what) ended without finishing: $(tail -n 5 "$out" 2>/dev/null)"
	echo "$d $nodes"
}

# steps_run SIDE: both jobs; prints "SHORT_S FAILS" (the K short steps'
# seconds and how many failed) and leaves the launch samples, one a
# line, in $T/launch.SIDE.
steps_run() {
	local side="$1" d nodes l k t0 t1 f out
	# die in the $( ) only leaves it: stop here too.
	out=$(steps_job "$side" launch) || exit 1
	read -r d nodes <<<"$out"
	: >"$T/launch.$side"
	for ((l = 0; l < STEPS_R; l++)); do
		k=$(find "$d/l$l" -name '[0-9]*' | wc -l)
		[ "$k" = "$nodes" ] || die "$side: step launch $l started $k tasks, want $nodes"
		cat "$d/l$l"/[0-9]* | sort -g | tail -n 1 |
		    awk -v t0="$(cat "$d/l$l/t0")" '{ printf "%.4f\n", $1 - t0 }' >>"$T/launch.$side"
	done
	out=$(steps_job "$side" short) || exit 1
	read -r d nodes <<<"$out"
	read -r t0 t1 f <"$d/short"
	[ "$f" = 0 ] || die "$side: $f of $SHORT_K short steps failed: $(sort "$d"/*.out | uniq -c | sort -rn | head -n 3)"
	echo "$(sub "$t0" "$t1") $f"
}
f_slurm=- p_slurm=- k_slurm=-
if [ "$COHORT_ONLY" = 0 ]; then
	out=$(steps_run slurm) || exit 1
	read -r s f <<<"$out"
	f_slurm=$(median <"$T/launch.slurm")
	p_slurm=$(p90 <"$T/launch.slurm")
	k_slurm=$(rate "$SHORT_K" "$s")
fi
if [ "$(id -u)" = 0 ]; then acct=nobody; else acct=$(id -un); fi
mkdir -p "$T/jobcfg/cohort"
cp "$COHORT_CERT" "$T/jobcfg/cohort/user.crt"
cp "$COHORT_KEY" "$T/jobcfg/cohort/user.key"
printf '[client]\nserver = %s\ncert = user.crt\nkey = user.key\nca = %s\n' \
    "$COHORT_SERVER" "$COHORT_CA" >"$T/jobcfg/cohort/client.conf"
chown -R "$acct" "$T/jobcfg"
out=$(steps_run cohort) || exit 1
read -r s f <<<"$out"
f_cohort=$(median <"$T/launch.cohort")
p_cohort=$(p90 <"$T/launch.cohort")
k_cohort=$(rate "$SHORT_K" "$s")
row "(f) ${NODES}-node step launch, median of $STEPS_R, s" "$f_slurm" "$f_cohort" "$(ratio "$f_slurm" "$f_cohort")"
row "    p90, s" "$p_slurm" "$p_cohort" "$(ratio "$p_slurm" "$p_cohort")"
row "(g) $SHORT_K short steps in one job, steps/s" "$k_slurm" "$k_cohort" "$(ratio "$k_cohort" "$k_slurm")"
echo
if [ "$COHORT_ONLY" = 1 ]; then
	echo "gang samples (s): Cohort $(tr '\n' ' ' <"$T/gang.cohort")"
else
	echo "gang samples (s): Slurm $(tr '\n' ' ' <"$T/gang.slurm")"
	echo "                  Cohort $(tr '\n' ' ' <"$T/gang.cohort")"
fi
if [ "$COHORT_ONLY" = 1 ]; then
	echo "step launch samples (s): Cohort $(sort -g "$T/launch.cohort" | tr '\n' ' ')"
else
	echo "step launch samples (s): Slurm $(sort -g "$T/launch.slurm" | tr '\n' ' ')"
	echo "                         Cohort $(sort -g "$T/launch.cohort" | tr '\n' ' ')"
fi

# Cost of one CLI round trip when polling (what (c) includes on each side).
t0=$(now); for ((i = 0; i < 20; i++)); do "$COHORT" show 1 --json >/dev/null; done; t1=$(now)
q_cohort=$(awk -v s="$(sub "$t0" "$t1")" 'BEGIN { printf "%.1f", s * 1000 / 20 }')
if [ "$COHORT_ONLY" = 1 ]; then
	echo "one poll (cohort show), ms: Cohort $q_cohort"
else
	t0=$(now); for ((i = 0; i < 20; i++)); do squeue -h -o %t >/dev/null; done; t1=$(now)
	q_slurm=$(awk -v s="$(sub "$t0" "$t1")" 'BEGIN { printf "%.1f", s * 1000 / 20 }')
	echo "one poll (squeue / cohort show), ms: Slurm $q_slurm  Cohort $q_cohort"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
FAILED=0
