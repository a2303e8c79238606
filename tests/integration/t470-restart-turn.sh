#!/bin/bash
# A restarting gang keeps its turn, and its old tasks' GPUs.
# On 4 idle nodes a 2-node job's rank-1 node loses a GPU. The old task on
# the kept rank-0 node takes a second to stop (it traps SIGTERM):
#  - the restart waits for it before launching there (two processes on
#    one GPU's memory is a crash), holding the kept node and its
#    replacement meanwhile;
#  - a 2-node job submitted once the failure is known does not take
#    them: it waits for the restart;
#  - the restart launches as soon as the old task's exit is reported.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 1 of [0-9]+, .*xid=79'

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 4
W=$(world_dir work)
cat >"$W/slow-stop.sh" <<'SH'
#!/bin/sh
# Record start and exit (ns) per restart and rank; exit 1 s after SIGTERM.
tag="$COHORT_RESTART_COUNT-$RANK"
date +%s%N >"$1/start-$tag"
trap 'sleep 1; date +%s%N >"$1/exit-$tag"; exit 0' TERM
while :; do sleep 0.1; done
SH
chmod 755 "$W/slow-stop.sh"

id=$(job_submit --name t470 --nodes 2 --max-restarts 3 --workdir "$W" -- "$W/slow-stop.sh" "$W")
wait_state 20 "$id" RUNNING
rank0=$(json_get "$T/job-$id.json" '[p["node"] for p in d["placement"] if p["node_rank"] == 0][0]')
rank1=$(json_get "$T/job-$id.json" '[p["node"] for p in d["placement"] if p["node_rank"] == 1][0]')
wait_for 10 test -e "$W/start-0-0" || fail "rank 0 of job $id did not start"
log "job $id runs on $rank0 (rank 0) and $rank1 (rank 1); GPU 3 of $rank1 fails"

cohort-local fail "$C" "$rank1" gpu 3 xid=79 || fail "cohort-local fail $rank1 gpu 3"
wait_job 40 "$id" 'd["restarts"] >= 1'
later=$(job_submit --name t470-later --nodes 2 --workdir "$W" -- sleep 3)

# The restart runs first, on its kept rank-0 node, after the old task
# there exited.
wait_state 30 "$id" RUNNING
json_get "$T/job-$id.json" '[p["node"] for p in d["placement"] if p["node_rank"] == 0][0]' | grep -qx "$rank0" ||
	fail "job $id did not keep $rank0 at rank 0: $(json_get "$T/job-$id.json" 'd["placement"]')"
wait_for 30 test -e "$W/start-1-0" || fail "rank 0 of the restart of job $id did not start"
[ -e "$W/exit-0-0" ] ||
	fail "the restart of job $id started on $rank0 while the old rank 0 still ran there"
[ "$(cat "$W/start-1-0")" -gt "$(cat "$W/exit-0-0")" ] ||
	fail "the restart of job $id started on $rank0 before the old rank 0 exited"
[ "$(job_state "$later")" = PENDING ] ||
	fail "job $later ($(json_get "$T/job-$later.json" 'd["state"]')) took the nodes of the restart of job $id"
grep -q "job $id: attempt 2 waits for job $id attempt 1 to stop on $rank0" "$C/cohortd.log" ||
	fail "cohortd did not say that the restart waits for the old tasks: $(grep "job $id" "$C/cohortd.log" | tail -5)"
ms=$(grep -h "job $id: running again" "$C/cohortd.log" | sed -E 's/.*running again ([0-9]+) ms.*/\1/' | head -1)
[ -n "$ms" ] || fail "cohortd did not log the restart of job $id"
gap=$(( ($(cat "$W/start-1-0") - $(cat "$W/exit-0-0")) / 1000000 ))
log "job $id running again $ms ms after the failure, its rank 0 $gap ms after the old one exited; job $later waits ($(json_get "$T/job-$later.json" 'd["reason"]'))"
cohort cancel "$id" >/dev/null || fail "cohort cancel $id"
wait_state 40 "$later" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$later.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $later ended $(json_get "$T/job-$later.json" '[d["state"], d["reason"]]')"
