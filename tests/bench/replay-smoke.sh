#!/bin/sh
# The trace replay in its tiny mode (make check times nothing): 500 jobs
# of the Philly trace (../shared/traces beside the source tree; a small
# generated trace when it is absent) through every policy: a flat run,
# a run with every gang required in one leaf, and a cluster too small
# for the gangs (they are dropped). The replay itself fails on a GPU
# given twice, a job that did not run from start to end, or utilization
# above 100%; here every policy must report every kept job, and with
# --topology-leaf no gang of cohort or oracle may span leaves.
# Then the big-gang and tenant modes, tiny: the big-gang workload (gangs added,
# cohort with starve_s and gang-only starvation, the summary against
# FIFO and the oracle) and the tenants (2,000 jobs with their VCs on 16
# nodes: static, pooled, cohort, kueue; per-queue rows, utilization
# <= 100%, Jain's index in (0, 1], preemptions only where quotas are
# reclaimed).
set -e
src=${top_srcdir:-$(dirname "$0")/../..}
bin=${top_builddir:-.}/tests/bench/replay
trace=${REPLAY_TRACE:-$src/../shared/traces/philly_2017.csv}
vcs=${REPLAY_VCS:-$src/../shared/traces/philly_2017_vc.csv}
tmp=${TMPDIR:-/tmp}/replay-smoke.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if [ ! -r "$trace" ] || [ ! -r "$vcs" ]; then
	# 500 jobs: mostly 1 GPU, some 2-8, a few gangs of 16 and 32; three
	# VCs by job id.
	trace=$tmp/trace.csv
	vcs=$tmp/vc.csv
	awk -v vcs="$vcs" 'BEGIN {
		print "job_id,submit_time_s,num_gpus,duration_s,user,status"
		print "job_id,vc" > vcs
		s = 12345; t = 2430000
		for (i = 0; i < 500; i++) {
			s = (s * 1103515245 + 12345) % 2147483648
			t += s % 400
			r = int(s / 65536) % 100
			g = r < 80 ? 1 : r < 88 ? 4 : r < 96 ? 8 : r < 98 ? 16 : 32
			if (i == 0)
				g = 32
			printf "%d,%d,%d,%d,,\n", i, t, g, 60 + (s / 7) % 20000
			printf "%d,vc%d\n", i, i % 3 > vcs
		}
	}' > "$trace"
fi

# check FILE [topo]: four policies, each with the header's job count.
check() {
	cat "$1"
	awk -v topo="$2" '
		/^trace / { for (i = 1; i < NF && n == ""; i++)
			if ($(i + 1) == "jobs") n = $i + 0 }
		/^summary/ { exit bad }
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
	"$bin" --trace "$trace" --from 2430000 "$@" \
	    > "$tmp/out" || { cat "$tmp/out"; exit 1; }
}
run --limit-jobs 500 --nodes 8 --nodes-per-leaf 2
check "$tmp/out"
run --limit-jobs 500 --nodes 8 --nodes-per-leaf 4 --topology-leaf
check "$tmp/out" topo
# Blocks of 4 nodes, every multi-node job that fits one requiring one:
# cohort's and the oracle's never span blocks (last column xblk/fit).
run --limit-jobs 500 --nodes 8 --nodes-per-leaf 4 --block-size 4 --topology-block
check "$tmp/out"
awk '/^summary/ { done = 1 }
	!done && $1 ~ /^(cohort|oracle)$/ { n++; if ($NF !~ /^0\/[1-9]/) { print $1 " spans blocks: " $NF; bad = 1 } }
	END { if (n != 2) { print n " block rows"; bad = 1 } exit bad }' "$tmp/out" >&2
# On a 2x2x2 torus with boxes required: no gang outside a compact box.
run --limit-jobs 500 --torus 2x2x2 --torus-required
grep -q 'a torus (multi-node jobs require a compact box)' "$tmp/out" ||
	{ cat "$tmp/out"; echo "no torus in the header" >&2; exit 1; }
