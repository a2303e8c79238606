#!/bin/bash
# A node fails under a running step of a --requeue batch job: the step's
# tasks end everywhere, and the job runs again from the top of its script
# on healthy nodes, with SLURM_RESTART_COUNT 1, its new steps numbered
# from 0 again. 3 nodes, a 2-node job.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"
job_config "$W"

cat >job.sh <<'SH'
#!/bin/bash
#SBATCH -N 2
#SBATCH --gpus-per-node=1
#SBATCH --requeue
echo "start $SLURM_RESTART_COUNT $SLURM_JOB_NODELIST" >>runs.log
if [ "$SLURM_RESTART_COUNT" = 0 ]; then
	srun -J long sleep 600
else
	srun -J again printenv SLURMD_NODENAME >again.out
	echo "second run: $?" >>runs.log
fi
SH
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -o job.out job.sh
id=$(cat "$OUT")
_long_runs() {
	squeue -s -h -o '%i %j %N' >"$T/steps" 2>&1 && grep -q "^$id.0 long " "$T/steps"
}
wait_for 60 _long_runs || fail "step $id.0 does not run: $(cat "$T/steps")"
cohort show "$id" --json >"$T/job.json" || fail "cohort show $id failed"
victim=$(json_get "$T/job.json" '[p["node"] for p in d["placement"] if p["node_rank"] == 1][0]')
expect_log_error "health: node FAILED: test: the node dies under a step"
expect_log_error "job $id: .*$victim"
cohort-local fail "$C" "$victim" node "test: the node dies under a step" ||
	fail "cannot fail $victim"
_second_run() { grep -q '^second run: 0$' "$W/runs.log" 2>/dev/null; }
wait_for 90 _second_run || fail "the job did not run again to the end: $(cat "$W/runs.log" 2>&1)"
wait_state 60 "$id" COMPLETED FAILED CANCELLED
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id restarted $(json_get "$T/job-$id.json" 'd["restarts"]') times, want 1"
# From the top: the setup line twice, the second time on healthy nodes.
mapfile -t runs <"$W/runs.log"
[ "${#runs[@]}" = 3 ] || fail "runs.log: ${runs[*]}"
case "${runs[0]}" in "start 0 "*) ;; *) fail "first line: ${runs[0]}" ;; esac
case "${runs[1]}" in "start 1 "*) ;; *) fail "second line: ${runs[1]}" ;; esac
hosts=$(scontrol show hostnames "${runs[1]#start 1 }")
! grep -qx "$victim" <<<"$hosts" || fail "the second run used the failed node $victim: $hosts"
[ "$(sort -u "$W/again.out" | wc -l)" = 2 ] || fail "the second run's step ran on: $(cat "$W/again.out")"
# The steps of the latest run, numbered from 0.
expect_exit 0 sacct -j "$id" -P -n -o JobID,JobName,State
grep -qx "$id.0|again|COMPLETED" "$OUT" || fail "sacct: $(cat "$OUT")"
