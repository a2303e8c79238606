#!/bin/bash
# Launch-path timeline (figures only; make check runs it tiny through
# t092): where the time of a job's way from submit to its end goes,
# stage by stage, read from the daemons' own log stamps (milliseconds).
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/timeline.sh [RUNS [TASKS]]
#
# On a cohort-local cluster of 2 nodes x 8 GPUs, whose controller and
# agents log at debug level (the stages "submit committed", "placed by a
# pass" and "prepared" are debug lines), RUNS times (default 10):
#   (a) a 2-node x 8-GPU gang of `true` (TASKS tasks per node, default
#       1), offsets from the controller's "submitted" line;
#   (b) an afterok chain link: A (held) and B (afterok:A), one node and
#       one GPU each, both `true`; offsets from A's release, the moment A
#       may run, since B must be waiting before A can end.
# A stage spanning nodes or ranks is its last line (every node prepared,
# every task started, every task's exit seen). Prints each run's offsets,
# then per stage the median offset, the median delta from the stage
# above, and the min and max offset. A stage whose line is missing is
# printed as "-" and the script exits 2. Nothing is compared with a
# bound.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

RUNS=${1:-10}
TASKS=${2:-1}
for v in "$RUNS" "$TASKS"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "RUNS and TASKS must be positive integers, not '$v'"
done

# The three stages that have no line at info level log at debug.
COHORT_LOCAL_CONTROLLER_CONF=$'[controller]\nlog_level = debug'
COHORT_LOCAL_AGENT_CONF=$'node01: log_level = debug\nnode02: log_level = debug'
export COHORT_LOCAL_CONTROLLER_CONF COHORT_LOCAL_AGENT_CONF
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 8
wait_node 30 node01 "n['state'] == 'UP'"
wait_node 30 node02 "n['state'] == 'UP'"

: >"$T/gang.ids"
: >"$T/chain.ids"
for ((r = 1; r <= RUNS; r++)); do
	id=$(job_submit --name "tl-gang-$r" --nodes 2 --gpus-per-node 8 \
		--tasks-per-node "$TASKS" -- true)
	wait_state 60 "$id" COMPLETED
	echo "$id" >>"$T/gang.ids"
	a=$(job_submit --name "tl-a-$r" --hold --nodes 1 --gpus-per-node 1 -- true)
	b=$(job_submit --name "tl-b-$r" --dependency "afterok:$a" --nodes 1 \
		--gpus-per-node 1 -- true)
	expect_exit 0 cohort release "$a"
	wait_state 60 "$b" COMPLETED
	echo "$a $b" >>"$T/chain.ids"
done

# Every line the stages need is written before the state the loop waited
# for was reported, so the logs are complete here.
"$PYTHON" - "$C" "$T/gang.ids" "$T/chain.ids" "$TASKS" <<'PY'
import datetime, glob, re, statistics, sys

cdir, gang_ids, chain_ids, tasks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
STAMP = re.compile(r'^(\S+Z) (\S+): (?:debug: )?(.*)$')

def read(path):
    out = []
    for line in open(path, errors="replace"):
        m = STAMP.match(line)
        if m:
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ")
            ms = t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000
            out.append((round(ms), m.group(3)))
    return out

ctl = read(cdir + "/cohortd.log")
agents = [read(p) for p in sorted(glob.glob(cdir + "/node[0-9]*.log"))]

def ctl_at(job, what):
    """The first controller line 'job J: WHAT...'."""
    pre = "job %s: %s" % (job, what)
    return next((t for t, m in ctl if m.startswith(pre)), None)

def agents_last(job, pattern):
    """The last agent line matching 'job J' + pattern, on any node."""
    rx = re.compile(r"^job %s%s" % (job, pattern))
    ts = [t for log in agents for t, m in log if rx.match(m)]
    return max(ts) if ts else None

def job_stages(job, prefix=""):
    return [
        (prefix + "placed by a pass", ctl_at(job, "placed by a pass")),
        (prefix + "launch sent", ctl_at(job, "launching on")),
        (prefix + "prepared (every node)", agents_last(job, r": prepared ")),
        (prefix + "task started (every task)", agents_last(job, r" rank \d+: started ")),
        (prefix + "RUNNING (every node answered)", ctl_at(job, "RUNNING on")),
        (prefix + "exit seen by the agent (every task)", agents_last(job, r" rank \d+: task ended ")),
        (prefix + "exit recorded (COMPLETED)", ctl_at(job, "COMPLETED")),
    ]

def gang(job):
    return [("submit received", ctl_at(job, "submitted by")),
            ("submit committed", ctl_at(job, "submit committed"))] + job_stages(job)

def chain(a, b):
    return ([("A released (its submit)", ctl_at(a, "released by"))] +
            job_stages(a, "A ") + job_stages(b, "B "))

missing = False

def table(title, runs):
    global missing
    names = [n for n, _ in runs[0][1]]
    offs = {n: [] for n in names}
    deltas = {n: [] for n in names}
    print(title)
    for label, stages in runs:
        t0 = stages[0][1]
        row = []
        prev = None
        for n, t in stages:
            if t is None or t0 is None:
                missing = True
                row.append("-")
                prev = None
                continue
            offs[n].append(t - t0)
            if prev is not None:
                deltas[n].append(t - prev)
            elif n == names[0]:
                deltas[n].append(0)
            prev = t
            row.append(str(t - t0))
        print("  %s: %s" % (label, " ".join(row)))
    print("  %-40s %8s %8s %6s %6s" % ("stage (ms from the first)", "median", "delta", "min", "max"))
    for n in names:
        if not offs[n]:
            print("  %-40s %8s %8s %6s %6s" % (n, "-", "-", "-", "-"))
            continue
        d = "%.1f" % statistics.median(deltas[n]) if deltas[n] else "-"
        print("  %-40s %8.1f %8s %6d %6d" % (n, statistics.median(offs[n]), d,
                                            min(offs[n]), max(offs[n])))
    print()

gangs = [l.split()[0] for l in open(gang_ids) if l.strip()]
chains = [l.split() for l in open(chain_ids) if l.strip()]
table("(a) 2-node x 8-GPU gang of `true`, %d task(s) per node, %d runs" % (tasks, len(gangs)),
      [("job " + j, gang(j)) for j in gangs])
table("(b) afterok chain link, A then B, 1 GPU each, %d runs" % len(chains),
      [("jobs %s %s" % (a, b), chain(a, b)) for a, b in chains])
sys.exit(2 if missing else 0)
PY
