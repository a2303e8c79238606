#!/bin/bash
# A controller and three agents with simulated 8-GPU nodes: a 2-node job
# with two tasks per node writes each task's environment to a file; every
# variable of docs/SPEC.md's "Job environment" is checked on every rank against
# the placement the controller shows. The job ends COMPLETED.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 8
W=$(world_dir out)
CKPT=$W/ckpt

# Each task writes its environment (and whether it may write its progress
# file) to a file of its own, then renames it into place.
id=$(job_submit --name envtest --nodes 2 --gpus-per-node 4 --tasks-per-node 2 \
	--checkpoint-dir "$CKPT" --workdir "$W" -- sh -c '
f=env.$(hostname).$$
env >"$f.tmp"
if : >>"$COHORT_PROGRESS_FILE"; then w=yes; else w=no; fi
echo "PROGRESS_WRITABLE=$w" >>"$f.tmp"
echo "PWD_IS=$(pwd)" >>"$f.tmp"
mv "$f.tmp" "$f"')

wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"], d["exit_code"]]')"
[ "$(json_get "$T/job-$id.json" 'd["exit_code"]')" = 0 ] ||
	fail "job $id COMPLETED with exit code $(json_get "$T/job-$id.json" 'd["exit_code"]')"

n=$(find "$W" -maxdepth 1 -name 'env.*' ! -name '*.tmp' | wc -l)
[ "$n" -eq 4 ] || fail "expected 4 environment files (2 nodes x 2 tasks), got $n: $(ls "$W")"

"$PYTHON" - "$T/job-$id.json" "$W" "$id" "$CKPT" <<'PY' || fail "the job environment is wrong (above)"
import glob, json, os, sys

job = json.load(open(sys.argv[1]))
wdir, job_id, ckpt = sys.argv[2], sys.argv[3], sys.argv[4]
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

place = sorted(job["placement"], key=lambda p: p["node_rank"])
check(len(place) == 2, f"placement has {len(place)} nodes, not 2: {place}")
check([p["node_rank"] for p in place] == [0, 1], f"node ranks {place}")
gpus_of = {p["node_rank"]: sorted(p["gpus"]) for p in place}
for r, g in gpus_of.items():
    check(len(g) == 4 and len(set(g)) == 4, f"node rank {r} got GPUs {g}, not 4")
nodelist = ",".join(p["node"] for p in place)

envs = []
for f in sorted(glob.glob(os.path.join(wdir, "env.*"))):
    if f.endswith(".tmp"):
        continue
    e = {}
    for line in open(f):
        k, sep, v = line.rstrip("\n").partition("=")
        if sep and k.replace("_", "").isalnum():
            e[k] = v
    e["_file"] = os.path.basename(f)
    envs.append(e)

need = ["COHORT_JOB_ID", "COHORT_JOB_NAME", "COHORT_NNODES", "COHORT_NODE_RANK",
        "COHORT_NODELIST", "COHORT_RESTART_COUNT", "COHORT_CHECKPOINT_DIR",
        "COHORT_RESUME_CHECKPOINT", "COHORT_PROGRESS_FILE", "MASTER_ADDR",
        "MASTER_PORT", "NNODES", "NODE_RANK", "WORLD_SIZE", "RANK", "LOCAL_RANK",
        "LOCAL_WORLD_SIZE", "CUDA_VISIBLE_DEVICES"]
for e in envs:
    f = e["_file"]
    missing = [k for k in need if k not in e]
    check(not missing, f"{f}: missing {missing}")
    if missing:
        continue
    want = {"COHORT_JOB_ID": job_id, "COHORT_JOB_NAME": "envtest",
            "COHORT_NNODES": "2", "NNODES": "2", "COHORT_NODELIST": nodelist,
            "COHORT_RESTART_COUNT": "0", "COHORT_CHECKPOINT_DIR": ckpt,
            "COHORT_RESUME_CHECKPOINT": "", "WORLD_SIZE": "4",
            "LOCAL_WORLD_SIZE": "2", "PROGRESS_WRITABLE": "yes",
            "PWD_IS": wdir, "NODE_RANK": e["COHORT_NODE_RANK"]}
    for k, v in want.items():
        check(e.get(k) == v, f"{f}: {k}={e.get(k)!r}, want {v!r}")
    check(e["COHORT_PROGRESS_FILE"] != "", f"{f}: COHORT_PROGRESS_FILE is empty")
    check(e["MASTER_ADDR"] != "", f"{f}: MASTER_ADDR is empty")
    check(e["MASTER_PORT"].isdigit() and 0 < int(e["MASTER_PORT"]) < 65536,
          f"{f}: MASTER_PORT={e['MASTER_PORT']!r}")
    try:
        nr, lr, rk = int(e["NODE_RANK"]), int(e["LOCAL_RANK"]), int(e["RANK"])
    except ValueError:
        bad.append(f"{f}: ranks are not numbers: {e['NODE_RANK']!r} {e['LOCAL_RANK']!r} {e['RANK']!r}")
        continue
    check(nr in (0, 1), f"{f}: NODE_RANK={nr}")
    check(lr in (0, 1), f"{f}: LOCAL_RANK={lr}")
    check(rk == nr * 2 + lr, f"{f}: RANK={rk}, want NODE_RANK*2+LOCAL_RANK={nr * 2 + lr}")
    # This node's 4 GPUs, split in local-rank order between its 2 tasks.
    if nr in gpus_of and lr in (0, 1):
        want_cvd = ",".join(str(g) for g in gpus_of[nr][lr * 2:lr * 2 + 2])
        check(e["CUDA_VISIBLE_DEVICES"] == want_cvd,
              f"{f}: CUDA_VISIBLE_DEVICES={e['CUDA_VISIBLE_DEVICES']!r}, want {want_cvd!r} "
              f"(node rank {nr} has GPUs {gpus_of[nr]})")

check(len(envs) == 4, f"{len(envs)} environment files")
check(sorted(e.get("RANK") for e in envs) == ["0", "1", "2", "3"],
      f"RANKs {sorted(e.get('RANK') for e in envs)}, want 0..3 once each")
check(sorted((e.get("NODE_RANK"), e.get("LOCAL_RANK")) for e in envs) ==
      [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")],
      f"(NODE_RANK, LOCAL_RANK) pairs {sorted((e.get('NODE_RANK'), e.get('LOCAL_RANK')) for e in envs)}")
for k in ("MASTER_ADDR", "MASTER_PORT"):
    vals = set(e.get(k) for e in envs)
    check(len(vals) == 1, f"{k} differs between ranks: {vals}")
# Rank 0 runs on the node of rank 0; cohort-local's agents say 127.0.0.1.
check(set(e.get("MASTER_ADDR") for e in envs) == {"127.0.0.1"},
      f"MASTER_ADDR {set(e.get('MASTER_ADDR') for e in envs)}, want 127.0.0.1")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# The GPUs shown for the job are free again once it ended: a second job
# asking for all 8 GPUs of each of 3 nodes can start.
id2=$(job_submit --name whole --nodes 3 --gpus-per-node 8 --workdir "$W" -- true)
wait_state 20 "$id2" COMPLETED FAILED
[ "$(json_get "$T/job-$id2.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id2 (3 whole nodes) ended $(json_get "$T/job-$id2.json" '[d["state"], d["reason"]]')"
exit 0
