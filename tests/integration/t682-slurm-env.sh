#!/bin/bash
# What a Slurm script looks for in its environment, on a 2-node cluster,
# with --export=NONE (nothing from the submitter's shell): Slurm's
# commands on PATH (the agents' slurm_commands, which cohort-local sets
# to this build's slurm/), the head node from scontrol show hostnames
# "$SLURM_JOB_NODELIST" being node rank 0's, SLURM_JOB_NODELIST
# compressed, and the variables Slurm sets: SLURMD_NODENAME,
# SLURM_CPUS_PER_TASK, SLURM_JOB_PARTITION, SLURM_JOB_GPUS,
# SLURM_SUBMIT_HOST (sent by the CLI), SLURM_CLUSTER_NAME, SLURM_JOB_USER,
# SLURM_JOB_UID, and no SLURM_STEP_* (the batch script is no step). squeue
# inside the job
# reaches the controller through a client.conf, as a site provides one.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 4
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"

# The connection settings a site puts in the user's client.conf (the
# job's env never holds COHORT_*), with the certificate and key the
# account tasks run as can read (cohort-local maps every user to nobody
# when run as root).
job_config "$W"
acct=$JOB_ACCT
acct_uid=$(id -u "$acct")

cat >job.sh <<'SH'
#!/bin/sh
f=env.$SLURM_NODEID
{
	echo "HEAD_IS=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)"
	echo "ALL_ARE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)"
	echo "SQUEUE_IS=$(command -v squeue)"
	echo "SQUEUE_SAYS=$(squeue -h -j "$SLURM_JOB_ID" -o %i 2>&1)"
	env
} >"$f.tmp" && mv "$f.tmp" "$f"
SH
# Only XDG_CONFIG_HOME from here: no PATH, no COHORT_*.
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -N 2 \
	--gpus-per-node 2 -c 1 job.sh
id=$(cat "$OUT")
wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(json_get "$T/job-$id.json" 'd["submit_host"]')" = "$(hostname)" ] ||
	fail "show --json has submit_host $(json_get "$T/job-$id.json" 'd["submit_host"]'), not $(hostname)"
# A batch job: the script runs once, on the first node (the batch host).
[ -f "$W/env.0" ] || fail "no environment from the batch host (node rank 0): $(ls "$W")"
[ ! -e "$W/env.1" ] || fail "sbatch's script ran on node rank 1 too: a batch script runs once"

"$PYTHON" - "$T/job-$id.json" "$W" "$id" "$(hostname)" "$acct" "$acct_uid" \
	"$(cd "$top_builddir/slurm" && pwd)" <<'PY' || fail "the Slurm environment is wrong (above)"
import json, os, sys

job = json.load(open(sys.argv[1]))
wdir, job_id, host, user, uid, slurm = sys.argv[2:8]
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

place = sorted(job["placement"], key=lambda p: p["node_rank"])
names = [p["node"] for p in place]
check(job.get("batch") is True, f"show --json has batch {job.get('batch')!r}, want true")
for p in place[:1]:
    r = p["node_rank"]
    e = {}
    for line in open(os.path.join(wdir, f"env.{r}")):
        k, sep, v = line.rstrip("\n").partition("=")
        if sep and k.replace("_", "").isalnum():
            e[k] = v
    f = f"node rank {r}"
    want = {
        "HEAD_IS": names[0],
        "ALL_ARE": ",".join(names),
        "SQUEUE_SAYS": job_id,
        "SLURMD_NODENAME": p["node"],
        "SLURM_NODEID": str(r),
        "SLURM_CPUS_PER_TASK": "1",
        "SLURM_JOB_PARTITION": job["queue"],
        "SLURM_JOB_GPUS": ",".join(str(g) for g in p["gpus"]),
        "CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in p["gpus"]),
        "SLURM_SUBMIT_HOST": host,
        "SLURM_CLUSTER_NAME": "cohort",
        "SLURM_JOB_USER": user,
        "SLURM_JOB_UID": uid,
        "SLURM_JOB_NUM_NODES": "2",
    }
    for k, v in want.items():
        check(e.get(k) == v, f"{f}: {k}={e.get(k)!r}, want {v!r}")
    # The batch script is no step (sbatch's environment has none of
    # these; srun's tasks do).
    for k in ("SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_GPUS"):
        check(k not in e, f"{f}: {k}={e.get(k)!r} in the batch script")
    check(e.get("SQUEUE_IS") == os.path.join(slurm, "squeue"),
          f"{f}: squeue is {e.get('SQUEUE_IS')!r}, want {slurm}/squeue")
    check(e.get("PATH", "").split(":")[0] == slurm,
          f"{f}: PATH={e.get('PATH')!r} does not start with {slurm}")
    # Compressed, in rank order: cohort-local's nodeNN make one group.
    nl = e.get("SLURM_JOB_NODELIST", "")
    a, b = (n[4:] for n in names)
    want_nl = f"node[{a}-{b}]" if int(b) == int(a) + 1 else f"node[{a},{b}]"
    check(nl == want_nl, f"{f}: SLURM_JOB_NODELIST={nl!r}, want {want_nl!r}")
    check(e.get("SLURM_NODELIST") == nl, f"{f}: SLURM_NODELIST={e.get('SLURM_NODELIST')!r}, want {nl!r}")
    check(not any(k.startswith("COHORT_SERVER") for k in e), f"{f}: COHORT_SERVER reached the job")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
exit 0
