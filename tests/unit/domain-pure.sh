#!/bin/sh
# The controller's domain files include no libevent, OpenSSL, SQLite or
# protobuf header, directly or through the headers they include, and read
# no clock (docs/ARCHITECTURE.md, "Folders"): the preprocessor's own list of
# each file's headers is checked, so a header pulled in two levels down
# is caught too.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
CC=${CC:-cc}
dir=$top_srcdir/daemon/controller
domain="jobs nodes cluster cluster_suspect suspect gang recovery preemption placement reports quota queues queues_share queues_report jobs_control jobs_authz jobs_account jobs_retention jobs_array jobs_depend gates feasible steps steps_layout goodput mail straggler alloc"
bad=0
for f in $domain; do
	src=$dir/$f.c
	[ -f "$src" ] || { echo "FAIL: $src is missing"; bad=1; continue; }
	deps=$($CC -M -D_GNU_SOURCE -I"$top_srcdir" -I"$top_builddir" "$src" 2>&1) || {
		echo "FAIL: $CC -M $src: $deps"; bad=1; continue; }
	hit=$(printf '%s\n' "$deps" | tr ' \\' '\n\n' |
		grep -E '(event2/|openssl/|sqlite3\.h|protobuf-c/|\.pb-c\.h|lib/clock\.h)' | sort -u)
	if [ -n "$hit" ]; then
		echo "FAIL: $f.c includes $(echo $hit)"
		bad=1
	fi
	# Headers from the system that -MM leaves out: the direct ones.
	if grep -nE '^#include <(event2|openssl|sqlite3|protobuf-c)' "$src"; then
		echo "FAIL: $f.c includes one of those system headers"
		bad=1
	fi
	if grep -nE '\b(clock_gettime|gettimeofday|time)\(|clock_now_ms|clock_mono_us' "$src"; then
		echo "FAIL: $f.c reads a clock (now comes in with each call)"
		bad=1
	fi
done
# The check itself must see a violation: the event layer has one.
$CC -M -D_GNU_SOURCE -I"$top_srcdir" -I"$top_builddir" "$dir/agentcmd.c" 2>/dev/null |
	grep -q 'pb-c\.h' || { echo "FAIL: the check does not see agentcmd.c's protobuf header"; bad=1; }
[ $bad -eq 0 ] && echo "PASS: $domain include no libevent/OpenSSL/SQLite/protobuf header and read no clock"
exit $bad
