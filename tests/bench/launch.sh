#!/bin/bash
# Launch-path benchmark (not part of make check): how long the agent
# takes to start a job's tasks on its node.
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/launch.sh [RUNS [TASKS]]
#
# On a cohort-local cluster of one node (cgroup = auto, so each task
# gets a cgroup where the node has cgroup v2), RUNS times (default 20) a
# job of TASKS tasks (default 8) of `true` runs to its end, one job at a
# time. From the daemons' log stamps (milliseconds) it takes, per job,
# the controller's "launching" line to the agent's last "rank R:
# started" line (launch sent -> all tasks started), and the agent's
# first to last "started" line divided by TASKS - 1 (the agent's cost
# of one more task). Prints one line per job and the medians, with how
# the agent puts tasks into their cgroups (its log says). Figures are
# printed, never compared with anything.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

RUNS=${1:-20}
TASKS=${2:-8}
for v in "$RUNS" "$TASKS"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || fail "RUNS and TASKS must be positive integers, not '$v'"
done
[ "$TASKS" -ge 2 ] || fail "TASKS must be at least 2"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
wait_node 20 node01 "n['state'] == 'UP'"
echo "# $(grep -m1 -o 'cgroup per job.*' "$C/node01.log" || echo 'no cgroup line in the agent log')"
echo "# $(grep -m1 -o "tasks.* cgroups.*" "$C/node01.log" || echo "no cgroups")"

# Milliseconds since the epoch of a log line's ISO stamp.
stamp_ms() {
	"$PYTHON" -c '
import datetime, sys
s = sys.argv[1]
t = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
print(int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000))' "$1"
}

: >"$T/results"
for ((r = 1; r <= RUNS; r++)); do
	id=$(job_submit --name "launch-$r" --nodes 1 --gpus-per-node 0 \
		--tasks-per-node "$TASKS" -- true)
	wait_state 60 "$id" COMPLETED
	sent=$(grep -m1 "job $id: launching on" "$C/cohortd.log" | cut -d' ' -f1)
	starts=$(grep "job $id rank [0-9]*: started" "$C/node01.log" | cut -d' ' -f1)
	[ -n "$sent" ] && [ "$(echo "$starts" | wc -l)" = "$TASKS" ] ||
		fail "job $id: no launch line or not $TASKS start lines in the logs"
	s=$(stamp_ms "$sent")
	first=$(stamp_ms "$(echo "$starts" | head -1)")
	last=$(stamp_ms "$(echo "$starts" | tail -1)")
	all=$((last - s))
	per=$(awk -v a="$first" -v b="$last" -v n="$TASKS" 'BEGIN { printf "%.2f", (b - a) / (n - 1) }')
	echo "job $id: launch sent -> $TASKS tasks started ${all} ms; ${per} ms per task"
	echo "$all $per" >>"$T/results"
done
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "median over $RUNS jobs of $TASKS tasks: launch sent -> all started $(cut -d' ' -f1 "$T/results" | median) ms, $(cut -d' ' -f2 "$T/results" | median) ms per task"
