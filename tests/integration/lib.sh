# shellcheck shell=bash
# Sourced by every integration test. Tests run under automake's test
# driver (exit 0 pass, 1 fail, 77 skip) with top_srcdir and top_builddir
# exported by TESTS_ENVIRONMENT; run by hand, both default to the tree the
# test sits in.
#
# Gives each test:
#   $T                 a fresh directory under $top_builddir/tests/tmp
#   $OUT, $ERR         files holding the last expect_exit's stdout/stderr
#   PATH               the built programs and scripts/ first
#   fail MSG           print "FAIL: MSG" and exit 1
#   wait_for S CMD...  poll CMD every 50 ms until it succeeds; 1 after S s
#   expect_exit N CMD... run CMD, assert its exit status is N
#   json_get FILE EXPR evaluate EXPR (Python, the document is d) on FILE
#   cluster_up DIR ... cohort-local up (agents only with --nodes N), then
#                      act as alice
#   as_user DIR WHO    export COHORT_* for WHO (alice, bob, admin)
# for replicated controllers (cluster_up DIR --controllers 3 ...):
#   ctl_leader DIR [S] the leader's id, waited for up to S s (default 20)
#   ctl_kill_leader DIR   kill -9 the leader; its id on stdout
#   ctl_kill DIR K, ctl_start DIR K, ctl_start_all DIR
#   members_json FILE  cohort admin members --json (as the admin) into FILE
#   need_netns         skip (77) unless ip netns add works here
#   HISTORY            tests/integration/history.py (run with $PYTHON)
#   track_pgid PGID    on exit, kill -9 the process group (setsid ...)
# and, for tests that run tasks on agents:
#   world_dir NAME     $T/NAME, world-writable (tasks may run as nobody)
#   job_submit ARGS... cohort submit; the new id on stdout
#   gate NAME          a job command that runs until the file NAME exists
#   job_show ID        cohort show ID --json into $T/job-ID.json
#   job_state ID       the job's state
#   wait_state S ID STATE... poll until the job is in one of STATEs
#   job_pidfiles DIR ID   the job's rank-R.pid files under cluster DIR
#   pgid_alive PGID    a live (non-zombie) process is in group PGID
#   marker_alive M     a live process has M in its command line
#   cohort_has CMD     the built cohort CLI knows the command CMD
#   expect_log_error REGEX   a daemon log line matching REGEX (grep -E) is
#                      an expected outcome of this test (see below)
#   watch_log FILE     also scan FILE (a daemon the test started itself)
# On exit, every cluster started is brought down and every process passed
# to track_pid is killed; on failure the daemons' log tails are printed.
#
# Log check: a test that passed fails after all if, once its clusters are
# down, a daemon's log (cohortd.log and nodeNN.log of every cluster, and
# each file given to watch_log) holds a line at warning or fatal level
# (lib/log.c writes "PROG: warning: " / "PROG: fatal: "), a sanitizer or
# valgrind report, or a failed assertion, that no expect_log_error
# pattern matches. So a test cannot pass while a daemon complained.
set -eu
trap '' PIPE

# Each test in a network namespace of its own where the machine allows
# it (root, unshare and ip): its loopback is its own, so no port a test
# picks (the replicas' Raft ports are picked free, then bound) can be
# taken by another test running beside it, and nothing one test leaves
# listening is reached by the next. COHORT_TEST_NETNS=host keeps the
# machine's network.
if [ -z "${COHORT_TEST_NETNS:-}" ] && [ "$(id -u)" = 0 ] &&
	command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 &&
	unshare -n true 2>/dev/null; then
	COHORT_TEST_NETNS=own exec unshare -n -- "$BASH" "$0" "$@"
fi
if [ "${COHORT_TEST_NETNS:-}" = own ]; then
	ip link set lo up || { echo "ERROR: cannot bring up the test's loopback"; exit 99; }
	COHORT_TEST_NETNS=entered
fi
export COHORT_TEST_NETNS

TEST_NAME=$(basename "$0" .sh)
if [ -z "${top_srcdir:-}" ]; then
	top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
if [ -z "${top_builddir:-}" ]; then
	if [ -x "$PWD/cohortd" ]; then top_builddir=$PWD; else top_builddir=$top_srcdir; fi
