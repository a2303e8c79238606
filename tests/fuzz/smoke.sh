#!/bin/bash
# make check's fuzz smoke: each target over its seed corpus, then 200,000
# seeded mutations of it (a fixed seed: a failure repeats). Not a fuzzing
# campaign (that is tests/fuzz/libfuzzer.sh); it catches a parser that
# crashes, leaks or reads out of bounds on near-valid input, under
# ASan/UBSan in the sanitizer build.
set -eu
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
ITER=${FUZZ_SMOKE_ITERATIONS:-200000}
SEED=${FUZZ_SMOKE_SEED:-20261130}
for t in wire text node topo; do
	bin=$top_builddir/tests/fuzz/fuzz_$t
	[ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
	"$bin" "$ITER" "$SEED" "$top_srcdir"/tests/fuzz/corpus/"$t"/* ||
		{ echo "FAIL: fuzz_$t (seed $SEED, $ITER iterations)"; exit 1; }
done
