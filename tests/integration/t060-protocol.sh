#!/bin/bash
# Bad input on the wire, sent by the independent Python client over real
# TLS with alice's certificate: each gets the documented Error and, where
# the stream is unusable, the connection is closed; the controller keeps
# serving and no job appears.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The malformed frames this test sends are refused and logged.
expect_log_error 'cohortd: warning: conn [0-9]+ \(alice\): (frame of [0-9]+ bytes exceeds the limit|undecodable frame)'

need_python_protobuf
C=$T/cluster
cluster_up "$C"
expect_exit 0 cohort submit --name before -- true
before=$(job_count --all)

# raw MODE EXPECTED [ARGS]: pyclient raw MODE prints EXPECTED.
raw() {
	local mode="$1" want="$2"
	shift 2
	expect_exit 0 pyclient raw "$mode" "$@"
	[ "$(cat "$OUT")" = "$want" ] || fail "raw $mode: got '$(cat "$OUT")', expected '$want' ($(tr '\n' ' ' <"$ERR"))"
	# The controller still answers.
	expect_exit 0 cohort jobs --json
}

# (a) A header announcing more than max_frame (4M here): refused on the
# length alone, then closed.
raw send-oversize "ERROR_TOO_LARGE closed" --size $((4 * 1024 * 1024 + 1))
raw send-oversize "ERROR_TOO_LARGE closed" --size $((0xffffffff))
# (b) 20 bytes that decode to no Envelope.
raw send-garbage "ERROR_PROTOCOL closed"
# (c) A truncated frame, then the client goes away.
raw send-truncated "sent"
# (d) A request before Hello.
raw before-hello "ERROR_PROTOCOL closed"
# (e) A protocol version the controller does not speak.
raw bad-version "ERROR_VERSION closed"

# Many truncated frames and abrupt closes in a row do not wear it down.
for i in 1 2 3 4 5 6 7 8 9 10; do
	pyclient raw send-truncated >/dev/null 2>&1 || fail "raw send-truncated #$i failed"
done

# After all that: the controller answers, a valid request works, and only
# the valid one made a job.
[ "$(job_count --all)" = "$before" ] || fail "bad frames changed the number of jobs"
expect_exit 0 pyclient submit --name after -- true
id=$(cat "$OUT")
expect_exit 0 cohort show "$id" --json
[ "$(json_get "$OUT" 'd["name"]')" = after ] || fail "the job after the bad frames is wrong"
[ "$(job_count --all)" = "$((before + 1))" ] || fail "expected exactly one new job"
exit 0
