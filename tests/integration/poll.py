#!/usr/bin/env python3
"""Wait for a condition on what a cohort command reports, without a
process a probe.

    poll.py SECONDS job EXPR -- cohort show ID --json --iterate 0.05
    poll.py SECONDS node NAME EXPR -- cohort nodes --json --iterate 0.05

The command prints one JSON document a round. Exit 0 as soon as EXPR
(Python) holds for one: with `job`, d is the document; with `node`, n is
the entry of its "nodes" named NAME (a document without it does not
hold). Exit 1 when SECONDS pass first. A command that ends (a controller
restart it gave up on) is started again; its stderr is dropped, as a
probe's was. Nothing is timed here but the deadline."""
import codecs
import json
import os
import select
import subprocess
import sys
import time

PACE_S = 0.05


def holds(kind, key, expr, doc):
    try:
        if kind == "node":
            found = [x for x in doc["nodes"] if x["name"] == key]
            if not found:
                return False
            env = {"n": found[0], "len": len, "set": set}
        else:
            env = {"d": doc, "len": len, "set": set}
        return bool(eval(expr, env))
    except Exception:
        return False


def watch(deadline, cmd, test):
    """True once test(doc) holds for a document cmd printed."""
    proc = None
    try:
        while time.monotonic() < deadline:
            if proc is None:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
                text = codecs.getincrementaldecoder("utf-8")("replace")
                buf = ""
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stdout], [], [],
                                        max(0.0, min(left, 1.0)))
            if not ready:
                continue
            data = os.read(proc.stdout.fileno(), 1 << 16)
            if not data:
                proc.wait()
                proc = None
                time.sleep(PACE_S)
                continue
            buf += text.decode(data)
            while True:
                buf = buf.lstrip()
                try:
                    doc, end = json.JSONDecoder().raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                if test(doc):
                    return True
        return False
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


def main(argv):
    if "--" not in argv:
        sys.exit("usage: poll.py SECONDS job EXPR | node NAME EXPR -- CMD...")
    sep = argv.index("--")
    args, cmd = argv[1:sep], argv[sep + 1:]
    if len(args) < 3 or args[1] not in ("job", "node") or not cmd or \
            len(args) != (4 if args[1] == "node" else 3):
        sys.exit("usage: poll.py SECONDS job EXPR | node NAME EXPR -- CMD...")
    secs, kind = float(args[0]), args[1]
    key = args[2] if kind == "node" else None
    expr = args[-1]
    ok = watch(time.monotonic() + secs, cmd,
               lambda doc: holds(kind, key, expr, doc))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv)
