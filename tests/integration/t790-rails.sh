#!/bin/bash
# Rails and NICs, on two simulated 4-GPU nodes whose GPUs 0-1
# and 2-3 are on NICs mlx5_0 and mlx5_1: node01 names them in its
# config ([gpu] nics), node02 gets them through hwloc from the DGX-like
# XML fixture ([agent] hwloc_xml). node show lists each GPU's rail and
# NIC. With GPUs 0-1 of node01 taken, a 2-node x 2-GPU job gets GPUs 2-3
# on both nodes (rail 1), where each node's own choice would give node02
# GPUs 0-1; its tasks see COHORT_TASK_NIC=mlx5_1 and NCCL_IB_HCA==mlx5_1;
# a job's own NCCL_IB_HCA is kept.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

XML=$top_srcdir/tests/unit/data/hwloc-dgx.xml
[ -r "$XML" ] || fail "no $XML"
C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node01: [gpu]
node01: nics = mlx5_0:0,1 mlx5_1:2,3
node02: hwloc_xml = $XML" \
	cluster_up "$C" --nodes 2 --gpus 4
W=$(world_dir out)
for n in node01 node02; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

gpus_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(p["node"] + ":" + ",".join(str(g) for g in sorted(p["gpus"])) for p in sorted(d["placement"], key=lambda p: p["node_rank"]))'
}
sub() {
	job_submit --time 5m --workdir "$W" "$@"
}

### 1. The NICs reach the controller and the CLI, alike from the config
# and from hwloc.
for n in node01 node02; do
	expect_exit 0 cohort node show "$n" --json
	cp "$OUT" "$T/$n.json"
	got=$(json_get "$T/$n.json" '" ".join("%s:%s:%s" % (g["nic"], g["nic_name"], g["nic_near"]) for g in d["gpus"])')
	[ "$got" = "0:mlx5_0:True 0:mlx5_0:True 1:mlx5_1:True 1:mlx5_1:True" ] ||
		fail "$n: GPUs' NICs are '$got'"
done
expect_exit 0 cohort node show node02
grep -Eq '^ *INDEX +MODEL .* RAIL +NIC +HEALTH' "$OUT" || fail "node show: no RAIL/NIC columns: $(cat "$OUT")"
grep -Eq '^ *3 +NVIDIA .* 1 +mlx5_1 +OK' "$OUT" || fail "node show: GPU 3 not on rail 1, mlx5_1: $(cat "$OUT")"

### 2. node01's GPUs 0-1 are taken; a 2 x 2 gang lines up on rail 1.
a=$(sub -w node01 --gpus-per-node 2 -- sleep 300)
wait_state 20 "$a" RUNNING
[ "$(gpus_of "$a")" = "node01:0,1" ] || fail "job $a on $(gpus_of "$a")"
b=$(sub -N 2 --gpus-per-node 2 -- sh -c '
f=env.$COHORT_NODE_RANK
echo "$CUDA_VISIBLE_DEVICES $COHORT_TASK_NIC $NCCL_IB_HCA" >"$f.tmp"
mv "$f.tmp" "$f"')
wait_state 20 "$b" COMPLETED FAILED CANCELLED
[ "$(job_state "$b")" = COMPLETED ] || fail "job $b: $(job_state "$b")"
[ "$(gpus_of "$b")" = "node01:2,3 node02:2,3" ] ||
	fail "job $b not rail-aligned: $(gpus_of "$b")"
for r in 0 1; do
	[ "$(cat "$W/env.$r")" = "2,3 mlx5_1 =mlx5_1" ] ||
		fail "rank $r environment: '$(cat "$W/env.$r")'"
done

### 3. A job's own NCCL_IB_HCA stands; COHORT_TASK_NIC is still set.
c=$(sub -w node02 --gpus-per-node 1 --env NCCL_IB_HCA=mlx5_9 -- sh -c '
echo "$CUDA_VISIBLE_DEVICES $COHORT_TASK_NIC $NCCL_IB_HCA" >env.c.tmp
mv env.c.tmp env.c')
wait_state 20 "$c" COMPLETED FAILED CANCELLED
[ "$(job_state "$c")" = COMPLETED ] || fail "job $c: $(job_state "$c")"
[ "$(cat "$W/env.c")" = "0 mlx5_0 mlx5_9" ] ||
	fail "job $c environment: '$(cat "$W/env.c")'"
expect_exit 0 cohort cancel "$a"
wait_state 20 "$a" CANCELLED
exit 0
