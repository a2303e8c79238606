#!/bin/sh
# The goodput simulator (tests/bench/goodput) in its small mode: 64
# nodes, 3 days, one seed, failure rates x30 (so that every detection
# path is exercised in a few seconds). Checks that the table has every
# configuration, that each ETTR is in (0, 1], that each breakdown adds up
# to the wall time (100% within rounding), and that Cohort with a hot
# spare is not worse than the Slurm-like baseline.
#
# Then the failures that do not crash, at rates that make
# them happen in 3 days on 64 nodes: lemons, black holes, fail-slow. The
# same checks, and that each mechanism fires where it is on and only
# there: a black hole hits the job, fail-slow episodes hit it, the real
# straggler detector names a rank only where ranks report step times,
# the suspect code drains a node only where it is kept.
set -e
bin=${top_builddir:-.}/tests/bench/goodput
tmp=${TMPDIR:-/tmp}/goodput-smoke.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$bin" --nodes 64 --days 3 --seeds 1 --rate-x 30 --verbose \
    --configs slurm,slurm+1,cohort,cohort-1,cohort-2,elastic \
    > "$tmp/out" 2> "$tmp/log" || { cat "$tmp/out"; tail -20 "$tmp/log"; exit 1; }
cat "$tmp/out"
# Table lines: name job_nodes spare_gpus ETTR (min max) then 9 parts of
# the wall time ($7-$15), sched, +restart, hits, restarts, bh, slow,
# strag, drain, cpu_s.
check='
	$1 ~ want && NF >= 24 {
		n++
		e[$1] = $4; bh[$1] = $20; sl[$1] = $21; st[$1] = $22; dr[$1] = $23
		if (!($4 > 0 && $4 <= 1)) { print $1 ": ETTR " $4 " not in (0, 1]"; bad = 1 }
		sum = 0
		for (i = 7; i <= 15; i++) { v = $i; sub(/%$/, "", v); sum += v }
		if (sum < 99.9 || sum > 100.1) { print $1 ": breakdown adds up to " sum "%"; bad = 1 }
	}
	/^# .* seed .*hits/ { for (i = 1; i < NF; i++) if ($i == "hits") h += $(i + 1) }'
awk -v want='^(slurm|slurm\\+1|cohort|cohort-1|cohort-2|elastic)$' "$check"'
	END {
		if (n != 6) { print n " of 6 configurations"; bad = 1 }
		if (h == 0) { print "no failure hit the job"; bad = 1 }
		if (e["cohort-1"] < e["slurm"]) {
			print "cohort-1 (" e["cohort-1"] ") worse than slurm (" e["slurm"] ")"; bad = 1
		}
		exit bad
	}' "$tmp/out" >&2
"$bin" --nodes 64 --days 3 --seeds 1 --rate-x 30 --verbose \
    --lemon-pct 5 --blackholes-per-day 100 --slow-per-day 300 \
    --configs slurm+1,cohort-1,c1+suspect,c1+straggler,c1+advice,c1+all \
    > "$tmp/out2" 2> "$tmp/log" || { cat "$tmp/out2"; tail -20 "$tmp/log"; exit 1; }
cat "$tmp/out2"
awk -v want='^(slurm\\+1|cohort-1|c1\\+suspect|c1\\+straggler|c1\\+advice|c1\\+all)$' "$check"'
	END {
		if (n != 6) { print n " of 6 configurations"; bad = 1 }
		if (bh["cohort-1"] == 0) { print "no black hole hit cohort-1"; bad = 1 }
		if (sl["cohort-1"] == 0) { print "no fail-slow episode hit cohort-1"; bad = 1 }
		for (c in e) {
			if ((c == "c1+straggler" || c == "c1+all") != (st[c] > 0)) {
				print c ": " st[c] " stragglers named"; bad = 1
			}
			if (dr[c] > 0 && c != "c1+suspect" && c != "c1+all") {
				print c ": " dr[c] " suspect drains without suspect nodes"; bad = 1
			}
		}
		if (dr["c1+suspect"] == 0) { print "c1+suspect drained no node"; bad = 1 }
		exit bad
	}' "$tmp/out2" >&2
