#!/bin/bash
# Arrays and dependencies benchmark (not part of make check): a real
# controller against 4 simulated nodes of 64 GPUs each (cohort-simnodes).
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/array-bench.sh \
#       [--tasks 1000] [--chain 200]
#
#   1. one submit of a TASKS-task array of one-GPU tasks that end at once
#      (SIM_SECONDS=0): the time the submit took, and from it to every
#      task COMPLETED;
#   2. a chain of CHAIN jobs, each afterok the one before, its head
#      afterany a blocker: the chain is submitted first, then the blocker
#      cancelled; the time from that cancel to the last link COMPLETED,
#      and per link.
# Every wait is bounded; every process started is stopped on exit.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TASKS=1000
CHAIN=200
while [ $# -gt 0 ]; do
	case "$1" in
	--tasks) TASKS=$2; shift 2 ;;
	--chain) CHAIN=$2; shift 2 ;;
	*) fail "unknown option $1" ;;
	esac
done

SIM=$top_builddir/cohort-simnodes
[ -x "$SIM" ] || fail "$SIM is not built"
C=$T/cluster
mkdir -p "$C"
cohort-pki "$C" --controller 127.0.0.1 --admins ops --users alice \
	>"$T/pki.out" 2>&1 || fail "cohort-pki: $(cat "$T/pki.out")"
"$SIM" --nodes 4 --write-topology "$C/topology.conf" >/dev/null ||
	fail "cannot write the topology"
cat >"$C/cohortd.conf" <<CONF
[controller]
listen = 127.0.0.1:0
port_file = cohortd.port
database = cohort.db
topology = topology.conf
[tls]
ca = ca.pem
cert = controller.crt
key = controller.key
CONF
cohortd -c "$C/cohortd.conf" -f >"$C/cohortd.log" 2>&1 &
track_pid $!
wait_for 10 test -s "$C/cohortd.port" || fail "cohortd wrote no port file"
PORT=$(tr -dc 0-9 <"$C/cohortd.port")
"$SIM" --server "127.0.0.1:$PORT" --ca "$C/ca.pem" --ca-key "$C/ca.key" \
	--nodes 4 --gpus 64 --task-seconds 0 --stats 0 >"$C/sim.out" \
	2>"$C/sim.log" &
track_pid $!
wait_for 30 grep -q "^ready 4 nodes registered" "$C/sim.out" ||
	fail "nodes did not register: $(cat "$C/sim.out")"
export COHORT_SERVER=127.0.0.1:$PORT COHORT_CA=$C/ca.pem \
	COHORT_CERT=$C/user-alice.crt COHORT_KEY=$C/user-alice.key

ms() { echo $(($(_now_us) / 1000)); }
unfinished() {
	cohort jobs --json >"$T/u.json" 2>/dev/null || return 1
	json_get "$T/u.json" 'len(d["jobs"])'
}
none_left() { [ "$(unfinished)" = 0 ]; }

# 1. The array.
t0=$(ms)
a=$(job_submit --array "0-$((TASKS - 1))" --gpus-per-node 1 \
	--env SIM_SECONDS=0 -- true)
t1=$(ms)
wait_for 300 none_left || fail "array $a not done after 300 s: $(unfinished) left"
t2=$(ms)
cohort jobs --all --json >"$T/a.json"
done_n=$(json_get "$T/a.json" "len([j for j in d['jobs'] if j['array_id'] == $a and j['state'] == 'COMPLETED'])")
[ "$done_n" = "$TASKS" ] || fail "array $a: $done_n of $TASKS COMPLETED"
echo "array: $TASKS tasks: submit $((t1 - t0)) ms (one request, one transaction); submit to all COMPLETED $((t2 - t0)) ms ($(((t2 - t0) * 1000 / TASKS)) us per task)"

# 2. The chain.
blocker=$(job_submit --gpus-per-node 1 --env SIM_SECONDS=3600 -- true)
wait_state 30 "$blocker" RUNNING
prev=$(job_submit --gpus-per-node 1 --env SIM_SECONDS=0 --dependency "afterany:$blocker" -- true)
first=$prev
for _ in $(seq 2 "$CHAIN"); do
	prev=$(job_submit --gpus-per-node 1 --env SIM_SECONDS=0 --dependency "afterok:$prev" -- true)
done
t0=$(ms)
expect_exit 0 cohort cancel "$blocker"
wait_for 600 _job_in_state "$prev" COMPLETED FAILED CANCELLED ||
	fail "chain's last job $prev not done after 600 s"
t1=$(ms)
[ "$(job_state "$prev")" = COMPLETED ] || fail "chain's last job $prev is $(job_state "$prev")"
[ "$(job_state "$first")" = COMPLETED ] || fail "chain's first job $first is not COMPLETED"
passes=$(grep -c "pass: " "$C/cohortd.log" || true)
echo "chain: $CHAIN jobs afterok one another: $((t1 - t0)) ms from the blocker's cancel to the last COMPLETED, $(((t1 - t0) * 1000 / CHAIN)) us per link"
echo "($passes passes that started something, in the controller's log)"
# Of a link, the controller's own part: from a job's end to the launch of
# the next (one pass); the rest is the simulated node's start and exit.
"$PYTHON" - "$C/cohortd.log" "$first" "$prev" <<'PY'
import re, sys
from datetime import datetime
first, last = int(sys.argv[2]), int(sys.argv[3])
ended, launched = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)Z cohortd: job (\d+): (COMPLETED|launching)", line)
    if not m:
        continue
    t = datetime.fromisoformat(m.group(1)).timestamp() * 1000
    j = int(m.group(2))
    (ended if m.group(3) == "COMPLETED" else launched)[j] = t
gaps = [launched[j + 1] - ended[j] for j in range(first, last) if j in ended and j + 1 in launched]
runs = [ended[j] - launched[j] for j in range(first, last + 1) if j in ended and j in launched]
if gaps:
    gaps.sort()
    runs.sort()
    print(f"chain: end of a link to launch of the next: median {gaps[len(gaps) // 2]:.1f} ms, max {gaps[-1]:.1f} ms; launch to end on the simulated node: median {runs[len(runs) // 2]:.1f} ms")
PY
[ -z "${KEEP_LOG:-}" ] || cp "$C/cohortd.log" "$KEEP_LOG"
