#!/bin/bash
# Node features and GPU memory, on three 4-GPU nodes of
# simulated 80 GB GPUs (81,559 MiB each), node02 with features = fp64,ib:
# --constraint fp64 and 'fp64&ib' land only on node02, 'nvl72' (no node
# has it) and --gpu-memory 81 are refused at submit, --gpu-memory 40 and
# 80 run, a bad expression is refused naming its column, and #SBATCH -C
# is read. cohort nodes --json / node show list the features.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node02: features = fp64,ib" \
	cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)
for n in node01 node02 node03; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

nodes_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(p["node"] for p in d["placement"])'
}
sub() {
	job_submit --time 5m --workdir "$W" "$@"
}

### 1. The features reach the controller and the CLI.
wait_node 10 node02 "n['features'] == ['fp64', 'ib']"
wait_node 10 node01 "n['features'] == []"
expect_exit 0 cohort node show node02
grep -Eq '^ *Features: +fp64,ib$' "$OUT" || fail "node show node02: $(cat "$OUT")"

### 2. --constraint puts jobs on node02 only, even when other nodes are
# free; -C is the short form.
a=$(sub --constraint fp64 --gpus-per-node 1 -- sleep 300)
b=$(sub -C 'fp64&ib' --gpus-per-node 1 -- sleep 300)
c=$(sub -C '(nvl72|ib)&fp64' --gpus-per-node 1 -- sleep 300)
for j in "$a" "$b" "$c"; do
	wait_state 20 "$j" RUNNING
	[ "$(nodes_of "$j")" = node02 ] || fail "job $j (constraint) on $(nodes_of "$j")"
done
json_get "$T/job-$b.json" 'd["constraint"]' | grep -qx 'fp64&ib' ||
	fail "show --json constraint: $(json_get "$T/job-$b.json" 'd.get("constraint")')"
expect_exit 0 cohort show "$b"
grep -Eq '^ *Constraint: +fp64&ib$' "$OUT" || fail "show $b: $(cat "$OUT")"
# node02 has one GPU left: a 2-GPU fp64 job waits rather than go
# elsewhere.
d=$(sub -C fp64 --gpus-per-node 2 -- sleep 300)
wait_job 10 "$d" 'd["reason"].startswith("Resources")'
[ "$(job_state "$d")" = PENDING ] || fail "2-GPU fp64 job is $(job_state "$d") with node02 full"
expect_exit 0 cohort cancel "$a" "$b" "$c" "$d"
for j in "$a" "$b" "$c" "$d"; do wait_state 20 "$j" CANCELLED; done

### 3. Refused at submit: a feature no node has, too much GPU memory, a
# constraint that leaves too few nodes, a bad expression with its
# column, Slurm's [..] and *N.
expect_exit 1 cohort submit --time 5m -C nvl72 -- true
stderr_has '--constraint nvl72: no node has feature nvl72'
expect_exit 1 cohort submit --time 5m -N 2 -C fp64 -- true
stderr_has '--nodes 2: --constraint leaves only 1 node'
expect_exit 1 cohort submit --time 5m --gpu-memory 81 -- true
stderr_has '--gpu-memory 81 GiB: no node has that much on every GPU \(at most 80 GiB\)'
expect_exit 1 cohort submit --time 5m -C 'fp64&' -- true
stderr_has "--constraint 'fp64&': at column 6: expected a feature name"
expect_exit 1 cohort submit --time 5m -C '[fp64|ib]' -- true
stderr_has 'matching OR is not supported'
expect_exit 1 cohort submit --time 5m -C 'fp64*2' -- true
stderr_has 'feature counts \(\*N\) are not supported'
expect_exit 2 cohort submit --time 5m --gpu-memory 80TB -- true
stderr_has 'invalid GPU memory'

### 4. --gpu-memory that the GPUs have runs (80 GiB: the 81,559 MiB of an
# 80 GB card, rounded), anywhere.
e=$(sub --gpu-memory 40 --gpus-per-node 1 -- sleep 300)
f=$(sub --gpu-memory 80GiB -N 3 --gpus-per-node 1 -- sleep 300)
wait_state 20 "$e" RUNNING
wait_state 20 "$f" RUNNING
job_show "$e"
[ "$(json_get "$T/job-$e.json" 'd["gpu_memory_mb"]')" = 40960 ] ||
	fail "gpu_memory_mb $(json_get "$T/job-$e.json" 'd.get("gpu_memory_mb")')"
expect_exit 0 cohort cancel "$e" "$f"

### 5. #SBATCH -C / --constraint= map to --constraint.
cat >"$W/job.sh" <<'SCRIPT'
#!/bin/sh
#SBATCH --constraint=ib
#SBATCH -C fp64
sleep 300
SCRIPT
chmod 755 "$W/job.sh"
g=$(sub --gpus-per-node 1 "$W/job.sh")
wait_state 20 "$g" RUNNING
[ "$(nodes_of "$g")" = node02 ] || fail "#SBATCH -C fp64 job on $(nodes_of "$g")"
[ "$(json_get "$T/job-$g.json" 'd["constraint"]')" = fp64 ] ||
	fail "#SBATCH constraint: $(json_get "$T/job-$g.json" 'd.get("constraint")')"
expect_exit 0 cohort cancel "$g"
exit 0
