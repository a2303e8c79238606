#!/bin/bash
# cohort-pki writes a CA and one certificate per role that verify against
# it, with the role in OU, the name in CN, the right key usages and SANs,
# and private keys only their owner can read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }

P=$T/pki
expect_exit 0 cohort-pki "$P" --controller 127.0.0.1 --agents node01,node02 \
	--users alice,bob --admins ops --days 30

# subject_field CERT FIELD: the value of OU or CN in the subject.
subject_field() {
	openssl x509 -in "$1" -noout -subject -nameopt sep_multiline,sname |
		sed -n "s/^ *$2=//p"
}

ext() {
	openssl x509 -in "$1" -noout -ext "$2" 2>/dev/null | tail -n +2 | sed 's/^ *//'
}

check_leaf() {
	local crt="$1" role="$2" name="$3" eku="$4" san="$5" key="${1%.crt}.key"
	[ -r "$crt" ] || fail "$crt is missing"
	[ -r "$key" ] || fail "$key is missing"
	openssl verify -CAfile "$P/ca.pem" "$crt" >/dev/null 2>&1 ||
		fail "$crt does not verify against ca.pem"
	[ "$(subject_field "$crt" OU)" = "$role" ] || fail "$crt: OU is '$(subject_field "$crt" OU)', not $role"
	[ "$(subject_field "$crt" CN)" = "$name" ] || fail "$crt: CN is '$(subject_field "$crt" CN)', not $name"
	[ "$(subject_field "$crt" O)" = cohort ] || fail "$crt: O is not cohort"
	[ "$(ext "$crt" extendedKeyUsage)" = "$eku" ] || fail "$crt: EKU is '$(ext "$crt" extendedKeyUsage)', not '$eku'"
	[ "$(ext "$crt" subjectAltName)" = "$san" ] || fail "$crt: SAN is '$(ext "$crt" subjectAltName)', not '$san'"
	[ "$(ext "$crt" basicConstraints)" = "CA:FALSE" ] || fail "$crt: a leaf must be CA:FALSE"
	openssl x509 -in "$crt" -noout -ext basicConstraints | grep -q critical ||
		fail "$crt: basicConstraints is not critical"
	[ "$(ext "$crt" keyUsage)" = "Digital Signature" ] || fail "$crt: keyUsage is '$(ext "$crt" keyUsage)'"
	[ "$(stat -c %a "$key")" = 600 ] || fail "$key has mode $(stat -c %a "$key"), not 600"
	openssl pkey -in "$key" -noout -text 2>/dev/null | grep -q 'NIST CURVE: P-256' ||
		fail "$key is not an EC P-256 key"
	# The key belongs to the certificate.
	[ "$(openssl pkey -in "$key" -pubout)" = "$(openssl x509 -in "$crt" -noout -pubkey)" ] ||
		fail "$key does not match $crt"
}

# The CA.
[ "$(stat -c %a "$P/ca.key")" = 600 ] || fail "ca.key is not mode 600"
openssl x509 -in "$P/ca.pem" -noout -ext basicConstraints | grep -q 'critical' ||
	fail "the CA's basicConstraints is not critical"
[ "$(ext "$P/ca.pem" basicConstraints)" = "CA:TRUE" ] || fail "ca.pem is not a CA"
[ "$(ext "$P/ca.pem" keyUsage)" = "Certificate Sign, CRL Sign" ] ||
	fail "ca.pem keyUsage is '$(ext "$P/ca.pem" keyUsage)'"

CS="TLS Web Client Authentication"
check_leaf "$P/controller.crt" controller controller "TLS Web Server Authentication, $CS" "IP Address:127.0.0.1"
check_leaf "$P/agent-node01.crt" agent node01 "$CS" "DNS:node01"
check_leaf "$P/agent-node02.crt" agent node02 "$CS" "DNS:node02"
check_leaf "$P/user-alice.crt" user alice "$CS" "DNS:alice"
check_leaf "$P/user-bob.crt" user bob "$CS" "DNS:bob"
check_leaf "$P/admin-ops.crt" admin ops "$CS" "DNS:ops"
# A user certificate is not good for a server.
openssl verify -CAfile "$P/ca.pem" -purpose sslserver "$P/user-alice.crt" >/dev/null 2>&1 &&
	fail "a user certificate verifies for serverAuth"
openssl verify -CAfile "$P/ca.pem" -purpose sslserver "$P/controller.crt" >/dev/null 2>&1 ||
	fail "the controller certificate does not verify for serverAuth"

# Running again reuses the CA: older certificates still verify, and the
# new one is signed by the same CA.
ca_before=$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)
cp "$P/user-alice.crt" "$T/alice-old.crt"
expect_exit 0 cohort-pki "$P" --controller cohort.example.org --users carol
[ "$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)" = "$ca_before" ] || fail "the CA was replaced without --force"
check_leaf "$P/user-carol.crt" user carol "$CS" "DNS:carol"
openssl verify -CAfile "$P/ca.pem" "$T/alice-old.crt" >/dev/null 2>&1 || fail "an older certificate no longer verifies"
check_leaf "$P/controller.crt" controller controller "TLS Web Server Authentication, $CS" "DNS:cohort.example.org"

# --force makes a new CA; an IPv6 controller gets an IP SAN.
expect_exit 0 cohort-pki "$P" --controller ::1 --force
[ "$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)" != "$ca_before" ] || fail "--force kept the old CA"
openssl verify -CAfile "$P/ca.pem" "$T/alice-old.crt" >/dev/null 2>&1 && fail "an old-CA certificate verifies against the new CA"
check_leaf "$P/controller.crt" controller controller "TLS Web Server Authentication, $CS" "IP Address:0:0:0:0:0:0:0:1"

# Usage errors: one clear message, exit 2, nothing written.
Q=$T/bad
for args in "--controller 127.0.0.1 --users bad/name" \
	"--controller 127.0.0.1 --users -x" \
	"--controller 127.0.0.1 --agents a,,b" \
	"--controller 127.0.0.1 --admins $(printf 'a%.0s' $(seq 65))" \
	"--users alice" \
	"--controller bad_host!" \
	"--controller 127.0.0.1 --days zero" \
	"--controller 127.0.0.1 --bogus"; do
	# shellcheck disable=SC2086
	expect_exit 2 cohort-pki "$Q" $args
	head -n 1 "$ERR" | grep -q '^cohort-pki: ' || fail "no 'cohort-pki:' message for: $args"
	[ ! -e "$Q/ca.pem" ] || fail "cohort-pki wrote a CA despite: $args"
done
expect_exit 2 cohort-pki
grep -q 'missing DIR' "$ERR" || fail "no 'missing DIR' message"

# A half CA (certificate without its key) is refused.
mkdir -p "$T/half"
cp "$P/ca.pem" "$T/half/"
expect_exit 1 cohort-pki "$T/half" --controller 127.0.0.1
grep -q '^cohort-pki: .*part of a CA' "$ERR" || fail "half CA: $(cat "$ERR")"

# Quick enough for every test to make its own.
start=$(_now_us)
expect_exit 0 cohort-pki "$T/speed" --controller 127.0.0.1 --agents n1,n2,n3,n4 --users a,b --admins c
elapsed_ms=$((($(_now_us) - start) / 1000))
[ "$elapsed_ms" -lt 2000 ] || fail "cohort-pki took ${elapsed_ms} ms for 8 certificates"
log "pki for 8 certificates: ${elapsed_ms} ms"
exit 0
