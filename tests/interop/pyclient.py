#!/usr/bin/python3
"""An independent Cohort client, for interoperability and protocol tests.

It shares no code with the C side: only the .proto file, through the module
protoc generates (cohort_pb2.py). It speaks the wire protocol directly:
TLS 1.3 with a client certificate, then frames of a 4-byte big-endian
length followed by one cohort.v1.Envelope.

Settings come from flags, else COHORT_SERVER, COHORT_CERT, COHORT_KEY,
COHORT_CA. The generated module is looked for in --proto-dir, else
$COHORT_PB2_DIR, else $top_builddir/tests/interop/proto, else next to this
file in proto/.

  pyclient.py submit [--name N] [--nodes N|MIN:MAX] [--gpus-per-node G]
                     [--tasks-per-node T] [--gpu-type T] [--time-limit-s S]
                     [--priority P] [--checkpoint-dir D] [--max-restarts N]
                     [--env K=V]... [--workdir D] -- CMD [ARGS...]
      prints the new job id
  pyclient.py get ID
      prints the Job as JSON (protobuf field names)
  pyclient.py list jobs|nodes|events [--all] [--after A] [--limit N]
      [--names HOSTLIST]
      one ListJobs / ListNodes / Events request (one page: --after is
      after_id, or after_name for nodes); prints the reply as JSON
  pyclient.py logs ID [--rank R]
      one LogsRequest; prints the reply as JSON (data base64)
  pyclient.py raw MODE
      MODE: send-oversize, send-garbage, send-truncated, before-hello,
      bad-version. Prints what came back, one word per event, e.g.
      "ERROR_TOO_LARGE closed" (an Error reply, then the connection was
      closed), "hello_reply open", or "sent" for send-truncated.

  pyclient.py agent --name NODE [--gpus G] [--quiet S] STEP...
      Speak as an agent (use an agent certificate): each STEP is sent in
      turn, then a TaskExit of a job no controller has, whose
      acknowledgement marks the end of what that STEP caused. Prints one
      line per STEP: "STEP: WORDS", the words being what came back
      (registered, ack, ERROR_DENIED, stop:JOB, launch:JOB, closed, ...;
      a word repeated N times is written WORDxN). STEPs:
        register                      RegisterRequest (G simulated GPUs)
        exit:JOB:ATTEMPT:RANK:WSTATUS TaskExit
        ended:JOB:ATTEMPT:RANK:WSTATUS Heartbeat with one ended task
        running:JOB:ATTEMPT:RANK      Heartbeat with one running task
        checkpoint:JOB:ATTEMPT:STEP:PATH  Heartbeat with a checkpoint
        progress:JOB:ATTEMPT          Heartbeat with a progress report
        flood:N                       Heartbeat with N made-up running
                                      tasks, each of its own job
        flood-register:N              RegisterRequest listing N of them
        listen                        only wait --quiet seconds

  pyclient.py send TYPE [--json BODY] [--no-hello] [--register] [--probe]
                   [--replace OLD=NEW]... [--wait S]
      sends one Envelope whose body is TYPE (the oneof field's name:
      cancel, get_job, task_exit, launch_reply, ...) filled from BODY
      (JSON, protobuf field names); prints one word: the reply's body
      name (e.g. "cancel_reply"), the error code (e.g. "ERROR_DENIED"),
      "none" (nothing came back for it), or "closed". --register first
      registers the connection as the node named by the certificate (for
      agent messages that need it); --probe follows the request with a
      Hello, so that a request without a reply (heartbeat) reads "none"
      as soon as the Hello is answered; --replace patches the encoded
      request's bytes (Python escapes, e.g. 'XX=\x00X') to send what
      protobuf libraries refuse to write. Exit status 0 when a word was
      printed.

  pyclient.py fill --count N [--window W] [--nodes N] [--gpus-per-node G]
      N submits of "true" on one connection, W in flight at a time
      (a queue for load tests); prints the number acknowledged
  pyclient.py stall [--lists M] [--send-s S] [--hold S]
      one submit, then M ListJobs, replies never read; holds the
      connection S seconds (a client that stalls the controller's output). Prints
      "sent K" once K requests are written (or writing blocked S s)
  pyclient.py flood [--seconds S] [--conns K] [--source ADDR] [--no-delay]
      K certificate-less plain TCP connections to the server, each
      reopened as soon as it is dropped, for S seconds; prints
      "opened N dropped D"
  pyclient.py hold --count N [--hold S]
      N connections with Hello; prints "ok A refused R" and the first
      refusal's text, then holds them S seconds
  pyclient.py pipeline --count N
      N GetJob requests (for job 0, which does not exist) written at
      once, then N replies read: prints "answered A in order" (A == N
      when every reply came, each for its request, in order)
  pyclient.py idle [--wait S]
      one connection with Hello, then nothing: prints "closed after T s"
      when the controller closes it, "open" if it did not within S s

Exit status: 0 ok, 1 the controller refused (an Error reply), 2 usage,
3 cannot connect or authenticate.
"""