fi
export top_srcdir top_builddir
COHORT_BINDIR=$top_builddir
PATH=$top_builddir:$top_srcdir/scripts:$PATH
PYTHON=/usr/bin/python3
PYCLIENT=$top_srcdir/tests/interop/pyclient.py
COHORT_PB2_DIR=$top_builddir/tests/interop/proto
export COHORT_BINDIR PATH COHORT_PB2_DIR
# Settings must come from each test, never from the person's own config.
unset COHORT_SERVER COHORT_CERT COHORT_KEY COHORT_CA
XDG_CONFIG_HOME=/nonexistent-cohort-test-config
export XDG_CONFIG_HOME
# A node goes DOWN when its heartbeats stop for node_timeout. A loaded
# machine (CI, ASan) can hold an agent's heartbeats for seconds, so a
# test's nodes get 30 s unless the test means nodes to go DOWN: it then
# sets COHORT_LOCAL_NODE_TIMEOUT itself (5s, say) before cluster_up.
COHORT_LOCAL_NODE_TIMEOUT=${COHORT_LOCAL_NODE_TIMEOUT:-30s}
export COHORT_LOCAL_NODE_TIMEOUT

mkdir -p "$top_builddir/tests/tmp"
T=$(mktemp -d "$top_builddir/tests/tmp/$TEST_NAME.XXXXXX")
# Tasks of a cluster started as root run as nobody, who must be able to
# reach the directories a test makes for them under $T.
chmod 755 "$T"
OUT=$T/stdout
ERR=$T/stderr
: >"$OUT"
: >"$ERR"

_CLUSTERS=()
_PIDS=()
_LOG_EXPECT=()
_LOG_FILES=()

# What counts as an error in a daemon's log: the levels lib/log.c writes
# for log_warn*/fatal*, then what AddressSanitizer, UBSan, LeakSanitizer,
# valgrind, assert(3) and glibc's allocator print.
_LOG_ERROR_RE='^[0-9TZ:.-]+ [a-z-]+: (warning|error|fatal): '
_LOG_ERROR_RE+='|ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error: '
_LOG_ERROR_RE+='|==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised'
_LOG_ERROR_RE+='|Syscall param|Mismatched free|Source and destination overlap|Process terminating)'
_LOG_ERROR_RE+='|==[0-9]+== +(definitely|indirectly|possibly) lost: [1-9]'
_LOG_ERROR_RE+='|==[0-9]+== .* are (definitely|indirectly) lost in loss record'
_LOG_ERROR_RE+='|==[0-9]+== ERROR SUMMARY: [1-9]'
_LOG_ERROR_RE+='|Assertion .* failed|stack smashing detected|double free|free\(\): invalid'
_LOG_ERROR_RE+='|malloc\(\): |corrupted (size|double-linked)|Segmentation fault'

# expect_log_error REGEX: lines matching the extended regex REGEX in the
# daemons' logs are this test's expected errors, not a failure.
expect_log_error() {
	_LOG_EXPECT+=("$1")
}

# watch_log FILE: scan FILE too at the end (a daemon started by hand).
watch_log() {
	_LOG_FILES+=("$1")
}

# log_errors: the unexpected error lines of the daemons' logs, each as
# "FILE: LINE"; status 0 when there are none.
log_errors() {
	local d f re found=0
	local -a files=()
	for d in ${_CLUSTERS[@]+"${_CLUSTERS[@]}"}; do
		for f in "$d"/cohortd.log "$d"/ctl[0-9]/cohortd.log "$d"/node*.log; do
			[ -f "$f" ] && files+=("$f")
		done
	done
	for f in ${_LOG_FILES[@]+"${_LOG_FILES[@]}"}; do
		[ -f "$f" ] && files+=("$f")
	done
	for f in ${files[@]+"${files[@]}"}; do
		grep -aE -- "$_LOG_ERROR_RE" "$f" >"$T/log-errors.tmp" || continue
		for re in ${_LOG_EXPECT[@]+"${_LOG_EXPECT[@]}"}; do
			grep -avE -- "$re" "$T/log-errors.tmp" >"$T/log-errors.tmp2" || true
			mv -f "$T/log-errors.tmp2" "$T/log-errors.tmp"
		done
		if [ -s "$T/log-errors.tmp" ]; then
			found=1
			sed "s|^|$f: |" "$T/log-errors.tmp" | head -n 20
		fi
	done
	rm -f "$T/log-errors.tmp"
	return "$found"
}

