#!/bin/bash
# Interoperability: an independent Python client, sharing only the .proto
# file with the C side, submits a job and reads it back; the C CLI shows
# the same job.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_python_protobuf
C=$T/cluster
cluster_up "$C"

expect_exit 0 pyclient submit --name pyjob --nodes 2:4 --gpus-per-node 4 \
	--tasks-per-node 2 --gpu-type A100 --time-limit-s 5400 --priority 7 \
	--checkpoint-dir /ckpt/py --max-restarts 2 --env A=1 --env B=two \
	--workdir /work -- python3 -c 'print("hi")'
grep -Eqx '[1-9][0-9]*' "$OUT" || fail "pyclient submit printed '$(cat "$OUT")'"
id=$(cat "$OUT")

# Read back with GetJob from Python.
expect_exit 0 pyclient get "$id"
cp "$OUT" "$T/py.json"
# json_format writes 64-bit integers as strings and enums by name.
"$PYTHON" - "$T/py.json" "$id" <<'PY' || fail "GetJob from Python does not match what Python sent"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["spec"]
want = {"name": "pyjob", "nodes_min": 2, "nodes_max": 4, "gpus_per_node": 4,
        "tasks_per_node": 2, "gpu_type": "A100", "time_limit_s": "5400",
        "priority": 7, "checkpoint_dir": "/ckpt/py", "max_restarts": 2,
        "env": ["A=1", "B=two"], "workdir": "/work",
        "argv": ["python3", "-c", 'print("hi")']}
bad = [f"spec.{k}: got {s.get(k)!r}, want {v!r}" for k, v in want.items() if s.get(k) != v]
if j.get("id") != sys.argv[2]:
    bad.append(f"id: {j.get('id')!r}")
if j.get("user") != "alice":
    bad.append(f"user: {j.get('user')!r}")
if j.get("state") != "PENDING":
    bad.append(f"state: {j.get('state')!r}")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# The C CLI agrees.
expect_exit 0 cohort show "$id" --json
cp "$OUT" "$T/c.json"
"$PYTHON" - "$T/c.json" "$T/py.json" <<'PY' || fail "cohort show and GetJob disagree"
import json, sys
c = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
s = p["spec"]
pairs = [("id", int(p["id"])), ("user", p["user"]), ("state", p["state"]),
         ("name", s["name"]), ("nodes_min", s["nodes_min"]), ("nodes_max", s["nodes_max"]),
         ("gpus_per_node", s["gpus_per_node"]), ("tasks_per_node", s["tasks_per_node"]),
         ("gpu_type", s["gpu_type"]), ("time_limit_s", int(s["time_limit_s"])),
         ("priority", s["priority"]), ("checkpoint_dir", s["checkpoint_dir"]),
         ("max_restarts", s["max_restarts"]), ("workdir", s["workdir"]), ("argv", s["argv"])]
bad = [f"{k}: cohort says {c.get(k)!r}, GetJob says {v!r}" for k, v in pairs if c.get(k) != v]
env = c.get("env")
if isinstance(env, dict):
    env = [f"{k}={v}" for k, v in env.items()]
if sorted(env or []) != sorted(s["env"]):
    bad.append(f"env: cohort says {c.get('env')!r}, GetJob says {s['env']!r}")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# And the other way round: a job from the CLI, read by Python.
expect_exit 0 cohort submit --name fromc --nodes 3 -- sleep 1
cid=$(cat "$OUT")
expect_exit 0 pyclient get "$cid"
[ "$(json_get "$OUT" '[d["spec"]["name"], d["spec"]["nodes_min"], d["spec"]["argv"], d["user"]]')" = \
	'["fromc", 3, ["sleep", "1"], "alice"]' ] || fail "Python reads the CLI's job as $(cat "$OUT")"

# Errors come back as Error replies: an unknown job.
expect_exit 1 pyclient get 999999
grep -q 'ERROR_NOT_FOUND' "$ERR" || fail "GetJob of an unknown job: $(cat "$ERR")"
exit 0
