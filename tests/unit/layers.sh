#!/bin/sh
# The controller's folders and what each may include (docs/ARCHITECTURE.md,
# "Layers"). Every .c and .h under each folder (a glob: a new file is
# checked without being named here) is run through the preprocessor's -M,
# so a header pulled in two levels down counts as much as a direct one,
# and each project header it lists must match the folder's rule:
#
#   store   lib/, sql/, store/                     (SQLite; the lowest)
#   domain  lib/, daemon/sched/, domain/, and store's public store.h and
#           txq.h; no libevent, OpenSSL, SQLite, protobuf header, no
#           lib/clock.h, and no clock read: `now` comes in with each call
#   repl    lib/, sql/, store/, repl/
#   web     lib/, daemon/sched/, store/, domain/, web/ (never rpc/, repl/
#           or the composition root: ctl_figures.c hands it the figures)
#   rpc     lib/, proto/, daemon/sched/, store/, domain/, repl/, rpc/
#   root    anything (the composition root: main.c, driver.c, ...)
#
# so an include from a lower folder to a higher one (store → domain,
# domain → rpc, web → driver.h) fails. The check proves it can see a
# violation of each kind before it is believed.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
# Physical paths, so that -M's output (which keeps the -I path as given:
# build/.. in a build tree) strips to paths from the top.
top_srcdir=$(cd "$top_srcdir" && pwd -P) || exit 1
top_builddir=$(cd "$top_builddir" && pwd -P) || exit 1
# The deeper of the two first: a build tree is often inside the source.
if [ ${#top_builddir} -ge ${#top_srcdir} ]; then
	first=$top_builddir second=$top_srcdir
else
	first=$top_srcdir second=$top_builddir
fi
CC=${CC:-cc}
ctl=daemon/controller
tmp=${TMPDIR:-/tmp}/layers.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT

# The rule of a folder: an ERE the project headers it includes must match.
rule() {
	case $1 in
	store)	echo "^(lib/|sql/|$ctl/store/)" ;;
	domain)	echo "^(lib/|daemon/sched/|$ctl/domain/|$ctl/store/(store|txq)\.h$)" ;;
	repl)	echo "^(lib/|sql/|$ctl/(store|repl)/)" ;;
	web)	echo "^(lib/|daemon/sched/|$ctl/(store|domain|web)/)" ;;
	rpc)	echo "^(lib/|proto/|daemon/sched/|$ctl/(store|domain|repl|rpc)/)" ;;
	root)	echo "^(lib/|proto/|sql/|client/|daemon/sched/|$ctl/)" ;;
	*)	return 1 ;;
	esac
}
# System headers the domain may not reach, and lib's clock.
impure='(event2/|openssl/|sqlite3\.h|protobuf-c/|\.pb-c\.h|lib/clock\.h)'

# deps FILE: every header FILE includes, one a line, paths under the
# source or build tree made relative to its top.
deps() {
	out=$($CC -M -x c -D_GNU_SOURCE -I"$top_srcdir" -I"$top_builddir" \
	    "$1" 2>&1) || { echo "FAIL: $CC -M $1: $out" >&2; return 1; }
	printf '%s\n' "$out" | sed '1s/^[^:]*://' | tr ' \\' '\n\n' |
	    sed -e '/^$/d' -e "s|^$first/||" -e "s|^$second/||" |
	    sed 1d | sort -u
}

# check LAYER FILE: 0 if FILE keeps LAYER's rule, else 1 with the reasons.
check() {
	re=$(rule "$1") || { echo "FAIL: $2: $1 is a folder without a rule"; return 1; }
	d=$(deps "$2") || return 1
	n=$(printf '%s\n' "$d" | grep -c .)
	nincl=$((nincl + n))
	rc=0
	name=${2#"$top_srcdir/"}
	bad=$(printf '%s\n' "$d" | grep -v '^/' | grep -v '^config\.h$' |
	    grep -vE "$re")
	[ -z "$bad" ] || { echo "FAIL: $name ($1) includes $(echo $bad)"; rc=1; }
	[ "$1" = domain ] || return $rc
	bad=$(printf '%s\n' "$d" | grep -E "$impure")
	[ -z "$bad" ] || { echo "FAIL: $name (domain) includes $(echo $bad)"; rc=1; }
	if grep -nE '\b(clock_gettime|gettimeofday|time)\(|clock_now_ms|clock_mono_us' "$2"; then
		echo "FAIL: $name (domain) reads a clock (now comes in with each call)"
		rc=1
	fi
	return $rc
}

status=0
nfiles=0
nincl=0
counts=
for f in "$top_srcdir/$ctl"/*.[ch] "$top_srcdir/$ctl"/*/*.[ch]; do
	[ -f "$f" ] || continue
	rel=${f#"$top_srcdir/"}
	case $rel in
	$ctl/*/*)	layer=${rel#"$ctl/"}; layer=${layer%%/*} ;;
	*)		layer=root ;;
	esac
	check "$layer" "$f" || status=1
	nfiles=$((nfiles + 1))
	counts="$counts $layer"
done

# The check sees each kind of violation: a domain file through which the
# protobuf header would come in (rpc/agentcmd.c), a lower folder including
# a higher one (store → domain: domain/jobs.c under store's rule), web
# reaching rpc/ and the driver, and a clock read in the domain.
nincl0=$nincl
selftest() {
	if check "$1" "$2" >/dev/null; then
		echo "FAIL: the check does not see $3"; status=1
	fi
}
selftest domain "$top_srcdir/$ctl/rpc/agentcmd.c" "agentcmd.c's protobuf header under the domain's rule"
selftest store "$top_srcdir/$ctl/domain/jobs.c" "store including the domain"
printf '#include "%s"\n' "$ctl/rpc/server.h" >"$tmp/web_rpc.c"
selftest web "$tmp/web_rpc.c" "web including rpc/server.h"
printf '#include "%s"\n' "$ctl/driver.h" >"$tmp/web_driver.c"
selftest web "$tmp/web_driver.c" "web including driver.h"
printf 'long f(void);\nlong f(void) { return clock_now_ms(); }\n' >"$tmp/clock.c"
selftest domain "$tmp/clock.c" "a clock read in the domain"
nincl=$nincl0

summary=$(printf '%s\n' $counts | sort | uniq -c | awk '{ printf "%s%s %d", sep, $2, $1; sep = ", " }')
if [ $status -eq 0 ]; then
	echo "PASS: $nfiles files under $ctl ($summary), $nincl header references, each within its folder's rule; 5 planted violations seen"
else
	echo "FAIL: $nfiles files under $ctl ($summary), $nincl header references checked"
fi
exit $status
