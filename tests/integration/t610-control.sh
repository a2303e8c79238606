#!/bin/bash
# Control of existing jobs through the real CLI and wire, each command
# once: hold and release (an admin's hold, which its user may not
# release; another user's hold and requeue refused in their replies),
# update of a pending job's --nodes and a running job's --time (the
# changes said back, a refusal naming the option), requeue (the job runs
# again, no restart counted), cancel of a range with another user's job
# in it, by --name and by --state. The rules are check_jobs_control's,
# in virtual time (test_hold_roles, test_held_waits_on_free_nodes,
# test_update_pending, test_update_running, test_requeue_check,
# test_requeue_resumes_from_checkpoint, test_select_filters); the
# checkpoint signal's delivery and a verified resume are t520's.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)

# refused REGEX CMD...: the cohort command exits 1 with REGEX on stderr.
refused() {
	local re="$1"
	shift
	expect_exit 1 cohort "$@"
	grep -Eq -- "$re" "$ERR" || fail "'cohort $*' did not say /$re/: $(cat "$ERR")"
}

### A running job: hold refused, --time down, up refused; requeued, it
### runs again.
r=$(job_submit --name long --nodes 1 --gpus-per-node 1 --time 10m \
	--workdir "$W" -- sh -c 'echo run >>runs; sleep 300')
wait_state 20 "$r" RUNNING
refused 'only a pending job' hold "$r"
expect_exit 0 cohort update "$r" --time 5m
grep -q 'time_limit_s 600->300' "$OUT" || fail "update --time said: $(cat "$OUT")"
refused '--time: users may only lower' update "$r" --time 20m
as_user "$C" bob
refused 'belongs to alice' requeue "$r"
as_user "$C" alice
expect_exit 0 cohort requeue "$r"
two_runs() { [ "$(wc -l <"$W/runs" 2>/dev/null || echo 0)" -ge 2 ]; }
wait_for 30 two_runs || fail "job $r did not run again after its requeue"
wait_job 20 "$r" 'd["state"] == "RUNNING" and d["restarts"] == 0'
expect_exit 0 cohort events --job "$r" --json
json_get "$OUT" '[e["kind"] for e in d["events"] if e["kind"] in ("requeue", "requeued")]' |
	grep -qx '\["requeue", "requeued"\]' ||
	fail "job $r's events: $(json_get "$OUT" '[(e["kind"], e["actor"], e["detail"]) for e in d["events"]]')"

### A held job: an admin's hold, an update, released by the admin.
j=$(job_submit --hold --nodes 1 --gpus-per-node 1 -- true)
as_user "$C" admin
expect_exit 0 cohort hold "$j"
as_user "$C" alice
wait_job 10 "$j" 'd["state"] == "PENDING" and "JobHeldAdmin" in d["reason"]'
refused 'only an admin' release "$j"
as_user "$C" bob
refused 'belongs to alice' hold "$j"
as_user "$C" alice
expect_exit 0 cohort update "$j" --nodes 2
grep -q 'nodes 1:1->2:2' "$OUT" || fail "update did not say what changed: $(cat "$OUT")"
refused '--nodes' update "$j" --nodes 3:1
as_user "$C" admin
expect_exit 0 cohort release "$j"
as_user "$C" alice
wait_state 20 "$j" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$j.json" '[d["state"], len(d["placement"])]')" = '["COMPLETED", 2]' ] ||
	fail "job $j ended $(json_get "$T/job-$j.json" '[d["state"], d["placement"], d["reason"]]'), not COMPLETED on 2 nodes"

### Cancel a range with someone else's job in it; by --name; by --state.
k1=$(job_submit --hold --name k -- true)
as_user "$C" bob
kb=$(job_submit --hold --name k -- true)
as_user "$C" alice
k2=$(job_submit --hold --name k -- true)
refused "cancel $kb: job $kb belongs to bob" cancel "$k1-$k2"
for k in "$k1" "$k2"; do
	[ "$(job_state "$k")" = CANCELLED ] || fail "job $k in the range is $(job_state "$k")"
done
[ "$(job_state "$kb")" = PENDING ] || fail "bob's job $kb in alice's range is $(job_state "$kb")"
expect_exit 2 cohort cancel "$k2-$k1"
stderr_one_line "cohort: cancel: invalid job range"
as_user "$C" bob
expect_exit 0 cohort cancel --name k
[ "$(job_state "$kb")" = CANCELLED ] || fail "bob's cancel --name k left $kb $(job_state "$kb")"
as_user "$C" alice
[ "$(job_state "$r")" = RUNNING ] || fail "bob's cancel --name touched alice's $r"
expect_exit 0 cohort cancel --state RUNNING,PENDING
wait_state 20 "$r" CANCELLED
exit 0