import argparse
import os
import socket
import ssl
import struct
import sys

PROG = "pyclient"


def die(code, msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(code)


def load_pb2(proto_dir):
    dirs = []
    if proto_dir:
        dirs.append(proto_dir)
    if os.environ.get("COHORT_PB2_DIR"):
        dirs.append(os.environ["COHORT_PB2_DIR"])
    if os.environ.get("top_builddir"):
        dirs.append(os.path.join(os.environ["top_builddir"], "tests", "interop", "proto"))
    dirs.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "proto"))
    for d in dirs:
        if os.path.exists(os.path.join(d, "cohort_pb2.py")):
            sys.path.insert(0, d)
            import cohort_pb2  # noqa: E402
            return cohort_pb2
    die(2, "cannot find cohort_pb2.py (tried: %s); set COHORT_PB2_DIR" % ", ".join(dirs))


class Conn:
    """One TLS connection speaking length-prefixed Envelopes."""

    def __init__(self, pb, server, cert, key, ca, timeout=10.0):
        self.pb = pb
        self.next_id = 1
        self.close_reason = None
        host, sep, port = server.rpartition(":")
        if not sep or not port.isdigit():
            die(2, f"bad server '{server}' (want HOST:PORT)")
        host = host.strip("[]")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = True
        ctx.verify_mode = ssl.CERT_REQUIRED
        try:
            ctx.load_verify_locations(cafile=ca)
            if cert is not None:
                ctx.load_cert_chain(certfile=cert, keyfile=key)
        except (OSError, ssl.SSLError) as e:
            die(2, f"cannot load the TLS files: {e}")
        try:
            raw = socket.create_connection((host, int(port)), timeout=timeout)
            self.sock = ctx.wrap_socket(raw, server_hostname=host)
        except (OSError, ssl.SSLError) as e:
            die(3, f"cannot connect to {server}: {e}")

    def send_bytes(self, data):
        try:
            self.sock.sendall(data)
        except (ssl.SSLError, OSError) as e:
            # The controller may refuse our certificate, or close, first.
            die(3, f"the controller closed the connection ({e})")

    def send(self, env):
        if not env.id:
            env.id = self.next_id
            self.next_id += 1
        body = env.SerializeToString()
        self.send_bytes(struct.pack(">I", len(body)) + body)
        return env.id

    def _read_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def recv(self):
        """The next Envelope, or None when the peer closed the connection.
        Raises socket.timeout when nothing comes in time."""
        try:
            hdr = self._read_exact(4)
            if hdr is None:
                self.close_reason = "end of stream"
                return None
            (n,) = struct.unpack(">I", hdr)
            body = self._read_exact(n)
        except (socket.timeout, TimeoutError):
            raise
        except (ssl.SSLError, OSError) as e:
            # A TLS 1.3 server that rejects our certificate says so with an
            # alert that arrives on the first read.
            self.close_reason = str(e)
            return None
        if body is None:
            self.close_reason = "end of stream inside a frame"
            return None
        env = self.pb.Envelope()
        env.ParseFromString(body)
        return env

    def call(self, env):
        rid = self.send(env)
        while True:
            rep = self.recv()
            if rep is None:
                die(3, "the controller closed the connection (%s)" % self.close_reason)
            if rep.id == rid or rep.WhichOneof("body") == "error":
                return rep

    def hello(self, major=1, minor=0):
        env = self.pb.Envelope()
        env.hello.major = major
        env.hello.minor = minor
        env.hello.software = "cohort-pyclient 0.1"
        return self.call(env)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def settings(args):
    vals = {"cert": None, "key": None}
    for name in ("server", "cert", "key", "ca"):
        if args.no_cert and name in ("cert", "key"):
            continue
        v = getattr(args, name) or os.environ.get("COHORT_" + name.upper())
        if not v:
            die(2, f"missing --{name} (or COHORT_{name.upper()})")
        vals[name] = v
    return vals


def connect(pb, args, hello=True):
    s = settings(args)
    c = Conn(pb, s["server"], s["cert"], s["key"], s["ca"], timeout=args.timeout)
    if hello:
        rep = c.hello()
        check_error(pb, rep)
        if rep.WhichOneof("body") != "hello_reply":
            die(1, "unexpected reply to Hello: %s" % rep.WhichOneof("body"))
    return c


