#!/bin/bash
# The man pages (man/*.[158]) are clean roff and say what the code does:
#  1. groff -ww -z -man prints nothing for every page (and man --warnings
#     neither, where man-db is installed); every page the contract names
#     exists, names the version of `cohort --version` in its .TH line and
#     is installed by Makefile.am; every cohort page a page refers to
#     exists;
#  2. every command of `cohort --help` has a ".SS NAME" entry in cohort(1),
#     and every long option of `cohort NAME --help` is mentioned in it (run
#     shares submit's entry), and COMMANDS has no other entry; the
#     connection flags are in OPTIONS;
#  3. every section and key of cohortd's and cohort-agent's key tables
#     (ctl_config.c, agent_config.c) has its entry, under its section, in
#     cohortd.conf(5) and cohort-agent.conf(5);
#  4. every key line of the example configurations (etc/cohortd.conf,
#     etc/cohort-agent.conf), commented out or not, names a key of the
#     section it stands in, so that uncommenting one never stops a daemon;
#  5. every option of `cohortd --help` and `cohort-agent --help` has its
#     entry in OPTIONS of cohortd(8) and cohort-agent(8).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v groff >/dev/null 2>&1 || {
	echo "SKIP: $TEST_NAME needs groff (Debian package groff-base; scripts/deps installs it)"
	exit 77
}
M=$top_srcdir/man
PAGES="cohort.1 cohortd.8 cohort-agent.8 cohortd.conf.5 cohort-agent.conf.5 cohort-local.1 cohort-pki.1
cohort-mux.1"

# ---- 1. lint, the set of pages, cross references -----------------------
for p in $PAGES; do
	[ -f "$M/$p" ] || fail "man/$p is missing"
	grep -Eq "^[[:space:]]*man/$p( |\\\\|\$)|[[:space:]]man/$p( |\\\\|\$)" "$top_srcdir/Makefile.am" ||
		fail "man/$p is not in Makefile.am's dist_man_MANS"
done
for f in "$M"/*.[158]; do
	out=$(LC_ALL=C.UTF-8 groff -ww -z -man -Tutf8 "$f" 2>&1) || fail "groff failed on $f: $out"
	[ -z "$out" ] || fail "groff -ww warns about $(basename "$f"): $out"
	if command -v man >/dev/null 2>&1; then
		out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null) || true
		[ -z "$out" ] || fail "man --warnings warns about $(basename "$f"): $out"
	fi
	# References to our own pages: .BR cohort\-agent (8) and the like.
	sed -n 's/^\.BR \(cohort[a-z\\.-]*\) (\([158]\)).*/\1.\2/p' "$f" | sed 's/\\-/-/g' |
		while read -r ref; do
			[ -f "$M/$ref" ] || fail "$(basename "$f") refers to ${ref%.*}(${ref##*.}), which does not exist"
		done
	grep -q '^\.SH SEE ALSO' "$f" || fail "$(basename "$f") has no SEE ALSO"
done
# Each page's header names the version it documents.
ver=$(cohort --version) || fail "cohort --version failed"
for p in $PAGES; do
	grep -q "^\.TH .* \"$ver\" " "$M/$p" || fail "man/$p: its .TH line does not name \"$ver\" (cohort --version)"
done
log "lint: $(echo "$PAGES" | wc -w) pages clean, all of $ver"

# section_text FILE START: the lines of FILE from the line equal to START
# up to the next .SS or .SH, with roff's \- as -.
section_text() {
	awk -v start="$2" '
		$0 == start { on = 1; next }
		on && /^\.S[SH]( |$)/ { exit }
		on { print }' "$1" | sed 's/\\-/-/g'
}

# ---- 2. cohort(1) against the CLI ----------------------------------------
# The options a --help offers, read as the bash completion reads them.
# shellcheck source=../../completion/cohort
. "$top_srcdir/completion/cohort"
cohort --help >"$T/help" || fail "cohort --help failed"
mapfile -t CMDS < <(_cohort_commands cohort)
[ "${#CMDS[@]}" -ge 15 ] || fail "read only ${#CMDS[@]} commands from cohort --help: $(cat "$T/help")"
nopts=0
for c in "${CMDS[@]}"; do
	grep -qx "\\.SS $c" "$M/cohort.1" || fail "cohort(1) has no entry (.SS $c) for the command '$c'"
	section_text "$M/cohort.1" ".SS $c" >"$T/sec"
	[ "$c" != run ] || section_text "$M/cohort.1" ".SS submit" >>"$T/sec"
	cohort "$c" --help >"$T/chelp" 2>&1 || fail "cohort $c --help failed: $(cat "$T/chelp")"
	for o in $(_cohort_help_options <"$T/chelp"); do
		case "$o" in --server | --cert | --key | --ca | --help) continue ;; esac
		grep -Eq -- "$o([^a-z0-9-]|\$)" "$T/sec" || fail "cohort(1), command $c: $o (from 'cohort $c --help') is not described"
		nopts=$((nopts + 1))
	done
done
# And no entry for a command the CLI does not have.
awk '/^\.SH COMMANDS/ { on = 1; next } on && /^\.SH/ { exit } on && /^\.SS / { print $2 }' \
	"$M/cohort.1" | while read -r c; do
	[[ " ${CMDS[*]} " == *" $c "* ]] ||
		fail "cohort(1) describes a command '$c' that cohort --help does not list"
done
section_text "$M/cohort.1" ".SH OPTIONS" >"$T/sec"
for o in --server --cert --key --ca --help --version; do
	grep -Eq -- "$o([^a-z0-9-]|\$)" "$T/sec" || fail "cohort(1): OPTIONS does not describe $o"
