#!/bin/bash
# The end-of-test log check of lib.sh, on made-up logs (no daemons): each
# kind of line it must catch is caught, expect_log_error lets through
# exactly what it matches, info lines and a clean valgrind summary pass,
# and a test that passed with such a line in a log exits 1.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
mkdir -p "$C"
_CLUSTERS+=("$C")
ts=2026-12-01T10:00:00.000Z

# caught LINE: log_errors reports LINE written to a node's log.
caught() {
	printf '%s\n' "$1" >"$C/node01.log"
	if log_errors >"$T/found"; then
		fail "log_errors missed: $1"
	fi
	grep -qF -- "$1" "$T/found" || fail "log_errors did not show the line: $(cat "$T/found")"
}

caught "$ts cohortd: warning: job 7: FAILED: rank 0 exited with 3"
caught "$ts cohort-agent: warning: controller: connection lost: Connection reset by peer"
caught "$ts cohortd: fatal: cannot open the database"
caught "==1234==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020"
caught "daemon/controller/domain/jobs.c:42:7: runtime error: signed integer overflow"
caught "==99== Invalid read of size 8"
caught "==99==    definitely lost: 48 bytes in 1 blocks"
caught "==99== 48 bytes in 1 blocks are definitely lost in loss record 1 of 1"
caught "==99== ERROR SUMMARY: 3 errors from 3 contexts (suppressed: 0 from 0)"
caught "cohortd: daemon/controller/domain/nodes.c:10: nodes_get: Assertion \`n != NULL' failed."

# What is not an error passes.
{
	echo "$ts cohortd: job 7: RUNNING on node01"
	echo "$ts cohort-agent: registered with the controller as node01"
	echo "==99==    definitely lost: 0 bytes in 0 blocks"
	echo "==99== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)"
	echo "fake-train: warning: this is a task's output, not the daemon's"
} >"$C/node01.log"
log_errors >"$T/found" || fail "log_errors reported ordinary lines: $(cat "$T/found")"

# Declared errors pass; an undeclared one beside them does not.
{
	echo "$ts cohortd: warning: job 7: FAILED: rank 0 exited with 3"
	echo "$ts cohortd: warning: node node02: DOWN: no heartbeat for 5000 ms"
} >"$C/cohortd.log"
: >"$C/node01.log"
log_errors >"$T/found" && fail "log_errors passed two undeclared warnings"
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: '
log_errors >"$T/found" && fail "log_errors passed an undeclared DOWN: $(cat "$T/found")"
grep -q "DOWN" "$T/found" && ! grep -q "FAILED" "$T/found" ||
	fail "log_errors showed the wrong lines: $(cat "$T/found")"
expect_log_error 'cohortd: warning: node node[0-9]+: DOWN: '
log_errors >"$T/found" || fail "log_errors reported declared lines: $(cat "$T/found")"

# A file given to watch_log is scanned too.
echo "$ts cohortd: warning: conn 3: undecodable frame; closing" >"$T/by-hand.log"
watch_log "$T/by-hand.log"
log_errors >"$T/found" && fail "log_errors did not scan a watched file"

# And a test that passed with such a line fails: a child test, run as
# automake would, exits 1.
cat >"$T/child.sh" <<EOF
#!/bin/bash
. "$top_srcdir/tests/integration/lib.sh"
mkdir -p "\$T/c"
_CLUSTERS+=("\$T/c")
echo "$ts cohortd: warning: something went wrong" >"\$T/c/cohortd.log"
exit 0
EOF
rc=0
top_builddir=$T bash "$T/child.sh" >"$T/child.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a passing test with a warning in its logs exited $rc, not 1: $(cat "$T/child.out")"
grep -q "passed, but its daemons logged errors" "$T/child.out" ||
	fail "the child did not say why it failed: $(cat "$T/child.out")"
# The child's clusters were never up: cohort-local down of a bare
# directory fails quietly; the log check is what failed it.
_LOG_FILES=()
: >"$C/cohortd.log"

# No test takes lib.sh's EXIT trap away: a test that set its own (t691
# did, for its tmux) left its cluster running and its logs unchecked.
# A handler of its own must end in _cleanup; at_exit is the way to add
# to it.
for f in "$top_srcdir"/tests/integration/t*.sh; do
	h=$(sed -n "s/^[[:space:]]*trap[[:space:]]\{1,\}\([A-Za-z_][A-Za-z_0-9]*\)[[:space:]]\{1,\}EXIT.*/\1/p" "$f")
	for name in $h; do
		grep -Eq "^[[:space:]]*_cleanup\b" "$f" ||
			fail "$(basename "$f") replaces lib.sh's EXIT trap with $name, which never calls _cleanup (use at_exit)"
	done
	grep -Eq "^[[:space:]]*trap[[:space:]]+'" "$f" && grep -Eq "^[[:space:]]*trap[[:space:]]+'[^']*'[[:space:]]+EXIT" "$f" &&
		fail "$(basename "$f") replaces lib.sh's EXIT trap with a command (use at_exit)"
done
exit 0
