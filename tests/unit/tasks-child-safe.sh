#!/bin/sh
# daemon/agent/tasks_child.c runs between fork and exec, so it may call
# only async-signal-safe functions: fail when its object uses any
# external symbol that tests/unit/tasks_child.allow does not list. As a
# control, the same check must reject tasks_prep.o, which allocates and
# formats; a checker that passes it would pass anything.
#
# Run by make check from the build directory (srcdir set); by hand:
#   top_builddir=build sh tests/unit/tasks-child-safe.sh
set -u

top_srcdir=${top_srcdir:-${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
top_builddir=${top_builddir:-$PWD}
NM=${NM:-nm}
allow=$top_srcdir/tests/unit/tasks_child.allow
objdir=$top_builddir/daemon/agent
child=${TASKS_CHILD_OBJ:-$objdir/libagent_a-tasks_child.o}
control=$objdir/libagent_a-tasks_prep.o

if ! command -v "$NM" >/dev/null 2>&1; then
	echo "SKIP: no $NM"
	exit 77
fi
for f in "$allow" "$child" "$control"; do
	if [ ! -f "$f" ]; then
		echo "FAIL: $f is missing (build first)"
		exit 99
	fi
done

# The symbols of object $1 that the allow-list does not cover, one a
# line; exits non-zero when nm cannot read the object.
unlisted() {
	syms=$("$NM" -u "$1") || return 2
	echo "$syms" | awk -v allow="$allow" '
		BEGIN {
			while ((getline line < allow) > 0) {
				sub(/#.*/, "", line)
				gsub(/[ \t]/, "", line)
				if (line == "")
					continue
				if (line ~ /\*$/)
					prefix[substr(line, 1, length(line) - 1)] = 1
				else
					exact[line] = 1
			}
		}
		NF > 0 {
			s = $NF
			sub(/@.*/, "", s)	# a symbol version, if any
			if (s in exact)
				next
			for (p in prefix)
				if (substr(s, 1, length(p)) == p)
					next
			print s
		}'
}

rc=0
if ! bad=$(unlisted "$child"); then
	echo "FAIL: $NM -u $child failed"
	exit 99
fi
if [ -n "$bad" ]; then
	echo "FAIL: daemon/agent/tasks_child.c calls what is not async-signal-safe"
	echo "(or not yet on tests/unit/tasks_child.allow):"
	echo "$bad" | sed 's/^/  /'
	rc=1
else
	echo "ok: every external symbol of tasks_child.o is on the allow-list"
	"$NM" -u "$child" | awk '{ printf " %s", $NF } END { print "" }'
fi

if ! bad=$(unlisted "$control"); then
	echo "FAIL: $NM -u $control failed"
	exit 99
fi
if [ -z "$bad" ]; then
	echo "FAIL: the check passes tasks_prep.o too, which allocates: it checks nothing"
	rc=1
else
	echo "ok: the check rejects tasks_prep.o ($(echo "$bad" | wc -l) symbols, e.g. $(echo "$bad" | grep -m1 -x 'calloc\|strdup\|asprintf' || echo "$bad" | head -1))"
fi
exit $rc