def check_error(pb, rep):
    if rep.WhichOneof("body") == "error":
        die(1, "%s: %s" % (pb.ErrorCode.Name(rep.error.code), rep.error.text))


def cmd_submit(pb, args):
    env = pb.Envelope()
    spec = env.submit.spec
    if args.name is not None:
        spec.name = args.name
    if args.nodes is not None:
        lo, _, hi = args.nodes.partition(":")
        spec.nodes_min = int(lo)
        spec.nodes_max = int(hi) if hi else int(lo)
    for field in ("gpus_per_node", "tasks_per_node", "gpu_type", "time_limit_s",
                  "priority", "checkpoint_dir", "max_restarts", "workdir",
                  "idempotency_key"):
        v = getattr(args, field)
        if v is not None:
            setattr(spec, field, v)
    spec.env.extend(args.env or [])
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        die(2, "submit: missing the command (after --)")
    spec.argv.extend(cmd)
    c = connect(pb, args)
    rep = c.call(env)
    check_error(pb, rep)
    if rep.WhichOneof("body") != "submit_reply":
        die(1, "unexpected reply: %s" % rep.WhichOneof("body"))
    print(rep.submit_reply.job_id)
    c.close()


def cmd_get(pb, args):
    from google.protobuf import json_format
    env = pb.Envelope()
    env.get_job.job_id = args.id
    c = connect(pb, args)
    rep = c.call(env)
    check_error(pb, rep)
    if rep.WhichOneof("body") != "get_job_reply":
        die(1, "unexpected reply: %s" % rep.WhichOneof("body"))
    print(json_format.MessageToJson(rep.get_job_reply.job,
                                    preserving_proto_field_name=True))
    c.close()


def call_print(pb, args, env, want):
    from google.protobuf import json_format
    c = connect(pb, args)
    rep = c.call(env)
    check_error(pb, rep)
    if rep.WhichOneof("body") != want:
        die(1, "unexpected reply: %s" % rep.WhichOneof("body"))
    print(json_format.MessageToJson(getattr(rep, want),
                                    preserving_proto_field_name=True))
    c.close()


def cmd_list(pb, args):
    env = pb.Envelope()
    if args.what == "jobs":
        env.list_jobs.all = args.all
        if args.after is not None:
            env.list_jobs.after_id = int(args.after)
        if args.limit is not None:
            env.list_jobs.limit = args.limit
        if args.user is not None:
            env.list_jobs.user = args.user
        want = "list_jobs_reply"
    elif args.what == "nodes":
        env.list_nodes.SetInParent()
        if args.after is not None:
            env.list_nodes.after_name = args.after
        if args.limit is not None:
            env.list_nodes.limit = args.limit
        for name in args.names or []:
            env.list_nodes.names.append(name)
        want = "list_nodes_reply"
    else:
        env.events.SetInParent()
        if args.after is not None:
            env.events.after_id = int(args.after)
        if args.limit is not None:
            env.events.limit = args.limit
        want = "events_reply"
    call_print(pb, args, env, want)


def cmd_logs(pb, args):
    env = pb.Envelope()
    env.logs.job_id = args.id
    if args.rank is not None:
        env.logs.rank = args.rank
    call_print(pb, args, env, "logs_reply")


def describe(pb, c, wait_s):
    """Read what the controller sends until it closes or goes quiet; one
    word per event."""
    words = []
    c.sock.settimeout(wait_s)
    while True:
        try:
            rep = c.recv()
        except (socket.timeout, TimeoutError):
            words.append("open")
            break
        if rep is None:
            print(f"{PROG}: closed: {c.close_reason}", file=sys.stderr)
            words.append("closed")
            break
        body = rep.WhichOneof("body")
        if body == "error":
            words.append(pb.ErrorCode.Name(rep.error.code))
            print(f"{PROG}: error text: {rep.error.text}", file=sys.stderr)
        else:
            words.append(body or "empty")
    return " ".join(words)


def cmd_raw(pb, args):
    mode = args.mode
    if mode == "before-hello":
        c = connect(pb, args, hello=False)
        env = pb.Envelope()
        env.submit.spec.name = "before-hello"
        env.submit.spec.argv.append("true")
        c.send(env)
    elif mode == "bad-version":
        c = connect(pb, args, hello=False)
        env = pb.Envelope()
        env.hello.major = 2
        env.hello.minor = 0
        c.send(env)
    else:
        c = connect(pb, args)
        if mode == "send-oversize":
            # Only the header: the controller must refuse on the length.
            c.send_bytes(struct.pack(">I", args.size))
        elif mode == "send-garbage":
            # 0xff bytes: a varint that never ends; no Envelope decodes.
            c.send_bytes(struct.pack(">I", 20) + b"\xff" * 20)
        elif mode == "send-truncated":
            c.send_bytes(struct.pack(">I", 100) + b"\x08" * 10)
            c.close()
            print("sent")
            return
    print(describe(pb, c, args.wait))
    c.close()


