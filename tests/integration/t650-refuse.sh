#!/bin/bash
# Refusing at submit what could never run (daemon/controller/domain/feasible.c):
# on a fresh controller that knows no node every spec is accepted (it
# cannot judge); on two 4-GPU nodes, one per leaf switch, each impossible
# request is refused through the real CLI with exit 1 and one line that
# names the limit, and nothing is submitted (`cohort jobs --all` does not
# change). A request the cluster can hold is still accepted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

### 1. No node known yet: accepted, since nothing can be judged.
cluster_up "$T/fresh"
id=$(job_submit --nodes 9 --gpus-per-node 16 --gpu-type B300 -- true)
expect_exit 0 cohort cancel "$id"
cohort-local down "$T/fresh" >/dev/null 2>&1 || fail "cohort-local down failed"

### 2. Two nodes of four GPUs, one per leaf (node_timeout 5 s: part 3
# waits for a node to go DOWN).
COHORT_LOCAL_NODE_TIMEOUT=5s cluster_up "$T/cluster" --nodes 2 --gpus 4 --nodes-per-leaf 1
for n in node01 node02; do
	wait_node 20 "$n" 'n["state"] == "UP"'
done
cohort jobs --all >"$T/before" 2>&1 || fail "cohort jobs --all failed"

# refuse TEXT ARGS...: exit 1, one line holding TEXT.
refuse() {
	local text="$1"
	shift
	expect_exit 1 cohort submit "$@" -- true
	stderr_one_line_with "$text"
}
refuse "--gpus-per-node 16: the largest node has 4 GPUs (NVIDIA H100 80GB HBM3)" \
	--gpus-per-node 16
refuse "--nodes 3: the cluster has only 2 nodes with 4 or more GPUs" \
	--nodes 3 --gpus-per-node 4
refuse "--nodes 3: the cluster has only 2 nodes with GPUs" --nodes 3
refuse "no node has a GPU matching 'B300'; models here: NVIDIA H100 80GB HBM3" \
	--gpu-type B300
refuse "no topology level 'rack'; levels: leaf, spine" --topology rack
refuse "no topology level 'rack'" --topology-prefer rack
refuse "the largest leaf holds only 1 node with GPUs" --nodes 2 --topology leaf
refuse "--nodelist: no node named 'node09'" --nodelist 'node[01,09]'
refuse "--nodelist: no node named 'node07'" -w node07
refuse "--nodes 2: --nodelist and --exclude leave only 1 node" \
	--nodes 2 --nodelist 'node[01-02]' --exclude node02
refuse "--nodes 2: --exclude leaves only 1 node" --nodes 2 -x node01
refuse "--nodes 3: the cluster has only 2 nodes" --nodes 3 --gpus-per-node 0
cohort jobs --all >"$T/after" 2>&1 || fail "cohort jobs --all failed"
cmp -s "$T/before" "$T/after" ||
	fail "a refused submit changed the job list: $(diff "$T/before" "$T/after")"

### 3. What the cluster can hold is accepted: an elastic job is judged
# by its minimum, a spine holds both leaves, a DOWN node still counts.
W=$(world_dir out)
id=$(job_submit --nodes 2:8 --gpus-per-node 4 --topology spine \
	--workdir "$W" -- sleep 60)
expect_exit 0 cohort cancel "$id"
expect_log_error "node node02: DOWN: no heartbeat"
cohort-local kill "$T/cluster" node02 >/dev/null 2>&1 ||
	fail "cannot kill node02's agent"
wait_node 30 node02 'n["state"] == "DOWN"'
id=$(job_submit --nodes 2 --gpus-per-node 4 --workdir "$W" -- sleep 60)
expect_exit 0 cohort cancel "$id"
exit 0
