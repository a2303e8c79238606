#!/bin/bash
# cohort-pki writes a CA and one certificate per role that verify against
# it, with the role in OU (the controller's OU=controller), the name in CN,
# the right key usages and SANs, and private keys only their owner can
# read; its CRL (ca.crl) starts empty and 'cohort-pki revoke' adds to it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# configure requires openssl: without it here the environment is broken.
command -v openssl >/dev/null || fail "no openssl on PATH"

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

# The controller's role is its own: OU=controller, which clients insist on
# (t441); nothing else gets it.
for f in "$P"/agent-*.crt "$P"/user-*.crt "$P"/admin-*.crt; do
	[ "$(subject_field "$f" OU)" != controller ] || fail "$f has OU=controller"
done

# The CRL: written with the PKI, signed by the CA, empty, valid --days.
[ -r "$P/ca.crl" ] || fail "no ca.crl"
[ "$(stat -c %a "$P/ca.crl")" = 644 ] || fail "ca.crl has mode $(stat -c %a "$P/ca.crl")"
openssl crl -in "$P/ca.crl" -CAfile "$P/ca.pem" -noout 2>&1 | grep -q 'verify OK' ||
	fail "ca.crl does not verify against ca.pem"
revoked() {
	openssl crl -in "$P/ca.crl" -noout -text | grep -c 'Serial Number:' || true
}
[ "$(revoked)" = 0 ] || fail "a new CRL lists $(revoked) revoked certificates"
next=$(openssl crl -in "$P/ca.crl" -noout -nextupdate | sed 's/^nextUpdate=//')
days=$((($(date -d "$next" +%s) - $(date +%s) + 43200) / 86400))
[ "$days" = 30 ] || fail "the CRL is valid for $days days, not --days 30"
crl_verify() {
	openssl verify -crl_check -CRLfile "$P/ca.crl" -CAfile "$P/ca.pem" "$1" 2>&1
}
crl_verify "$P/user-bob.crt" | grep -q ': OK$' || fail "bob does not verify with the CRL: $(crl_verify "$P/user-bob.crt")"

# revoke NAME (a name: every role's certificate of it) and revoke FILEBASE.
expect_exit 0 cohort-pki revoke "$P" bob
grep -q '^cohort-pki: revoked user-bob.crt (serial [0-9A-F]*)$' "$OUT" || fail "revoke bob: $(cat "$OUT")"
grep -qF "$P/ca.crl lists 1 revoked" "$OUT" || fail "revoke did not say where the CRL is: $(cat "$OUT")"
crl_verify "$P/user-bob.crt" | grep -q 'certificate revoked' || fail "bob is not revoked: $(crl_verify "$P/user-bob.crt")"
crl_verify "$P/user-alice.crt" | grep -q ': OK$' || fail "alice was revoked too"
expect_exit 0 cohort-pki revoke "$P" agent-node01 bob
grep -q 'user-bob.crt (serial [0-9A-F]*) was already revoked' "$OUT" || fail "revoking twice: $(cat "$OUT")"
[ "$(revoked)" = 2 ] || fail "the CRL lists $(revoked) certificates, not 2"
crl_verify "$P/agent-node01.crt" | grep -q 'certificate revoked' || fail "node01 is not revoked"
crl_verify "$P/agent-node02.crt" | grep -q ': OK$' || fail "node02 was revoked too"
# Errors: one line, nothing changed.
cp "$P/ca.crl" "$T/crl.before"
expect_exit 1 cohort-pki revoke "$P" carol
grep -q "^cohort-pki: no certificate named 'carol'" "$ERR" || fail "revoke carol: $(cat "$ERR")"
expect_exit 2 cohort-pki revoke "$P" ../ca
grep -q "^cohort-pki: invalid name" "$ERR" || fail "revoke ../ca: $(cat "$ERR")"
expect_exit 2 cohort-pki revoke "$P"
expect_exit 1 cohort-pki revoke "$T/nowhere" bob
grep -q "holds no CA" "$ERR" || fail "revoke without a CA: $(cat "$ERR")"
cmp -s "$P/ca.crl" "$T/crl.before" || fail "a failed revoke changed the CRL"
# 'crl' renews it with the same revocations.
expect_exit 0 cohort-pki crl "$P" --days 7
[ "$(revoked)" = 2 ] || fail "crl dropped revocations"
# A PKI from before revocation (no CA database) gets one on its first revoke.
cp -a "$P" "$T/oldpki"
rm -f "$T/oldpki"/ca.index* "$T/oldpki"/ca.crlnumber* "$T/oldpki/ca.crl"
expect_exit 0 cohort-pki revoke "$T/oldpki" alice
openssl crl -in "$T/oldpki/ca.crl" -noout -text | grep -q 'Serial Number:' || fail "no revocation in an old PKI's new CRL"

# Running again reuses the CA: older certificates still verify, and the
# new one is signed by the same CA.
ca_before=$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)
cp "$P/user-alice.crt" "$T/alice-old.crt"
expect_exit 0 cohort-pki "$P" --controller cohort.example.org --users carol
[ "$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)" = "$ca_before" ] || fail "the CA was replaced without --force"
check_leaf "$P/user-carol.crt" user carol "$CS" "DNS:carol"
openssl verify -CAfile "$P/ca.pem" "$T/alice-old.crt" >/dev/null 2>&1 || fail "an older certificate no longer verifies"
check_leaf "$P/controller.crt" controller controller "TLS Web Server Authentication, $CS" "DNS:cohort.example.org"
[ "$(revoked)" = 2 ] || fail "running again lost the revocations: $(revoked) left"

# --force makes a new CA; an IPv6 controller gets an IP SAN.
expect_exit 0 cohort-pki "$P" --controller ::1 --force
[ "$(openssl x509 -in "$P/ca.pem" -noout -fingerprint)" != "$ca_before" ] || fail "--force kept the old CA"
openssl verify -CAfile "$P/ca.pem" "$T/alice-old.crt" >/dev/null 2>&1 && fail "an old-CA certificate verifies against the new CA"
check_leaf "$P/controller.crt" controller controller "TLS Web Server Authentication, $CS" "IP Address:0:0:0:0:0:0:0:1"
# A new CA starts with an empty CRL of its own.
[ "$(revoked)" = 0 ] || fail "a new CA's CRL lists $(revoked) certificates"
openssl crl -in "$P/ca.crl" -CAfile "$P/ca.pem" -noout 2>&1 | grep -q 'verify OK' ||
	fail "the new CA's CRL does not verify"

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

# Quick enough for every test to make its own: the time is reported, not
# asserted (a loaded CI machine took 3.5 s where an idle one takes 0.3).
start=$(_now_us)
expect_exit 0 cohort-pki "$T/speed" --controller 127.0.0.1 --agents n1,n2,n3,n4 --users a,b --admins c
echo "# cohort-pki: 8 certificates in $((($(_now_us) - start) / 1000)) ms"
[ "$(ls "$T/speed"/*.crt 2>/dev/null | wc -l)" -ge 8 ] ||
	fail "cohort-pki --agents n1,n2,n3,n4 --users a,b --admins c made $(ls "$T/speed" | tr '\n' ' ')"
exit 0
