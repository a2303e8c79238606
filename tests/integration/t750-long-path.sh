#!/bin/bash
# The CLI does not depend on where it runs: a cluster and its CLI under a
# directory far longer than a Unix socket path may be (108 bytes), with
# the runtime directory there too, work; the command says once on stderr
# that it is not sharing cohort-mux and goes through a private one. A
# runtime directory it cannot trust (open to others, in a parent others
# may write, another user's, a socket there that is not ours or that
# another user serves) is left alone the same way, never used, never an
# error; an XDG_RUNTIME_DIR of another user's gives way to /tmp/cohort-UID.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
unset COHORT_MUX

# $T/long-path-segment-01/.../ until the path passes 160 characters.
L=$T
i=0
while [ "${#L}" -le 160 ]; do
	i=$((i + 1))
	L=$L/$(printf 'a-deliberately-long-directory-name-%02d' "$i")
done
mkdir -p "$L/run"
chmod 755 "$L"
chmod 700 "$L/run"
export XDG_RUNTIME_DIR=$L/run
log "cluster under ${#L}-character $L"

# Everything from there: the cluster's files, its agent's spool, the job.
cd "$L"
cluster_up "$L/cluster" --nodes 1 --gpus 2
expect_exit 0 cohort jobs
stderr_one_line "cohort: " "not sharing cohort-mux: runtime directory .* too long a path for a Unix socket.*; using a private connection"
[ ! -e "$L/run/cohort" ] || fail "a runtime directory too long to use was made: $(ls -la "$L/run/cohort")"
not pgrep -f -- "cohort-mux .*--listen $L" >/dev/null || fail "a mux listens under the long directory"

mkdir -p "$L/work" && chmod 1777 "$L/work" || fail "cannot create $L/work"
work=$L/work
id=$(job_submit --workdir "$work" --name long -- sh -c 'echo hello from $COHORT_JOB_ID')
stderr_one_line "cohort: " "too long a path for a Unix socket"
# A command that connects more than once (wait, then logs) still says it
# once.
expect_exit 0 cohort wait "$id" --timeout 20
[ "$(grep -c 'not sharing cohort-mux' "$ERR")" -eq 1 ] || fail "cohort wait said it $(grep -c 'not sharing cohort-mux' "$ERR") times: $(cat "$ERR")"
wait_state 10 "$id" COMPLETED
expect_exit 0 cohort logs "$id"
grep -qx "hello from $id" "$OUT" || fail "job output: $(cat "$OUT")"
# Asked for a private mux: nothing to say.
expect_exit 0 env COHORT_MUX=no cohort jobs
[ ! -s "$ERR" ] || fail "COHORT_MUX=no said something: $(cat "$ERR")"
wait_for 5 not pgrep -f -- "cohort-mux .*--cert $L/cluster/.*--fd " ||
	fail "a private mux outlived its command"

# From here on a short runtime directory (under /tmp).
cd "$T"
own_runtime_dir

# A runtime directory in a parent anyone may rename things in.
OPEN=$RUN/open
mkdir -m 777 "$OPEN"
chmod 777 "$OPEN"
expect_exit 0 env XDG_RUNTIME_DIR="$OPEN" cohort jobs
stderr_one_line "cohort: " "XDG_RUNTIME_DIR $OPEN is open to others; using a private connection"
[ ! -e "$OPEN/cohort" ] || fail "a runtime directory was made in $OPEN"

# A runtime directory open to others.
mkdir -p "$RUN/wide/cohort"
chmod 700 "$RUN/wide"
chmod 755 "$RUN/wide/cohort"
expect_exit 0 env XDG_RUNTIME_DIR="$RUN/wide" cohort jobs
stderr_one_line "cohort: " "is not closed to others \(mode 755\); using a private connection"
[ -z "$(ls -A "$RUN/wide/cohort")" ] || fail "something was made in the unsafe directory"

# The shared mux, as it should be: it says nothing.
expect_exit 0 cohort jobs
[ ! -s "$ERR" ] || fail "the shared mux said something: $(cat "$ERR")"
mpid=$(pgrep -f -- "cohort-mux .*--listen $RUN/cohort/") || fail "no shared mux in $RUN/cohort"
sock=$(tr '\0' '\n' <"/proc/$mpid/cmdline" | sed -n '/^--listen$/{n;p}')
kill -9 "$mpid"
wait_for 5 proc_gone "$mpid" || fail "mux $mpid survived kill -9"

# Not a socket where the mux's should be: left alone.
rm -f "$sock"
echo squat >"$sock"
expect_exit 0 cohort jobs
stderr_one_line "cohort: " "$sock is not a socket of ours"
[ "$(cat "$sock")" = squat ] || fail "the file at the mux's path was replaced"
rm -f "$sock"