done
log "cohort(1): ${#CMDS[@]} commands, $nopts options"

# ---- 3. the .5 pages against the key tables -------------------------------
# conf_keys FILE: "SECTION KEY" for each entry of the file's static
# conf_key table: { .section = ..., .name = "..." } entries and the
# KEY-style macros (KEY, PATHKEY, MSKEY, NUMKEY: section first; QKEY: a
# key of [queue *]; SIMKEY: of [gpu]). Fails when it cannot read every
# entry, so that a new way of writing one is noticed here.
conf_keys() {
	local joined n got
	joined=$(awk '/^static const struct conf_key [a-z_]+\[\] = \{/ { on = 1; next }
		on && /^\};/ { exit }
		on { printf "%s ", $0 }' "$1")
	{
		grep -oE '\.section = "[^"]+", \.name = "[^"]+"' <<<"$joined" |
			sed -E 's/.*section = "([^"]+)", \.name = "([^"]+)"/\1 \2/'
		grep -oE '\bQKEY\("[^"]+"' <<<"$joined" | sed -E 's/.*\("/queue * /; s/"$//'
		grep -oE '\bSIMKEY\("[^"]+"' <<<"$joined" | sed -E 's/.*\("/gpu /; s/"$//'
		grep -oE '\b[A-Z]*KEY\("[^"]+", *"?[a-z_.*]+' <<<"$joined" |
			grep -vE '^(QKEY|SIMKEY)\(' |
			sed -E 's/^[A-Z]*KEY\("([^"]+)", *"?/\1 /'
	} >"$T/keys.read"
	n=$(grep -oE '\{ \.section = |\b[A-Z]*KEY\(' <<<"$joined" | wc -l)
	got=$(wc -l <"$T/keys.read")
	[ "$n" -eq "$got" ] && [ "$n" -gt 0 ] ||
		fail "$1: read $got keys of its $n table entries (a new form of entry? teach t730's conf_keys)"
	cat "$T/keys.read"
}

# check_page PAGE SOURCE: every section and key of SOURCE's table in PAGE.
check_page() {
	local page="$M/$1" src="$top_srcdir/$2" sec key head n=0
	conf_keys "$src" >"$T/keys"
	grep -q . "$T/keys" || fail "read no keys from $2"
	# The [xid] codes are added at load time (agent_config.c).
	[ "$1" != cohort-agent.conf.5 ] || echo "xid -" >>"$T/keys"
	while read -r sec key; do
		case "$sec" in
		queue) key=${key#\* }; head=".SS [queue NAME]"; sec="queue NAME" ;;
		*) head=".SS [$sec]" ;;
		esac
		grep -qxF "$head" "$page" || fail "$1 has no section '$head' (for [$sec] $key of $2)"
		[ "$key" != - ] || continue
		key=${key%\*}
		section_text "$page" "$head" >"$T/sec"
		grep -Eq "^\\.(B|BI|BR) \"?${key//./\\.}\"?( |\$)" "$T/sec" ||
			fail "$1: [$sec] has no entry for '$key' (a key of $2)"
		n=$((n + 1))
	done <"$T/keys"
	log "$1: $n keys of $2"
}
check_page cohortd.conf.5 daemon/controller/ctl_config.c
check_page cohort-agent.conf.5 daemon/agent/agent_config.c

# ---- 4. the example configurations ----------------------------------------
# check_example FILE SOURCE: each "key = value" line, bare or behind a
# '#' or ';' (no blank between), under its section header (commented out
# or not), is a key of that section.
check_example() {
	local ex="$top_srcdir/$1" sec="" line key n=0
	conf_keys "$top_srcdir/$2" >"$T/keys"
	while IFS= read -r line; do
		if [[ $line =~ ^[#\;]?\[([^]]+)\] ]]; then
			sec=${BASH_REMATCH[1]}
			[[ $sec != queue\ * ]] || sec="queue *"
			continue
		fi
		[[ $line =~ ^[#\;]?([A-Za-z0-9_.]+)[[:space:]]*= ]] || continue
		key=${BASH_REMATCH[1]}
		n=$((n + 1))
		if [ "$sec" = xid ] && [[ $key =~ ^[1-9][0-9]{0,2}$ ]]; then
			continue
		fi
		[[ $key != gpus.* ]] || key='gpus.*'
		grep -qxF "$sec $key" "$T/keys" ||
			fail "$1: '$line' is in [$sec], where $2 has no key '$key' (uncommented, it would stop the daemon)"
	done <"$ex"
	log "$1: $n key lines, each in its section"
}
check_example etc/cohortd.conf daemon/controller/ctl_config.c
check_example etc/cohort-agent.conf daemon/agent/agent_config.c

# ---- 5. the daemons' options in their .8 pages ----------------------------
for d in cohortd cohort-agent; do
	"$d" --help >"$T/dhelp" 2>&1 || fail "$d --help failed: $(cat "$T/dhelp")"
	section_text "$M/$d.8" ".SH OPTIONS" >"$T/sec"
	n=0
	for o in $(grep -oE -- '(^|[[:space:]])--?[a-z][a-z-]*' "$T/dhelp" | tr -d ' \t' | sort -u); do
		grep -Eq -- "^\\.(B|BI|BR) .*$o([^a-z-]|\$)" "$T/sec" ||
			fail "$d(8): OPTIONS has no entry for $o (from '$d --help')"
		n=$((n + 1))
	done
	[ "$n" -ge 4 ] || fail "read only $n options from '$d --help': $(cat "$T/dhelp")"
	log "$d(8): the $n options of $d --help"
done
