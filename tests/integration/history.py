#!/usr/bin/python3
"""A load generator that records a history of acknowledged operations, and
a checker of the cluster's final state against it: every acknowledged
submit and cancel is recorded with its reply during the fault runs, and
the final state must hold each of them exactly as acknowledged.

The standard library only. Everything goes through the real CLI (`cohort`
on PATH, settings from COHORT_SERVER, COHORT_CERT, COHORT_KEY, COHORT_CA),
with COHORT_MUX=off so that each command connects by itself and meets the
failover on its own.

  history.py run --dir D [--submitters K] [--prefix P] [--cancel-every N]
                 [--interval S] [--timeout S] [--max-seconds S]
                 [--stop-file F] [--submit-args 'ARGS']
      K threads, each looping `cohort submit -J P-sK-I ARGS` (ARGS split as
      a shell would; default: --hold --gpus-per-node 0 -- true) until F
      exists or S
      seconds pass. Every reply goes to D/sub-K.jsonl as soon as it comes:
      an acknowledged submit with its id, any failure (an error reply, a
      dropped connection, a command past --timeout) as an unknown outcome.
      Every N-th acknowledged submit of a thread (0: never) is followed by
      `cohort cancel` of one of its own earlier acknowledged jobs,
      recorded the same way. D/run.json holds the prefix. On exit it prints
      one line of counts.

  history.py first-ack --dir D --after T [--timeout S]
      Waits (bounded by S, default 30) for the first acknowledged submit
      whose command started at or after the Unix time T, and prints the
      milliseconds from T to its acknowledgement: a failover's "killed ->
      serving" time when T is the kill. Status 1 past the bound.

  history.py check --dir D [--jobs FILE] [--timeout S] [--save FILE]
      Lists every job (`cohort jobs --all --json`, retried for up to S
      seconds while the cluster elects; or FILE, a saved listing; --save
      keeps the listing) and checks the history against it, also while
      the submitters still run (the history is read before the listing;
      a submitter's one submit in flight counts as an unknown outcome):
        - every acknowledged submit's id is listed exactly once, under its
          own name, and no other job has that name;
        - no id was acknowledged for two submits, none is listed twice;
        - a submit of unknown outcome is there at most once;
        - no job of this run's prefix is there that no submit sent;
        - every acknowledged cancel's job is CANCELLED (or had finished).
      Prints the counts; status 1 and the violations (at most 20 of
      each) when any check fails.

  history.py stats MS...
      Prints "n N median M p99 P min A max B" (ms) of the numbers.
"""
import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

FINISHED = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"}
DEFAULT_SUBMIT = "--hold --gpus-per-node 0 -- true"


def cli_env():
    env = dict(os.environ)
    env["COHORT_MUX"] = "off"
    return env