# A spawn lock the file system refuses (flock: ENOLCK, as on NFS without
# locks) is the directory's fault: a private mux. A pipe the CLI cannot
# make is not: a private mux would meet it too, so it is the error, with
# no word about sharing. Both faked with an LD_PRELOAD shim.
cat >"$T/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
int flock(int fd, int op) {
	int (*real)(int, int) = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
	if (getenv("SHIM_FLOCK") != NULL) { errno = ENOLCK; return -1; }
	return real(fd, op);
}
int pipe2(int fds[2], int flags) {
	int (*real)(int *, int) = (int (*)(int *, int))dlsym(RTLD_NEXT, "pipe2");
	if (getenv("SHIM_PIPE") != NULL) { errno = EMFILE; return -1; }
	return real(fds, flags);
}
EOF
if ldd "$(command -v cohort)" 2>/dev/null | grep -q 'lib[at]san'; then
	log "SKIP (sanitizer build: LD_PRELOAD shim): spawn.lock and pipe failures"
elif ! "${CC:-cc}" -shared -fPIC -o "$T/shim.so" "$T/shim.c" -ldl 2>"$T/shim.err"; then
	log "SKIP (cannot build the shim: $(head -c 200 "$T/shim.err")): spawn.lock and pipe failures"
else
	expect_exit 0 env SHIM_FLOCK=1 LD_PRELOAD="$T/shim.so" cohort jobs
	stderr_one_line "cohort: " "not sharing cohort-mux: $RUN/cohort/spawn.lock: No locks available; using a private connection"
	grep -q "JOBID" "$OUT" || fail "no job table through the private mux: $(head -c 300 "$OUT")"
	expect_exit 3 env SHIM_PIPE=1 LD_PRELOAD="$T/shim.so" cohort jobs
	stderr_one_line "cohort: " "^cohort: pipe: Too many open files$"
fi

if [ "$(id -u)" -ne 0 ]; then
	log "SKIP (not root): runtime directories and sockets of another user"
	log "ok"
	exit 0
fi
nobody=$(id -u nobody)

# Another user's runtime directory.
mkdir -p "$RUN/theirs/cohort"
chmod 700 "$RUN/theirs" "$RUN/theirs/cohort"
chown nobody "$RUN/theirs/cohort"
expect_exit 0 env XDG_RUNTIME_DIR="$RUN/theirs" cohort jobs
stderr_one_line "cohort: " "belongs to uid $nobody, not to us; using a private connection"
[ -z "$(ls -A "$RUN/theirs/cohort")" ] || fail "something was made in another user's directory"

# An XDG_RUNTIME_DIR that is another user's (su keeps the caller's):
# said in its own words, and the shared mux goes to /tmp/cohort-UID.
mkdir -p "$RUN/bobs"
chmod 700 "$RUN/bobs"
chown nobody "$RUN/bobs"
expect_exit 0 env XDG_RUNTIME_DIR="$RUN/bobs" cohort jobs
stderr_one_line "cohort: " "^cohort: XDG_RUNTIME_DIR $RUN/bobs belongs to uid $nobody, not us; sharing cohort-mux in /tmp/cohort-$(id -u) instead$"
[ -z "$(ls -A "$RUN/bobs")" ] || fail "something was made in another user's XDG_RUNTIME_DIR"
tmux=$(pgrep -f -- "cohort-mux .*--cert $L/cluster/.*--listen /tmp/cohort-$(id -u)/") ||
	fail "no shared mux in /tmp/cohort-$(id -u)"
track_pid "$tmux"
expect_exit 0 env XDG_RUNTIME_DIR="$RUN/bobs" cohort jobs
stderr_one_line "cohort: " "sharing cohort-mux in /tmp/cohort-$(id -u) instead"
[ "$(pgrep -f -- "cohort-mux .*--cert $L/cluster/.*--listen /tmp/cohort-$(id -u)/")" = "$tmux" ] ||
	fail "the second command did not share mux $tmux"
kill "$tmux"

# Another user's socket at the mux's path: not connected to, not removed.
"$PYTHON" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock"
chown nobody "$sock"
expect_exit 0 cohort jobs
stderr_one_line "cohort: " "$sock is not a socket of ours \(uid $nobody\)"
[ -S "$sock" ] || fail "another user's socket was removed"
rm -f "$sock"

# A socket of ours that another user's process serves (bound, then
# listened on as nobody): it could answer in the controller's name.
"$PYTHON" - "$sock" "$nobody" "$T/squat.ready" <<'EOF' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
ready = open(sys.argv[3], "w")
os.setuid(int(sys.argv[2]))
s.listen(8)
ready.close()
conns = []
while True:
    conns.append(s.accept()[0])
EOF
squat=$!
track_pid "$squat"
wait_for 10 test -e "$T/squat.ready" || fail "the squatting listener did not start"
expect_exit 0 cohort jobs
stderr_one_line "cohort: " "$sock is served by uid $nobody \(pid [0-9]+\), not by us; using a private connection"
kill "$squat" 2>/dev/null || true
log "ok"