# A job id no controller hands out: its exit is acknowledged at once.
SYNC_JOB = (1 << 62) + 7


def agent_inventory(pb, inv, gpus):
    inv.source = "simulated"
    inv.ncpus = 8
    inv.memory_mb = 65536
    for i in range(gpus):
        g = inv.gpus.add()
        g.index = i
        g.uuid = "GPU-pyclient-%d" % i
        g.model = "NVIDIA H100 80GB HBM3"
        g.memory_mb = 81559


def agent_step(pb, args, step):
    """The Envelope (or Envelopes) for one step."""
    parts = step.split(":")
    kind = parts[0]
    env = pb.Envelope()
    try:
        if kind in ("register", "flood-register"):
            env.register.name = args.name
            env.register.address = "127.0.0.1"
            agent_inventory(pb, env.register.inventory, args.gpus)
            if kind == "flood-register":
                for i in range(int(parts[1])):
                    t = env.register.tasks.add()
                    t.job_id, t.restart, t.rank, t.running = (1 << 40) + i, 1, 0, True
        elif kind == "exit":
            te = env.task_exit
            te.job_id, te.restart, te.rank, te.wait_status = (int(x) for x in parts[1:5])
        elif kind in ("ended", "running"):
            t = env.heartbeat.tasks.add()
            t.job_id, t.restart, t.rank = (int(x) for x in parts[1:4])
            t.running = kind == "running"
            if kind == "ended":
                t.wait_status = int(parts[4])
        elif kind == "checkpoint":
            cp = env.heartbeat.checkpoints.add()
            cp.job_id, cp.restart, cp.step = (int(x) for x in parts[1:4])
            cp.path = ":".join(parts[4:])
        elif kind == "progress":
            pr = env.heartbeat.progress.add()
            pr.job_id, pr.restart = int(parts[1]), int(parts[2])
            import time
            pr.changed_ms = int(time.time() * 1000)
        elif kind == "flood":
            for i in range(int(parts[1])):
                t = env.heartbeat.tasks.add()
                t.job_id, t.restart, t.rank, t.running = (1 << 40) + i, 1, 0, True
        elif kind == "listen":
            return None
        else:
            die(2, f"agent: unknown step '{step}'")
    except (IndexError, ValueError):
        die(2, f"agent: malformed step '{step}'")
    return env


def agent_words(pb, c, sync_id, wait_s):
    """Read until the acknowledgement of sync_id (or quiet for wait_s when
    sync_id is None); the words for what came back, counted."""
    words = {}
    order = []

    def add(w):
        if w not in words:
            words[w] = 0
            order.append(w)
        words[w] += 1

    c.sock.settimeout(wait_s)
    while True:
        try:
            rep = c.recv()
        except (socket.timeout, TimeoutError):
            if sync_id is not None:
                add("timeout")
            break
        if rep is None:
            add("closed")
            break
        body = rep.WhichOneof("body")
        if body == "task_exit_ack" and rep.task_exit_ack.job_id == SYNC_JOB:
            if rep.id == sync_id:
                break
            continue
        if body == "error":
            print(f"{PROG}: error text: {rep.error.text}", file=sys.stderr)
            add(pb.ErrorCode.Name(rep.error.code))
        elif body == "register_reply":
            add("registered")
        elif body == "task_exit_ack":
            add("ack")
        elif body == "stop":
            add("stop:%d" % rep.stop.job_id if rep.stop.job_id < (1 << 40) else "stop")
            r = pb.Envelope()
            r.id = rep.id
            r.stop_reply.job_id = rep.stop.job_id
            c.send(r)
        elif body == "launch":
            add("launch:%d" % rep.launch.job_id)
        else:
            add(body or "empty")
    return " ".join(w if words[w] == 1 else "%sx%d" % (w, words[w]) for w in order) or "-"


def cmd_agent(pb, args):
    c = connect(pb, args, hello=False)
    rep = c.hello()
    if rep.WhichOneof("body") == "error":
        # The controller refuses an unknown node's certificate at Hello.
        print(f"{PROG}: error text: {rep.error.text}", file=sys.stderr)
        print("hello: %s %s" % (pb.ErrorCode.Name(rep.error.code),
                                agent_words(pb, c, None, args.quiet)), flush=True)
        c.close()
        return
    if rep.WhichOneof("body") != "hello_reply":
        die(1, "unexpected reply to Hello: %s" % rep.WhichOneof("body"))
    c.next_id = 1000
    for step in args.steps:
        env = agent_step(pb, args, step)
        if env is None:
            print("%s: %s" % (step, agent_words(pb, c, None, args.quiet)), flush=True)
            continue
        c.send(env)
        sync = pb.Envelope()
        te = sync.task_exit
        te.job_id, te.restart, te.rank, te.wait_status = SYNC_JOB, 1, 0, 0
        sid = c.send(sync)
        words = agent_words(pb, c, sid, args.quiet)
        print("%s: %s" % (step.split(":")[0] if step.startswith(("flood", "checkpoint")) else step, words), flush=True)
        if "closed" in words:
            break
    c.close()


