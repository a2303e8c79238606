#!/bin/bash
# --cpus-per-task: one node with two simulated GPUs, GPU 0 on
# NUMA node 0 and GPU 1 on NUMA node 1, and numa_cpus mapping CPU 0 to
# node 0 and CPU 1 to node 1 (this machine may have one NUMA node).
# A job of 2 tasks x 1 CPU: each task's /proc/self/status says it may
# run only on the CPU of its GPU's NUMA node, and COHORT_TASK_CPUS says
# the same. A job without --cpus-per-task is not bound. A task asking
# for more cores than its NUMA node has gets others and the agent says
# so. Submit refuses more CPUs than a node has; #SBATCH -c is read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -lt 2 ] || ! taskset -pc $$ 2>/dev/null | grep -Eq ': (0-[1-9]|0,1)'; then
	echo "SKIP: needs CPUs 0 and 1 to bind to (this machine: $ncpu CPUs, $(taskset -pc $$ 2>&1))"
	exit 77
fi

C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node01: numa_cpus = 0:0 1:1" \
	cluster_up "$C" --nodes 1 --gpus 2
wait_node 20 node01 "n['state'] == 'UP'"
W=$(world_dir out)

# The task's line: rank, GPU, allowed CPUs, COHORT_TASK_CPUS.
cat >"$W/show.sh" <<'SH'
#!/bin/sh
echo "rank=$RANK gpu=$CUDA_VISIBLE_DEVICES allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) env=${COHORT_TASK_CPUS-unset}" >"$1/task-$COHORT_JOB_ID-$RANK.txt"
SH
chmod 755 "$W/show.sh"

# task_line JOB RANK: what the task wrote.
task_line() {
	cat "$W/task-$1-$2.txt" 2>/dev/null || fail "job $1 rank $2 wrote nothing"
}

### 1. Two tasks, one GPU and one core each: each next to its GPU.
a=$(job_submit --time 5m --workdir "$W" --gpus-per-node 2 \
	--tasks-per-node 2 --cpus-per-task 1 -- "$W/show.sh" "$W")
wait_state 20 "$a" COMPLETED
[ "$(task_line "$a" 0)" = "rank=0 gpu=0 allowed=0 env=0" ] ||
	fail "rank 0: $(task_line "$a" 0)"
[ "$(task_line "$a" 1)" = "rank=1 gpu=1 allowed=1 env=1" ] ||
	fail "rank 1: $(task_line "$a" 1)"
job_show "$a"
[ "$(json_get "$T/job-$a.json" 'd["cpus_per_task"]')" = 1 ] ||
	fail "show --json cpus_per_task: $(json_get "$T/job-$a.json" 'd.get("cpus_per_task")')"
expect_exit 0 cohort show "$a"
grep -Eq '^ *CPUs per task: +1, bound' "$OUT" || fail "show $a: $(cat "$OUT")"
grep -q "job $a rank 1: bound to CPUs 1 (NUMA 1)" "$C/node01.log" ||
	fail "agent log: $(grep "job $a" "$C/node01.log")"

### 2. Without --cpus-per-task nothing is bound (as before).
b=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 -- "$W/show.sh" "$W")
wait_state 20 "$b" COMPLETED
all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
task_line "$b" 0 | grep -Eqx "rank=0 gpu=[01] allowed=$all env=unset" ||
	fail "unbound task: $(task_line "$b" 0) (the test's CPUs: $all)"

### 3. Two cores next to GPU 0, whose NUMA node has one: the other comes
# from node 1, and the agent log says so (a warning, expected here).
expect_log_error "job [0-9]+ rank 0: bound to CPUs 0-1: too few free cores"
c=$(job_submit --time 5m --workdir "$W" --gpus-per-node 1 --cpus-per-task 2 \
	-- "$W/show.sh" "$W")
wait_state 20 "$c" COMPLETED
[ "$(task_line "$c" 0)" = "rank=0 gpu=0 allowed=0-1 env=0-1" ] ||
	fail "2 cores: $(task_line "$c" 0)"
grep -q "job $c rank 0: bound to CPUs 0-1: too few free cores on its GPUs' NUMA nodes" \
	"$C/node01.log" || fail "agent log: $(grep "job $c" "$C/node01.log")"

### 4. Refused at submit: more cores than the node (64 simulated CPUs);
# a bad count is a usage error.
expect_exit 1 cohort submit --time 5m --tasks-per-node 2 --cpus-per-task 40 -- true
stderr_has '--cpus-per-task 40: 2 tasks per node need 80 CPUs; no node has that many \(at most 64\)'
expect_exit 2 cohort submit --time 5m --cpus-per-task 0 -- true
stderr_has "invalid CPU count '0'"

### 5. #SBATCH -c and --mem are read.
printf '#!/bin/sh\n#SBATCH -c 3\n#SBATCH --mem=2G\ntrue\n' >"$W/c.sbatch"
d=$(job_submit --hold --time 5m "$W/c.sbatch")
job_show "$d"
[ "$(json_get "$T/job-$d.json" '[d["cpus_per_task"], d["mem_per_node_mb"]]')" = "[3, 2048]" ] ||
	fail "#SBATCH -c 3 --mem=2G: $(json_get "$T/job-$d.json" '[d.get("cpus_per_task"), d.get("mem_per_node_mb")]')"
expect_exit 0 cohort cancel "$d"

exit 0