fail() {
	echo "FAIL: $*" >&2
	[ -z "${_FAIL_JOB:-}" ] || job_story "$_FAIL_JOB" >&2
	exit 1
}

# rss_kib PID: the process's resident set in KiB. A process that is gone
# fails the test, so that a memory bound is never checked against
# nothing; call it in an assignment (v=$(rss_kib PID)): set -e then
# ends the test with it.
rss_kib() {
	local v
	v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status" 2>/dev/null) || true
	[ -n "$v" ] || fail "process $1 is gone: no memory to measure"
	echo "$v"
}

# job_story ID: what job ID's tasks last printed, from the agents' spools
# of the clusters this test started (the last lines of each rank's error
# and output logs in its latest attempts), and the room left on the disk
# the tests write to: a test that failed waiting for a job then says why
# the job did what it did. Bounded, as CI shows only a failed test's
# first lines; each line starts with "job ID: " (.ci/run prints those).
job_story() {
	local d f
	echo "job $1: disk: $(df -P "$T" 2>&1 | tail -n 1)"
	for d in ${_CLUSTERS[@]+"${_CLUSTERS[@]}"}; do
		for f in "$d"/node*/spool/jobs/"$1".*/rank-*.err "$d"/node*/spool/jobs/"$1".*/rank-*.log; do
			[ -s "$f" ] && printf '%s %s\n' "${f#*/spool/jobs/}" "$f"
		done
	done | sort -t. -k2,2n | tail -n 8 | while read -r _ f; do
		tail -n 2 "$f" | cut -c1-300 | sed "s|^|job $1: ${f#"$T"/}: |"
	done
}

log() {
	echo "# $*"
}

# proc_alive PID: the process exists and is not a zombie.
proc_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

proc_gone() {
	! proc_alive "$1"
}

# own_runtime_dir: a runtime directory of the test's own (the muxes in
# it are the test's), exported as XDG_RUNTIME_DIR. Under /tmp, not $T: a
# socket path must fit in 108 bytes, and the tree the tests run in may
# have a long path. Removed on exit.
own_runtime_dir() {
	_RUNDIR=$(mktemp -d /tmp/cohort-t.XXXXXX) || fail "cannot make a runtime directory"
	chmod 700 "$_RUNDIR"
	RUN=$_RUNDIR
	XDG_RUNTIME_DIR=$RUN
	export XDG_RUNTIME_DIR
}

track_pid() {
	_PIDS+=("$1")
}

# track_pgid PGID: on exit, kill -9 the whole process group PGID (a
# process started with setsid, and everything it started).
_PGIDS=()
track_pgid() {
	_PGIDS+=("$1")
}

# at_exit CMD: run CMD (a function or command, no arguments) first on
# exit, passed or failed: to release what a test holds (a FIFO a daemon
# blocks on, say).
_AT_EXIT=()
at_exit() {
	_AT_EXIT+=("$1")
}

_cleanup() {
	local rc=$? d p f
	set +e
	for p in ${_AT_EXIT[@]+"${_AT_EXIT[@]}"}; do
		"$p"
	done
	for p in ${_PIDS[@]+"${_PIDS[@]}"}; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null
	done
	for p in ${_PGIDS[@]+"${_PGIDS[@]}"}; do
		kill -9 -- "-$p" 2>/dev/null
	done
	for d in ${_CLUSTERS[@]+"${_CLUSTERS[@]}"}; do
		cohort-local down "$d" >/dev/null 2>&1 ||
			echo "$TEST_NAME: cohort-local down $d failed" >&2
	done
	if [ "$rc" -ne 77 ] && ! log_errors >"$T/log-errors" 2>&1; then
		echo "--- unexpected errors in the daemons' logs" \
			"(declare expected ones with expect_log_error REGEX):" >&2
		cat "$T/log-errors" >&2
		if [ "$rc" -eq 0 ]; then
			echo "FAIL: $TEST_NAME passed, but its daemons logged errors" >&2
			rc=1
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "--- $TEST_NAME failed (status $rc); files in $T" >&2
		while IFS= read -r f; do
			echo "--- last lines of $f:" >&2
			tail -n 30 "$f" >&2
		done < <(find "$T" -name '*.log' -type f 2>/dev/null | sort)
		if [ -s "$ERR" ]; then
			echo "--- stderr of the last command:" >&2
			tail -n 10 "$ERR" >&2
		fi
	elif [ "$rc" -eq 0 ]; then
		rm -rf "$T"
	fi
	[ -z "${_RUNDIR:-}" ] || rm -rf "$_RUNDIR"
	exit "$rc"
}
trap _cleanup EXIT
trap 'exit 1' INT TERM HUP

