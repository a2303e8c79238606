#!/bin/bash
# Every long-lived connection of every program sets TCP_NODELAY: without
# it a small message that expects no answer (an agent's launch reply,
# then a task's exit a millisecond later) waits for the peer's delayed
# ACK, ~40 ms a dependency link. An LD_PRELOAD shim
# (tests/integration/nodelay-shim.c) notes, at the first write on each
# TCP socket of cohortd (three replicas), the agents, cohort-mux and the
# CLI, whether the option is set; the test runs jobs through all of
# them and fails on any socket without it. Not under the sanitizers
# (an LD_PRELOAD shim cannot load before ASan's runtime).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

if ldd "$(command -v cohortd)" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "SKIP: sanitizer build (an LD_PRELOAD shim cannot load before ASan)"
	exit 77
fi
"${CC:-cc}" -shared -fPIC -o "$T/shim.so" "$top_srcdir/tests/integration/nodelay-shim.c" -ldl 2>"$T/shim.err" ||
	fail "cannot build the shim: $(head -c 300 "$T/shim.err")"
NODELAY_LOG=$T/nodelay.log
export NODELAY_LOG
: >"$NODELAY_LOG"
chmod 666 "$NODELAY_LOG"
export LD_PRELOAD="$T/shim.so"

C=$T/cluster
cluster_up "$C" --controllers 3 --nodes 2 --gpus 2
W=$(world_dir work)
a=$(job_submit --name first --gpus-per-node 1 --workdir "$W" -- true)
b=$(job_submit --name second -d "afterok:$a" --gpus-per-node 1 --workdir "$W" -- true)
wait_state 60 "$b" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$b.json" 'd["state"]')" = COMPLETED ] || fail "job $b ended $(json_get "$T/job-$b.json" 'd["state"]')"
expect_exit 0 cohort run --nodes 2 --gpus-per-node 1 -- true
unset LD_PRELOAD

# Something was looked at, by every program, or the check proves nothing.
for p in cohortd cohort-agent cohort-mux; do
	grep -q " $p " "$NODELAY_LOG" || fail "the shim saw no TCP socket of $p: $(sort "$NODELAY_LOG" | uniq -c)"
done
# Cohort's programs only (cohort-local's own Python helpers are not).
if grep -Eq '^MISSING cohort' "$NODELAY_LOG"; then
	fail "sockets without TCP_NODELAY: $(grep -E '^MISSING cohort' "$NODELAY_LOG" | sort | uniq -c)"
fi
echo "PASS: $(grep -Ec '^ok cohort' "$NODELAY_LOG") TCP sockets, every one with TCP_NODELAY ($(grep -E '^ok cohort' "$NODELAY_LOG" | cut -d' ' -f2 | sort -u | paste -sd ' ' -))"
