#!/bin/bash
# Authentication and identity: certificates from another CA, a controller
# name that does not match, no client certificate, and agent certificates
# acting as users are all refused, with one clear line from the CLI.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C"
port=${COHORT_SERVER##*:}
expect_exit 0 cohort submit --name baseline -- true
before=$(job_count --all)

# A second, unrelated PKI with the same names.
cohort-pki "$T/other" --controller 127.0.0.1 --agents node01 --users alice >/dev/null ||
	fail "cohort-pki for the second CA failed"

# unreachable WHAT REGEX ARGS...: cohort exits 3 with one clear line.
unreachable() {
	local what="$1" re="$2"
	shift 2
	expect_exit 3 "$@"
	stderr_one_line "cohort: " "$re"
	[ ! -s "$OUT" ] || fail "$what: printed on stdout: $(cat "$OUT")"
}

AUTH_RE='[Cc]ertificate|TLS|SSL|handshake|authenticat|alert|verif'

# A client certificate from another CA: the controller refuses it.
unreachable "client cert from another CA" "$AUTH_RE" \
	env COHORT_CERT="$T/other/user-alice.crt" COHORT_KEY="$T/other/user-alice.key" \
	cohort submit --name foreign -- true
unreachable "client cert from another CA (jobs)" "$AUTH_RE" \
	env COHORT_CERT="$T/other/user-alice.crt" COHORT_KEY="$T/other/user-alice.key" cohort jobs

# The client trusts another CA: it refuses the controller.
unreachable "controller from another CA" "$AUTH_RE" \
	env COHORT_CA="$T/other/ca.pem" cohort jobs

# The controller's certificate names IP 127.0.0.1, not localhost.
unreachable "wrong controller name" "$AUTH_RE|name|host|match|localhost" \
	env COHORT_SERVER="localhost:$port" cohort jobs
grep -qi 'refused' "$ERR" && fail "wrong name: the connection failed, not the name check: $(cat "$ERR")"
# The flag overrides the environment.
unreachable "wrong controller name (flag)" "$AUTH_RE|name|host|match|localhost" \
	cohort --server "localhost:$port" jobs
grep -qi 'refused' "$ERR" && fail "wrong name: the connection failed, not the name check: $(cat "$ERR")"

# Nothing listening: exit 3.
free_port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
unreachable "nothing listening" 'connect|refused|reach|127\.0\.0\.1' \
	env COHORT_SERVER="127.0.0.1:$free_port" cohort jobs

# Unusable local files are bad settings: exit 2 before connecting, with
# one line naming the file.
expect_exit 2 env COHORT_CERT="$T/does-not-exist.crt" cohort jobs
stderr_one_line "cohort: " "does-not-exist\.crt"
echo "garbage, not PEM" >"$T/garbage.crt"
expect_exit 2 env COHORT_CERT="$T/garbage.crt" cohort jobs
stderr_one_line "cohort: " "garbage\.crt"
expect_exit 2 env COHORT_CA="$T/garbage.crt" cohort jobs
stderr_one_line "cohort: " "garbage\.crt"
# A key that is not the certificate's.
expect_exit 2 env COHORT_KEY="$C/user-bob.key" cohort jobs
stderr_one_line "cohort: " "user-bob\.key"

# A client without a certificate (the independent client): refused.
if "$PYTHON" -c 'import google.protobuf' 2>/dev/null &&
	[ -r "$COHORT_PB2_DIR/cohort_pb2.py" ]; then
	expect_exit 3 pyclient --no-cert submit --name nocert -- true
fi

# An agent certificate may not act as a user.
expect_exit 1 env COHORT_CERT="$C/agent-node01.crt" COHORT_KEY="$C/agent-node01.key" \
	cohort submit --name asagent -- true
stderr_one_line "cohort: " 'denied|agent|not allowed|may not|permission'
expect_exit 1 env COHORT_CERT="$C/agent-node01.crt" COHORT_KEY="$C/agent-node01.key" \
	cohort jobs
stderr_one_line "cohort: " 'denied|agent|not allowed|may not|permission'
job_id=$(cohort jobs --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
expect_exit 1 env COHORT_CERT="$C/agent-node01.crt" COHORT_KEY="$C/agent-node01.key" \
	cohort cancel "$job_id"
stderr_one_line "cohort: " 'denied|agent|not allowed|may not|permission'

# Nothing of the above changed anything; the controller still answers.
[ "$(job_count --all)" = "$before" ] || fail "a refused request created a job"
expect_exit 0 cohort show "$job_id" --json
[ "$(json_get "$OUT" 'd["state"]')" = PENDING ] || fail "job $job_id changed state"
exit 0
