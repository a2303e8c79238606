#!/bin/bash
# A tour of the scheduling flags through the real CLI, wire and
# controller: each flag of cohort submit, and Slurm's forms of sbatch,
# given once, and each seen to reach the job as the domain keeps it
# (cohort show --json); a keyed submit sent again answers the job the
# first made. What the domain then does with them is tested in virtual
# time by the Check suites on tests/domain (check_restarts,
# check_cluster, check_recovery, ...); here only that the path from the
# command line to the controller, and from the controller to the agent
# (a restart's count in the task's environment), carries them. The jobs
# that name a container image stay held: the image is never prepared, so
# none is built here (t900 runs jobs in images).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the job this test fails on purpose.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 1 of 1, .*rank 0 exited with 1'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: max restarts \(1\) reached'
# ... and the elastic job moved off the node drained --now, then grown back.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 0 of [0-9]+, .*\): (node node02 drained by ops: maint|growing from 1 toward 2 nodes)$'

# Two queues that own no GPUs (what they use is borrowed); y also goes
# by an account and a QOS name, as sbatch's -A and --qos give them.
export COHORT_LOCAL_CONTROLLER_CONF='[queue x]
gpus = 0
users = alice
[queue y]
gpus = 0
users = alice
accounts = proj-y
qos = high'
# Both nodes under one leaf switch and in one NVLink block, so that
# --topology block and --segment are taken (a topology without blocks
# refuses --segment at submit).
cat >"$T/topology.conf" <<'EOF'
SwitchName=leaf0 Nodes=node[01-02]
BlockName=nvl0 Nodes=node[01-02]
EOF
C=$T/cluster
COHORT_LOCAL_TOPOLOGY=$T/topology.conf cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)

# expect_json ID EXPR: EXPR (Python over show --json's d) holds for job ID.
expect_json() {
	job_show "$1"
	json_get "$T/job-$1.json" "$2" | grep -qx true ||
		fail "job $1: $2 is false: $(json_get "$T/job-$1.json" 'd')"
}

### Refusals: one the CLI makes itself (a spec it cannot parse) and two
### the controller makes (what the spec names does not exist; what could
### never run on the nodes it knows), each one line, nothing submitted.
expect_exit 1 cohort submit --dependency afterok:x -- true
stderr_one_line "cohort: submit" "--dependency 'afterok:x'"
expect_exit 1 cohort submit --dependency afterok:9999 -- true
stderr_one_line "cohort: submit" "--dependency afterok:9999: no job 9999"
expect_exit 1 cohort submit --gpus-per-node 16 -- true
stderr_one_line_with "--gpus-per-node 16: the largest node has 2 GPUs"
[ "$(job_count --all)" = 0 ] || fail "a refused submit left a job behind"

### Held, so that nothing of it runs: every flag reaches the spec.
dep=$(job_submit --hold --name dep -- true)
id=$(job_submit --hold --name tour-a -N 1:2 --gpus-per-node 2 \
	--tasks-per-node 2 -t 10m --priority 7 --topology-prefer leaf \
	--checkpoint-dir "$W/ck" --max-restarts 5 --checkpoint-signal USR1@30 \
	--hang-timeout 5m --on-straggler replace --dependency "afterany:$dep" \
	-x node02 --mail-type END --mail-user carol -c 1 --mem-per-node 1G \
	-o 'out-%j.txt' -e 'err-%j.txt' --export NONE --env TOUR=1 \
	--exclusive --queue y --workdir "$W" -- true)
expect_json "$id" 'd["state"] == "PENDING" and d["hold"] == "user" and d["reason"] == "JobHeldUser"'
expect_json "$id" 'd["name"] == "tour-a" and (d["nodes_min"], d["nodes_max"]) == (1, 2)'
expect_json "$id" '(d["gpus_per_node"], d["tasks_per_node"], d["cpus_per_task"]) == (2, 2, 1)'
expect_json "$id" 'd["time_limit_s"] == 600 and d["priority"] == 7'
expect_json "$id" '(d["topology_mode"], d["topology_level"]) == ("preferred", "leaf")'
expect_json "$id" 'd["checkpoint_dir"].endswith("/work/ck") and d["max_restarts"] == 5'
expect_json "$id" 'd["checkpoint_signal"] == "USR1@30" and d["hang_timeout_s"] == 300'
expect_json "$id" 'd["on_straggler"] == "replace"'
expect_json "$id" "d[\"dependency\"] == \"afterany:$dep\" and d[\"exc_nodelist\"] == \"node02\""
expect_json "$id" 'd["mail_user"] == "carol" and d["mail_type"] != 0'
expect_json "$id" 'd["mem_per_node_mb"] == 1024 and d["exclusive"] is True'
expect_json "$id" '(d["output"], d["error"]) == ("out-%j.txt", "err-%j.txt")'
expect_json "$id" 'd["env"] == ["TOUR=1"]'
expect_json "$id" 'd["queue"] == "y"'
acct=$(job_submit --hold -A proj-y -- true)
expect_json "$acct" 'd["queue"] == "y"'
qos=$(job_submit --hold --qos high -- true)
expect_json "$qos" 'd["queue"] == "y"'
expect_json "$dep" 'd["queue"] == "x"'

