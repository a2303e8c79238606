#!/bin/bash
# Job steps as real multi-node recipes use them, on a 3-node cluster with
# 4 GPUs each: a batch script that prepares once, finds the head node
# from a one-node step, starts a one-node server in the background beside
# a training step on the other nodes, runs one task per GPU with -l, and
# passes srun's exit codes on. Then sacct's rows for the job and its
# steps, and squeue -s while a step runs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"
job_config "$W"
chown "$JOB_ACCT" "$W" || fail "cannot give $W to $JOB_ACCT"

cat >recipe.sh <<'SH'
#!/bin/bash
#SBATCH -N 3
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
set -u
# Setup before srun runs once, on the batch host.
echo "prep on $(hostname -s) as $SLURMD_NODENAME" >>prep.log
head=$(srun -N1 -n1 -w "$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)" \
	--gpus-per-node=0 printenv SLURMD_NODENAME)
echo "HEAD=$head"
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
# A one-node "server" on the last node, in the background, beside the
# "training" on the others.
srun -N1 -n1 -w "${nodes[2]}" --gpus-per-node=1 sh -c 'echo server up; sleep 1; echo server on $SLURMD_NODENAME' &
srv=$!
srun -N2 -x "${nodes[2]}" --ntasks-per-node=4 --gpus-per-task=1 -l \
	sh -c 'echo "rank $SLURM_PROCID/$SLURM_NTASKS local $SLURM_LOCALID gpu $CUDA_VISIBLE_DEVICES step $SLURM_STEP_ID master $MASTER_ADDR:$MASTER_PORT world $WORLD_SIZE"'
echo "TRAIN_RC=$?"
wait $srv
echo "SERVER_RC=$?"
srun -N3 sh -c 'exit $SLURM_NODEID'
echo "FAIL_RC=$?"
exit 7
SH
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -o out.%j recipe.sh
id=$(cat "$OUT")
wait_state 90 "$id" COMPLETED FAILED CANCELLED TIMEOUT
cat "$W/out.$id" >&2
expect_log_error "job $id: FAILED: max restarts \(0\) reached; last failure: the batch script exited with 7"
[ "$(json_get "$T/job-$id.json" '[d["state"], d.get("exit_code")]')" = '["FAILED", 7]' ] ||
	fail "job $id: $(json_get "$T/job-$id.json" '[d["state"], d.get("exit_code"), d["reason"]]'), want FAILED with the script's 7"

"$PYTHON" - "$W/out.$id" "$W/prep.log" <<'PY' || fail "the recipe's output is wrong (above)"
import re, sys
out = open(sys.argv[1]).read().splitlines()
prep = open(sys.argv[2]).read().splitlines()
bad = []
def check(c, what):
    if not c:
        bad.append(what)
check(len(prep) == 1, f"the setup ran {len(prep)} times, want once: {prep}")
check("HEAD=node01" in out, "no HEAD=node01 from the one-node step")
train = [l for l in out if re.match(r"^\d+: rank ", l)]
check(len(train) == 8, f"{len(train)} training lines, want 8: {train}")
seen = set()
for l in train:
    m = re.match(r"^(\d+): rank (\d+)/8 local (\d+) gpu (\d+) step (\d+) master (\S+):(\d+) world 8$", l)
    if not m:
        bad.append(f"bad line {l!r}")
        continue
    label, rank, local, gpu = (int(m.group(i)) for i in range(1, 5))
    check(label == rank, f"label {label} on rank {rank}'s line")
    check(local == rank % 4, f"rank {rank} has local rank {local}")
    check(gpu == local, f"rank {rank} sees GPU {gpu}, want {local} (--gpus-per-task=1)")
    seen.add(rank)
check(seen == set(range(8)), f"ranks {sorted(seen)}")
for want in ("server up", "server on node03", "TRAIN_RC=0", "SERVER_RC=0", "FAIL_RC=2",
             "srun: error: node02: task 1: Exited with exit code 1",
             "srun: error: node03: task 2: Exited with exit code 2"):
    check(want in out, f"no line {want!r}")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# sacct: the job, its batch step and its four steps, with Slurm's names.
expect_exit 0 sacct -j "$id" -P -n -o JobID,JobName,State,ExitCode
cat >"$T/want.sacct" <<W
$id|recipe.sh|FAILED|7:0
$id.batch|batch|FAILED|7:0
$id.0|printenv|COMPLETED|0:0
$id.1|sh|COMPLETED|0:0
$id.2|sh|COMPLETED|0:0
$id.3|sh|FAILED|2:0
W
diff -u "$T/want.sacct" "$OUT" >&2 || fail "sacct -j $id is not as above"