_now_us() {
	local t=${EPOCHREALTIME/./}
	echo "${t/,/}"
}

# wait_for TIMEOUT_S CMD...: 0 as soon as CMD succeeds, 1 after TIMEOUT_S.
wait_for() {
	local timeout="$1" deadline
	shift
	deadline=$(($(_now_us) + timeout * 1000000))
	while :; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		[ "$(_now_us)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# expect_exit CODE CMD...: run CMD with stdout in $OUT and stderr in $ERR;
# fail unless it exits with CODE.
expect_exit() {
	local want="$1" rc=0
	shift
	"$@" >"$OUT" 2>"$ERR" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "stdout: $(head -c 2000 "$OUT")" >&2
		echo "stderr: $(head -c 2000 "$ERR")" >&2
		fail "'$*' exited $rc, expected $want"
	fi
}

# stderr_one_line PREFIX [PATTERN]: $ERR is one line starting with PREFIX
# (and matching the extended regex PATTERN if given).
stderr_one_line() {
	local prefix="$1" pattern="${2:-}" n
	n=$(wc -l <"$ERR")
	[ "$n" -eq 1 ] || fail "expected one line on stderr, got $n: $(head -c 1000 "$ERR")"
	case "$(cat "$ERR")" in
	"$prefix"*) ;;
	*) fail "stderr does not start with '$prefix': $(cat "$ERR")" ;;
	esac
	if [ -n "$pattern" ]; then
		grep -Eq -- "$pattern" "$ERR" || fail "stderr does not match /$pattern/: $(cat "$ERR")"
	fi
}

# stderr_one_line_with TEXT [PATTERN]: $ERR is one line holding TEXT
# (for daemons, whose start-up errors may carry a log timestamp first).
stderr_one_line_with() {
	local text="$1" pattern="${2:-}" n
	n=$(wc -l <"$ERR")
	[ "$n" -eq 1 ] || fail "expected one line on stderr, got $n: $(head -c 1000 "$ERR")"
	grep -qF -- "$text" "$ERR" || fail "stderr does not hold '$text': $(cat "$ERR")"
	if [ -n "$pattern" ]; then
		grep -Eq -- "$pattern" "$ERR" || fail "stderr does not match /$pattern/: $(cat "$ERR")"
	fi
}

# stderr_has REGEX: $ERR matches the extended regex (case-insensitive).
stderr_has() {
	grep -Eqi -- "$1" "$ERR" || fail "stderr does not match /$1/: $(head -c 1000 "$ERR")"
}

# json_get FILE EXPR: print EXPR evaluated with the document as d
# (strings as they are, anything else as JSON).
json_get() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
v = eval(sys.argv[2], {"d": d, "len": len, "sorted": sorted, "set": set})
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# cluster_up DIR [ARGS...]: a local cluster, acting as alice afterwards.
# Without --nodes in ARGS no agent is started (--no-agents: the nodes'
# certificates exist, submitted jobs stay PENDING); tests that run jobs
# ask for nodes.
cluster_up() {
	local dir="$1" a
	shift
	for a in "$@"; do
		[ "$a" != --nodes ] || break
	done
	[ "${a:-}" = --nodes ] || set -- "$@" --no-agents
	_CLUSTERS+=("$dir")
	cohort-local up "$dir" "$@" >"$T/up.out" 2>"$T/up.err" ||
		fail "cohort-local up $dir failed: $(cat "$T/up.err")"
	eval "$(cat "$T/up.out")"
	[ -n "${COHORT_SERVER:-}" ] || fail "cohort-local up printed no COHORT_SERVER"
}

# Replicated controllers.
# shellcheck disable=SC2034 # for the tests that source this file
HISTORY=$top_srcdir/tests/integration/history.py

_ctl_leader_now() {
	cohort-local leader "$1" >"$T/leader.out" 2>"$T/leader.err"
}