# The rest of submit's flags, on a second held job: a required topology
# level and segments, the GPUs' type, features and memory, a service,
# no restarts, a key, and a container. Sent again with its key: the same
# job, a note on stderr, nothing new.
tour_b=(--hold --name tour-b -N 2 --gpus-per-node 2 --topology block
	--segment 2 --gpu-type h100 -C 'h100&nvlink' --gpu-memory 80 --service
	--no-requeue --idempotency-key tour-b.1
	--container-image "$W/tour.sqsh" --container-mounts "$W:/data:ro"
	--container-workdir /data --container-writable --container-env TOUR
	--container-mount-home --container-name tour)
tb=$(job_submit "${tour_b[@]}" -- true)
expect_json "$tb" '(d["topology_mode"], d["topology_level"], d["segment"]) == ("required", "block", 2)'
expect_json "$tb" 'd["gpu_type"] == "h100" and d["constraint"] == "h100&nvlink"'
expect_json "$tb" 'd["gpu_memory_mb"] == 80 * 1024'
expect_json "$tb" 'd["service"] is True and d["time_limit_s"] == 0 and d["max_restarts"] == 0'
expect_json "$tb" 'd["idempotency_key"] == "tour-b.1"'
expect_json "$tb" "d[\"container\"][\"image\"] == \"$W/tour.sqsh\" and d[\"container\"][\"mounts\"] == \"$W:/data:ro\""
expect_json "$tb" '[d["container"][k] for k in ("workdir", "env", "name", "writable", "mount_home")] == ["/data", "TOUR", "tour", True, True]'
before=$(job_count --all)
expect_exit 0 cohort submit "${tour_b[@]}" -- true
[ "$(cat "$OUT")" = "$tb" ] || fail "tour-b's key sent again answered '$(cat "$OUT")', not job $tb"
stderr_one_line "cohort: submit: job $tb was submitted with --idempotency-key tour-b.1 before: nothing new submitted"
[ "$(job_count --all)" = "$before" ] || fail "tour-b's key sent again made a job"
expect_exit 2 cohort submit --hold --container-image "$W/tour.sqsh" --container-save "$W/out.sqsh" -- true
stderr_one_line "cohort: submit: --container-save"
[ "$(job_count --all)" = "$before" ] || fail "a refused --container-save made a job"

# sbatch's forms: GPUs per task (made per node), a typed --gres, and
# --requeue (sbatch's default is no restart) with --signal's B: form
# (the batch script's signal) and a registry's image.
expect_exit 0 sbatch --parsable --hold -D "$W" --gpus-per-task 1 --ntasks-per-node 2 --wrap=true
gpt=$(cat "$OUT")
expect_json "$gpt" '(d["gpus_per_node"], d["tasks_per_node"], d["batch"]) == (2, 2, True)'
expect_exit 0 sbatch --parsable --hold -D "$W" --gres=gpu:h100:1 --wrap=true
gres=$(cat "$OUT")
expect_json "$gres" '(d["gpus_per_node"], d["gpu_type"]) == (1, "h100")'
expect_exit 0 sbatch --parsable --hold -D "$W" --requeue --signal B:USR2@45 \
	--container-image docker://ubuntu:22.04 --container-readonly \
	--no-container-mount-home --wrap=true
rq=$(cat "$OUT")
expect_json "$rq" 'd["max_restarts"] == 3 and d["checkpoint_signal"] == "USR2@45"'
expect_json "$rq" 'd["container"]["image"] == "docker://ubuntu:22.04" and not d["container"]["writable"] and not d["container"]["mount_home"]'

# Released: its dependency (held) now holds it.
expect_exit 0 cohort release "$id"
expect_json "$id" 'd["hold"] in (None, "", "none") and d["reason"] == "Dependency"'

