#!/bin/bash
# Address lists: COHORT_SERVER and the agent's controller key
# take the replicas of a replicated controller, and every client finds
# the leader among them. Against one real controller:
#  - the CLI with a dead address first reaches the live one, through the
#    shared mux and with COHORT_MUX=off;
#  - a fake follower (TLS with the controller's certificate, answering
#    hello with ERROR_NOT_LEADER naming the real controller) sends the CLI
#    and an agent there; one that knows no leader fails with exit 3;
#  - a leader that steps down under cohort-mux (a fake that answers hello,
#    then the request with ERROR_NOT_LEADER): a cancel fails, exit 3, and
#    is not sent again; a read, and a submit (with its idempotency key),
#    is sent once more through a new mux, which reaches the leader;
#  - every address dead: one line naming what each said, exit 3;
#  - an agent with controller = DEAD, REAL registers;
#  - a bad entry is refused (exit 2) naming the entry;
#  - cohort admin members checks its arguments; one controller refuses.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

own_runtime_dir
unset COHORT_MUX
C=$T/cluster
cluster_up "$C" --nodes 2 --no-agents
REAL=$COHORT_SERVER
case "$REAL" in 127.0.0.1:[0-9]*) ;; *) fail "unexpected COHORT_SERVER '$REAL'" ;; esac
RPORT=${REAL#127.0.0.1:}

# A port nobody listens on: bound, then closed.
DEAD=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# fake_follower PORTFILE LEADER: a replica that is not the leader; LEADER
# "" names none (an election). Counts its hellos in PORTFILE.hellos.
cat >"$T/follower.py" <<'PY'
# follower.py PORTFILE LEADER DIR [stepdown]: a replica that is not the
# leader: hello is answered with ERROR_NOT_LEADER naming LEADER ("":
# none), then the connection closed. With "stepdown", the first
# connection is a leader's (hello answered with a HelloReply) that steps
# down at the first request (answered with ERROR_NOT_LEADER); after that
# it is a follower. Counts hellos and requests in PORTFILE.hellos and
# PORTFILE.requests.
import os, socket, ssl, struct, sys
portfile, leader, d = sys.argv[1], sys.argv[2], sys.argv[3]
stepdown = len(sys.argv) > 4 and sys.argv[4] == "stepdown"
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.minimum_version = ssl.TLSVersion.TLSv1_3
ctx.load_cert_chain(d + "/controller.crt", d + "/controller.key")
ctx.load_verify_locations(d + "/ca.pem")
ctx.verify_mode = ssl.CERT_REQUIRED
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
open(portfile + ".tmp", "w").write(str(ls.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])
def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data
def uint(num, v):
    return varint(num << 3) + varint(v)
def read(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b
def frame(c):
    n = struct.unpack(">I", read(c, 4))[0]
    body = read(c, n)
    # Envelope.id: field 1, a varint, first.
    assert body[0] == 0x08
    i, shift, rid = 1, 0, 0
    while True:
        rid |= (body[i] & 0x7f) << shift
        shift += 7
        i += 1
        if not body[i - 1] & 0x80:
            return rid
def send(c, rid, num, msg):
    env = uint(1, rid) + field(num, msg)
    c.sendall(struct.pack(">I", len(env)) + env)
def not_leader(c, rid):
    err = uint(1, 11) + field(2, b"not the leader")
    if leader:
        err += field(3, leader.encode())
    send(c, rid, 2, err)
count = {"hellos": 0, "requests": 0}
def bump(k):
    count[k] += 1
    open(portfile + "." + k, "w").write(str(count[k]))
while True:
    raw, _ = ls.accept()
    try:
        c = ctx.wrap_socket(raw, server_side=True)
        rid = frame(c)
        bump("hellos")
        if stepdown:
            stepdown = False
            send(c, rid, 11, uint(1, 1) + uint(2, 0) + field(4, b"alice") +
                 field(5, b"user"))
            rid = frame(c)
            bump("requests")
        not_leader(c, rid)
        c.close()
    except Exception as e:
        print(e, flush=True)
        raw.close()
PY
fake_follower() {
	"$PYTHON" "$T/follower.py" "$1" "$2" "$C" ${3:+"$3"} >>"$T/follower.log" 2>&1 &
	track_pid $!
	wait_for 10 test -s "$1" || fail "the fake follower wrote no port: $(cat "$T/follower.log")"
}
fake_follower "$T/fake1.port" "$REAL"
FAKE=$(cat "$T/fake1.port")
fake_follower "$T/fake2.port" ""
LOST=$(cat "$T/fake2.port")
hellos() {
	cat "$1.hellos" 2>/dev/null || echo 0
}

# ---- the CLI, with and without the mux --------------------------------
for mux in off 60s; do
	export COHORT_MUX=$mux
	export COHORT_SERVER="127.0.0.1:$DEAD,127.0.0.1:$RPORT"
	expect_exit 0 cohort jobs
	expect_exit 0 cohort submit --name "list-$mux" -- true
	id=$(cat "$OUT")
	expect_exit 0 cohort show "$id"
	# Spaces around entries are fine.
	export COHORT_SERVER=" 127.0.0.1:$DEAD , 127.0.0.1:$RPORT "
	expect_exit 0 cohort show "$id"
	# Through the fake follower, listed first, to the leader it names.
	export COHORT_SERVER="127.0.0.1:$FAKE,127.0.0.1:$DEAD"
	before=$(hellos "$T/fake1.port")
	expect_exit 0 cohort show "$id"
	[ "$(hellos "$T/fake1.port")" -gt "$before" ] || fail "COHORT_MUX=$mux: the fake follower was never asked"
	# The flag takes a list too.
	expect_exit 0 cohort --server "127.0.0.1:$DEAD,$REAL" jobs
done
# A leader that steps down under the mux while a cancel waits: the
# cancel fails (exit 3) and is not sent again, to it or to anyone (it
# may have been carried out); the mux goes, and the next command's new
# mux follows the former leader, now a follower, to the real controller.
held=$(COHORT_SERVER=$REAL job_submit --hold --name held -- true)
fake_follower "$T/fake3.port" "$REAL" stepdown
STEP=$(cat "$T/fake3.port")
export COHORT_SERVER="127.0.0.1:$STEP,127.0.0.1:$DEAD"
expect_exit 3 cohort cancel --name held
stderr_one_line "cohort: " "controller 127\.0\.0\.1:$STEP is no longer the leader \(the leader is $REAL\); run the command again"
[ "$(cat "$T/fake3.port.requests")" -eq 1 ] || fail "the stepped-down leader got $(cat "$T/fake3.port.requests") requests"
[ "$(COHORT_SERVER=$REAL job_state "$held")" = PENDING ] || fail "the cancel was sent again elsewhere: job $held is $(COHORT_SERVER=$REAL job_state "$held")"
wait_for 5 not pgrep -f -- "cohort-mux --server 127.0.0.1:$STEP,127.0.0.1:$DEAD " ||
	fail "the mux of the stepped-down leader is still there: $(pgrep -af cohort-mux)"
expect_exit 0 cohort submit --name found -- true
[ "$(cat "$T/fake3.port.hellos")" -eq 2 ] || fail "the new mux did not try the former leader first ($(cat "$T/fake3.port.hellos") hellos)"
# A submit carries an idempotency key: in flight when its leader steps
# down, it is sent once more, by itself, and makes one job.
fake_follower "$T/fake5.port" "$REAL" stepdown
export COHORT_SERVER="127.0.0.1:$(cat "$T/fake5.port"),127.0.0.1:$DEAD"
expect_exit 0 cohort submit --name resent -- true
[ "$(cat "$T/fake5.port.requests")" -eq 1 ] || fail "the stepped-down leader got $(cat "$T/fake5.port.requests") requests"
[ "$(COHORT_SERVER=$REAL job_count --all --name resent)" -eq 1 ] || fail "the resent submit made $(COHORT_SERVER=$REAL job_count --all --name resent) jobs"
rid=$(cat "$OUT")
COHORT_SERVER=$REAL job_show "$rid"
[ "$(json_get "$T/job-$rid.json" 'd["name"]')" = resent ] || fail "the resent submit answered job $rid, not its own"
# A read in flight is sent once more, on a new mux, by itself.
fake_follower "$T/fake4.port" "$REAL" stepdown
STEP2=$(cat "$T/fake4.port")
export COHORT_SERVER="127.0.0.1:$STEP2,127.0.0.1:$DEAD"
expect_exit 0 cohort show "$id"
{ [ "$(cat "$T/fake4.port.requests")" -eq 1 ] && [ "$(cat "$T/fake4.port.hellos")" -eq 2 ]; } ||
	fail "the read was not sent again through a new mux: $(cat "$T/fake4.port.requests") requests, $(cat "$T/fake4.port.hellos") hellos"
# The mux serving the list has it, whole, on its command line.
pgrep -f -- "cohort-mux --server 127.0.0.1:$FAKE,127.0.0.1:$DEAD " >/dev/null ||
	fail "no mux for the list: $(pgrep -af cohort-mux)"
export COHORT_MUX=off

# A follower that knows no leader, alone: its words, exit 3.
export COHORT_SERVER="127.0.0.1:$LOST"
expect_exit 3 cohort jobs
stderr_one_line "cohort: " "is not the leader and knows no leader"

# ---- every address dead: what each said, within the deadline ----------
# (cohort-mux itself, whose --timeout-ms the CLI does not expose.)
CERTS=(--cert "$COHORT_CERT" --key "$COHORT_KEY" --ca "$COHORT_CA")
start=$(_now_us)
rc=0
cohort-mux --server "127.0.0.1:$DEAD,127.0.0.1:$LOST" "${CERTS[@]}" \
	--timeout-ms 5000 --ready-fd 3 --fd 4 3>"$T/verdict" 4</dev/null || rc=$?
took=$((($(_now_us) - start) / 1000))
[ "$rc" -eq 1 ] || fail "cohort-mux with no leader exited $rc"
# The follower's words; or, when the deadline fell in the middle of its
# last handshake (a loaded machine: the fake is Python), that it did not
# answer in time; or, when it fell before the last round's connect (the
# back-off between rounds ran into it; seen in CI under ASan), that the
# connect timed out. Each names the address and why.
grep -Eq "^E9 no leader among 127\.0\.0\.1:$DEAD, 127\.0\.0\.1:$LOST \(127\.0\.0\.1:$DEAD: connection refused; 127\.0\.0\.1:$LOST: (not the leader, no leader known|controller 127\.0\.0\.1:$LOST did not answer within [0-9]+ s|timed out)\)$" "$T/verdict" ||
	fail "unexpected verdict: $(cat "$T/verdict")"
# It tried for its whole deadline (a slow machine only makes that
# longer); how much longer is reported, not compared.
[ "$took" -ge 4900 ] || fail "cohort-mux gave up after $took ms, before its 5000 ms deadline"
log "cohort-mux gave up after $took ms (deadline 5000 ms)"
[ "$(hellos "$T/fake2.port")" -ge 3 ] || fail "no rounds with back-off: the no-leader follower was asked $(hellos "$T/fake2.port") times"

# ---- bad lists: refused before any connection --------------------------
export COHORT_SERVER="$REAL,bogus"
expect_exit 2 cohort jobs
stderr_one_line "cohort: " "bad controller address: address 2 \('bogus'\): 'bogus': missing port"
export COHORT_SERVER="$REAL,,$REAL"
expect_exit 2 cohort jobs
stderr_one_line "cohort: " "address 2 of .* is empty"
expect_exit 2 cohort --server "$REAL,$REAL" jobs
stderr_one_line "cohort: " "address 2 \('$REAL'\) repeats address 1"
export COHORT_SERVER=$REAL

# ---- cohort admin members ------------------------------------------------
# Checked before sending: exit 2, one line naming the bad argument.
expect_exit 2 cohort admin members add 0 127.0.0.1:7000
stderr_one_line "cohort: " "admin members add: ID '0' is not a positive integer"
expect_exit 2 cohort admin members add 2 nohost
stderr_one_line "cohort: " "admin members add: bad address: 'nohost': missing port"
expect_exit 2 cohort admin members add 2 127.0.0.1:0
stderr_one_line "cohort: " "admin members add: bad address: "
expect_exit 2 cohort admin members add 2 127.0.0.1:7000 raft
stderr_one_line "cohort: " "admin members add: bad Raft address: 'raft': missing port"
expect_exit 2 cohort admin members add 2 127.0.0.1:7000 127.0.0.1:7000
stderr_one_line "cohort: " "the Raft address must differ"
expect_exit 2 cohort admin members add 2 127.0.0.1:65535
stderr_one_line "cohort: " "port 65535 has no next port"
expect_exit 2 cohort admin members remove -- x1
stderr_one_line "cohort: " "admin members remove: ID 'x1' is not a positive integer"
expect_exit 2 cohort admin members transfer
stderr_one_line "cohort: " "admin members transfer: takes one argument, ID"
expect_exit 2 cohort admin members frob
stderr_one_line "cohort: " "unknown operation 'frob'"
expect_exit 2 cohort admin nodes
stderr_one_line "cohort: " "admin: unknown subcommand 'nodes'"
# One controller, not replicated: refused by it (exit 1), its words
# printed, through the mux too.
as_user "$C" admin
for mux in off 60s; do
	COHORT_MUX=$mux expect_exit 1 cohort admin members
	stderr_one_line "cohort: admin members list: this controller is not replicated"
	COHORT_MUX=$mux expect_exit 1 cohort admin members list --json
	[ ! -s "$OUT" ] || fail "admin members --json printed on a refusal: $(cat "$OUT")"
done
as_user "$C" alice
# The completion offers the subcommand and the operations.
# shellcheck source=../../completion/cohort
. "$top_srcdir/completion/cohort"
COMP_WORDS=(cohort admin members "")
COMP_CWORD=3
_cohort cohort "" members
[ "${COMPREPLY[*]}" = "list add remove transfer" ] || fail "completion of 'cohort admin members': ${COMPREPLY[*]}"

# ---- agents --------------------------------------------------------------
# node01: a dead address first. node02: the fake follower, which names
# the real controller, not in node02's list (logged, followed).
sed -i "s/^controller = .*/controller = 127.0.0.1:$DEAD, 127.0.0.1:$RPORT/" "$C/node01.conf"
sed -i "s/^controller = .*/controller = 127.0.0.1:$FAKE,127.0.0.1:$DEAD/" "$C/node02.conf"
cohort-local start "$C" node01 >"$T/start.out" 2>&1 || fail "cohort-local start node01: $(cat "$T/start.out")"
cohort-local start "$C" node02 >"$T/start.out" 2>&1 || fail "cohort-local start node02: $(cat "$T/start.out")"
wait_node 20 node01 'n["state"] == "UP"'
wait_node 20 node02 'n["state"] == "UP"'
grep -q "controller link down (127.0.0.1:$DEAD: " "$C/node01.log" ||
	fail "node01 did not say it tried 127.0.0.1:$DEAD: $(cat "$C/node01.log")"
grep -q "names $REAL as the leader, which is not in the configured list" "$C/node02.log" ||
	fail "node02 did not log the redirect: $(cat "$C/node02.log")"
grep -q "registered with the controller ($REAL)" "$C/node02.log" ||
	fail "node02 did not register with $REAL: $(cat "$C/node02.log")"
# A bad entry stops the agent at start, naming it.
sed -i "s/^controller = .*/controller = 127.0.0.1:$RPORT, nope/" "$C/node01.conf"
expect_exit 1 timeout 10 cohort-agent -f -c "$C/node01.conf"
stderr_has "controller: address 2 \('nope'\): 'nope': missing port"
log "lists: CLI (mux and not), redirect, no leader in ${took} ms, agents registered"