def run_cli(argv, timeout):
    """(status, stdout, stderr) of the CLI; status None past timeout. The
    commands stay in this process's group (a test kills the group on
    failure); the private cohort-mux of one killed past its timeout ends
    at its own deadline, or at cohort-local down."""
    try:
        p = subprocess.run(["cohort"] + argv, env=cli_env(), timeout=timeout,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "timed out after %gs" % timeout
    return p.returncode, p.stdout, p.stderr


def first_line(s):
    s = (s or "").strip()
    return s.splitlines()[0][:300] if s else ""


class Submitter(threading.Thread):
    def __init__(self, k, a, stop):
        super().__init__(daemon=True)
        self.k, self.a, self.stop = k, a, stop
        self.path = os.path.join(a.dir, "sub-%d.jsonl" % k)
        self.counts = {"ack": 0, "unknown": 0, "cancel_ack": 0,
                       "cancel_unknown": 0}

    def record(self, f, rec):
        f.write(json.dumps(rec) + "\n")
        f.flush()

    def run(self):
        a = self.a
        acked, cancelled = [], set()
        i = 0
        with open(self.path, "a") as f:
            while not self.stop.is_set():
                i += 1
                name = "%s-s%d-%d" % (a.prefix, self.k, i)
                t0 = time.time()
                rc, out, err = run_cli(["submit", "-J", name] + a.submit, a.timeout)
                t1 = time.time()
                out = out.strip()
                if rc == 0 and re.fullmatch(r"[1-9][0-9]*", out):
                    self.record(f, {"op": "submit", "ok": True, "name": name,
                                    "id": int(out), "t0": t0, "t1": t1})
                    self.counts["ack"] += 1
                    acked.append(int(out))
                else:
                    self.record(f, {"op": "submit", "ok": False, "name": name,
                                    "rc": rc, "out": out[:100],
                                    "err": first_line(err), "t0": t0, "t1": t1})
                    self.counts["unknown"] += 1
                    # A refusal is quick: do not spin while the cluster elects.
                    self.stop.wait(0.05)
                if (a.cancel_every > 0 and rc == 0 and
                        self.counts["ack"] % a.cancel_every == 0):
                    self.cancel(f, acked, cancelled)
                if a.interval > 0:
                    self.stop.wait(a.interval)

    def cancel(self, f, acked, cancelled):
        # An acknowledged job of ours from a little while back.
        for jid in reversed(acked[:-1]):
            if jid not in cancelled:
                break
        else:
            return
        cancelled.add(jid)
        t0 = time.time()
        rc, out, err = run_cli(["cancel", str(jid)], self.a.timeout)
        t1 = time.time()
        ok = rc == 0
        self.record(f, {"op": "cancel", "ok": ok, "id": jid, "rc": rc,
                        "err": "" if ok else first_line(err), "t0": t0, "t1": t1})
        self.counts["cancel_ack" if ok else "cancel_unknown"] += 1


def cmd_run(a):
    os.makedirs(a.dir, exist_ok=True)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}", a.prefix):
        sys.exit("history.py: invalid --prefix %r" % a.prefix)
    if a.submitters < 1 or a.submitters > 64:
        sys.exit("history.py: --submitters wants 1..64")
    with open(os.path.join(a.dir, "run.json"), "w") as f:
        json.dump({"prefix": a.prefix, "submitters": a.submitters}, f)
    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    subs = [Submitter(k, a, stop) for k in range(1, a.submitters + 1)]
    for s in subs:
        s.start()
    deadline = time.time() + a.max_seconds
    while not stop.is_set():
        if (a.stop_file and os.path.exists(a.stop_file)) or time.time() >= deadline:
            stop.set()
            break
        stop.wait(0.05)
    for s in subs:
        s.join(a.timeout + 5)
    tot = {}
    for s in subs:
        for key, v in s.counts.items():
            tot[key] = tot.get(key, 0) + v
    print("history: %d submits acknowledged, %d unknown; %d cancels "
          "acknowledged, %d unknown" % (tot["ack"], tot["unknown"],
                                         tot["cancel_ack"], tot["cancel_unknown"]))
    return 0


def load(d):
    recs = []
    for fn in sorted(os.listdir(d)):
        if not re.fullmatch(r"sub-[0-9]+\.jsonl", fn):
            continue
        with open(os.path.join(d, fn)) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    # A line cut short when the run was killed.
                    pass
    return recs


def cmd_first_ack(a):
    deadline = time.time() + a.timeout
    while True:
        acks = [r for r in load(a.dir) if r["op"] == "submit" and r["ok"]
                and r["t0"] >= a.after]
        if acks:
            print("%d" % round((min(r["t1"] for r in acks) - a.after) * 1000))
            return 0
        if time.time() >= deadline:
            print("history.py: no submit started after %.3f was acknowledged "
                  "within %gs" % (a.after, a.timeout), file=sys.stderr)
            return 1
        time.sleep(0.05)


def list_jobs(timeout):
    deadline = time.time() + timeout
    while True:
        rc, out, err = run_cli(["jobs", "--all", "--json"], 30)
        if rc == 0:
            return json.loads(out)["jobs"]
        if time.time() >= deadline:
            sys.exit("history.py: cohort jobs --all --json failed (status %s): %s"
                     % (rc, first_line(err)))
        time.sleep(0.2)


