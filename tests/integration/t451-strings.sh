#!/bin/bash
# Strings that are not text: an embedded NUL (which protobuf-c would cut
# the string at), invalid UTF-8, control characters in names. The
# controller refuses each with ERROR_INVALID naming the field, and
# nothing changes; the CLI refuses them itself before sending.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
cluster_up "$C"
expect_exit 0 cohort submit --name baseline -- true
before=$(job_count --all)

# refused WHAT REGEX PYCLIENT-ARGS...: ERROR_INVALID, its text
# matching REGEX.
refused() {
	local what="$1" re="$2" got
	shift 2
	got=$(pyclient "$@" 2>"$ERR") || fail "$what: pyclient failed: $(cat "$ERR")"
	[ "$got" = ERROR_INVALID ] || fail "$what: expected ERROR_INVALID, got $got ($(cat "$ERR"))"
	grep -Eq "error text: .*($re)" "$ERR" || fail "$what: the error does not match '$re': $(cat "$ERR")"
}
SPEC='{"spec":{"name":"jobXX","env":["KEY=vaYY"],"argv":["echo","ZZok"]}}'

# An embedded NUL in the name: before, the job was created as "job".
refused "NUL in the name" 'submit\.spec\.name: a NUL byte at byte 3' \
	send submit --json "$SPEC" --replace 'XX=\x00X'
# In an env value and an argument, and invalid UTF-8 (overlong '/', a
# surrogate, above U+10FFFF).
refused "NUL in an env value" 'submit\.spec\.env: a NUL byte' \
	send submit --json "$SPEC" --replace 'YY=\x00Y'
refused "overlong UTF-8 in an env value" 'submit\.spec\.env: invalid UTF-8 at byte 6' \
	send submit --json "$SPEC" --replace 'YY=\xc0\xaf'
refused "a surrogate in an argument" 'submit\.spec\.argv: invalid UTF-8 at byte 0' \
	send submit --json "$SPEC" --replace 'ZZo=\xed\xa0\x80'
refused "above U+10FFFF in the name" 'submit\.spec\.name: invalid UTF-8' \
	send submit --json '{"spec":{"name":"jobXXXX","argv":["true"]}}' --replace 'XXXX=\xf4\x90\x80\x80'
# Control characters where a name is expected (valid UTF-8, so only the
# controller's own checks can see them).
refused "an escape in the name" '--name: control character 0x1b at byte 0' \
	send submit --json '{"spec":{"name":"\u001b[31mroot","argv":["true"]}}'
refused "a newline in the workdir" '--workdir: control character 0x0a' \
	send submit --json '{"spec":{"name":"ok","workdir":"/tmp\nx","argv":["true"]}}'
refused "a C1 control in the GPU type" '--gpu-type: control character 0x9b' \
	send submit --json '{"spec":{"name":"ok","gpuType":"h100\u009b","argv":["true"]}}'
# Free text may hold newlines: an env value and a command word do.
got=$(pyclient send submit --json '{"spec":{"name":"multi","env":["K=line1\nline2"],"argv":["printf","a\tb\n"]}}' 2>"$ERR")
[ "$got" = submit_reply ] || fail "a newline in an env value was refused: $got ($(cat "$ERR"))"
before=$((before + 1))

# A NUL in a user's filter and in an agent's report (the walk reaches
# every message, however deep).
refused "NUL in a ListJobs filter" 'list_jobs\.user: a NUL byte' \
	send list_jobs --json '{"user":"aliceX"}' --replace 'aliceX=alice\x00'
# The heartbeat registers node01 first, and nothing speaks for it after:
# if the rest of the test takes longer than node_timeout (a loaded
# machine, ASan), it goes DOWN, as it should.
expect_log_error 'cohortd: warning: node node01: DOWN: no heartbeat'
refused "NUL in a checkpoint path" 'heartbeat\.checkpoints\.path: a NUL byte' \
	--cert "$C/agent-node01.crt" --key "$C/agent-node01.key" \
	send heartbeat --register --json '{"checkpoints":[{"jobId":1,"restart":1,"step":5,"path":"/ckpt/XX"}]}' \
	--replace 'XX=\x00X'
