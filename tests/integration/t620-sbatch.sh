#!/bin/bash
# Slurm scripts and sbatch's flags. A converted DDP script
# (examples/torchrun.sbatch: #SBATCH lines for 2 nodes, 2 tasks and 2
# GPUs per node, a time, a name, an output file) runs unchanged on a
# 2-node cluster, every rank seeing the torchrun variables; an #SBATCH
# option Cohort cannot honour is refused naming the script's line (exit
# 2, nothing submitted); #COHORT and #SBATCH lines mix, in the order
# written, and the command line overrides both; the short flags and the
# new submit options reach the spec.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_python_protobuf
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir out)
EX=$top_srcdir/tests/integration/examples/torchrun.sbatch

# spec ID: the job as GetJob returns it (every spec field, the new ones
# too) in $T/spec-ID.json.
spec() {
	pyclient get "$1" >"$T/spec-$1.json" 2>"$T/spec-$1.err" ||
		fail "pyclient get $1: $(cat "$T/spec-$1.err")"
}

# check SPECFILE EXPR WANT: EXPR (Python, the job is d, its spec s) is WANT.
check() {
	local got
	got=$(json_get "$1" "(lambda s: $2)(d['spec'])")
	[ "$got" = "$3" ] || fail "$(basename "$1"): $2 is '$got', want '$3'"
}

### The converted script runs unchanged (submitted from the workdir, as
### with sbatch: the job runs where it was submitted).
id=$(cd "$W" && job_submit "$EX")
spec "$id"
S=$T/spec-$id.json
check "$S" 's["name"]' ddp-train
check "$S" '[s["nodes_min"], s["nodes_max"], s["tasks_per_node"], s["gpus_per_node"]]' '[2, 2, 2, 2]'
check "$S" 'int(s["time_limit_s"])' 600
check "$S" 's["output"]' '%x-%j.%t.out'
check "$S" '[s["checkpoint_signal"], s["checkpoint_secs"], s["max_restarts"]]' '[10, 90, 3]'
check "$S" 's["workdir"]' "$W"
wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"], d["exit_code"]]')"

# Each rank's line, from its -o file (cohort logs says where it is).
: >"$T/ranks"
for r in 0 1 2 3; do
	expect_exit 1 cohort logs "$id" --rank "$r"
	stderr_one_line "cohort: logs $id: job $id rank $r's output is in $W/ddp-train-$id.$r.out on node "
	line=$(grep '^ddp ' "$W/ddp-train-$id.$r.out" || true)
	[ -n "$line" ] || fail "rank $r printed no 'ddp' line (logs: $(head -c 500 "$OUT"))"
	echo "$line" >>"$T/ranks"
