#!/bin/bash
# make check: tests/fuzz/libfuzzer.sh builds and links every fuzz target
# with libFuzzer (in the build directory's libfuzzer/, configured with
# clang on the first run), and each one starts and runs its seeds. The
# plain build only proves the targets link with tests/fuzz/driver.c; this
# is what keeps the libFuzzer build from breaking unseen. Skipped (77)
# where clang or its libFuzzer runtime is missing (scripts/deps installs
# both).
set -eu
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
command -v clang >/dev/null || { echo "SKIP: no clang"; exit 77; }
probe=$(mktemp -d "${TMPDIR:-/tmp}/cohort-lf.XXXXXX")
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }' \
	>"$probe/p.c"
clang -fsanitize=fuzzer,address -o "$probe/p" "$probe/p.c" 2>/dev/null ||
	{ echo "SKIP: clang has no libFuzzer runtime (libclang-rt-*-dev)"; exit 77; }
"$top_srcdir"/tests/fuzz/libfuzzer.sh --builddir "$top_builddir" --build-only ||
	{ echo "FAIL: libfuzzer.sh could not build the fuzz targets"; exit 1; }
n=0
for src in "$top_srcdir"/tests/fuzz/fuzz_*.c; do
	t=${src##*/fuzz_}
	t=${t%.c}
	bin=$top_builddir/libfuzzer/tests/fuzz/fuzz_$t
	[ -x "$bin" ] || { echo "FAIL: libfuzzer.sh did not build fuzz_$t"; exit 1; }
	# -runs=0: the seeds only; libFuzzer's main() is what reads them. A
	# copy: libFuzzer writes what it finds into a corpus directory.
	cp -r "$top_srcdir/tests/fuzz/corpus/$t" "$probe/$t"
	"$bin" -runs=0 "$probe/$t" >"$probe/$t.log" 2>&1 ||
		{ echo "FAIL: libFuzzer's fuzz_$t on its seeds"; tail -n 20 "$probe/$t.log"; exit 1; }
	grep -q 'INITED' "$probe/$t.log" ||
		{ echo "FAIL: fuzz_$t did not start as a libFuzzer program"; tail -n 20 "$probe/$t.log"; exit 1; }
	n=$((n + 1))
done
echo "link.sh: $n fuzz targets built with libFuzzer"