# What a person types is sent as typed or refused, never repaired.
expect_exit 1 cohort jobs --user $'al\xe9ice'
grep -q 'not valid UTF-8' "$ERR" || fail "a non-UTF-8 argument: $(cat "$ERR")"
# An agent's address becomes other ranks' MASTER_ADDR: only a host
# name or an IP address.
refused "a shell word as the node's address" 'address .* is not a host name' \
	--cert "$C/agent-node01.crt" --key "$C/agent-node01.key" \
	send register --json '{"name":"node01","address":"x;reboot","inventory":{"source":"simulated"}}'
# Reserved for the decoder's own use: a peer cannot send it.
refused "the reserved field" 'field number 536870911 is reserved' \
	send hello --no-hello --json '{"major":1,"minor":0}' \
	--replace '\x08\x01=\x08\x01\xfa\xff\xff\xff\x0f\x01x'
# A drain reason is one line.
refused "a newline in a drain reason" '--reason: control character 0x0a' \
	--cert "$C/admin-ops.crt" --key "$C/admin-ops.key" \
	send drain --json '{"nodes":["node01"],"reason":"fan\nspoofed line"}'

# Nothing of that was created.
[ "$(job_count --all)" = "$before" ] || fail "a refused submit created a job: $(job_count --all) jobs, expected $before"

# The CLI refuses the same before it sends (exit 2, one line).
expect_exit 2 cohort submit --name $'two\nlines' -- true
stderr_one_line "cohort: " 'submit: --name: control character 0x0a at byte 3'
expect_exit 2 cohort submit --name ok -- echo $'\xff'
stderr_one_line "cohort: " 'submit: command \(word 2\): invalid UTF-8 at byte 0'
expect_exit 2 cohort submit --name ok --env $'K=\xc3' -- true
stderr_one_line "cohort: " 'submit: --env \(variable 1\): invalid UTF-8'
printf '#!/bin/sh\n#COHORT --name=bad\x1bname\ntrue\n' >"$T/job.sh"
expect_exit 2 cohort submit "$T/job.sh"
stderr_one_line "cohort: " 'submit: --name: control character 0x1b'
expect_exit 2 env COHORT_CERT="$C/admin-ops.crt" COHORT_KEY="$C/admin-ops.key" \
	cohort drain node01 --reason $'a\tb'
stderr_one_line "cohort: " 'drain: --reason: control character 0x09'
[ "$(job_count --all)" = "$before" ] || fail "the CLI sent a refused submit"

# Through cohort-mux, which decodes a client's request and encodes it
# again (which would have cut the name at the NUL): refused there, and
# that client is still served.
own_runtime_dir
unset COHORT_MUX
expect_exit 0 cohort jobs
pid=$(pgrep -f -- "cohort-mux .*--listen $RUN/cohort/" | head -n 1)
[ -n "$pid" ] || fail "no cohort-mux started under $RUN"
sock=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^--listen$/{n;p}')
"$PYTHON" - "$sock" "$COHORT_PB2_DIR" >"$T/mux.out" 2>&1 <<'PYEOF' || fail "through the mux: $(cat "$T/mux.out")"
import socket, struct, sys
sys.path.insert(0, sys.argv[2])
import cohort_pb2 as pb
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(10)
def send(env, patch=None):
    b = env.SerializeToString()
    if patch:
        b = b.replace(patch[0], patch[1], 1)
    s.sendall(struct.pack(">I", len(b)) + b)
def recv():
    def exact(n):
        buf = b""
        while len(buf) < n:
            c = s.recv(n - len(buf))
            if not c:
                sys.exit("the mux closed the connection")
            buf += c
        return buf
    (n,) = struct.unpack(">I", exact(4))
    e = pb.Envelope()
    e.ParseFromString(exact(n))
    return e
h = pb.Envelope(id=1); h.hello.major = 1; h.hello.minor = 0
send(h)
assert recv().WhichOneof("body") == "hello_reply"
j = pb.Envelope(id=2); j.submit.spec.name = "muxXX"; j.submit.spec.argv.append("true")
send(j, (b"muxXX", b"mux\x00X"))
r = recv()
assert r.id == 2 and r.WhichOneof("body") == "error", r
assert r.error.code == pb.ERROR_INVALID, r
assert "submit.spec.name: a NUL byte at byte 3" in r.error.text, r.error.text
l = pb.Envelope(id=3); l.list_jobs.SetInParent()
send(l)
r = recv()
assert r.id == 3 and r.WhichOneof("body") == "list_jobs_reply", r
print("ok")
PYEOF
[ "$(job_count --all)" = "$before" ] || fail "a refused submit through the mux created a job"
exit 0
