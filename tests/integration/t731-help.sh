#!/bin/bash
# cohort help: `cohort help CMD` prints exactly what `cohort CMD --help`
# does, on stdout, exit 0, for every command of `cohort --help`;
# `cohort help` alone (and help --help) is `cohort --help`; an unknown
# command, or a second argument, is a usage error (exit 2) with one line
# on stderr that says where to look, and nothing on stdout. No controller
# is needed: settings are left unset (lib.sh) and the server unreachable.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

export COHORT_SERVER=127.0.0.1:1

expect_exit 0 cohort --help
cp "$OUT" "$T/main-help"
expect_exit 0 cohort help
cmp -s "$OUT" "$T/main-help" || fail "cohort help differs from cohort --help: $(diff "$T/main-help" "$OUT")"
expect_exit 0 cohort help --help
cmp -s "$OUT" "$T/main-help" || fail "cohort help --help differs from cohort --help"
grep -q "cohort help COMMAND" "$T/main-help" || fail "cohort --help does not point at cohort help COMMAND"

# The commands, as cohort --help lists them (help among them).
mapfile -t CMDS < <(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }' "$T/main-help")
[ "${#CMDS[@]}" -ge 15 ] || fail "cohort --help lists only ${#CMDS[@]} commands"
[[ " ${CMDS[*]} " == *" help "* ]] || fail "cohort --help does not list help"
for c in "${CMDS[@]}"; do
	[ "$c" != help ] || continue
	expect_exit 0 cohort "$c" --help
	cp "$OUT" "$T/want"
	[ -s "$T/want" ] || fail "cohort $c --help printed nothing"
	expect_exit 0 cohort help "$c"
	cmp -s "$OUT" "$T/want" || fail "cohort help $c differs from cohort $c --help: $(diff "$T/want" "$OUT")"
	[ ! -s "$ERR" ] || fail "cohort help $c wrote to stderr: $(cat "$ERR")"
done
# Connection flags before help change nothing.
expect_exit 0 cohort --server 127.0.0.1:2 help jobs
cohort jobs --help | cmp -s - "$OUT" || fail "cohort --server X help jobs differs from cohort jobs --help"

expect_exit 2 cohort help frobnicate
[ ! -s "$OUT" ] || fail "cohort help frobnicate printed on stdout: $(cat "$OUT")"
stderr_one_line "cohort: " "unknown command 'frobnicate'.*cohort help"
expect_exit 2 cohort help jobs extra
stderr_one_line "cohort: " "help takes one command"
log "cohort help: ${#CMDS[@]} commands, each the same as its --help"
