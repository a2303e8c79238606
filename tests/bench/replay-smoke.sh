#!/bin/sh
# The trace replay in its tiny mode (make check times nothing): 500 jobs
# of the Philly trace (../shared/traces beside the source tree; a small
# generated trace when it is absent) through every policy: a flat run,
# a run with every gang required in one leaf, and a cluster too small
# for the gangs (they are dropped). The replay itself fails on a GPU
# given twice, a job that did not run from start to end, or utilization
# above 100%; here every policy must report every kept job, and with
# --topology-leaf no gang of cohort or oracle may span leaves.
set -e
src=${top_srcdir:-$(dirname "$0")/../..}
bin=${top_builddir:-.}/tests/bench/replay
trace=${REPLAY_TRACE:-$src/../shared/traces/philly_2017.csv}
tmp=${TMPDIR:-/tmp}/replay-smoke.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if [ ! -r "$trace" ]; then
	# 500 jobs: mostly 1 GPU, some 2-8, a few gangs of 16 and 32.
	trace=$tmp/trace.csv
	awk 'BEGIN {
		print "job_id,submit_time_s,num_gpus,duration_s,user,status"
		s = 12345; t = 2430000
		for (i = 0; i < 500; i++) {
			s = (s * 1103515245 + 12345) % 2147483648
			t += s % 400
			r = int(s / 65536) % 100
			g = r < 80 ? 1 : r < 88 ? 4 : r < 96 ? 8 : r < 98 ? 16 : 32
			if (i == 0)
				g = 32
			printf "%d,%d,%d,%d,,\n", i, t, g, 60 + (s / 7) % 20000
		}
	}' > "$trace"
fi

# check FILE [topo]: four policies, each with the header's job count.
check() {
	cat "$1"
	awk -v topo="$2" '
		/^trace / { for (i = 1; i < NF && n == ""; i++)
			if ($(i + 1) == "jobs") n = $i + 0 }
		$1 ~ /^(fifo|easy|cohort|oracle)$/ {
			p++
			if ($2 != n) { print "job count " $2 " != " n; bad = 1 }
			if ($3 <= 0 || $5 < 0) { print "bad figures"; bad = 1 }
			if (topo && ($1 == "cohort" || $1 == "oracle") &&
			    $13 !~ /^0\//) { print $1 " spans leaves"; bad = 1 }
		}
		END { if (p != 4) { print p " of 4 policies"; bad = 1 }
			exit bad }' "$1" >&2
}

run() {
	"$bin" --trace "$trace" --from 2430000 --limit-jobs 500 "$@" \
	    > "$tmp/out" || { cat "$tmp/out"; exit 1; }
}
run --nodes 8 --nodes-per-leaf 2
check "$tmp/out"
run --nodes 8 --nodes-per-leaf 4 --topology-leaf
check "$tmp/out" topo
run --nodes 3 --policies fifo,easy,cohort,oracle
grep -q '^dropped: ' "$tmp/out" || { cat "$tmp/out"; echo "nothing dropped" >&2; exit 1; }
check "$tmp/out"
