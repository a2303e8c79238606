#!/bin/bash
# Roles both ways. A "controller" that presents a certificate the cluster
# CA signed but whose role is not controller (a user's, minted with
# serverAuth and the controller's address, as a careless CA could) is
# refused by the CLI (directly and through cohort-mux), by cohort-agent and
# by cohort-simnodes, each saying "server certificate of 127.0.0.1 has
# role 'user', not 'controller'"; a certificate without a role is refused
# the same way. The real controller refuses a client that presents the
# controller's certificate, and will not start with a certificate of
# another role.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the fake controller (a user's
# certificate) is refused, and the controller's certificate as a client.
expect_log_error "cohort-simnodes: warning: node01: (controller )?link down \\(server certificate of 127\\.0\\.0\\.1 has role 'user', not 'controller'\\)"
# Expected in the daemons' logs: The controller's certificate used as a client is refused.
expect_log_error 'cohortd: warning: conn [0-9]+: refused: certificate of controller has role .controller.'

# configure requires openssl: without it here the environment is broken.
command -v openssl >/dev/null || fail "no openssl on PATH"
own_runtime_dir
unset COHORT_MUX

C=$T/cluster
cluster_up "$C" --nodes 1 --no-agents
real_server=$COHORT_SERVER

# mint NAME OU: a leaf signed by the cluster CA that could serve as the
# controller but for its role (OU; empty: no OU at all).
mint() {
	local subj="/O=cohort/OU=$2/CN=$1"
	[ -n "$2" ] || subj="/O=cohort/CN=$1"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-CA "$C/ca.pem" -CAkey "$C/ca.key" -keyout "$T/$1.key" -out "$T/$1.crt" \
		-days 1 -sha256 -subj "$subj" \
		-addext "basicConstraints=critical,CA:FALSE" \
		-addext "keyUsage=critical,digitalSignature" \
		-addext "extendedKeyUsage=serverAuth,clientAuth" \
		-addext "subjectAltName=IP:127.0.0.1" >"$T/mint.log" 2>&1 ||
		fail "cannot mint $1: $(cat "$T/mint.log")"
}
mint alice user
mint norole ""

# fake_controller CERT KEY: a TLS 1.3 server on a free port that asks for
# a client certificate of the cluster CA; its port in $FAKE_PORT.
fake_controller() {
	rm -f "$T/fake.port"
	"$PYTHON" - "$1" "$2" "$C/ca.pem" "$T/fake.port" >"$T/fake.log" 2>&1 <<'EOF' &
import os, socket, ssl, sys
cert, key, ca, portfile = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.minimum_version = ssl.TLSVersion.TLSv1_3
ctx.load_cert_chain(cert, key)
ctx.load_verify_locations(ca)
ctx.verify_mode = ssl.CERT_REQUIRED
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    s, _ = ls.accept()
    s.settimeout(5)
    try:
        t = ctx.wrap_socket(s, server_side=True)
        # A client that accepted us would send its Hello now.
        t.recv(16)
        print("a client accepted this server", flush=True)
        t.close()
    except (ssl.SSLError, OSError) as e:
        print("handshake refused:", e, flush=True)
        s.close()
EOF
	FAKE_PID=$!
	track_pid "$FAKE_PID"
	wait_for 10 test -s "$T/fake.port" || fail "the fake controller did not start: $(cat "$T/fake.log")"
	FAKE_PORT=$(tr -dc 0-9 <"$T/fake.port")
}

ROLE_RE="server certificate of 127\.0\.0\.1 has role 'user', not 'controller'"
fake_controller "$T/alice.crt" "$T/alice.key"
export COHORT_SERVER=127.0.0.1:$FAKE_PORT

# The CLI without the mux, and through it.
expect_exit 3 env COHORT_MUX=no cohort jobs
stderr_one_line "cohort: " "$ROLE_RE"
expect_exit 3 cohort jobs
stderr_one_line "cohort: " "$ROLE_RE"
expect_exit 3 cohort submit -- true
stderr_one_line "cohort: " "$ROLE_RE"

# The agent: node01's own certificate, pointed at the fake.
sed "s/^controller = .*/controller = 127.0.0.1:$FAKE_PORT/" "$C/node01.conf" >"$C/fake-node01.conf"
watch_log "$T/agent.log"
cohort-agent -f -c "$C/fake-node01.conf" >"$T/agent.log" 2>&1 &
AGENT=$!
track_pid "$AGENT"
wait_for 15 grep -q "$ROLE_RE" "$T/agent.log" ||
	fail "the agent did not refuse the fake controller's role: $(tail -n 5 "$T/agent.log")"
grep -q "registered" "$T/agent.log" && fail "the agent registered with the fake controller"
kill "$AGENT"
wait "$AGENT" 2>/dev/null || true

# cohort-simnodes, with certificates it mints from the CA.
SIM=$top_builddir/cohort-simnodes
"$SIM" --server "127.0.0.1:$FAKE_PORT" --ca "$C/ca.pem" --ca-key "$C/ca.key" \
	--nodes 1 --stats 0 >"$T/sim.out" 2>"$T/sim.log" &
watch_log "$T/sim.log"
SIMPID=$!
track_pid "$SIMPID"
wait_for 15 grep -q "$ROLE_RE" "$T/sim.log" ||
	fail "cohort-simnodes did not refuse the fake controller's role: $(tail -n 5 "$T/sim.log")"
grep -q "^ready" "$T/sim.out" && fail "cohort-simnodes got ready against the fake controller"
kill "$SIMPID"
wait "$SIMPID" 2>/dev/null || true
grep -q "a client accepted this server" "$T/fake.log" &&
	fail "some client went on with a user certificate as its server: $(cat "$T/fake.log")"
kill "$FAKE_PID"
wait "$FAKE_PID" 2>/dev/null || true

# A server certificate without a role: refused, with the way out.
fake_controller "$T/norole.crt" "$T/norole.key"
expect_exit 3 env COHORT_MUX=no COHORT_SERVER="127.0.0.1:$FAKE_PORT" cohort jobs
stderr_one_line "cohort: " "server certificate of 127\.0\.0\.1 names no role.*OU=controller"
kill "$FAKE_PID"
wait "$FAKE_PID" 2>/dev/null || true

# The real controller, with the controller's certificate presented by a
# client: refused (it is not a user), and the controller still serves.
export COHORT_SERVER=$real_server
expect_exit 3 env COHORT_MUX=no COHORT_CERT="$C/controller.crt" COHORT_KEY="$C/controller.key" \
	cohort jobs
stderr_one_line "cohort: " "controller.*(denied|refused).*'controller'"
grep -q "role 'controller'" "$C/cohortd.log" ||
	fail "cohortd did not log the refused controller certificate"
expect_exit 0 env COHORT_MUX=no cohort jobs
expect_exit 0 cohort jobs

# cohortd itself will not serve with a certificate of another role (an
# old or hand-made one): every client would refuse it.
B=$T/badctl
mkdir -p "$B"
cat >"$B/cohortd.conf" <<EOF
[controller]
listen = 127.0.0.1:0
database = cohort.db
[tls]
ca = $C/ca.pem
cert = $T/alice.crt
key = $T/alice.key
EOF
expect_exit 1 timeout 10 cohortd -f -c "$B/cohortd.conf"
stderr_one_line_with "certificate $T/alice.crt has role 'user', not 'controller'" "cohort-pki"
exit 0
