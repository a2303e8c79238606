#!/bin/bash
# make check's fuzz smoke: every target (each tests/fuzz/fuzz_NAME.c) over
# its seed corpus (tests/fuzz/corpus/NAME/), then seeded mutations of it (a
# fixed seed: a failure repeats). Not a fuzzing campaign (that is
# tests/fuzz/libfuzzer.sh); it catches a parser that crashes, leaks or
# reads out of bounds on near-valid input, under ASan/UBSan in the
# sanitizer build. A target that is not built or has no seeds fails.
set -eu
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
ITER=${FUZZ_SMOKE_ITERATIONS:-50000}
SEED=${FUZZ_SMOKE_SEED:-20261130}
n=0
for src in "$top_srcdir"/tests/fuzz/fuzz_*.c; do
	t=${src##*/fuzz_}
	t=${t%.c}
	bin=$top_builddir/tests/fuzz/fuzz_$t
	seeds=("$top_srcdir"/tests/fuzz/corpus/"$t"/*)
	[ -x "$bin" ] || { echo "FAIL: $bin is not built (tests/fuzz/local.mk)"; exit 1; }
	[ -f "${seeds[0]}" ] || { echo "FAIL: fuzz_$t has no seeds in tests/fuzz/corpus/$t/"; exit 1; }
	"$bin" "$ITER" "$SEED" "${seeds[@]}" ||
		{ echo "FAIL: fuzz_$t (seed $SEED, $ITER iterations)"; exit 1; }
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no fuzz target in $top_srcdir/tests/fuzz"; exit 1; }
echo "smoke.sh: $n fuzz targets, $ITER mutations each"