def _unescape(s):
    import codecs
    return codecs.escape_decode(s.encode())[0]


def cmd_send(pb, args):
    if args.repeat < 1:
        die(2, "send: --repeat must be at least 1")
    if args.repeat == 1:
        print(send_once(pb, args))
        return
    counts = {}
    for _ in range(args.repeat):
        word = send_once(pb, args)
        counts[word] = counts.get(word, 0) + 1
    print(" ".join(f"{w}={n}" for w, n in sorted(counts.items())))


def send_once(pb, args):
    """One request of args.type on a connection of its own; the reply's
    body name, the error code's name, "closed" or "none"."""
    from google.protobuf import json_format
    c = connect(pb, args, hello=False)
    identity = None
    if not args.no_hello:
        rep = c.hello()
        if rep.WhichOneof("body") != "hello_reply":
            word = (pb.ErrorCode.Name(rep.error.code)
                    if rep.WhichOneof("body") == "error" else "closed")
            c.close()
            return word
        identity = rep.hello_reply.identity
    if args.register:
        reg = pb.Envelope()
        reg.register.name = identity or ""
        reg.register.inventory.source = "simulated"
        rep = c.call(reg)
        if rep.WhichOneof("body") != "register_reply":
            die(1, "send: --register failed: %s" % rep)
    env = pb.Envelope()
    if args.type not in pb.Envelope.DESCRIPTOR.fields_by_name or args.type == "id":
        die(2, f"send: unknown body type '{args.type}'")
    body = getattr(env, args.type)
    body.SetInParent()
    if args.json:
        json_format.ParseDict(__import__("json").loads(args.json), body)
    env.id = c.next_id
    c.next_id += 1
    data = env.SerializePartialToString()
    for r in args.replace or []:
        old, sep, new = r.partition("=")
        if not sep or _unescape(old) not in data:
            die(2, f"send: --replace {r}: not in the encoded request")
        data = data.replace(_unescape(old), _unescape(new), 1)
    c.send_bytes(struct.pack(">I", len(data)) + data)
    probe = None
    if args.probe:
        penv = pb.Envelope()
        penv.hello.major = 1
        penv.hello.minor = 0
        probe = c.send(penv)
    c.sock.settimeout(args.wait)
    word = "none"
    while True:
        try:
            rep = c.recv()
        except (socket.timeout, TimeoutError):
            break
        if rep is None:
            word = "closed"
            break
        kind = rep.WhichOneof("body")
        if kind == "error" and rep.id in (env.id, 0):
            word = pb.ErrorCode.Name(rep.error.code)
            print(f"{PROG}: error text: {rep.error.text}", file=sys.stderr)
            break
        if rep.id == env.id:
            word = kind or "empty"
            break
        if probe is not None and rep.id == probe:
            break   # answered after the request: it had no reply
    c.close()
    return word


def submit_env(pb, args, name):
    env = pb.Envelope()
    spec = env.submit.spec
    spec.name = name
    spec.nodes_min = spec.nodes_max = args.nodes
    if args.gpus_per_node:
        spec.gpus_per_node = args.gpus_per_node
    spec.argv.append("true")
    return env


def cmd_fill(pb, args):
    c = connect(pb, args)
    sent = acked = 0
    errors = {}
    while acked < args.count:
        while sent < args.count and sent - acked < args.window:
            c.send(submit_env(pb, args, "fill"))
            sent += 1
        rep = c.recv()
        if rep is None:
            die(3, "the controller closed the connection (%s) after %d acks"
                % (c.close_reason, acked))
        acked += 1
        if rep.WhichOneof("body") == "error":
            errors.setdefault(rep.error.text, 0)
            errors[rep.error.text] += 1
    ok = acked - sum(errors.values())
    print(ok)
    for text, n in errors.items():
        print(f"{PROG}: {n} refused: {text}", file=sys.stderr)
    c.close()
    sys.exit(0 if not errors else 1)


