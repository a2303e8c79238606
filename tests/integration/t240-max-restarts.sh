#!/bin/bash
# A job whose task always fails is restarted --max-restarts times, then
# FAILED with a reason that says so; every run got the next
# COHORT_RESTART_COUNT.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The failing jobs restart up to their limit, then fail.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart [0-9]+ of [0-9]+, .*: (FailedEarly: )?rank 0 exited with 1( after [0-9]+ s; retry in [0-9]+ s)?$'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: max restarts \([0-9]+\) reached'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)

id=$(job_submit --name t240 --nodes 1 --max-restarts 2 --workdir "$W" -- \
	sh -c 'echo "$COHORT_RESTART_COUNT" >>runs; exit 1')
wait_state 30 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = FAILED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]'), not FAILED"
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
grep -qi 'max restarts' <<<"$reason" || fail "job $id's reason '$reason' does not say 'max restarts'"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 2 ] ||
	fail "job $id has $(json_get "$T/job-$id.json" 'd["restarts"]') restarts, not 2"
log "job $id: FAILED: $reason"
# Three runs: the first and two restarts, numbered 0, 1, 2.
[ "$(paste -sd ' ' "$W/runs")" = "0 1 2" ] ||
	fail "job $id's runs saw COHORT_RESTART_COUNT '$(paste -sd ' ' "$W/runs" 2>/dev/null)', not '0 1 2'"
expect_exit 0 cohort events --job "$id" --json
[ "$(json_get "$OUT" 'len([e for e in d["events"] if e["kind"] == "restart"])')" = 2 ] ||
	fail "job $id has not 2 restart events: $(json_get "$OUT" '[(e["kind"], e["detail"]) for e in d["events"]]')"

# --max-restarts 0: the first failure is final.
id=$(job_submit --name t240-0 --nodes 1 --max-restarts 0 --workdir "$W" -- sh -c 'exit 3')
wait_state 20 "$id" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" '[d["state"], d["restarts"], d["exit_code"]]')" = '["FAILED", 0, 3]' ] ||
	fail "job $id (--max-restarts 0, exit 3) ended $(json_get "$T/job-$id.json" '[d["state"], d["restarts"], d["exit_code"], d["reason"]]')"
exit 0
