#!/bin/bash
# Coverage-guided fuzzing of the targets in tests/fuzz/ with clang's
# libFuzzer, ASan and UBSan (not part of make check; make check runs the
# same targets briefly through tests/fuzz/driver.c, and tests/fuzz/link.sh
# checks that this script builds every one of them).
#
#   tests/fuzz/libfuzzer.sh --builddir DIR [--seconds N] [--build-only]
#                           [TARGET...]
#
# The targets are built by the project's own Makefile, with the link lines
# make check uses (tests/fuzz/local.mk), in a clang build directory
# DIR/libfuzzer that this script configures the first time (DIR: any
# directory, normally the build directory). TARGETs: the NAME of each
# tests/fuzz/fuzz_NAME.c (default all). Each runs N seconds (default 60)
# from a copy of its seed corpus under a temporary directory, then prints
# its executions, executions per second, coverage and features; crashes
# are left in that directory and make it exit 1. --build-only builds and
# stops. Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=
SECS=60
BUILD_ONLY=0
ALL=()
for f in "$SRC"/tests/fuzz/fuzz_*.c; do
	f=${f##*/fuzz_}
	ALL+=("${f%.c}")
done
TARGETS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) mkdir -p "${2:?}"; BUILD=$(cd "$2" && pwd); shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	--build-only) BUILD_ONLY=1; shift ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "libfuzzer.sh: unknown option '$1'" >&2; exit 2 ;;
	*)
		[ -f "$SRC/tests/fuzz/fuzz_$1.c" ] ||
			{ echo "libfuzzer.sh: no target '$1' (${ALL[*]})" >&2; exit 2; }
		TARGETS+=("$1"); shift ;;
	esac
done
[ -n "$BUILD" ] || { echo "libfuzzer.sh: --builddir DIR is required" >&2; exit 2; }
command -v clang >/dev/null || { echo "libfuzzer.sh: clang is not installed" >&2; exit 2; }
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=("${ALL[@]}")

# Every object with coverage feedback and the sanitizers; driver.c's main()
# compiled out (COHORT_LIBFUZZER) so that libFuzzer's is linked. The link
# flag goes in AM_LDFLAGS on make's command line, never LDFLAGS: make
# exports it, and configure, when make reruns it, would link its test
# programs (which have their own main()) with it.
LF=$BUILD/libfuzzer
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
if [ ! -f "$LF/Makefile" ]; then
	mkdir -p "$LF"
	(cd "$LF" && "$SRC/configure" -q CC=clang CPPFLAGS=-DCOHORT_LIBFUZZER \
		CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $SAN" \
		>configure.out 2>&1) ||
		{ cat "$LF/configure.out" >&2; rm -f "$LF/Makefile"; exit 1; }
fi
bins=()
for t in "${TARGETS[@]}"; do
	bins+=("tests/fuzz/fuzz_$t")
done
make -s -C "$LF" -j"${FUZZ_MAKE_JOBS:-2}" AM_LDFLAGS="-fsanitize=fuzzer $SAN" \
	"${bins[@]}"
[ "$BUILD_ONLY" = 0 ] || exit 0

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-fuzz.XXXXXX")
echo "libfuzzer.sh: working in $WORK"
rc=0
for t in "${TARGETS[@]}"; do
	mkdir -p "$WORK/$t-corpus" "$WORK/$t-crashes"
	cp "$SRC/tests/fuzz/corpus/$t/"* "$WORK/$t-corpus/"
	before=$(ls "$WORK/$t-corpus" | wc -l)
	if ! (cd "$WORK/$t-crashes" && "$LF/tests/fuzz/fuzz_$t" \
		-max_total_time="$SECS" -max_len=65536 -print_final_stats=1 \
		"$WORK/$t-corpus" >"$WORK/$t.log" 2>&1); then
		echo "libfuzzer.sh: fuzz_$t FAILED; see $WORK/$t.log and $WORK/$t-crashes" >&2
		tail -n 40 "$WORK/$t.log" >&2
		rc=1
		continue
	fi
	stat() { awk -v k="stat::$1:" '$1 == k { print $2 }' "$WORK/$t.log"; }
	last=$(grep -E '^#[0-9]+.*(cov|ft):' "$WORK/$t.log" | tail -n 1)
	echo "fuzz_$t: $(stat number_of_executed_units) runs in ${SECS} s" \
		"($(stat average_exec_per_sec)/s), cov $(echo "$last" |
		sed -n 's/.*cov: \([0-9]*\).*/\1/p') ft $(echo "$last" |
		sed -n 's/.*ft: \([0-9]*\).*/\1/p'), corpus $before ->" \
		"$(ls "$WORK/$t-corpus" | wc -l), no crash"
done
[ "$rc" != 0 ] || rm -rf "$WORK"
exit "$rc"
