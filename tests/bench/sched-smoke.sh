#!/bin/sh
# The scheduler benchmark in its tiny mode (make check times nothing): it
# must print each of its figures, every number must parse, and the
# figures must agree with each other and with the cluster it built:
#   - 64 nodes x 8 GPUs = 512 GPUs, 200 pending, 5 passes (the --smoke sizes);
#   - the fill pass starts at least one job and no more than it was given,
#     and the GPUs in use stay within (0, 100] %;
#   - a 128-node gang cannot fit on 64 nodes: "does not fit", "not
#     started", and no reservation is possible for it;
#   - the 57-node gang (9/10 of the cluster) gets a reservation after now
#     and no later than the longest time limit of a running job (87,000 s);
#   - backfilled starts are part of the starts; per-GPU memory adds up;
#   - the same seed gives the same decisions: a second run prints the same
#     lines once the timings are taken out.
set -e
bin=${top_builddir:-.}/tests/bench/bench_sched
tmp=${TMPDIR:-/tmp}/sched-smoke.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

"$bin" --smoke >"$tmp/out1"
"$bin" --smoke >"$tmp/out2"
"$bin" --smoke --blocks >"$tmp/out3"
cat "$tmp/out1" "$tmp/out3"

check() {
awk -v blocks="$2" '
function bad(msg) { print "sched-smoke: " msg; err = 1 }
function num(s, what) {
	gsub(/[,;%()]/, "", s)
	if (s !~ /^[0-9]+(\.[0-9]+)?$/) bad(what " is not a number: " s)
	return s + 0
}
/^cluster: / {
	seen["cluster"]++
	if (num($2, "nodes") != 64 || num($5, "GPUs per node") != 8 ||
	    num($8, "GPUs") != 512 || num($10, "pending") != 200 ||
	    num($12, "passes") != 5)
		bad("not the --smoke sizes: " $0)
}
/^topology: / {
	seen["topology"]++
	if (num($2, "leaves") < 1 || num($4, "spines") < 1)
		bad("no switch tree: " $0)
	if (num($6, "blocks") != blocks) bad("blocks: " $0)
	num($10, "parse time")
}
/^fill: / {
	seen["fill"]++
	started = num($5, "started"); given = num($7, "given")
	used = num($12, "fill use")
	num($10, "fill time")
	if (started < 1 || started > given)
		bad("fill started " started " of " given " jobs")
	if (used <= 0 || used > 100)
		bad("fill left " used "% of the GPUs in use")
}
/^1,024-GPU gang/ {
	seen["gang"]++
	if ($0 !~ /: does not fit, /) bad("a 128-node gang fits on 64 nodes: " $0)
	num($6, "gang use")
	if (num($13, "median") > num($16, "max")) bad("median above max: " $0)
}
/^the same gang as the only job/ {
	seen["gang alone"]++
	if ($0 !~ /: not started, /) bad("a 128-node gang started on 64 nodes: " $0)
	num($14, "gang median")
}
/^passes: / {
	seen["passes"]++
	med = num($3, "median"); p99 = num($6, "p99"); max = num($9, "max")
	starts = num($11, "starts"); bf = num($13, "backfilled")
	ends = num($15, "ends"); use = num($17, "pass use")
	if (med > p99 || p99 > max) bad("pass times not ordered: " $0)
	if (bf > starts) bad("more backfilled than started: " $0)
	if (use <= 0 || use > 100) bad("GPU use out of range: " $0)
}
/^reservation for a 128-node gang/ {
	seen["resv128"]++
	if ($0 !~ /: none possible /) bad("a reservation for 128 nodes on 64: " $0)
}
/^reservation for a 57-node gang/ {
	seen["resv57"]++
	if (match($0, /at now\+[0-9]+s/) == 0) {
		bad("no reservation for 57 of 64 nodes: " $0)
	} else {
		at = substr($0, RSTART + 7, RLENGTH - 8) + 0
		if (at <= 0 || at > 87000)
			bad("reservation at now+" at "s, not in (0, 87000]")
	}
}
/^memory per GPU: / {
	seen["memory"]++
	s = num($5, "snapshot"); t = num($8, "topology")
	p = num($13, "scratch"); tot = num($16, "total")
	if (s <= 0 || t <= 0 || p <= 0) bad("a memory figure is zero: " $0)
	if (tot < s + t + p - 2 || tot > s + t + p + 2)
		bad("memory does not add up: " $0)
}
END {
	n = split("cluster topology fill gang gang@alone passes resv128 resv57 memory", k)
	for (i = 1; i <= n; i++) {
		w = k[i]; sub(/@/, " ", w)
		if (seen[w] != 1) bad("line \"" w "\" printed " seen[w] + 0 " times")
	}
	if (NR != n) bad(NR " lines, expected " n)
	exit err
}' "$1" >&2
}
check "$tmp/out1" 0
# --blocks: 64 nodes in blocks of 18, the last of 10.
check "$tmp/out3" 4

# Timings vary from run to run; the rest must not.
untimed() {
	sed -E 's/[0-9]+\.[0-9]+ ms/T ms/g' "$1"
}
untimed "$tmp/out1" >"$tmp/u1"
untimed "$tmp/out2" >"$tmp/u2"
if ! cmp -s "$tmp/u1" "$tmp/u2"; then
	echo "sched-smoke: the same seed gave different decisions:" >&2
	diff "$tmp/u1" "$tmp/u2" >&2 || true
	exit 1
fi

# The same on a 4x4x4 torus (--torus): the passes start jobs, the
# 57-node gang gets a required box's reservation, and the decisions are
# the same from run to run.
"$bin" --smoke --torus >"$tmp/tor1"
"$bin" --smoke --torus >"$tmp/tor2"
cat "$tmp/tor1"
grep -q '^topology: a 4x4x4 torus' "$tmp/tor1" ||
	{ echo "sched-smoke: --torus built no torus" >&2; exit 1; }
awk '/^passes: / { s = $11; gsub(/[^0-9]/, "", s); if (s + 0 > 0) ok = 1 }
	END { exit !ok }' "$tmp/tor1" ||
	{ echo "sched-smoke: --torus passes started nothing" >&2; exit 1; }
grep -Eq '^reservation for a 57-node gang in a required box .*at now\+[0-9]+s' "$tmp/tor1" ||
	{ echo "sched-smoke: --torus: no required box reserved for 57 nodes" >&2; exit 1; }
untimed "$tmp/tor1" >"$tmp/t1"
untimed "$tmp/tor2" >"$tmp/t2"
if ! cmp -s "$tmp/t1" "$tmp/t2"; then
	echo "sched-smoke: --torus: the same seed gave different decisions:" >&2
	diff "$tmp/t1" "$tmp/t2" >&2 || true
	exit 1
fi
