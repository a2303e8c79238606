#!/bin/bash
# tests/bench/timeline.sh at its smallest (2 runs): every stage row of
# both tables carries a number, so the figures show in the test's log and
# a stage whose log line went missing fails here. Durations are printed,
# never compared with anything.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TL=$top_srcdir/tests/bench/timeline.sh
[ -f "$TL" ] || fail "$TL is missing"

# The stages each table must show, in order.
GANG_ROWS=("submit received" "submit committed" "placed by a pass" "launch sent"
	"prepared (every node)" "task started (every task)"
	"RUNNING (every node answered)" "exit seen by the agent (every task)"
	"exit recorded (COMPLETED)")
CHAIN_ROWS=("A released (its submit)")
for p in "A " "B "; do
	for s in "${GANG_ROWS[@]:2}"; do
		CHAIN_ROWS+=("$p$s")
	done
done

# A bound on a hang, not a timing: the script waits on job states.
rc=0
TMPDIR=$T timeout -k 5 300 bash "$TL" 2 >"$OUT" 2>"$ERR" || rc=$?
cat "$OUT"
[ "$rc" = 0 ] || fail "timeline.sh exited $rc: $(tail -n 20 "$ERR")"

# check_rows TITLE ROW...: the table after the line starting with TITLE
# has exactly these stage rows, each with a median, delta, min and max.
check_rows() {
	local title="$1" n=0 want line
	shift
	want=("$@")
	while IFS= read -r line; do
		[ "$n" -lt "${#want[@]}" ] || break
		[[ "$line" =~ ^\ \ (.*[^ ])\ +([0-9]+\.[0-9])\ +(-?[0-9]+\.[0-9])\ +(-?[0-9]+)\ +(-?[0-9]+)$ ]] ||
			fail "$title: stage '${want[$n]}' has no figures: '$line'"
		[ "${BASH_REMATCH[1]}" = "${want[$n]}" ] ||
			fail "$title: expected stage '${want[$n]}', got '${BASH_REMATCH[1]}'"
		n=$((n + 1))
	done < <(sed -n "/^$title/,/^\$/p" "$OUT" | sed -n '/stage (ms from the first)/,/^$/p' | sed '1d;/^$/d')
	[ "$n" = "${#want[@]}" ] || fail "$title: $n stage rows, expected ${#want[@]}"
}
check_rows '(a) 2-node' "${GANG_ROWS[@]}"
check_rows '(b) afterok' "${CHAIN_ROWS[@]}"
[ "$(grep -c '^  job [0-9]*: ' "$OUT")" = 2 ] || fail "not 2 gang runs printed"
[ "$(grep -c '^  jobs [0-9]* [0-9]*: ' "$OUT")" = 2 ] || fail "not 2 chain runs printed"

# Bad sizes are refused.
expect_exit 1 env TMPDIR="$T" bash "$TL" 0
exit 0