# ctl_leader DIR [SECONDS]: the id of the replica that leads now, waited
# for (an election) up to SECONDS (default 20).
ctl_leader() {
	wait_for "${2:-20}" _ctl_leader_now "$1" ||
		fail "no leader under $1 within ${2:-20}s: $(cat "$T/leader.err")"
	_ctl_leader_now "$1" || fail "no leader under $1: $(cat "$T/leader.err")"
	cut -d' ' -f1 "$T/leader.out"
}

# ctl_kill_leader DIR: SIGKILL the leader; print its id.
ctl_kill_leader() {
	cohort-local kill "$1" leader >"$T/kill.out" 2>"$T/kill.err" ||
		fail "cohort-local kill $1 leader: $(cat "$T/kill.err")"
	grep -Eqx '[1-9]' "$T/kill.out" || fail "cohort-local kill $1 leader printed '$(cat "$T/kill.out")', not an id"
	cat "$T/kill.out"
}

ctl_kill() {
	cohort-local kill "$1" controller "$2" >"$T/kill.out" 2>&1 ||
		fail "cohort-local kill $1 controller $2: $(cat "$T/kill.out")"
}

ctl_start() {
	cohort-local start "$1" controller "$2" >"$T/start.out" 2>&1 ||
		fail "cohort-local start $1 controller $2: $(cat "$T/start.out")"
}

ctl_start_all() {
	cohort-local start "$1" controllers >"$T/start.out" 2>&1 ||
		fail "cohort-local start $1 controllers: $(cat "$T/start.out")"
}

# members_json DIR FILE: cohort admin members --json, as the admin of the
# cluster under DIR, into FILE (the caller's settings are kept).
members_json() {
	(as_user "$1" admin && cohort admin members --json) >"$2" 2>"$T/members.err"
}

# need_netns: skip unless network namespaces can be made here (root, or
# CAP_NET_ADMIN and CAP_SYS_ADMIN), with a probe namespace of our own.
need_netns() {
	local ns="cohort-probe-$$"
	command -v ip >/dev/null 2>&1 || {
		echo "SKIP: $TEST_NAME needs ip (iproute2) for network namespaces"
		exit 77
	}
	if ! ip netns add "$ns" 2>"$T/netns.err"; then
		echo "SKIP: $TEST_NAME needs network namespaces: 'ip netns add' failed ($(head -n 1 "$T/netns.err")); run as root or with CAP_NET_ADMIN"
		exit 77
	fi
	ip netns delete "$ns" 2>/dev/null || true
}

# as_user DIR alice|bob|admin
as_user() {
	local envline
	envline=$(cohort-local env "$1" --as "$2") || fail "cohort-local env $1 --as $2 failed"
	eval "$envline"
}

# job_count [cohort jobs ARGS...]: number of jobs cohort jobs --json lists.
job_count() {
	cohort jobs --json "$@" >"$T/count.json" || fail "cohort jobs --json $* failed"
	json_get "$T/count.json" 'len(d["jobs"])'
}

need_python_protobuf() {
	"$PYTHON" -c 'import google.protobuf' 2>/dev/null || {
		echo "SKIP: $PYTHON has no google.protobuf (python3-protobuf)"
		exit 77
	}
	[ -r "$COHORT_PB2_DIR/cohort_pb2.py" ] ||
		fail "$COHORT_PB2_DIR/cohort_pb2.py is missing (make check builds it)"
}

pyclient() {
	"$PYTHON" "$PYCLIENT" "$@"
}

# job_config DIR: the user's client.conf, certificate and key under
# DIR/cfg/cohort, readable by the account the cluster's tasks run as
# (nobody when run as root), as a site's shared home gives a job its
# settings: a job given XDG_CONFIG_HOME=$JOB_CFG (sbatch
# --export=...,XDG_CONFIG_HOME=$JOB_CFG) reaches the controller from
# inside (srun, squeue). Sets JOB_CFG and JOB_ACCT (that account).
job_config() {
	local d="$1/cfg/cohort"
	if [ "$(id -u)" -eq 0 ]; then JOB_ACCT=nobody; else JOB_ACCT=$(id -un); fi
	mkdir -p "$d" && cp "$COHORT_CERT" "$d/user.crt" &&
		cp "$COHORT_KEY" "$d/user.key" &&
		printf '[client]\nserver = %s\ncert = user.crt\nkey = user.key\nca = %s\n' \
		"$COHORT_SERVER" "$COHORT_CA" >"$d/client.conf" &&
		chown -R "$JOB_ACCT" "$1/cfg" || fail "cannot write $d"
	JOB_CFG=$1/cfg
}