check "$tmp/out" topo
run --limit-jobs 500 --nodes 3 --policies fifo,easy,cohort,oracle
grep -q '^dropped: ' "$tmp/out" || { cat "$tmp/out"; echo "nothing dropped" >&2; exit 1; }
check "$tmp/out"

# Big gangs: 12 gangs of 32 and 64 GPUs added, every run in the table
# and in the summary, ratios against FIFO and the oracle of the same run
# (1 for themselves), starved gangs.
run --limit-jobs 500 --nodes 8 --nodes-per-leaf 4 --big-gangs 12 \
    --arrival-scale 1.5 --starve 3600 --gang-starve 3600,86400
check "$tmp/out"
awk '
	/^big gangs: 12 added/ { added = 1 }
	/^offered load: / { load = 1 }
	/^trace / { for (i = 1; i < NF && n == ""; i++)
		if ($(i + 1) == "jobs") n = $i + 0 }
	/^summary/ { sum = 1; next }
	!sum && $1 ~ /^cohort-[sg]/ {
		runs++
		if ($2 != n) { print $1 ": job count " $2 " != " n; bad = 1 }
		if ($11 < 12) { print $1 ": " $11 " big gangs"; bad = 1 }
	}
	sum && $1 ~ /^(fifo|easy|cohort|oracle|cohort-[sg][0-9]+)$/ {
		rows++
		if ($3 + 0 <= 0 || $5 + 0 <= 0) { print "bad ratio: " $0; bad = 1 }
		if ($1 == "fifo" && $5 != "1.000") { print "fifo/fifo " $5; bad = 1 }
		if ($1 == "oracle" && $3 != "1.000") { print "oracle/oracle " $3; bad = 1 }
	}
	END {
		if (!added || !load) { print "no workload lines"; bad = 1 }
		if (runs != 3) { print runs " of 3 starve runs"; bad = 1 }
		if (rows != 7) { print rows " of 7 summary rows"; bad = 1 }
		exit bad
	}' "$tmp/out" >&2

# Tenants: 2,000 jobs on 16 nodes.
run --limit-jobs 2000 --nodes 16 --nodes-per-leaf 4 --tenants "$vcs"
cat "$tmp/out"
awk '
	/^trace / { for (i = 1; i < NF && n == ""; i++)
		if ($(i + 1) == "jobs") n = $i + 0 }
	/^tenants from / { nq = $4 + 0 }
	$1 == "vc" { rows[$2]++; jobs[$2] += $5
		if ($6 <= 0 || $7 < 0 || $8 < 0 || $8 > $9 || $11 < 1 || $12 < 1 ||
		    $14 > $9) {
			print "bad queue row: " $0; bad = 1 } }
	$1 == "all" {
		p++
		u = $8; sub(/%/, "", u); g = $9; sub(/%/, "", g)
		if ($3 != n) { print $2 ": job count " $3 " != " n; bad = 1 }
		if ($19 + 0 > $7 + 0) { print $2 ": owed " $19 " > wait " $7; bad = 1 }
		if (u + 0 > 100 || u + 0 <= 0 || g + 0 > u + 0) {
			print $2 ": utilization " u " / " g; bad = 1 }
		if ($13 + 0 <= 0 || $13 + 0 > 1 || $14 + 0 <= 0 || $14 + 0 > 1) {
			print $2 ": Jain " $13 " " $14; bad = 1 }
		if (($2 == "static" || $2 == "pooled") && ($10 != 0 || $12 != 0)) {
			print $2 ": preempted"; bad = 1 }
		if ($2 == "cohort" && $10 == 0) { print "cohort: no reclaim"; bad = 1 }
		if (rows[$2] != nq) { print $2 ": " rows[$2] " of " nq " queues"; bad = 1 }
		if (jobs[$2] != n) { print $2 ": queues hold " jobs[$2] " jobs"; bad = 1 }
	}
	END { if (p != 4 || nq < 2) { print p " of 4 tenant policies, " nq " queues"; bad = 1 }
		exit bad }' "$tmp/out" >&2
