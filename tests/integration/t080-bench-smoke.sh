#!/bin/bash
# bench_submit runs against a local cluster, prints its one-line summary,
# and every job it reports made it into the controller.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=$top_builddir/tests/bench/bench_submit
[ -x "$BENCH" ] || fail "$BENCH is not built (make check builds it)"
C=$T/cluster
cluster_up "$C"
before=$(job_count --all)

expect_exit 0 timeout 25 "$BENCH" --clients 2 --jobs 20
line=$(grep '^bench_submit: ' "$OUT") || fail "no summary line: $(cat "$OUT")"
[[ "$line" =~ ^bench_submit:\ clients=2\ jobs=20\ seconds=([0-9.]+)\ submits_per_s=([0-9.]+)\ p50_ms=([0-9.]+)\ p99_ms=([0-9.]+)$ ]] ||
	fail "summary line format: '$line'"
log "$line"
"$PYTHON" - "${BASH_REMATCH[@]:1}" <<'PY' || fail "implausible numbers in '$line'"
import sys
secs, rate, p50, p99 = map(float, sys.argv[1:5])
assert secs > 0 and rate > 0, "seconds and rate must be positive"
assert 0 <= p50 <= p99, "p50 must be at most p99"
# seconds is printed rounded: allow for that in rate = jobs / seconds.
lo, hi = 20 / (secs + 0.0006), 20 / max(secs - 0.0006, 1e-9)
assert 0.95 * lo <= rate <= 1.05 * hi, "rate is not jobs/seconds"
PY
[ "$(job_count --all)" = "$((before + 20))" ] || fail "expected $((before + 20)) jobs, got $(job_count --all)"

# With --idempotency-keys every submit carries a key of its own: 20 more
# jobs, each with a distinct key.
expect_exit 0 timeout 25 "$BENCH" --clients 2 --jobs 20 --idempotency-keys
grep -q '^bench_submit: clients=2 jobs=20 ' "$OUT" || fail "no summary line with keys: $(cat "$OUT")"
before=$((before + 20))
[ "$(job_count --all)" = "$((before + 20))" ] || fail "expected $((before + 20)) jobs, got $(job_count --all)"
expect_exit 0 cohort jobs --all --json
[ "$(json_get "$OUT" 'len(set(j["idempotency_key"] for j in d["jobs"] if (j.get("idempotency_key") or "").startswith("b-")))')" = 20 ] ||
	fail "the keyed jobs do not carry 20 distinct keys"

# Bad arguments fail and submit nothing.
"$BENCH" --clients 0 --jobs 20 >/dev/null 2>&1 && fail "bench_submit --clients 0 succeeded"
"$BENCH" --bogus >/dev/null 2>&1 && fail "bench_submit --bogus succeeded"
[ "$(job_count --all)" = "$((before + 20))" ] || fail "bad bench_submit arguments submitted jobs"
exit 0