# world_dir NAME: create $T/NAME, writable by anyone (sticky, like /tmp),
# and print its path: a place where tasks write, whoever they run as.
world_dir() {
	mkdir -p "$T/$1" && chmod 1777 "$T/$1" || fail "cannot create $T/$1"
	printf '%s\n' "$T/$1"
}

# gate NAME: a shell command for a job (sh -c "$(gate NAME)") that runs
# until the file NAME exists in its working directory (the test touches
# it), two minutes at most. A job the test must see running, or see
# others wait for, ends when the test has looked, not after a sleep that
# a loaded machine can outrun.
gate() {
	printf 'i=0; while [ ! -e %s ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done' "$1"
}

# job_submit ARGS...: submit as the current user; the new id on stdout.
job_submit() {
	expect_exit 0 cohort submit "$@"
	grep -Eqx '[1-9][0-9]*' "$OUT" || fail "submit printed '$(cat "$OUT")', not an id"
	cat "$OUT"
}

# job_show ID: cohort show ID --json into $T/job-ID.json.
job_show() {
	cohort show "$1" --json >"$T/job-$1.json.tmp" 2>"$T/job-$1.err" ||
		fail "cohort show $1 --json failed: $(cat "$T/job-$1.err")"
	mv -f "$T/job-$1.json.tmp" "$T/job-$1.json"
}

job_state() {
	job_show "$1"
	json_get "$T/job-$1.json" 'd["state"]'
}

_job_in_state() {
	local id="$1" st
	shift
	st=$(cohort show "$id" --json 2>/dev/null | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null) || return 1
	printf '%s\n' "$@" | grep -qxF -- "$st"
}

# wait_state SECONDS ID STATE...: until job ID is in one of STATEs
# (one `cohort show --iterate` watched by poll.py, not a process a
# probe); fail (showing the job) after SECONDS.
wait_state() {
	local secs="$1" id="$2" st expr=
	shift 2
	for st in "$@"; do
		[[ "$st" =~ ^[A-Z_]+$ ]] || fail "wait_state: '$st' is not a state"
		expr+="'$st',"
	done
	if ! _poll "$secs" job "d['state'] in ($expr)" -- cohort show "$id" --json; then
		job_show "$id"
		_FAIL_JOB=$id
		fail "job $id is not $* after ${secs}s: state $(json_get "$T/job-$id.json" 'd["state"]'), reason '$(json_get "$T/job-$id.json" 'd["reason"]')'"
	fi
	job_show "$id"
}

# job_pidfiles DIR ID: the rank-R.pid files of job ID's tasks on the
# agents of the cluster under DIR, one a line.
job_pidfiles() {
	local f
	for f in "$1"/node*/spool/jobs/"$2".*/rank-*.pid; do
		[ -e "$f" ] && printf '%s\n' "$f"
	done
	return 0
}

_pidfiles_at_least() {
	[ "$(job_pidfiles "$1" "$2" | wc -l)" -ge "$3" ]
}

# wait_pidfiles SECONDS DIR ID N: until job ID has N rank pid files.
wait_pidfiles() {
	wait_for "$1" _pidfiles_at_least "$2" "$3" "$4" ||
		fail "job $3 has $(job_pidfiles "$2" "$3" | wc -l) rank pid files after ${1}s, expected $4"
}

# job_pgids DIR ID: the task process groups of job ID, one a line.
job_pgids() {
	local f sup pgid
	while IFS= read -r f; do
		read -r sup pgid <"$f" || fail "cannot read $f"
		[[ "$pgid" =~ ^[1-9][0-9]*$ ]] || fail "$f holds '$sup $pgid', not 'SUPERVISOR_PID TASK_PGID'"
		printf '%s\n' "$pgid"
	done < <(job_pidfiles "$1" "$2")
}

