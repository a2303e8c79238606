#!/bin/bash
# tests/bench/failover.sh with one run: it must print its result line and
# its summary with numbers, exit 0 and leave no process behind. make
# check times nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

FO=$top_srcdir/tests/bench/failover.sh
[ -r "$FO" ] || fail "$FO is missing"
# Every process the benchmark starts inherits this.
MARK="COHORT_FAILOVER_SMOKE_MARK=$T"

t0=$SECONDS
rc=0
env "$MARK" timeout -k 10 150 bash "$FO" 1 >"$OUT" 2>"$ERR" || rc=$?
cat "$OUT"
[ "$rc" = 0 ] || fail "failover.sh 1 exited $rc after $((SECONDS - t0)) s: $(tail -n 30 "$ERR")"
log "failover.sh 1 took $((SECONDS - t0)) s"

"$PYTHON" - "$OUT" <<'EOF' || fail "failover.sh output is not as expected"
import re, sys
text = open(sys.argv[1]).read()
n = r"([0-9]+)"
f = r"([0-9]+(?:\.[0-9]+)?)"
run = re.findall(r"^run +1: job [1-9][0-9]*, node[0-9]+ failed: running again +" + n +
                 r" ms after the fail command \(controller: " + n +
                 r" ms after it saw the failure\); lost_work_s " + f +
                 r"; fake job redid " + n + r" step\(s\) \(" + f +
                 r" s\): old run stopped at step " + n +
                 r", newest checkpoint on disk " + n + r", resumed from " + n + r"$",
                 text, re.M)
if len(run) != 1:
    sys.exit("expected one 'run  1: ...' line with numbers, got %d in:\n%s" % (len(run), text))
ms, ctl_ms, lost, redone, redone_s, stopped, newest, resumed = run[0]
# The job had a checkpoint (step >= 10) when the failure was injected and
# resumed from one it had written.
if not (10 <= int(resumed) <= int(stopped)):
    sys.exit("resumed from step %s, old run stopped at %s" % (resumed, stopped))
if float(lost) < 0:
    sys.exit("negative lost_work_s %s" % lost)
summary = re.findall(r"^# 1 runs: fail -> RUNNING again: median " + n +
                     r" ms \(min " + n + r", max " + n + r"\); controller's failure-seen -> running: median " + n +
                     r" ms; lost work: controller lost_work_s median " + f +
                     r" s, fake job median " + n + r" step\(s\) redone", text, re.M)
if len(summary) != 1:
    sys.exit("expected one '# 1 runs: ...' summary with numbers in:\n%s" % text)
if summary[0][0] != ms:
    sys.exit("the median of one run (%s ms) is not that run (%s ms)" % (summary[0][0], ms))
EOF

# No process it started is left (its cluster is brought down on exit).
left=$(MARK=$MARK "$PYTHON" - <<'EOF'
import os
mark = os.environ["MARK"].encode()
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) == os.getpid():
        continue
    try:
        with open("/proc/%s/stat" % p, "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                continue
        with open("/proc/%s/environ" % p, "rb") as f:
            if mark not in f.read().split(b"\0"):
                continue
        with open("/proc/%s/cmdline" % p, "rb") as f:
            print(p, f.read().replace(b"\0", b" ").decode(errors="replace")[:200])
    except (OSError, IndexError):
        continue
EOF
)
if [ -n "$left" ]; then
	while read -r pid _; do kill -9 "$pid" 2>/dev/null || true; done <<<"$left"
	fail "failover.sh left processes behind:"$'\n'"$left"
fi
exit 0