def cmd_stall(pb, args):
    import time
    c = connect(pb, args)
    frames = []
    env = submit_env(pb, args, "stall")
    env.id = c.next_id
    c.next_id += 1
    frames.append(env)
    for _ in range(args.lists):
        e = pb.Envelope()
        e.list_jobs.SetInParent()
        e.id = c.next_id
        c.next_id += 1
        frames.append(e)
    data = b"".join(struct.pack(">I", len(b)) + b
                    for b in (f.SerializeToString() for f in frames))
    # Write what the controller takes; once it stops reading us, stop.
    c.sock.settimeout(args.send_s)
    done = 0
    try:
        while done < len(data):
            done += c.sock.send(data[done:done + 65536])
    except (socket.timeout, TimeoutError, ssl.SSLError, OSError):
        pass
    n = 0
    pos = 0
    while pos + 4 <= done:
        (ln,) = struct.unpack(">I", data[pos:pos + 4])
        if pos + 4 + ln > done:
            break
        pos += 4 + ln
        n += 1
    print(f"sent {n}", flush=True)
    time.sleep(args.hold)
    c.close()


def cmd_flood(pb, args):
    import selectors
    import time
    s = settings(args)
    host, _, port = s["server"].rpartition(":")
    addr = (host.strip("[]"), int(port))
    sel = selectors.DefaultSelector()
    opened = dropped = failed = 0
    end = time.monotonic() + args.seconds

    def open_one():
        nonlocal opened, failed
        so = socket.socket(socket.AF_INET6 if ":" in addr[0] else socket.AF_INET)
        so.setblocking(False)
        try:
            if args.source:
                so.bind((args.source, 0))
            so.connect_ex(addr)
        except OSError:
            failed += 1
            so.close()
            return
        sel.register(so, selectors.EVENT_READ)
        opened += 1

    for _ in range(args.conns):
        open_one()
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.1):
            so = key.fileobj
            try:
                gone = so.recv(4096) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                sel.unregister(so)
                so.close()
                dropped += 1
                open_one()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    print(f"opened {opened} dropped {dropped} failed {failed}", flush=True)


def cmd_hold(pb, args):
    import time
    s = settings(args)
    conns = []
    ok = refused = 0
    first = ""
    for _ in range(args.count):
        c = Conn(pb, s["server"], s["cert"], s["key"], s["ca"], timeout=args.timeout)
        try:
            c.send(hello_env(pb))
            rep = c.recv()
        except (socket.timeout, TimeoutError):
            rep = None
        if rep is not None and rep.WhichOneof("body") == "hello_reply":
            ok += 1
            conns.append(c)
            continue
        refused += 1
        if not first:
            if rep is not None and rep.WhichOneof("body") == "error":
                first = "%s: %s" % (pb.ErrorCode.Name(rep.error.code), rep.error.text)
            else:
                first = "closed: %s" % c.close_reason
        c.close()
    print(f"ok {ok} refused {refused}", flush=True)
    if first:
        print(first, flush=True)
    time.sleep(args.hold)
    for c in conns:
        c.close()


def cmd_pipeline(pb, args):
    c = connect(pb, args)
    frames = []
    first = c.next_id
    for _ in range(args.count):
        e = pb.Envelope()
        e.get_job.job_id = 0
        e.id = c.next_id
        c.next_id += 1
        frames.append(e.SerializeToString())
    c.send_bytes(b"".join(struct.pack(">I", len(b)) + b for b in frames))
    n = 0
    while n < args.count:
        rep = c.recv()
        if rep is None or rep.id != first + n:
            break
        n += 1
    print(f"answered {n} in order")
    c.close()


def cmd_logflood(pb, args):
    """Pipeline --count LogsRequests for a job without reading, as fast as
    the controller takes them; hold --hold s; then read the answers (as
    many as come within --timeout each) and count them by kind."""
    import time
    c = connect(pb, args)
    frames = []
    for _ in range(args.count):
        e = pb.Envelope()
        e.logs.job_id = args.job
        e.id = c.next_id
        c.next_id += 1
        frames.append(e.SerializeToString())
    data = b"".join(struct.pack(">I", len(b)) + b for b in frames)
    c.sock.settimeout(args.send_s)
    done = 0
    try:
        while done < len(data):
            done += c.sock.send(data[done:done + 65536])
    except (socket.timeout, TimeoutError, ssl.SSLError, OSError):
        pass
    print("sent %d of %d bytes" % (done, len(data)), flush=True)
    time.sleep(args.hold)
    kinds = {}
    c.sock.settimeout(args.timeout)
    try:
        while sum(kinds.values()) < args.count:
            rep = c.recv()
            if rep is None:
                break
            k = rep.WhichOneof("body")
            if k == "error":
                k = pb.ErrorCode.Name(rep.error.code)
            elif k == "logs_reply" and len(rep.logs_reply.data) == 0:
                k = "empty"
            kinds[k] = kinds.get(k, 0) + 1
    except (socket.timeout, TimeoutError):
        pass
    print(" ".join("%s=%d" % kv for kv in sorted(kinds.items())), flush=True)
    c.close()


