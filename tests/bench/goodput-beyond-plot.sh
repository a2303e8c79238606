#!/bin/sh
# Plot the goodput simulator's --beyond runs: ETTR per configuration,
# today's defaults beside asynchronous checkpoints (mean over seeds,
# bars from the worst to the best seed).
#
#	tests/bench/goodput-beyond-plot.sh DEFAULTS ASYNC [OUT.png]
#
# DEFAULTS and ASYNC are tests/bench/goodput's printed tables, the runs
# of every seed concatenated (cat s1.out s2.out s3.out > DEFAULTS).
# Needs gnuplot (apt-get install gnuplot-nox); make check does not run it.
set -e
def=${1:?usage: goodput-beyond-plot.sh DEFAULTS ASYNC [OUT.png]}
asy=${2:?usage: goodput-beyond-plot.sh DEFAULTS ASYNC [OUT.png]}
out=${3:-docs/goodput-beyond.png}
command -v gnuplot >/dev/null || {
	echo "goodput-beyond-plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2
	exit 1
}
for f in "$def" "$asy"; do
	[ -r "$f" ] || { echo "goodput-beyond-plot.sh: cannot read $f" >&2; exit 1; }
done
tmp=${TMPDIR:-/tmp}/goodput-beyond-plot.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# "config mean min max" per configuration, in the order first printed.
summary() {
	awk '$2 ~ /^[0-9]+$/ && $4 ~ /^0\.[0-9]+$/ {
		if (!($1 in n)) order[k++] = $1
		n[$1]++; s[$1] += $4
		if (!($1 in lo) || $4 < lo[$1]) lo[$1] = $4
		if (!($1 in hi) || $4 > hi[$1]) hi[$1] = $4
	} END {
		for (i = 0; i < k; i++) { c = order[i]
			printf "%s %.4f %.4f %.4f %d\n", c, s[c] / n[c], lo[c], hi[c], n[c] }
	}' "$1"
}
summary "$def" >"$tmp/def"
summary "$asy" >"$tmp/asy"
[ -s "$tmp/def" ] && [ -s "$tmp/asy" ] || {
	echo "goodput-beyond-plot.sh: no goodput table rows found" >&2
	exit 1
}
# "config def_mean def_min def_max async_mean async_min async_max", in
# the defaults' order.
awk 'NR == FNR { a[$1] = $2 " " $3 " " $4; next } $1 in a { print $1, $2, $3, $4, a[$1] }' \
	"$tmp/asy" "$tmp/def" >"$tmp/both"
seeds=$(awk '{ print $5; exit }' "$tmp/def")
gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced font "sans,11"
set output "$out"
set title "ETTR with lemons, black holes and fail-slow, 2,048 nodes x 54 days ($seeds seeds)"
set ylabel "ETTR (useful training time / wall time)"
set yrange [0.75:1]
set grid ytics
set key below
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set boxwidth 0.9
set xtics nomirror
set label "goal with asynchronous checkpoints: 0.98" at graph 0.02, first 0.985
set arrow from graph 0, first 0.98 to graph 1, first 0.98 nohead dt 2
plot "$tmp/both" using 2:3:4:xtic(1) title "today's defaults (C 10 min, K 10 s, R 120 s)", \
     "" using 5:6:7 title "asynchronous checkpoints (C 2 min, K 1 s, R 30 s)"
GP
echo "goodput-beyond-plot.sh: wrote $out"