def cmd_check(a):
    with open(os.path.join(a.dir, "run.json")) as f:
        prefix = json.load(f)["prefix"] + "-"
    # What was acknowledged before the listing began must be in it; what
    # was sent by the time it ended may be.
    recs = load(a.dir)
    if a.jobs:
        with open(a.jobs) as f:
            jobs = json.load(f)["jobs"]
    else:
        jobs = list_jobs(a.timeout)
    later = load(a.dir)
    if a.save:
        with open(a.save, "w") as f:
            json.dump({"jobs": jobs}, f)
    bad = {}

    def fail(kind, text):
        bad.setdefault(kind, []).append(text)

    by_id, by_name = {}, {}
    for j in jobs:
        if j["id"] in by_id:
            fail("id listed twice", "job %d" % j["id"])
        by_id[j["id"]] = j
        by_name.setdefault(j.get("name") or "", []).append(j)

    subs = [r for r in recs if r["op"] == "submit"]
    acked = [r for r in subs if r["ok"]]
    unknown = [r for r in subs if not r["ok"]]
    subs_later = [r for r in later if r["op"] == "submit"]
    sent = {r["name"] for r in subs_later}
    known = {r["name"] for r in subs}
    owner = {}
    for r in subs_later:
        if not r["ok"]:
            continue
        if r["id"] in owner:
            fail("id acknowledged twice", "job %d for %s and %s"
                 % (r["id"], owner[r["id"]], r["name"]))
        owner[r["id"]] = r["name"]
    for r in acked:
        j = by_id.get(r["id"])
        if j is None:
            fail("acknowledged submit lost", "%s (job %d, acknowledged at %.3f)"
                 % (r["name"], r["id"], r["t1"]))
        elif j.get("name") != r["name"]:
            fail("acknowledged id holds another job", "job %d is %r, acknowledged as %r"
                 % (r["id"], j.get("name"), r["name"]))
        n = len(by_name.get(r["name"], []))
        if n > 1:
            fail("acknowledged submit duplicated", "%s: jobs %s" % (
                r["name"], ", ".join(str(x["id"]) for x in by_name[r["name"]])))
    # Sent during the listing: any outcome, at most once.
    during = [r for r in subs_later if r["name"] not in known]
    present_unknown = 0
    for r in unknown + during:
        n = len(by_name.get(r["name"], []))
        present_unknown += n == 1
        if n > 1:
            fail("unknown submit duplicated", "%s: jobs %s" % (
                r["name"], ", ".join(str(x["id"]) for x in by_name[r["name"]])))
    # While the submitters run, each may have one submit in flight (sent,
    # not yet recorded when the listing ended): the next name of each is
    # an unknown outcome too.
    last = {}
    for r in subs_later:
        m = re.fullmatch(re.escape(prefix) + r"s([0-9]+)-([0-9]+)", r["name"])
        if m:
            k, i = int(m.group(1)), int(m.group(2))
            last[k] = max(last.get(k, 0), i)
    in_flight = {"%ss%d-%d" % (prefix, k, i + 1) for k, i in last.items()}
    for name in in_flight:
        if len(by_name.get(name, [])) > 1:
            fail("unknown submit duplicated", "%s (in flight): jobs %s" % (
                name, ", ".join(str(x["id"]) for x in by_name[name])))
    for name, js in sorted(by_name.items()):
        if name.startswith(prefix) and name not in sent and name not in in_flight:
            fail("job nobody submitted", "%s: jobs %s" % (
                name, ", ".join(str(x["id"]) for x in js)))
    cancels = [r for r in recs if r["op"] == "cancel"]
    cancel_ack = [r for r in cancels if r["ok"]]
    for r in cancel_ack:
        j = by_id.get(r["id"])
        if j is not None and j["state"] not in FINISHED:
            fail("acknowledged cancel not applied", "job %d is %s"
                 % (r["id"], j["state"]))
    print("history: %d jobs listed; %d submits acknowledged, %d unknown, %d "
          "sent while listing (%d of these two present); %d cancels "
          "acknowledged, %d unknown"
          % (len(jobs), len(acked), len(unknown), len(during), present_unknown,
             len(cancel_ack), len(cancels) - len(cancel_ack)))
    if not bad:
        print("history: OK")
        return 0
    for kind, texts in bad.items():
        print("history: FAIL %s: %d" % (kind, len(texts)))
        for t in texts[:20]:
            print("  " + t)
    return 1


def pct(v, p):
    v = sorted(v)
    # Nearest rank.
    k = max(0, min(len(v) - 1, -(-len(v) * p // 100) - 1))
    return v[int(k)]


def cmd_stats(a):
    v = a.values
    if not v:
        sys.exit("history.py stats: no values")
    print("n %d median %d p99 %d min %d max %d" % (
        len(v), round(pct(v, 50)), round(pct(v, 99)), min(v), max(v)))
    return 0


def main():
    p = argparse.ArgumentParser(prog="history.py")
    sp = p.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--submitters", type=int, default=4)
    r.add_argument("--prefix", default="h")
    r.add_argument("--cancel-every", type=int, default=5)
    r.add_argument("--interval", type=float, default=0.0)
    r.add_argument("--timeout", type=float, default=20.0)
    r.add_argument("--max-seconds", type=float, default=300.0)
    r.add_argument("--stop-file")
    r.add_argument("--submit-args", default=DEFAULT_SUBMIT)
    f = sp.add_parser("first-ack")
    f.add_argument("--dir", required=True)
    f.add_argument("--after", type=float, required=True)
    f.add_argument("--timeout", type=float, default=30.0)
    c = sp.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--jobs")
    c.add_argument("--timeout", type=float, default=30.0)
    c.add_argument("--save")
    s = sp.add_parser("stats")
    s.add_argument("values", nargs="*", type=float)
    a = p.parse_args()
    if a.cmd == "run":
        a.submit = shlex.split(a.submit_args)
        return cmd_run(a)
    if a.cmd == "first-ack":
        return cmd_first_ack(a)
    if a.cmd == "check":
        return cmd_check(a)
    return cmd_stats(a)


if __name__ == "__main__":
    sys.exit(main())
