# shellcheck shell=bash
# Sourced by t090-vs-slurm-smoke.sh and t091-vs-slurm-full.sh after
# lib.sh: the benchmark's path, and checks of what it leaves behind and of
# the table it prints.
VS=$top_srcdir/tests/bench/vs-slurm.sh
[ -x "$top_builddir/tests/bench/bench_submit" ] ||
	fail "$top_builddir/tests/bench/bench_submit is not built (make check builds it)"
# Every process the benchmark starts inherits this (its daemons also
# name their files under $T on their command lines).
MARK="VS_SLURM_SMOKE_MARK=$T"

# leftovers: live processes, other than this test's, that carry $MARK in
# their environment or $T in their command line; "PID COMMAND" a line.
leftovers() {
	MARK=$MARK TDIR=$T "$PYTHON" - <<'EOF'
import os
mark = os.environ["MARK"].encode()
tdir = (os.environ["TDIR"] + "/").encode()
skip = {os.getpid(), os.getppid()}
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) in skip:
        continue
    try:
        with open("/proc/%s/stat" % p, "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                continue
        with open("/proc/%s/cmdline" % p, "rb") as f:
            cmd = f.read()
        try:
            with open("/proc/%s/environ" % p, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            env = []
    except (OSError, IndexError):
        continue
    if mark in env or tdir in cmd:
        print(p, cmd.replace(b"\0", b" ").decode(errors="replace")[:200])
EOF
}

# no_leftovers WHAT: fail (after killing them) if any process is left.
no_leftovers() {
	local left pid
	left=$(leftovers)
	[ -z "$left" ] && return 0
	while read -r pid _; do kill -9 "$pid" 2>/dev/null || true; done <<<"$left"
	fail "$1 left processes behind:"$'\n'"$left"
}

# check_table FILE MODE JOBS PAR TASKS CHAIN REPEATS SHORT: every row of the
# table, in order, with numbers (MODE cohort-only: the Cohort column alone; full: both).
check_table() {
	"$PYTHON" - "$@" <<'EOF'
import re, sys
path, mode, jobs, par = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tasks, chain = int(sys.argv[5]), int(sys.argv[6])
repeats, short = int(sys.argv[7]), int(sys.argv[8])
lines = open(path).read().splitlines()
num = re.compile(r"^[0-9]+(\.[0-9]+)?$")
ms = re.compile(r"^[0-9]+(\.[0-9]+)?ms$")
clients = []
for c in (1, par, 16):
    c = min(c, jobs)
    if c not in clients:
        clients.append(c)
labels = ["(a) submits/s, sequential (CLI)", "    client CPU per submit, ms"]
if par != 1:
    labels += ["(a) submits/s, %d submitters (CLI)" % par, "    client CPU per submit, ms"]
labels += ["(a) submits/s, sequential, jobs held"]
if par != 1:
    labels += ["(a) submits/s, %d submitters, jobs held" % par]
labels += ["    bench_submit --clients %d (kept conn.)" % c for c in clients]
labels += ["(b) %d jobs first submit->all done, s" % jobs, "    (as jobs/s end to end)",
           "    of which after the last submit, s", "(c) 2x8 gang submit->running, median s",
           "(d) array of %d tasks submit->all done, s" % tasks,
           "(e) afterok chain of %d jobs, s per link" % chain,
           "(f) 4-node step launch, median of %d, s" % repeats, "    p90, s",
           "(g) %d short steps in one job, steps/s" % short]
# May be 0.0 (CPU time is counted in clock ticks); the rest must be > 0.
may_be_zero = {"    client CPU per submit, ms"}
head = ["Cohort", "ratio"] if mode == "cohort-only" else ["Slurm", "Cohort", "ratio"]
errs = []
starts = [i for i, l in enumerate(lines) if l[:46].strip() == "" and l.split() == head]
if len(starts) != 1:
    sys.exit("expected one table header %s, found %d" % (head, len(starts)))
rows = []
for l in lines[starts[0] + 1:]:
    if not l.strip():
        break
    rows.append(l)
if [r[:46].rstrip() for r in rows] != labels:
    sys.exit("rows %r, expected %r" % ([r[:46].rstrip() for r in rows], labels))
for r, label in zip(rows, labels):
    f = r[46:].split()
    bench = "bench_submit" in label
    if mode == "full":
        slurm, f = f[0], f[1:]
        if bench:
            if slurm != "-":
                errs.append("%r: Slurm column %r, expected -" % (r, slurm))
        elif not num.match(slurm):
            errs.append("%r: Slurm column %r is not a number" % (r, slurm))
        elif label not in may_be_zero and float(slurm) <= 0:
            errs.append("%r: Slurm column %r is not positive" % (r, slurm))
    if not f or not num.match(f[0]):
        errs.append("%r: Cohort column is not a number" % r)
        continue
    if label not in may_be_zero and float(f[0]) <= 0:
        errs.append("%r: Cohort column %r is not positive" % (r, f[0]))
    rest = f[1:]
    if bench:
        ok = len(rest) == 2 and rest[0] == "p50" and ms.match(rest[1])
    elif mode == "cohort-only":
        ok = rest == ["-"]
    else:
        ok = len(rest) == 1 and (rest[0] == "-" or
                                 (rest[0].endswith("x") and num.match(rest[0][:-1])))
    if not ok:
        errs.append("%r: ratio column %r" % (r, " ".join(rest)))
text = "\n".join(lines)
gang = r"gang samples \(s\): Cohort [0-9.]+ ?$" if mode == "cohort-only" else \
    r"gang samples \(s\): Slurm [0-9.]+ ?\n +Cohort [0-9.]+ ?$"
if not re.search(gang, text, re.M):
    errs.append("no gang samples line")
steps = r"^step launch samples \(s\): Cohort( [0-9.]+){%d} ?$" % repeats \
    if mode == "cohort-only" else \
    r"^step launch samples \(s\): Slurm( [0-9.]+){%d} ?\n +Cohort( [0-9.]+){%d} ?$" % (repeats, repeats)
if not re.search(steps, text, re.M):
    errs.append("no step launch samples line with %d samples a side" % repeats)
poll = r"^one poll \(cohort show\), ms: Cohort [0-9.]+$" if mode == "cohort-only" else \
    r"^one poll \(squeue / cohort show\), ms: Slurm [0-9.]+  Cohort [0-9.]+$"
if not re.search(poll, text, re.M):
    errs.append("no poll cost line")
if mode == "cohort-only":
    title = [l for l in lines if l.startswith("Cohort only (--cohort-only, no Slurm): ")]
    if len(title) != 1:
        errs.append("no 'Cohort only' title line")
    if any(re.search(r"slurm", l, re.I) for l in lines if l not in title):
        errs.append("cohort-only output names Slurm outside its title")
if errs:
    sys.exit("\n".join(errs))
EOF
}

