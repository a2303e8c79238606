#!/bin/bash
# --constraint and --gpu-memory through the real CLI and wire, on two
# 1-GPU nodes of simulated 80 GB GPUs, node02 with features = fp64,ib:
# a -C job runs on node02 and shows its constraint (--json and text);
# --gpu-memory reaches the job in MiB, and the controller's refusal of
# too much comes back whole; the CLI refuses a size it cannot read. What
# the rules are is tested without the network: matching and a bad
# expression's column in check_constraint, the refusals at submit in
# check_feasible test_constraint, placement in check_placement
# (test_constraint_filter, test_constraint_waits_for_its_node), #SBATCH
# -C in check_script; the features as nodes report them in t810.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node02: features = fp64,ib" \
	cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir out)
wait_node 20 node02 "n['state'] == 'UP' and n['features'] == ['fp64', 'ib']"
wait_node 20 node01 "n['state'] == 'UP'"

a=$(job_submit --time 5m --workdir "$W" -C 'fp64&ib' -- true)
wait_state 20 "$a" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$a.json" '[d["state"], [p["node"] for p in d["placement"]], d["constraint"]]')" = \
	'["COMPLETED", ["node02"], "fp64&ib"]' ] ||
	fail "job $a: $(json_get "$T/job-$a.json" '[d["state"], d["placement"], d.get("constraint")]')"
expect_exit 0 cohort show "$a"
grep -Eq '^ *Constraint: +fp64&ib$' "$OUT" || fail "show $a: $(cat "$OUT")"

e=$(job_submit --time 5m --workdir "$W" --gpu-memory 40 -- true)
job_show "$e"
[ "$(json_get "$T/job-$e.json" 'd["gpu_memory_mb"]')" = 40960 ] ||
	fail "gpu_memory_mb $(json_get "$T/job-$e.json" 'd.get("gpu_memory_mb")')"
wait_state 20 "$e" COMPLETED
expect_exit 1 cohort submit --time 5m --gpu-memory 81 -- true
stderr_has '--gpu-memory 81 GiB: no node has that much on every GPU \(at most 80 GiB\)'
expect_exit 2 cohort submit --time 5m --gpu-memory 80TB -- true
stderr_has 'invalid GPU memory'
exit 0