done
"$PYTHON" - "$T/ranks" <<'PY' || fail "the torchrun variables are wrong (above): $(cat "$T/ranks")"
import sys
bad, masters = [], set()
for line in open(sys.argv[1]):
    kv = dict(w.split("=", 1) for w in line.split()[1:])
    r = int(kv["rank"])
    want = {"world_size": "4", "local_world_size": "2", "nnodes": "2",
            "local_rank": str(r % 2), "node_rank": str(r // 2)}
    bad += [f"rank {r}: {k}={kv.get(k)!r}, want {v!r}" for k, v in want.items() if kv.get(k) != v]
    if len(kv["cuda_visible_devices"].split(",")) != 1:
        bad.append(f"rank {r}: CUDA_VISIBLE_DEVICES={kv['cuda_visible_devices']!r}, want one GPU")
    masters.add(kv["master"])
if len(masters) != 1:
    bad.append(f"ranks disagree on the master: {masters}")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
[ "$(sort -u "$T/ranks" | wc -l)" -eq 4 ] || fail "expected 4 distinct rank lines: $(cat "$T/ranks")"

### Refused, naming the line; nothing submitted.
before=$(job_count --all)
# refused_script NAME LINE REGEX BODY: a script whose header is BODY is
# refused with "SCRIPT:LINE: " and REGEX.
refused_script() {
	printf '#!/bin/bash\n%s\necho never\n' "$4" >"$T/$1"
	expect_exit 2 cohort submit "$T/$1"
	stderr_one_line "cohort: $T/$1:$2: " "$3"
	[ ! -s "$OUT" ] || fail "refused $1 printed on stdout: $(cat "$OUT")"
}
refused_script mem.sbatch 4 '#SBATCH --mem-per-cpu: not supported by Cohort \(.*memory per node' \
	"#SBATCH -N 1
# 4 GB should do
#SBATCH --mem-per-cpu=4G"
refused_script cpus.sbatch 3 '#SBATCH --ntasks-per-core: not supported by Cohort \(.*--cpus-per-task' \
	"#SBATCH --job-name=x
#SBATCH --ntasks-per-core 8 --time=10"
refused_script wckey.sbatch 2 '#SBATCH --wckey: not supported by Cohort \(.*accounting' \
	"#SBATCH --wckey=proj42"
refused_script typo.sbatch 2 '#SBATCH --tme: not an sbatch option' \
	"#SBATCH --tme=10"
refused_script badtime.sbatch 3 "#SBATCH -t: invalid duration '1:75'" \
	"#SBATCH -N 2
#SBATCH -t 1:75"
refused_script badgres.sbatch 2 "#SBATCH --gres: 'nic:1': only GPUs" \
	"#SBATCH --gres=nic:1"
refused_script cohortline.sbatch 3 "--nodes: invalid node count 'x'" \
	"#SBATCH -N 2
#COHORT --nodes x"
# An account this cluster maps to no queue: the controller refuses it.
printf '#!/bin/bash\n#SBATCH --account=proj42\necho never\n' >"$T/account.sbatch"
expect_exit 1 cohort submit "$T/account.sbatch"
stderr_one_line "cohort: submit: " "--account proj42: this cluster maps no queue to it"
[ "$(job_count --all)" = "$before" ] || fail "a refused script created a job"

### #COHORT and #SBATCH mix in the order written; the command line wins;
### an #SBATCH line after the first command is not read (as sbatch).
cat >"$T/mixed.sh" <<'SH'
#!/bin/sh
#SBATCH -N 1 --job-name=fromsbatch
#COHORT --priority 10 --nodes 2
#SBATCH -t UNLIMITED
#SBATCH -t 5 --no-requeue -p default
#SBATCH --export=NONE
#SBATCH -H -o out-%j.txt -e err-%j.txt
true
#SBATCH --mem=4G
SH
id2=$(job_submit -J fromcli --env A=1 "$T/mixed.sh")
spec "$id2"
S=$T/spec-$id2.json
check "$S" '[s["name"], s["nodes_min"], s["priority"], int(s["time_limit_s"]), s["max_restarts"]]' \
	'["fromcli", 2, 10, 300, 0]'
check "$S" '[s["queue"], s.get("hold", False), s["output"], s["error"], s.get("env")]' \
	'["default", true, "out-%j.txt", "err-%j.txt", ["A=1"]]'
[ "$(json_get "$T/spec-$id2.json" 'd["state"]')" = PENDING ] || fail "the held job is not PENDING"
expect_exit 0 cohort cancel "$id2"

### The short flags and the new options on the command line.
id3=$(job_submit --hold --export NONE -N 1 -t 1:00:00 -J short -o o-%j -e e-%j \
	-w node01 -x node02 -D out --gres gpu:1 --signal USR2@30 -- true)
spec "$id3"
S=$T/spec-$id3.json
check "$S" '[s["name"], s["nodes_min"], int(s["time_limit_s"]), s["output"], s["error"]]' \
	'["short", 1, 3600, "o-%j", "e-%j"]'
check "$S" '[s["nodelist"], s["exclude"], s["workdir"], s["gpus_per_node"], s["checkpoint_signal"], s["checkpoint_secs"]]' \
	"[\"node01\", \"node02\", \"$PWD/out\", 1, 12, 30]"
expect_exit 0 cohort cancel "$id3"
# sbatch's typed GPU counts: --gpus-per-node TYPE:N and --gres gpu:TYPE:N.
id6=$(job_submit --hold --export NONE --gpus-per-node H100:2 -- true)
id7=$(job_submit --hold --export NONE --gres gpu:H100 -- true)
spec "$id6"
spec "$id7"
check "$T/spec-$id6.json" '[s["gpu_type"], s["gpus_per_node"]]' '["H100", 2]'
check "$T/spec-$id7.json" '[s["gpu_type"], s["gpus_per_node"]]' '["H100", 1]'
expect_exit 0 cohort cancel "$id6" "$id7"
# --nodelist without -N: as many nodes as it names; CPU-only; exclusive.
id4=$(job_submit --hold --export NONE -w 'node[01-02]' --gpus-per-node 0 -- true)
spec "$id4"
check "$T/spec-$id4.json" '[s["nodes_min"], s.get("cpu_only", False), s["gpus_per_node"] if "gpus_per_node" in s else 0]' '[2, true, 0]'
id5=$(job_submit --hold --export NONE --exclusive --gpus-per-node all -- true)
spec "$id5"
check "$T/spec-$id5.json" '[s.get("exclusive", False), s.get("cpu_only", False)]' '[true, false]'
expect_exit 0 cohort cancel "$id4" "$id5"
# The controller's refusals reach the person with the option's name
# (exit 1, as every refusal of the controller's).
expect_exit 1 cohort submit --export NONE -o '%J.out' -- true
stderr_one_line "cohort: " "--output: '%J' is not supported by Cohort"
expect_exit 1 cohort submit --export NONE -N 1 -w 'node[01-09]' -- true
stderr_one_line "cohort: " '--nodelist: .*node03'
expect_exit 2 cohort submit --export NONE -t 1:75 -- true
stderr_one_line "cohort: " "submit: -t: invalid duration '1:75'"
exit 0
