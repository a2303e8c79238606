#!/bin/bash
# Coverage-guided fuzzing of the targets in tests/fuzz/ with clang's
# libFuzzer, ASan and UBSan (not part of make check; make check runs the
# same targets briefly through tests/fuzz/driver.c).
#
#   tests/fuzz/libfuzzer.sh --builddir DIR [--seconds N] [TARGET...]
#
# DIR is a configured build directory (for config.h and the protoc-c
# output; `make -C DIR proto/cohort.pb-c.c` is run). TARGETs: wire,
# text, node, topo (default all four). Each runs N seconds (default 60)
# from a copy of its seed corpus under a temporary directory; crashes
# are left in that directory and make it exit 1. Needs clang (Debian:
# clang, which brings libFuzzer).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=
SECS=60
TARGETS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) BUILD=$(cd "${2:?}" && pwd); shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	wire | text | node | topo) TARGETS+=("$1"); shift ;;
	*) echo "libfuzzer.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$BUILD" ] || { echo "libfuzzer.sh: --builddir DIR is required" >&2; exit 2; }
command -v clang >/dev/null || { echo "libfuzzer.sh: clang is not installed" >&2; exit 2; }
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=(wire text node topo)
make -s -C "$BUILD" proto/cohort.pb-c.c proto/cohort.pb-c.h

# The sources each target reaches, compiled with coverage feedback. The
# scheduler core is every file of daemon/sched/ (libc only), so a new
# file there (torus.c, topo_torus.c, ...) cannot be missed.
COMMON="lib/err.c lib/duration.c lib/conf.c lib/text.c lib/constraint.c"
SCHED=$(cd "$SRC" && echo daemon/sched/*.c)
declare -A SOURCES=(
	[wire]="$COMMON lib/frame.c lib/wirecheck.c lib/wire.c lib/job.c lib/inventory.c $BUILD/proto/cohort.pb-c.c"
	[text]="$COMMON lib/job.c lib/array.c lib/depend.c lib/log.c lib/inventory.c lib/features.c client/script.c client/script_sbatch.c $SCHED lib/hostlist.c"
	[topo]="$SCHED lib/hostlist.c"
	[node]="$COMMON lib/inventory.c lib/clock.c lib/log.c daemon/agent/health.c daemon/agent/health_parse.c daemon/agent/health_nvml.c daemon/agent/health_check.c daemon/agent/agent_config.c daemon/agent/nvml.c daemon/agent/inventory.c daemon/agent/watch.c"
)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-fuzz.XXXXXX")
echo "libfuzzer.sh: working in $WORK"
rc=0
for t in "${TARGETS[@]}"; do
	srcs=()
	for f in ${SOURCES[$t]}; do
		case "$f" in /*) srcs+=("$f") ;; *) srcs+=("$SRC/$f") ;; esac
	done
	clang -g -O1 -std=c11 -D_GNU_SOURCE -I"$SRC" -I"$BUILD" \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o "$WORK/fuzz_$t" "$SRC/tests/fuzz/fuzz_$t.c" "${srcs[@]}" \
		-lprotobuf-c -linih -levent_core -ldl
	mkdir -p "$WORK/$t-corpus" "$WORK/$t-crashes"
	cp "$SRC/tests/fuzz/corpus/$t/"* "$WORK/$t-corpus/"
	before=$(ls "$WORK/$t-corpus" | wc -l)
	if ! (cd "$WORK/$t-crashes" && "$WORK/fuzz_$t" -max_total_time="$SECS" \
		-max_len=65536 -print_final_stats=1 "$WORK/$t-corpus" \
		>"$WORK/$t.log" 2>&1); then
		echo "libfuzzer.sh: fuzz_$t FAILED; see $WORK/$t.log and $WORK/$t-crashes" >&2
		tail -n 40 "$WORK/$t.log" >&2
		rc=1
		continue
	fi
	echo "fuzz_$t: $(grep -E '^stat::number_of_executed_units' "$WORK/$t.log" | awk '{print $2}') runs in ${SECS} s, corpus $before -> $(ls "$WORK/$t-corpus" | wc -l), no crash"
done
[ "$rc" != 0 ] || rm -rf "$WORK"
exit "$rc"
