#!/bin/bash
# Interactive work's figures (not part of make check): keystroke echo
# through srun --pty, a stream through srun's stdin, and the
# controller's memory with many idle --pty sessions.
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/interactive.sh \
#       [KEYS [MIB [SESSIONS]]]
#
# On a cohort-local cluster of two nodes, in one salloc --no-shell
# allocation: KEYS keystrokes (default 1000) typed one at a time into
# `srun --pty cat` and timed to their echo (tests/bench/pty_echo.py);
# MIB MiB (default 1024) of zeros through `srun ... wc -c`; then
# SESSIONS (default 200) `srun --pty sleep` sessions left idle (in
# allocations of 50: a job runs at most 64 steps at once), with the
# controller's resident memory before and after. Figures are printed,
# never compared.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

KEYS=${1:-1000}
MIB=${2:-1024}
SESSIONS=${3:-200}
for v in "$KEYS" "$MIB" "$SESSIONS"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "KEYS, MIB and SESSIONS must be positive integers, not '$v'"
done

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir work)
cd "$W" || fail "cannot enter $W"
expect_exit 0 salloc --no-shell -N 2
jid=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$ERR")
[ -n "$jid" ] || fail "no allocation: $(cat "$ERR")"
wait_state 30 "$jid" RUNNING
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

"$PYTHON" "$top_srcdir/tests/bench/pty_echo.py" "$KEYS" \
	srun --jobid "$jid" -N1 -w node02 --overlap --pty cat ||
	fail "the echo benchmark failed"

t0=$(_now_us)
n=$(head -c "$((MIB * 1024 * 1024))" /dev/zero |
	srun --jobid "$jid" -N1 -w node02 --overlap wc -c) || fail "the stdin stream failed"
t1=$(_now_us)
[ "$n" = "$((MIB * 1024 * 1024))" ] || fail "wc -c counted $n bytes, not $((MIB * 1024 * 1024))"
awk -v b="$n" -v us="$((t1 - t0))" 'BEGIN { printf "stdin stream: %d MiB in %.1f s: %.1f MiB/s\n", b / 1048576, us / 1e6, b / 1048576 / (us / 1e6) }'

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$(cat "$C/cohortd.pid")/status"; }
# A job runs at most 64 steps at once: the sessions go to allocations
# of 50 each.
allocs=()
for ((a = 0; a < (SESSIONS + 49) / 50; a++)); do
	expect_exit 0 salloc --no-shell -N 2
	id=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$ERR")
	[ -n "$id" ] || fail "no allocation for the sessions: $(cat "$ERR")"
	allocs+=("$id")
done
before=$(rss)
pids=()
for ((i = 0; i < SESSIONS; i++)); do
	script -qfec "srun --jobid ${allocs[i / 50]} -N1 -w node0$((i % 2 + 1)) --overlap --pty sleep 3600" /dev/null \
		</dev/null >/dev/null 2>&1 &
	pids+=($!)
done
running() { [ "$(squeue -s -h | grep -c 'sleep')" -ge "$SESSIONS" ]; }
wait_for 300 running || fail "not all $SESSIONS sessions started: $(squeue -s -h | grep -c sleep)"
sleep 5
after=$(rss)
echo "controller RSS: $before KiB before, $after KiB with $SESSIONS idle --pty sessions ($(( (after - before) / SESSIONS )) KiB each)"
echo "load with them idle: $(cut -d' ' -f1-3 /proc/loadavg)"
curl -s "$COHORT_HTTP/metrics" | grep -E '^cohort_(interactive_sessions|steps_running|step_input_bytes_total) '
kill "${pids[@]}" 2>/dev/null
scancel "$jid" "${allocs[@]}"
exit 0