def cmd_hbflood(pb, args):
    """Register as this certificate's node with --gpus simulated GPUs and
    the --task JOB:RESTART:RANK tasks running, then send --beats
    heartbeats (8 at a time, --every-s apart), each reporting those tasks
    and, for every --xid GPU:COUNT, COUNT fail-job XIDs on GPU, and for
    every --ckpt JOB:RESTART:COUNT, COUNT checkpoints of the job (heartbeat
    b: steps b*COUNT+1 .. (b+1)*COUNT, path /ckpt/step-N, in a shuffled
    order); then hold --hold s without reading and close."""
    import time
    c = connect(pb, args, hello=False)
    rep = c.hello()
    check_error(pb, rep)
    reg = pb.Envelope()
    reg.register.name = rep.hello_reply.identity
    reg.register.inventory.source = "simulated"
    for g in range(args.gpus):
        gp = reg.register.inventory.gpus.add()
        gp.index = g
    tasks = []
    for t in args.task or []:
        j, r, k = (int(v) for v in t.split(":"))
        tasks.append((j, r, k))
    for j, r, k in tasks:
        ts = reg.register.tasks.add()
        ts.job_id, ts.restart, ts.rank, ts.running = j, r, k, True
    rep = c.call(reg)
    if rep.WhichOneof("body") != "register_reply":
        die(1, "hbflood: register failed: %s" % rep)
    hb = pb.Envelope()
    for j, r, k in tasks:
        ts = hb.heartbeat.tasks.add()
        ts.job_id, ts.restart, ts.rank, ts.running = j, r, k, True
    for spec in args.xid or []:
        gpu, _, count = spec.partition(":")
        for _ in range(int(count or 1)):
            x = hb.heartbeat.xids.add()
            x.gpu, x.xid, x.action = int(gpu), 79, "fail-job"
    cks = []
    for spec in args.ckpt or []:
        j, r, k = (int(v) for v in spec.split(":"))
        cks.append((j, r, k))
    sent = 0
    while sent < args.beats:
        frames = []
        for _ in range(min(8, args.beats - sent)):
            hb.id = c.next_id
            c.next_id += 1
            del hb.heartbeat.checkpoints[:]
            for j, r, k in cks:
                steps = list(range(sent * k + 1, (sent + 1) * k + 1))
                steps = steps[1::2] + steps[0::2]   # the highest not last
                for st in steps:
                    ck = hb.heartbeat.checkpoints.add()
                    ck.job_id, ck.restart, ck.step = j, r, st
                    ck.path = "/ckpt/step-%d" % st
            frames.append(hb.SerializeToString())
            sent += 1
        c.send_bytes(b"".join(struct.pack(">I", len(b)) + b for b in frames))
        time.sleep(args.every_s)
    print("heartbeats sent %d" % sent, flush=True)
    time.sleep(args.hold)
    c.close()


def hello_env(pb):
    env = pb.Envelope()
    env.hello.major = 1
    env.hello.minor = 0
    env.hello.software = "cohort-pyclient 0.1"
    return env


def cmd_idle(pb, args):
    import time
    c = connect(pb, args)
    t0 = time.monotonic()
    c.sock.settimeout(args.wait)
    try:
        rep = c.recv()
    except (socket.timeout, TimeoutError):
        print("open")
        return
    if rep is None:
        print("closed after %.1f s" % (time.monotonic() - t0))
    else:
        print("unexpected %s" % rep.WhichOneof("body"))


