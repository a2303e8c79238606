#!/bin/bash
# cohort-mux: the CLI's commands share one TLS connection per identity.
# Commands reuse one mux; concurrent commands each get their own replies;
# bad input from one client leaves the mux serving the others; the mux
# goes when idle, when its controller goes, or with the command
# (COHORT_MUX=no); a dead mux's socket is replaced; an unsafe runtime
# directory is left alone for a private connection.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# A runtime directory of the test's own: the muxes in it are ours.
own_runtime_dir
unset COHORT_MUX

C=$T/cluster
cluster_up "$C"
HTTP=$COHORT_HTTP

# mux_pids CERT: the muxes serving that certificate.
mux_pids() {
	pgrep -f -- "cohort-mux .*--cert [^ ]*/$1 .*--listen $RUN/cohort/" || true
}
mux_count() {
	mux_pids "$1" | wc -l
}
metric() {
	curl -fsS "$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

expect_exit 0 cohort jobs
[ "$(mux_count user-alice.crt)" -eq 1 ] || fail "expected one mux for alice, got: $(mux_pids user-alice.crt)"
pid=$(mux_pids user-alice.crt)
conns=$(metric cohort_connections)
for i in 1 2 3 4 5; do
	expect_exit 0 cohort submit --name "seq$i" -- true
	expect_exit 0 cohort show "$(cat "$OUT")"
done
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "the commands did not share mux $pid: $(mux_pids user-alice.crt)"
[ "$(metric cohort_connections)" = "$conns" ] || fail "connections went from $conns to $(metric cohort_connections): commands opened their own"
stat -c %a "$RUN/cohort" | grep -qx 700 || fail "runtime directory is not 700: $(stat -c %a "$RUN/cohort")"
# alice's socket, from her mux's command line.
sock=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^--listen$/{n;p}')
[ -S "$sock" ] || fail "no socket in $RUN/cohort"

# Four submitters at once through the same mux: every reply reaches the
# command that asked (the job with the id it printed has its name).
for w in 1 2 3 4; do
	(for i in $(seq 10); do
		id=$(cohort submit --name "w$w-$i" -- true) || exit 1
		echo "$id w$w-$i"
	done >"$T/ids.$w") &
done
wait || fail "a concurrent submitter failed"
cat "$T/ids".* >"$T/ids"
[ "$(wc -l <"$T/ids")" -eq 40 ] || fail "expected 40 ids, got $(wc -l <"$T/ids")"
[ "$(cut -d' ' -f1 "$T/ids" | sort -u | wc -l)" -eq 40 ] || fail "ids not distinct: $(cut -d' ' -f1 "$T/ids" | sort | uniq -d | head)"
cohort jobs --all --json >"$T/all.json" || fail "cohort jobs --json failed"
while read -r id name; do
	got=$(json_get "$T/all.json" "[j['name'] for j in d['jobs'] if str(j['id']) == '$id'][0]")
	[ "$got" = "$name" ] || fail "job $id is '$got', but the submitter that printed it asked for '$name'"
done <"$T/ids"
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "the mux changed under concurrent use"

# Bad frames from a client: an error to that client, the mux carries on.
raw() {
	"$PYTHON" - "$sock" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(bytes.fromhex(sys.argv[2]))
s.settimeout(5)
got = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
sys.exit(0 if len(got) > 4 else 1)
EOF
}
raw "00000007676172626167650a" || fail "garbage: no error reply before the mux closed"
raw "7fffffff" || fail "oversized frame: no error reply before the mux closed"
# A frame protobuf-c reads but cannot write back readably (field number
# 0 behind a non-minimal tag, found by tests/fuzz): the mux must not pass
# it on, or the controller would close the shared connection.
raw "$(printf '%08x' "$(stat -c %s "$top_srcdir/tests/fuzz/corpus/wire/field0-tag.bin")")$(xxd -p "$top_srcdir/tests/fuzz/corpus/wire/field0-tag.bin" | tr -d '\n')" ||
	fail "field-0 frame: no error reply before the mux closed"
expect_exit 0 cohort jobs
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "bad input from one client replaced the mux"
[ "$(metric cohort_connections)" = "$conns" ] || fail "bad input from one client cost the shared connection"

# A client that sends and never reads: the mux stops reading it once 16
# requests wait, so its memory stays bounded and others are served. (A
# job with a 200 kB argument makes each reply 200 kB: unbounded, the
# mux would hold hundreds of megabytes.)
big=$(head -c 100000 /dev/zero | tr '\0' a)
expect_exit 0 cohort submit --name bulky -- true "$big" "$big"
"$PYTHON" - "$sock" "$T/flood.ready" <<'EOF' &
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.setblocking(False)
sent = 0
for i in range(1, 2001):
    # Envelope { id = i (field 1), list_jobs = { all = true } (field 22) }
    idv = bytearray()
    v = i
    while True:
        b = v & 0x7F
        v >>= 7
        idv.append(b | (0x80 if v else 0))
        if not v:
            break
    body = b"\x08" + bytes(idv) + b"\xb2\x01\x02\x08\x01"
    try:
        s.send(struct.pack(">I", len(body)) + body)
        sent += 1
    except BlockingIOError:
        break
open(sys.argv[2], "w").write(str(sent))
time.sleep(30)
EOF
flood=$!
track_pid "$flood"
wait_for 10 test -s "$T/flood.ready" || fail "the flooding client did not start"
expect_exit 0 cohort jobs
# The controller answers the flood over a few seconds: watch the mux.
max=0
for i in $(seq 40); do
	rss=$(rss_kib "$pid")
	[ "$rss" -le "$max" ] || max=$rss
	sleep 0.1
done
log "mux RSS at most $max KiB under a flood of $(cat "$T/flood.ready") unread requests"
if grep -q __asan_init "$COHORT_BINDIR/cohort-mux"; then
	# ASan's quarantine keeps freed replies: RSS says nothing there.
	log "RSS bound not checked: cohort-mux is built with ASan"
else
	[ "$max" -lt 40960 ] || fail "mux RSS reached $max KiB with a client that does not read its replies"
fi
expect_exit 0 cohort jobs
kill "$flood" 2>/dev/null || true
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "a flooding client replaced the mux"

# A request over the controller's frame limit (4 MiB): refused without
# costing the shared connection.
head -c 5000000 /dev/zero | tr '\0' '#' >"$T/big.sh"
sed -i '1s/^/#!\/bin\/sh\n/' "$T/big.sh"
rc=0
cohort submit "$T/big.sh" >"$OUT" 2>"$ERR" || rc=$?
[ "$rc" -ne 0 ] || fail "a 5 MB script was accepted"
expect_exit 0 cohort jobs
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "an oversized request replaced the mux"
[ "$(metric cohort_connections)" = "$conns" ] || fail "an oversized request cost the shared connection"

# COHORT_MUX=no: a mux of the command's own, gone with it.
expect_exit 0 env COHORT_MUX=no cohort jobs
[ "$(mux_pids user-alice.crt)" = "$pid" ] || fail "COHORT_MUX=no touched the shared mux"
# This cluster's muxes only: other tests run beside this one, with
# COHORT_MUX=no muxes of their own.
# (The CLI hands the mux its certificate's real path.)
rc_dir=$(realpath "$C")
wait_for 5 not pgrep -f -- "cohort-mux .*--cert $rc_dir/.*--fd " || fail "a COHORT_MUX=no mux outlived its command: $(pgrep -af -- "cohort-mux .*--cert $rc_dir/.*--fd ")"
expect_exit 2 env COHORT_MUX=sometimes cohort jobs
stderr_one_line "cohort: " "COHORT_MUX"

# An idle mux goes after its time (bob: a mux of his own).
as_user "$C" bob
expect_exit 0 env COHORT_MUX=1s cohort jobs
bobsock=$(ls "$RUN"/cohort/mux-*.sock | grep -v "$sock")
no_mux() {
	[ "$(mux_count "$1")" -eq 0 ]
}
wait_for 10 no_mux user-bob.crt || fail "bob's mux is still there after 1 s idle"
[ ! -e "$bobsock" ] || fail "the idle mux left its socket $bobsock"
as_user "$C" alice

# A mux killed outright leaves its socket: the next command replaces it.
kill -9 "$pid"
wait_for 5 not kill -0 "$pid" 2>/dev/null || fail "mux $pid survived kill -9"
[ -S "$sock" ] || fail "expected the dead mux's socket to remain"
expect_exit 0 cohort jobs
pid2=$(mux_pids user-alice.crt)
[ -n "$pid2" ] && [ "$pid2" != "$pid" ] || fail "no new mux after the old one died: '$pid2'"

# The controller goes: the mux goes too; after a restart commands work.
count=$(job_count --all)
cohort-local kill "$C" controller >/dev/null 2>&1 || fail "cohort-local kill controller failed"
wait_for 10 not kill -0 "$pid2" 2>/dev/null || fail "mux $pid2 outlived its controller"
[ ! -e "$sock" ] || fail "the mux of a dead controller left its socket"
expect_exit 3 cohort jobs
stderr_one_line "cohort: " "connect|refused"
cohort-local start "$C" controller >/dev/null 2>&1 || fail "cohort-local start controller failed"
wait_for 20 cohort jobs || fail "no answer after the controller restarted"
[ "$(job_count --all)" -eq "$count" ] || fail "job count changed across the restart: $count -> $(job_count --all)"

# A runtime directory open to others is not used: the command says so in
# one line and goes through a private mux, as with COHORT_MUX=no.
BAD=$RUN/badrun
mkdir -p "$BAD/cohort"
chmod 755 "$BAD/cohort"
expect_exit 0 env XDG_RUNTIME_DIR="$BAD" cohort jobs
stderr_one_line "cohort: " "not closed to others.*private connection"
grep -q "JOB\|ID" "$OUT" || fail "no job table from the private connection: $(head -c 300 "$OUT")"
[ -z "$(ls "$BAD/cohort")" ] || fail "something was made in the unsafe directory: $(ls "$BAD/cohort")"
log "ok"
