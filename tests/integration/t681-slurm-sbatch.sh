#!/bin/bash
# sbatch as Slurm's: what it prints (tools parse it), Slurm's defaults
# (one node, one task, no GPU, no rerun after a failure, slurm-%j.out in
# the submit directory), --wrap, --wait's exit code, Slurm's meanings of
# -n, -G and --gpus-per-task made per node, a script's refusals told at
# once with their lines; and cohort submit's --ntasks, --gpus and -p
# with the same meanings.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 4
command -v sbatch >/dev/null || fail "sbatch is not on PATH after cohort-local env"
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"

# check ID EXPR WANT: EXPR (Python, the job as cohort show --json is d)
# is WANT.
check() {
	local got
	job_show "$1"
	got=$(json_get "$T/job-$1.json" "$2")
	[ "$got" = "$3" ] || fail "job $1: $2 is '$got', want '$3'"
}

### --parsable: the id alone; Slurm's defaults in the spec.
expect_exit 0 sbatch --parsable --hold --wrap=true
grep -Eqx '[1-9][0-9]*' "$OUT" || fail "sbatch --parsable printed '$(cat "$OUT")'"
id=$(cat "$OUT")
check "$id" '[d["nodes_min"], d["tasks_per_node"], d["cpu_only"], d["max_restarts"], d["output"], d["name"], d["batch"]]' \
	'[1, 1, true, 0, "slurm-%j.out", "wrap", true]'
expect_exit 0 cohort cancel "$id"

### A batch job runs its script once, on the batch host: sbatch makes
### one, cohort submit --batch too, and cohort submit alone stays a
### command run once per task.
sid=$(job_submit --hold --batch -- true)
check "$sid" 'd["batch"]' true
pid=$(job_submit --hold -- true)
check "$pid" 'd["batch"]' false
expect_exit 0 cohort cancel "$sid" "$pid"

### Plain: "Submitted batch job N"; --wait until it ends; the output in
### slurm-N.out here; the script's arguments reach it; no GPU by default.
printf '#!/bin/sh\necho "hello $1 $CUDA_VISIBLE_DEVICES."\n' >job.sh
expect_exit 0 sbatch --wait job.sh world
grep -Eqx 'Submitted batch job [1-9][0-9]*' "$OUT" || fail "sbatch printed '$(cat "$OUT")'"
id=$(awk '{print $4}' "$OUT")
[ -f "$W/slurm-$id.out" ] || fail "no slurm-$id.out in the submit directory: $(ls "$W")"
grep -qx 'hello world .' "$W/slurm-$id.out" || fail "slurm-$id.out: $(cat "$W/slurm-$id.out")"

### --wait exits with the job's code, and a failed program is not rerun.
expect_log_error 'job [0-9]+: FAILED: max restarts \(0\) reached; last failure: the batch script exited with 3'
expect_exit 3 sbatch --wait --wrap='exit 3'
id=$(awk '{print $4}' "$OUT")
check "$id" '[d["state"], d["restarts"], d["exit_code"]]' '["FAILED", 0, 3]'

### Slurm's meanings, made per node.
expect_exit 0 sbatch --parsable --hold -N 2 -n 4 --wrap=true
id=$(cat "$OUT")
check "$id" '[d["nodes_min"], d["tasks_per_node"], d["cpu_only"]]' '[2, 2, true]'
expect_exit 0 sbatch --parsable --hold -G 4 -N2 --wrap=true
id2=$(cat "$OUT")
check "$id2" '[d["nodes_min"], d["gpus_per_node"], d["cpu_only"]]' '[2, 2, false]'
expect_exit 0 sbatch --parsable --hold --gpus-per-task 1 --ntasks-per-node 4 --wrap=true
id3=$(cat "$OUT")
check "$id3" '[d["nodes_min"], d["tasks_per_node"], d["gpus_per_node"]]' '[1, 4, 4]'
expect_exit 0 cohort cancel "$id" "$id2" "$id3"

### Refused: not expressible per node; a script's three refusals at
### once, with their lines; nothing submitted.
before=$(job_count --all)
expect_exit 1 sbatch -N 2 -n 5 --wrap=true
stderr_one_line "cohort: sbatch: " '--ntasks 5 over 2 nodes'
cat >bad.sh <<'SH'
#!/bin/sh
#SBATCH --mem-per-cpu=4G
#SBATCH -N 1
#SBATCH --reservation=maint
#SBATCH --frobnicate
true
SH
expect_exit 1 sbatch bad.sh
[ ! -s "$OUT" ] || fail "a refused sbatch printed on stdout: $(cat "$OUT")"
for want in 'bad.sh:2: #SBATCH --mem-per-cpu: not supported' \
	'bad.sh:4: #SBATCH --reservation: not supported' \
	'bad.sh:5: #SBATCH --frobnicate: not an sbatch option' \
	'bad.sh: 3 options refused'; do
	grep -qF -- "$want" "$ERR" || fail "stderr lacks '$want': $(cat "$ERR")"
done
[ "$(job_count --all)" = "$before" ] || fail "a refused sbatch created a job"

### cohort submit: --ntasks and --gpus are Slurm's totals; -p the queue.
id=$(job_submit --hold -N 2 --ntasks=4 --gpus=4 -p default -- true)
check "$id" '[d["nodes_min"], d["tasks_per_node"], d["gpus_per_node"], d["queue"]]' '[2, 2, 2, "default"]'
expect_exit 0 cohort cancel "$id"
expect_exit 2 cohort submit --ntasks-per-n=2 -- true
stderr_one_line "cohort: submit: --ntasks-per-n: unknown option"

### --begin: PENDING with reason BeginTime (squeue's %R), then refused
### when it is not a time.
expect_exit 0 sbatch --parsable --begin now+1hour --wrap=true
id=$(cat "$OUT")
expect_exit 0 squeue -h -j "$id" -o '%T %R'
[ "$(cat "$OUT")" = "PENDING (BeginTime)" ] || [ "$(cat "$OUT")" = "PENDING BeginTime" ] ||
	fail "squeue says '$(cat "$OUT")' for a job of --begin now+1hour"
expect_exit 0 scancel "$id"
expect_exit 1 sbatch --begin 'next tuesday' --wrap=true
grep -q "is not a time" "$ERR" || fail "--begin 'next tuesday': $(cat "$ERR")"
### -A/--account and --qos: a name this cluster maps to no queue is
### refused, saying where a site maps them.
before=$(job_count --all)
expect_exit 1 sbatch -A proj --wrap=true
grep -q -- "--account proj: this cluster maps no queue to it (cohortd.conf: \[queue NAME\] accounts = proj)" "$ERR" ||
	fail "sbatch -A proj: $(cat "$ERR")"
expect_exit 1 sbatch --qos=high --wrap=true
grep -q -- "--qos high: this cluster maps no queue" "$ERR" || fail "sbatch --qos high: $(cat "$ERR")"
[ "$(job_count --all)" = "$before" ] || fail "a refused -A/--qos made a job"
exit 0
