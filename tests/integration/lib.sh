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
#   cluster_up DIR ... cohort-local up, then act as alice
#   as_user DIR WHO    export COHORT_* for WHO (alice, bob, admin)
# On exit, every cluster started is brought down and every process passed
# to track_pid is killed; on failure the daemons' log tails are printed.
set -eu
trap '' PIPE

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

mkdir -p "$top_builddir/tests/tmp"
T=$(mktemp -d "$top_builddir/tests/tmp/$TEST_NAME.XXXXXX")
OUT=$T/stdout
ERR=$T/stderr
: >"$OUT"
: >"$ERR"

_CLUSTERS=()
_PIDS=()

fail() {
	echo "FAIL: $*" >&2
	exit 1
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

track_pid() {
	_PIDS+=("$1")
}

_cleanup() {
	local rc=$? d p f
	set +e
	for p in ${_PIDS[@]+"${_PIDS[@]}"}; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null
	done
	for d in ${_CLUSTERS[@]+"${_CLUSTERS[@]}"}; do
		cohort-local down "$d" >/dev/null 2>&1 ||
			echo "$TEST_NAME: cohort-local down $d failed" >&2
	done
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
cluster_up() {
	local dir="$1"
	shift
	_CLUSTERS+=("$dir")
	cohort-local up "$dir" "$@" >"$T/up.out" 2>"$T/up.err" ||
		fail "cohort-local up $dir failed: $(cat "$T/up.err")"
	eval "$(cat "$T/up.out")"
	[ -n "${COHORT_SERVER:-}" ] || fail "cohort-local up printed no COHORT_SERVER"
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
