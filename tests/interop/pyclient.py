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
  pyclient.py raw MODE
      MODE: send-oversize, send-garbage, send-truncated, before-hello,
      bad-version. Prints what came back, one word per event, e.g.
      "ERROR_TOO_LARGE closed" (an Error reply, then the connection was
      closed), "hello_reply open", or "sent" for send-truncated.

  pyclient.py fill --count N [--window W] [--nodes N] [--gpus-per-node G]
      N submits of "true" on one connection, W in flight at a time
      (a queue for load tests); prints the number acknowledged
  pyclient.py stall [--lists M] [--send-s S] [--hold S]
      one submit, then M ListJobs, replies never read; holds the
      connection S seconds (the attack of issue 10, finding 4). Prints
      "sent K" once K requests are written (or writing blocked S s)
  pyclient.py flood [--seconds S] [--conns K] [--no-delay]
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
                  "priority", "checkpoint_dir", "max_restarts", "workdir"):
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
    s.add_argument("cmd", nargs=argparse.REMAINDER)

    g = sub.add_parser("get")
    g.add_argument("id", type=int)

    r = sub.add_parser("raw")
    r.add_argument("mode", choices=["send-oversize", "send-garbage", "send-truncated",
                                    "before-hello", "bad-version"])
    r.add_argument("--size", type=int, default=4 * 1024 * 1024 + 1,
                   help="length announced by send-oversize")
    r.add_argument("--wait", type=float, default=5.0,
                   help="seconds to wait for the controller to reply or close")

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

    h = sub.add_parser("hold")
    h.add_argument("--count", type=int, required=True)
    h.add_argument("--hold", type=float, default=3600.0)

    pl = sub.add_parser("pipeline")
    pl.add_argument("--count", type=int, required=True)

    i = sub.add_parser("idle")
    i.add_argument("--wait", type=float, default=30.0)

    args = ap.parse_args()
    pb = load_pb2(args.proto_dir)
    {"submit": cmd_submit, "get": cmd_get, "raw": cmd_raw, "fill": cmd_fill,
     "stall": cmd_stall, "flood": cmd_flood, "hold": cmd_hold,
     "idle": cmd_idle, "pipeline": cmd_pipeline}[args.command](pb, args)


if __name__ == "__main__":
    main()
