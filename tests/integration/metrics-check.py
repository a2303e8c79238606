#!/usr/bin/python3
"""Checks on a Prometheus text exposition scraped from cohortd (t700,
t701), independent of promtool: the format's rules for histograms, the
families that must add up, and the Grafana dashboard's metric names.

  metrics-check.py lint FILE          every histogram well formed
  metrics-check.py get FILE SERIES    a sample's value ('name{a="b"}',
                                      labels in any order), or 'missing'
  metrics-check.py sum FILE FAMILY    the sum of a family's samples
  metrics-check.py addup FILE GPUS NODES
                                      cohort_gpus adds up to GPUS,
                                      cohort_nodes and cohort_nodes_drain
                                      to NODES
  metrics-check.py dashboard FILE JSON
                                      every cohort_* name in the
                                      dashboard's expressions is a series
                                      of FILE
Exit 0 when the check holds, 1 with a line saying why otherwise."""
import json
import math
import re
import sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def labels_of(text):
    out, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels: {%s}" % text)
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return tuple(sorted(out.items()))


def parse(path):
    """[(name, labels, value)], {family: type}"""
    samples, types = [], {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("# TYPE "):
                _, _, fam, typ = line.split(" ", 3)
                if fam in types:
                    raise ValueError("line %d: TYPE of %s twice" % (n, fam))
                types[fam] = typ
                continue
            if line.startswith("#") or not line:
                continue
            m = LINE.match(line)
            if not m:
                raise ValueError("line %d: not a sample: %r" % (n, line))
            samples.append((m.group(1), labels_of(m.group(3) or ""),
                            float(m.group(4))))
    return samples, types


def fail(text):
    print("metrics-check: " + text)
    sys.exit(1)


def lint(samples, types):
    """Histograms: for each label set, buckets non-decreasing by le, a
    +Inf bucket equal to _count, a _sum."""
    for fam, typ in types.items():
        if typ != "histogram":
            continue
        series = {}
        for name, labels, v in samples:
            d = dict(labels)
            if name == fam + "_bucket":
                le = d.pop("le")
                key = tuple(sorted(d.items()))
                series.setdefault(key, {"b": [], "sum": None, "count": None})
                series[key]["b"].append((math.inf if le == "+Inf"
                                         else float(le), v))
            elif name in (fam + "_sum", fam + "_count"):
                key = tuple(sorted(d.items()))
                series.setdefault(key, {"b": [], "sum": None, "count": None})
                series[key][name[len(fam) + 1:]] = v
        if not series:
            fail("histogram %s has no series" % fam)
        for key, s in series.items():
            b = s["b"]
            if not b or b[-1][0] != math.inf:
                fail("%s%s: no +Inf bucket last" % (fam, dict(key)))
            for (le0, c0), (le1, c1) in zip(b, b[1:]):
                if le1 <= le0 or c1 < c0:
                    fail("%s%s: buckets not cumulative at le=%s" %
                         (fam, dict(key), le1))
            if s["count"] is None or s["sum"] is None:
                fail("%s%s: no _sum or _count" % (fam, dict(key)))
            if b[-1][1] != s["count"]:
                fail("%s%s: +Inf bucket %s != _count %s" %
                     (fam, dict(key), b[-1][1], s["count"]))


def family_sum(samples, fam):
    vals = [v for name, _, v in samples if name == fam]
    if not vals:
        fail("no samples of %s" % fam)
    return sum(vals)


def get(samples, series):
    m = re.match(r'^([^{]+)(\{(.*)\})?$', series)
    want = (m.group(1), labels_of(m.group(3) or ""))
    for name, labels, v in samples:
        if (name, labels) == want:
            return v
    return None


def fmt(v):
    return "%d" % v if v == int(v) else "%g" % v


def main(argv):
    if len(argv) < 3:
        fail("usage: see the comment at the top")
    try:
        samples, types = parse(argv[2])
    except (OSError, ValueError) as e:
        fail(str(e))
    cmd = argv[1]
    if cmd == "lint":
        lint(samples, types)
    elif cmd == "get":
        v = get(samples, argv[3])
        print("missing" if v is None else fmt(v))
    elif cmd == "sum":
        print(fmt(family_sum(samples, argv[3])))
    elif cmd == "addup":
        gpus, nodes = float(argv[3]), float(argv[4])
        for fam, want in (("cohort_gpus", gpus), ("cohort_nodes", nodes),
                          ("cohort_nodes_drain", nodes)):
            got = family_sum(samples, fam)
            if got != want:
                fail("%s adds up to %s, not %s: %s" % (
                    fam, fmt(got), fmt(want),
                    {dict(l).get("state"): fmt(v)
                     for n, l, v in samples if n == fam}))
    elif cmd == "dashboard":
        with open(argv[3]) as f:
            dash = json.load(f)
        names = {name for name, _, _ in samples}
        exprs = []

        def walk(x):
            if isinstance(x, dict):
                for k, v in x.items():
                    if k in ("expr", "query") and isinstance(v, str):
                        exprs.append(v)
                    else:
                        walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)
        walk(dash)
        if not exprs:
            fail("%s has no expressions" % argv[3])
        used = set()
        for e in exprs:
            used.update(re.findall(r'\bcohort_[a-z0-9_]+', e))
        missing = sorted(used - names)
        if missing:
            fail("the dashboard uses metrics no scrape has: " +
                 ", ".join(missing))
        print("%d expressions, %d metrics, all in the scrape" %
              (len(exprs), len(used)))
    else:
        fail("unknown check %r" % cmd)


main(sys.argv)
