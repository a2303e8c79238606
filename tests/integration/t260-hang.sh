#!/bin/bash
# --hang-timeout: a job whose progress file stops changing for that long
# is treated as failed and restarted (here --max-restarts 1, so it ends
# FAILED); a job that keeps rewriting it runs to the end untouched.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The hung job restarts once, then fails.
expect_log_error 'cohortd: warning: job [0-9]+: (RESTARTING \(.*|FAILED: max restarts .*)no progress for [0-9]+ s \(hang-timeout'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)
FT=$(fake_train "$W")
MARK="cohort-t260-$$-$RANDOM"

# Writes progress twice, then hangs (sleeps without progress).
hung=$(job_submit --name t260-hung --nodes 1 --hang-timeout 3s --max-restarts 1 --workdir "$W" -- \
	sh -c 'echo "$COHORT_RESTART_COUNT" >>runs
echo 1 >"$COHORT_PROGRESS_FILE"; sleep 0.3; echo 2 >"$COHORT_PROGRESS_FILE"
sleep 60; : '"$MARK")
# Progresses every 0.1 s for 5 s: never restarted.
ok=$(job_submit --name t260-ok --nodes 1 --hang-timeout 3s --max-restarts 1 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$FT" 50 0.1 10)

wait_job 15 "$hung" 'd["restarts"] >= 1'
log "job $hung restarted: $(json_get "$T/job-$hung.json" '[d["state"], d["reason"]]')"
wait_state 20 "$hung" FAILED COMPLETED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$hung.json" '[d["state"], d["restarts"]]')" = '["FAILED", 1]' ] ||
	fail "hung job $hung ended $(json_get "$T/job-$hung.json" '[d["state"], d["restarts"], d["reason"]]'), not FAILED after 1 restart"
reason=$(json_get "$T/job-$hung.json" 'd["reason"]')
grep -qi 'no progress' <<<"$reason" || fail "job $hung's reason '$reason' does not say 'no progress'"
grep -qi 'max restarts' <<<"$reason" || fail "job $hung's reason '$reason' does not say 'max restarts'"
log "job $hung: FAILED: $reason"
expect_exit 0 cohort events --job "$hung" --json
json_get "$OUT" '[e["detail"] for e in d["events"] if e["kind"] == "restart"]' >"$T/restarts"
grep -qi 'no progress' "$T/restarts" || fail "job $hung's restart event does not say 'no progress': $(cat "$T/restarts")"
[ "$(paste -sd ' ' "$W/runs")" = "0 1" ] || fail "job $hung ran '$(paste -sd ' ' "$W/runs")' times, not '0 1'"
# Neither hung run is left behind.
wait_for 10 not marker_alive "$MARK" || fail "a hung run of job $hung is still running: $(pgrep -af -- "$MARK")"

wait_state 20 "$ok" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$ok.json" '[d["state"], d["restarts"]]')" = '["COMPLETED", 0]' ] ||
	fail "progressing job $ok ended $(json_get "$T/job-$ok.json" '[d["state"], d["restarts"], d["reason"]]')"
exit 0
