#!/bin/sh
# The status page's render benchmark (tests/bench/bench_status) in a small
# run: 1,000 simulated nodes, 5 renders. Checks that it renders and
# prints its figures; no timed assertion (make check runs on busy
# machines). The full run: tests/bench/bench_status (1,000 and 10,000).
set -e
bin=${top_builddir:-.}/tests/bench/bench_status
out=$("$bin" --nodes 1000 --renders 5) || { echo "$out"; exit 1; }
echo "$out"
echo "$out" | grep -Eq '^ +1000 nodes +8000 GPUs +[0-9]+ jobs: render median +[0-9.]+ ms, max +[0-9.]+ ms over 5; page +[0-9.]+ KiB' ||
	{ echo "FAIL: bench_status printed no figures for 1000 nodes" >&2; exit 1; }
