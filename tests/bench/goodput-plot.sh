#!/bin/sh
# Plot the goodput simulator's sweep (tests/bench/goodput --sweep FILE):
# ETTR against the checkpoint interval, one line per share of hot spares
# (mean over seeds, bars from the worst to the best seed).
#
#	tests/bench/goodput-plot.sh DATA [OUT.png]
#
# DATA has "spares_pct ckpt_min ettr_mean ettr_min ettr_max" lines.
# Needs gnuplot (apt-get install gnuplot-nox); make check does not run it.
set -e
data=${1:?usage: goodput-plot.sh DATA [OUT.png]}
out=${2:-docs/goodput.png}
command -v gnuplot >/dev/null || {
	echo "goodput-plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2
	exit 1
}
[ -r "$data" ] || { echo "goodput-plot.sh: cannot read $data" >&2; exit 1; }
tmp=${TMPDIR:-/tmp}/goodput-plot.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
title=$(sed -n 's/^# goodput sweep: //p' "$data" | head -1)
# Without spares a full-cluster job waits hours for every repair: its
# line sits far below the others and would flatten them; it is named in
# a label instead.
nospare=$(awk '!/^#/ && NF >= 5 && $1 == 0 && ($3 > m) { m = $3 } END { if (m) printf "%.3f", m }' "$data")
label=
[ -n "$nospare" ] && label="set label \"no spares: ETTR <= $nospare (the job waits for every repair), off this scale\" at graph 0.02, graph 0.06"
plots=
for sp in $(awk '!/^#/ && NF >= 5 && $1 > 0 { print $1 }' "$data" | sort -nu); do
	awk -v sp="$sp" '!/^#/ && NF >= 5 && $1 == sp' "$data" > "$tmp/s$sp"
	plots="$plots${plots:+, }\"$tmp/s$sp\" using 2:3:4:5 with yerrorlines lw 2 title \"$sp%\""
done
[ -n "$plots" ] || { echo "goodput-plot.sh: no data in $data" >&2; exit 1; }
gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced font "sans,11"
set output "$out"
set title "Cohort ETTR under Llama 3 failure rates\n$title"
set xlabel "checkpoint interval (minutes)"
set ylabel "ETTR (useful training time / wall time)"
set logscale x
set xtics (2, 5, 10, 15, 20, 30, 45, 60)
set grid
set yrange [*:0.98]
set offsets graph 0.03, graph 0.03, 0, 0
set key top right title "hot spares"
set arrow from graph 0, first 0.97 to graph 1, first 0.97 nohead dt 2 lc rgb "gray40"
set label "97% (ByteRobust)" at graph 0.02, first 0.9715 tc rgb "gray40"
$label
plot $plots
GP
echo "wrote $out"
