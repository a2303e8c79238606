#!/bin/sh
# The goodput simulator (tests/bench/goodput) in its small mode: 64
# nodes, 3 days, one seed, failure rates x30 (so that every detection
# path is exercised in a few seconds). Checks that the table has every
# configuration, that each ETTR is in (0, 1], that each breakdown adds up
# to the wall time (100% within rounding), and that Cohort with a hot
# spare is not worse than the Slurm-like baseline.
set -e
bin=${top_builddir:-.}/tests/bench/goodput
tmp=${TMPDIR:-/tmp}/goodput-smoke.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$bin" --nodes 64 --days 3 --seeds 1 --rate-x 30 --verbose \
    > "$tmp/out" 2> "$tmp/log" || { cat "$tmp/out"; tail -20 "$tmp/log"; exit 1; }
cat "$tmp/out"
awk '
	$1 ~ /^(slurm|slurm\+1|cohort|cohort-1|cohort-2|elastic)$/ && NF >= 14 {
		n++
		e[$1] = $4
		if (!($4 > 0 && $4 <= 1)) { print $1 ": ETTR " $4 " not in (0, 1]"; bad = 1 }
		sum = 0
		for (i = 7; i <= 13; i++) { v = $i; sub(/%$/, "", v); sum += v }
		if (sum < 99.9 || sum > 100.1) { print $1 ": breakdown adds up to " sum "%"; bad = 1 }
	}
	/^# .* seed .*hits/ { for (i = 1; i < NF; i++) if ($i == "hits") h += $(i + 1) }
	END {
		if (n != 6) { print n " of 6 configurations"; bad = 1 }
		if (h == 0) { print "no failure hit the job"; bad = 1 }
		if (e["cohort-1"] < e["slurm"]) {
			print "cohort-1 (" e["cohort-1"] ") worse than slurm (" e["slurm"] ")"; bad = 1
		}
		exit bad
	}' "$tmp/out" >&2
