#!/bin/bash
# The CLI side of revocation: with COHORT_CRL the CLI (directly and through
# cohort-mux) checks the controller's certificate against the CRL, and
# refuses one that it revokes (exit 3); a mux started before the CRL
# changed is not reused; a missing COHORT_CRL file is a usage error naming
# it; without COHORT_CRL nothing changes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# configure requires openssl: without it here the environment is broken.
command -v openssl >/dev/null || fail "no openssl on PATH"
own_runtime_dir
unset COHORT_MUX

C=$T/cluster
cluster_up "$C"
export COHORT_CRL=$C/ca.crl
expect_exit 0 cohort jobs
expect_exit 0 env COHORT_MUX=no cohort jobs

expect_exit 2 env COHORT_CRL="$T/missing.crl" cohort jobs
stderr_one_line "cohort: " "missing\.crl.*(No such file|COHORT_CRL)"
echo "not a CRL" >"$T/garbage.crl"
expect_exit 2 env COHORT_MUX=no COHORT_CRL="$T/garbage.crl" cohort jobs
stderr_one_line "cohort: " "garbage\.crl: no PEM CRL"

# The controller's certificate revoked: the mux alice has open was
# started with the old CRL; the new one makes a new mux, which refuses.
expect_exit 0 cohort-pki revoke "$C" controller
expect_exit 3 cohort jobs
stderr_one_line "cohort: " "cannot verify the controller's certificate: certificate revoked"
expect_exit 3 env COHORT_MUX=no cohort jobs
stderr_one_line "cohort: " "cannot verify the controller's certificate: certificate revoked"
# Without a CRL the CLI does not know, and goes on.
expect_exit 0 env -u COHORT_CRL cohort jobs
expect_exit 0 env COHORT_CRL= COHORT_MUX=no cohort jobs
exit 0