### --begin, -w, CPU only, an array with a limit, a batch job.
b=$(job_submit --begin now+1h --name later -- true)
wait_job 10 "$b" 'd["state"] == "PENDING" and d["reason"] == "BeginTime"'
arr=$(job_submit --hold -w node01 --gpus-per-node 0 --array 0-3%2 --batch \
	--workdir "$W" -- true)
expect_json "${arr}_1" 'd["req_nodelist"] == "node01" and d["cpu_only"] is True'
expect_json "${arr}_1" 'd["array"] == "0-3%2" and d["array_task"] == 1 and d["batch"] is True'

### The controller to the agent: a failing job's restart count reaches
### its tasks (COHORT_RESTART_COUNT), and --max-restarts ends it.
f=$(job_submit --name fails --nodes 1 --max-restarts 1 --workdir "$W" -- \
	sh -c 'echo "$COHORT_RESTART_COUNT" >>runs; exit 1')
wait_state 30 "$f" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$f.json" '[d["state"], d["restarts"]]')" = '["FAILED", 1]' ] ||
	fail "job $f ended $(json_get "$T/job-$f.json" '[d["state"], d["restarts"], d["reason"]]')"
[ "$(paste -sd ' ' "$W/runs")" = "0 1" ] ||
	fail "job $f's runs saw COHORT_RESTART_COUNT '$(paste -sd ' ' "$W/runs" 2>/dev/null)', not '0 1'"

### An elastic job runs at its largest size that fits, and says how many
### nodes it holds now (what it does when one fails, or comes back, is
### check_recovery's test_elastic_shrink_then_grow_back).
el=$(job_submit --name elastic -N 1:2 --gpus-per-node 2 --workdir "$W" -- \
	sh -c "$(gate el-go)")
wait_state 20 "$el" RUNNING
expect_json "$el" 'd["nodes_now"] == 2 and len(d["placement"]) == 2'

### drain --now through the CLI (an admin's only): the job on the node
### moves at once, rather than run on to its end, no restart counted; the
### node is DRAINED with its reason; resume (an admin's only) puts it
### back. When the move waits for a checkpoint is check_recovery's
### test_drain_now_moves_on_checkpoint.
expect_exit 1 cohort drain node02 --reason maint --now
node_expr node02 'n["drain"] is None' || fail "alice's refused drain drained node02"
as_user "$C" admin
expect_exit 0 cohort drain node02 --reason maint --now
as_user "$C" alice
wait_job 20 "$el" 'd["state"] == "RUNNING" and [p["node"] for p in d["placement"]] == ["node01"] and d["restarts"] == 0'
wait_node 20 node02 'n["drain"] == "DRAINED" and "maint" in n["reason"]'
expect_exit 1 cohort resume node02
as_user "$C" admin
expect_exit 0 cohort resume node02
as_user "$C" alice
wait_node 10 node02 'n["state"] == "UP" and n["drain"] is None'
touch "$W/el-go"
wait_state 20 "$el" COMPLETED FAILED CANCELLED TIMEOUT
expect_json "$el" 'd["state"] == "COMPLETED" and d["nodes_now"] is None'
### A CPU-only job (--gpus-per-node 0) launched on a named node: its task
### sees no GPU, and cohort nodes lists it there (where such jobs may go
### is check_cluster's test_nodelist_exclusive_cpu_only).
cpu=$(job_submit --name cpu -w node01 --gpus-per-node 0 --workdir "$W" -- \
	sh -c 'printf "%s" "${CUDA_VISIBLE_DEVICES-unset}" >cvd; while [ ! -e cpu-go ]; do sleep 0.1; done')
wait_state 20 "$cpu" RUNNING
wait_for 10 test -f "$W/cvd" || fail "CPU-only job $cpu wrote no environment"
[ "$(cat "$W/cvd")" = "" ] || fail "CPU-only job $cpu sees CUDA_VISIBLE_DEVICES='$(cat "$W/cvd")'"
wait_node 10 node01 "$cpu in n['jobs']"
touch "$W/cpu-go"
wait_state 20 "$cpu" COMPLETED FAILED CANCELLED TIMEOUT
expect_json "$cpu" 'd["state"] == "COMPLETED" and d["cpu_only"] is True'
### The queues' fair-share factors reach cohort queues (how they order
### jobs is check_preemption's test_fair_share_order).
expect_exit 0 cohort queues --json
json_get "$OUT" 'sorted(r["name"] for r in d["queues"] if 0 <= r["factor"] <= 1)' |
	grep -qxF '["x", "y"]' || fail "cohort queues --json: $(cat "$OUT")"
exit 0
