#!/bin/bash
# A public recipe, as its users run it: PyTorch's multi-node DDP example
# (pytorch/examples, distributed/ddp-tutorial-series/slurm/sbatch_run.sh)
# with only its training program's path changed and torchrun a stand-in
# that reports how it was started. What the recipe needs: the batch
# script once, the head node's address from a one-node step
# (srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address), and
# `srun torchrun` starting one launcher per node with the job's GPUs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# --cpus-per-task=4 on nodes of 2 cores: bound, sharing, and said so.
expect_log_error "bound to CPUs .*shared with other tasks"
C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"
job_config "$W"
mkdir -p "$W/bin" || fail "cannot create $W/bin"

# The stand-in: one line per launcher, how it was started and where.
cat >"$W/bin/torchrun" <<'SH'
#!/bin/sh
echo "torchrun on $SLURMD_NODENAME (node $SLURM_NODEID of $SLURM_NNODES, task $SLURM_PROCID of $SLURM_NTASKS, GPUs ${CUDA_VISIBLE_DEVICES:-none}): $*"
SH
chmod 755 "$W/bin/torchrun"

# The recipe, as published; only the program's path differs.
cat >sbatch_run.sh <<'SH'
#!/bin/bash

#SBATCH --job-name=multinode-example
#SBATCH --nodes=4
#SBATCH --ntasks=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=4

nodes=( $( scontrol show hostnames $SLURM_JOB_NODELIST ) )
nodes_array=($nodes)
head_node=${nodes_array[0]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)

echo Node IP: $head_node_ip
export LOGLEVEL=INFO

srun torchrun \
--nnodes 4 \
--nproc_per_node 1 \
--rdzv_id $RANDOM \
--rdzv_backend c10d \
--rdzv_endpoint $head_node_ip:29500 \
./multinode_torchrun.py 50 10
SH
PATH="$W/bin:$PATH" expect_exit 0 sbatch --parsable --export=ALL,XDG_CONFIG_HOME="$JOB_CFG" sbatch_run.sh
id=$(cat "$OUT")
wait_state 90 "$id" COMPLETED FAILED CANCELLED TIMEOUT
out="$W/slurm-$id.out"
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]'): $(cat "$out")"
cat "$out" >&2
# What the one-node step says (all the nodes are this host here); a host
# with several addresses gives the recipe several words, as under Slurm.
ip=$(hostname --ip-address | xargs)
grep -qx "Node IP: $ip" "$out" || fail "no 'Node IP: $ip' from the one-node step: $(cat "$out")"
case "$ip" in
*" "*) ep='.*' ;;
*) ep="$ip:29500" ;;
esac
n=$(grep -c '^torchrun on node0[1-4] (node [0-3] of 4, task [0-3] of 4, GPUs [01]): --nnodes 4 --nproc_per_node 1 --rdzv_id [0-9]* --rdzv_backend c10d --rdzv_endpoint '"$ep"' ./multinode_torchrun.py 50 10$' "$out")
[ "$n" = 4 ] || fail "$n launchers started as the recipe says, want 4: $(cat "$out")"
[ "$(grep '^torchrun on' "$out" | sed 's/ (.*//' | sort -u | wc -l)" = 4 ] ||
	fail "the launchers did not run one per node: $(cat "$out")"
expect_exit 0 sacct -j "$id" -P -n -o JobID,JobName,State
grep -qx "$id.0|hostname|COMPLETED" "$OUT" && grep -qx "$id.1|torchrun|COMPLETED" "$OUT" ||
	fail "sacct: $(cat "$OUT")"