def main():
    ap = argparse.ArgumentParser(prog=PROG, description="independent Cohort client")
    ap.add_argument("--server")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--ca")
    ap.add_argument("--no-cert", action="store_true",
                    help="present no client certificate (the controller must refuse)")
    ap.add_argument("--proto-dir")
    ap.add_argument("--timeout", type=float, default=10.0)
    sub = ap.add_subparsers(dest="command", required=True)

    s = sub.add_parser("submit")
    s.add_argument("--name")
    s.add_argument("--nodes")
    s.add_argument("--gpus-per-node", dest="gpus_per_node", type=int)
    s.add_argument("--tasks-per-node", dest="tasks_per_node", type=int)
    s.add_argument("--gpu-type", dest="gpu_type")
    s.add_argument("--time-limit-s", dest="time_limit_s", type=int)
    s.add_argument("--priority", type=int)
    s.add_argument("--checkpoint-dir", dest="checkpoint_dir")
    s.add_argument("--max-restarts", dest="max_restarts", type=int)
    s.add_argument("--env", action="append")
    s.add_argument("--workdir")
    s.add_argument("--idempotency-key", dest="idempotency_key")
    s.add_argument("cmd", nargs=argparse.REMAINDER)

    g = sub.add_parser("get")
    g.add_argument("id", type=int)

    ls = sub.add_parser("list")
    ls.add_argument("what", choices=["jobs", "nodes", "events"])
    ls.add_argument("--all", action="store_true")
    ls.add_argument("--after")
    ls.add_argument("--limit", type=int)
    ls.add_argument("--user", help="jobs: only this user's")
    ls.add_argument("--names", action="append",
                    help="nodes: only those this hostlist names (repeatable)")

    lg = sub.add_parser("logs")
    lg.add_argument("id", type=int)
    lg.add_argument("--rank", type=int)

    r = sub.add_parser("raw")
    r.add_argument("mode", choices=["send-oversize", "send-garbage", "send-truncated",
                                    "before-hello", "bad-version"])
    r.add_argument("--size", type=int, default=4 * 1024 * 1024 + 1,
                   help="length announced by send-oversize")
    r.add_argument("--wait", type=float, default=5.0,
                   help="seconds to wait for the controller to reply or close")

    a = sub.add_parser("agent")
    a.add_argument("--name", required=True, help="the node name to register as")
    a.add_argument("--gpus", type=int, default=8)
    a.add_argument("--quiet", type=float, default=5.0,
                   help="seconds to wait for what a step causes")
    a.add_argument("steps", nargs="+")

    x = sub.add_parser("send")
    x.add_argument("type")
    x.add_argument("--json")
    x.add_argument("--no-hello", dest="no_hello", action="store_true")
    x.add_argument("--register", action="store_true")
    x.add_argument("--probe", action="store_true")
    x.add_argument("--replace", action="append")
    x.add_argument("--wait", type=float, default=5.0,
                   help="seconds to wait for the reply")
    x.add_argument("--repeat", type=int, default=1,
                   help="send it this many times, one after the other, "
                   "each on a connection of its own; prints each "
                   "verdict's count (WORD=N ...)")

    f = sub.add_parser("fill")
    f.add_argument("--count", type=int, required=True)
    f.add_argument("--window", type=int, default=64)
    f.add_argument("--nodes", type=int, default=1)
    f.add_argument("--gpus-per-node", dest="gpus_per_node", type=int)

    st = sub.add_parser("stall")
    st.add_argument("--lists", type=int, default=300)
    st.add_argument("--nodes", type=int, default=1)
    st.add_argument("--gpus-per-node", dest="gpus_per_node", type=int)
    st.add_argument("--send-s", dest="send_s", type=float, default=3.0)
    st.add_argument("--hold", type=float, default=3600.0)

    fl = sub.add_parser("flood")
    fl.add_argument("--seconds", type=float, default=10.0)
    fl.add_argument("--conns", type=int, default=512)
    fl.add_argument("--source", help="connect from this local address")

    h = sub.add_parser("hold")
    h.add_argument("--count", type=int, required=True)
    h.add_argument("--hold", type=float, default=3600.0)

    pl = sub.add_parser("pipeline")
    pl.add_argument("--count", type=int, required=True)

    lf = sub.add_parser("logflood")
    lf.add_argument("--job", type=int, required=True)
    lf.add_argument("--count", type=int, required=True)
    lf.add_argument("--send-s", dest="send_s", type=float, default=3.0)
    lf.add_argument("--hold", type=float, default=5.0)

    xa = sub.add_parser("hbflood")
    xa.add_argument("--gpus", type=int, default=1)
    xa.add_argument("--task", action="append")
    xa.add_argument("--xid", action="append")
    xa.add_argument("--ckpt", action="append")
    xa.add_argument("--beats", type=int, default=1)
    xa.add_argument("--every-s", dest="every_s", type=float, default=0.05)
    xa.add_argument("--hold", type=float, default=1.0)

    i = sub.add_parser("idle")
    i.add_argument("--wait", type=float, default=30.0)

    args = ap.parse_args()
    # A flood speaks no protobuf: it runs where the protobuf module is
    # missing too.
    pb = None if args.command == "flood" else load_pb2(args.proto_dir)
    {"submit": cmd_submit, "get": cmd_get, "raw": cmd_raw, "list": cmd_list,
     "logs": cmd_logs, "agent": cmd_agent, "send": cmd_send,
     "fill": cmd_fill, "stall": cmd_stall, "flood": cmd_flood,
     "hold": cmd_hold, "idle": cmd_idle,
     "pipeline": cmd_pipeline, "logflood": cmd_logflood,
     "hbflood": cmd_hbflood}[args.command](pb, args)


if __name__ == "__main__":
    main()