# pgid_alive PGID: some process of group PGID is alive. Zombies do not
# count (kill -0 -PGID would: PID 1 of a container may never reap them).
pgid_alive() {
	local f stat
	local -a fields
	for f in /proc/[0-9]*/stat; do
		stat=$(cat "$f" 2>/dev/null) || continue
		read -r -a fields <<<"${stat##*) }"
		[ "${fields[0]}" != Z ] && [ "${fields[2]}" = "$1" ] && return 0
	done
	return 1
}

# any_pgid_alive PGID...: at least one of the groups is alive.
any_pgid_alive() {
	local g
	for g in "$@"; do
		pgid_alive "$g" && return 0
	done
	return 1
}

# marker_alive TEXT: a live process has TEXT in its command line (zombies
# have none).
marker_alive() {
	pgrep -f -- "$1" >/dev/null 2>&1
}

marker_count() {
	pgrep -c -f -- "$1" 2>/dev/null || true
}

not() {
	! "$@"
}

# cohort_has CMD: the cohort client implements CMD.
cohort_has() {
	cohort "$1" --help >/dev/null 2>"$T/has.err" || true
	! grep -q "unknown command" "$T/has.err"
}

# need_root: skip unless running as root.
need_root() {
	[ "$(id -u)" -eq 0 ] || {
		echo "SKIP: $TEST_NAME needs root"
		exit 77
	}
}

# Fault-recovery tests (t2NN):
# job_expr ID EXPR: EXPR (Python; d is cohort show ID --json) is true.
job_expr() {
	cohort show "$1" --json 2>/dev/null | "$PYTHON" -c 'import json,sys
d = json.load(sys.stdin)
sys.exit(0 if eval(sys.argv[1], {"d": d, "len": len, "set": set}) else 1)' "$2" 2>/dev/null
}

# _poll SECONDS job EXPR -- CMD... | _poll SECONDS node NAME EXPR -- CMD...:
# 0 once EXPR holds for a round of CMD --iterate (tests/integration/
# poll.py: one watcher, not a process a probe), 1 after SECONDS.
_poll() {
	"$PYTHON" "$top_srcdir/tests/integration/poll.py" "$@" --iterate 0.05
}

# wait_job SECONDS ID EXPR: until job_expr ID EXPR holds; fail after SECONDS.
wait_job() {
	if ! _poll "$1" job "$3" -- cohort show "$2" --json; then
		job_show "$2"
		_FAIL_JOB=$2
		fail "job $2: '$3' still false after ${1}s: $(json_get "$T/job-$2.json" '{k: d.get(k) for k in ("state", "reason", "restarts", "placement", "nodes_now", "checkpoint")}')"
	fi
	job_show "$2"
}

# node_expr NODE EXPR: EXPR (Python; n is NODE's entry of cohort nodes
# --json) is true.
node_expr() {
	cohort nodes --json 2>/dev/null | "$PYTHON" -c 'import json,sys
n = [x for x in json.load(sys.stdin)["nodes"] if x["name"] == sys.argv[1]][0]
sys.exit(0 if eval(sys.argv[2], {"n": n}) else 1)' "$1" "$2" 2>/dev/null
}

# wait_node SECONDS NODE EXPR: until node_expr NODE EXPR holds.
wait_node() {
	_poll "$1" node "$2" "$3" -- cohort nodes --json ||
		fail "node $2: '$3' still false after ${1}s: $(cohort nodes --json 2>&1 | "$PYTHON" -c 'import json,sys; print([x for x in json.load(sys.stdin)["nodes"] if x["name"] == sys.argv[1]])' "$2" 2>&1)"
}

# ft_hurry CKPT_DIR [PACE]: fake-train jobs checkpointing in CKPT_DIR
# take PACE seconds a step from their next one (default 0: no sleep, no
# fork a step): for the steps left once what a test watches has
# happened, which are only a wait and must not depend on how loaded the
# machine is.
ft_hurry() {
	printf '%s\n' "${2:-0}" >"$1/pace.tmp" && chmod 644 "$1/pace.tmp" &&
		mv -f "$1/pace.tmp" "$1/pace" || fail "cannot write $1/pace"
}

# fake_train DIR: copy fake-train.sh into DIR (world-readable) and print
# its path.
fake_train() {
	install -m 644 "$top_srcdir/tests/integration/fake-train.sh" "$1/fake-train.sh" ||
		fail "cannot copy fake-train.sh into $1"
	printf '%s\n' "$1/fake-train.sh"
}
