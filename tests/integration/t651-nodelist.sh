#!/bin/bash
# Where a job may run, on three 4-GPU nodes: --nodelist (-w) puts a job
# on the nodes named, --exclude (-x) keeps it off others; an --exclusive
# job and a CPU-only job (--gpus-per-node 0) never share a node, either
# way round; a CPU-only job runs on a node whose GPUs are all busy and
# sees CUDA_VISIBLE_DEVICES empty.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)

# nodes_of ID: the job's nodes, space-separated (job_show first).
nodes_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(p["node"] for p in d["placement"])'
}
gpus_of() {
	json_get "$T/job-$1.json" '",".join(str(g) for p in d["placement"] for g in p["gpus"])'
}
# sub ARGS...: submit with a limit and a workdir tasks may write.
sub() {
	job_submit --time 5m --workdir "$W" "$@"
}

### 1. --nodelist and --exclude.
a=$(sub -w node02 --gpus-per-node 1 -- sleep 300)
b=$(sub -x 'node[01-02]' --gpus-per-node 1 -- sleep 300)
wait_state 20 "$a" RUNNING
wait_state 20 "$b" RUNNING
[ "$(nodes_of "$a")" = node02 ] || fail "-w node02 job on $(nodes_of "$a")"
[ "$(nodes_of "$b")" = node03 ] || fail "-x node[01-02] job on $(nodes_of "$b")"
c=$(sub --nodelist 'node[01-03]' --exclude node01 --nodes 2 \
	--gpus-per-node 1 -- sleep 300)
wait_state 20 "$c" RUNNING
[ "$(nodes_of "$c")" = "node02 node03" ] || [ "$(nodes_of "$c")" = "node03 node02" ] ||
	fail "--nodelist node[01-03] --exclude node01 job on $(nodes_of "$c")"
expect_exit 0 cohort cancel "$a" "$b" "$c"
for j in "$a" "$b" "$c"; do wait_state 20 "$j" CANCELLED; done

### 2. An exclusive job holds node01 whole: a CPU-only job may not join
# it, and one free to go elsewhere does.
ex=$(sub --exclusive -w node01 --gpus-per-node 1 -- sleep 300)
wait_state 20 "$ex" RUNNING
[ "$(gpus_of "$ex")" = "0,1,2,3" ] || fail "exclusive job got GPUs $(gpus_of "$ex")"
cpu1=$(sub --gpus-per-node 0 -w node01 -- sleep 300)
cpu2=$(sub --gpus-per-node 0 -- sleep 300)
wait_state 20 "$cpu2" RUNNING
[ "$(nodes_of "$cpu2")" != node01 ] || fail "CPU-only job joined the exclusive job on node01"
[ "$(job_state "$cpu1")" = PENDING ] || fail "CPU-only job -w node01 is $(job_state "$cpu1") beside an exclusive job"
expect_exit 0 cohort cancel "$ex"
wait_state 20 "$cpu1" RUNNING
[ "$(nodes_of "$cpu1")" = node01 ] || fail "CPU-only job on $(nodes_of "$cpu1")"
[ -z "$(gpus_of "$cpu1")" ] || fail "CPU-only job holds GPUs $(gpus_of "$cpu1")"

### 3. The other way round: node01 runs a CPU-only job, so an exclusive
# job waits for it, while a GPU job starts beside it.
ex=$(sub --exclusive -w node01 -- sleep 300)
g=$(sub -w node01 --gpus-per-node 4 -- sleep 300)
wait_state 20 "$g" RUNNING
[ "$(job_state "$ex")" = PENDING ] || fail "exclusive job is $(job_state "$ex") beside a CPU-only job"
wait_job 10 "$ex" 'd["reason"].startswith("Resources")'

### 4. node01's GPUs are all busy (job $g): a CPU-only job still runs
# there, with no GPU visible.
cpu3=$(sub --gpus-per-node 0 -w node01 -- sh -c \
	'printf "%s" "${CUDA_VISIBLE_DEVICES-unset}" >"$0"/cvd.$COHORT_JOB_ID; sleep 300' "$W")
wait_state 20 "$cpu3" RUNNING
wait_for 10 test -f "$W/cvd.$cpu3" || fail "CPU-only job wrote no environment"
[ "$(cat "$W/cvd.$cpu3")" = "" ] ||
	fail "CPU-only job sees CUDA_VISIBLE_DEVICES='$(cat "$W/cvd.$cpu3")'"
# cohort nodes lists the CPU-only jobs on node01.
wait_node 10 node01 "$cpu3 in n['jobs'] and $cpu1 in n['jobs'] and n['gpus_free'] == 0"
expect_exit 0 cohort cancel "$ex" "$g" "$cpu1" "$cpu2" "$cpu3"
exit 0
