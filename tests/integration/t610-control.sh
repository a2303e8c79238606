#!/bin/bash
# Control of existing jobs through the real CLI:
#  - hold at submit (when the client has --hold), hold, release: a held
#    job stays PENDING JobHeldUser while nodes are free, and runs once
#    released; only pending jobs may be held;
#  - an admin's hold (JobHeldAdmin) its user cannot release, an admin can;
#  - update of a pending job's --nodes: it then runs on that many nodes;
#    a bad value is refused naming the option, changing nothing;
#  - update --time of a running job: down by its user, up refused (and
#    taken from an admin);
#  - requeue of a running job with a checkpoint directory: it gets its
#    checkpoint signal, goes back to PENDING, resumes from the checkpoint
#    and completes, with no restart counted; a pending job is refused;
#  - cancel of a range (a job of another user in it is refused, the rest
#    cancelled) and by --name.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)
FT=$(fake_train "$W")

# refused REGEX CMD...: the cohort command exits 1 with REGEX on stderr.
refused() {
	local re="$1"
	shift
	expect_exit 1 cohort "$@"
	grep -Eq -- "$re" "$ERR" || fail "'cohort $*' did not say /$re/: $(cat "$ERR")"
}

### Hold and release (alice), while a blocker holds both nodes.
blk=$(job_submit --name blocker --nodes 2 -- sleep 300)
wait_state 20 "$blk" RUNNING
j1=$(job_submit --name small --nodes 1 -- true)
j2=$(job_submit --name other --nodes 1 -- true)
expect_exit 0 cohort hold "$j1"
wait_job 10 "$j1" 'd["state"] == "PENDING" and "JobHeldUser" in d["reason"]'
refused 'only a pending job' hold "$blk"
refused 'is not held' release "$j2"

### An admin's hold.
as_user "$C" admin
expect_exit 0 cohort hold "$j2"
as_user "$C" alice
wait_job 10 "$j2" '"JobHeldAdmin" in d["reason"]'
refused 'only an admin' release "$j2"
as_user "$C" bob
refused 'belongs to alice' hold "$j1"
as_user "$C" alice

### Update of the pending job: 2 nodes; a bad value changes nothing.
expect_exit 0 cohort update "$j1" --nodes 2
grep -q 'nodes 1:1->2:2' "$OUT" || fail "update did not say what changed: $(cat "$OUT")"
refused '--nodes' update "$j1" --nodes 3:1
job_expr "$j1" 'd["nodes_min"] == 2 and d["nodes_max"] == 2' ||
	fail "job $j1 is not 2 nodes after the refused update: $(cohort show "$j1" --json)"

### Cancel by name frees the nodes: the held job stays held.
expect_exit 0 cohort cancel --name blocker
wait_state 20 "$blk" CANCELLED
# A pass has run since (the cancel asks for one); both nodes are idle.
wait_for 10 node_expr node01 'not n["jobs"]' || fail "node01 still holds a job"
wait_job 10 "$j1" 'd["state"] == "PENDING" and "JobHeldUser" in d["reason"]'
expect_exit 0 cohort release "$j1"
wait_state 20 "$j1" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$j1.json" '[d["state"], len(d["placement"])]')" = '["COMPLETED", 2]' ] ||
	fail "job $j1 ended $(json_get "$T/job-$j1.json" '[d["state"], d["placement"], d["reason"]]'), not COMPLETED on 2 nodes"
as_user "$C" admin
expect_exit 0 cohort release "$j2"
as_user "$C" alice
wait_state 20 "$j2" COMPLETED FAILED CANCELLED TIMEOUT
expect_exit 0 cohort events --job "$j2" --json
ev='[(e["kind"], e["actor"]) for e in d["events"] if e["kind"] in ("hold", "release")]'
json_get "$OUT" "[k for k, a in $ev] == ['hold', 'release'] and len(set(a for k, a in $ev)) == 1 and $ev[0][1] != 'alice'" | grep -qx true ||
	fail "job $j2's hold events: $(json_get "$OUT" '[(e["kind"], e["actor"], e["detail"]) for e in d["events"]]')"

### Hold at submit, if the client has it.
if cohort submit --help 2>/dev/null | grep -q -- '--hold'; then
	h=$(job_submit --hold --nodes 1 -- true)
	wait_job 10 "$h" 'd["state"] == "PENDING" and "JobHeldUser" in d["reason"]'
	expect_exit 0 cohort release "$h"
	wait_state 20 "$h" COMPLETED
else
	log "cohort submit has no --hold yet: hold at submit not tested"
fi

### --time of a running job: down by its user, up only by an admin.
r=$(job_submit --name long --nodes 1 --time 10m -- sleep 300)
wait_state 20 "$r" RUNNING
expect_exit 0 cohort update "$r" --time 5m
grep -q 'time_limit_s 600->300' "$OUT" || fail "update --time said: $(cat "$OUT")"
refused '--time: users may only lower' update "$r" --time 20m
refused '--nodes: job [0-9]+ is RUNNING' update "$r" --nodes 2
as_user "$C" admin
expect_exit 0 cohort update "$r" --time 20m
as_user "$C" alice
job_expr "$r" 'd["time_limit_s"] == 1200' || fail "job $r's limit is not 20m after the admin's update"
expect_exit 0 cohort cancel "$r"
wait_state 20 "$r" CANCELLED

### Requeue: checkpoint on the signal, PENDING, resume, complete.
q=$(job_submit --name requeued --nodes 1 --checkpoint-signal USR1@20 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- sh "$FT" 600 0.1 1000)
wait_state 20 "$q" RUNNING
ten_steps() { [ "$(wc -l <"$W/ckpt/run-0.steps" 2>/dev/null || echo 0)" -ge 10 ]; }
wait_for 15 ten_steps || fail "job $q did not get 10 steps done"
pend=$(job_submit --name waiting --nodes 2 -- true)
refused 'only a running job' requeue "$pend"
expect_exit 0 cohort cancel "$pend"
expect_exit 0 cohort requeue "$q"
# Once it runs again from its checkpoint, the rest is only a wait.
two_runs() { [ "$(wc -l <"$W/ckpt/runs" 2>/dev/null || echo 0)" -ge 2 ]; }
wait_for 30 two_runs || fail "job $q did not run again after its requeue: $(cat "$W/ckpt/runs" 2>&1)"
ft_hurry "$W/ckpt"
wait_state 60 "$q" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$q.json" '[d["state"], d["restarts"]]')" = '["COMPLETED", 0]' ] ||
	fail "job $q ended $(json_get "$T/job-$q.json" '[d["state"], d["restarts"], d["reason"]]')"
expect_exit 0 cohort logs "$q" --rank 0
grep -q '^fake-train: verified 600 steps over 2 run(s)' "$OUT" ||
	fail "job $q did not resume from its checkpoint: $(tail -n 5 "$OUT")"
expect_exit 0 cohort events --job "$q" --json
json_get "$OUT" '[e["kind"] for e in d["events"] if e["kind"] in ("requeue", "requeued", "preempt", "restart")]' |
	grep -qx '\["requeue", "requeued"\]' ||
	fail "job $q's events: $(json_get "$OUT" '[(e["kind"], e["actor"], e["detail"]) for e in d["events"]]')"
json_get "$OUT" '[e["detail"] for e in d["events"] if e["kind"] == "requeued"][0]' |
	grep -q 'Requeued by alice.*resumes from checkpoint step' ||
	fail "the requeued event does not say who and from where: $(cat "$OUT")"

### Cancel a range with someone else's job in it.
blk=$(job_submit --name blocker2 --nodes 2 -- sleep 300)
wait_state 20 "$blk" RUNNING
k1=$(job_submit --name k -- true)
as_user "$C" bob
kb=$(job_submit --name k -- true)
as_user "$C" alice
k2=$(job_submit --name k -- true)
refused "cancel $kb: job $kb belongs to bob" cancel "$k1-$k2"
for k in "$k1" "$k2"; do
	[ "$(job_state "$k")" = CANCELLED ] || fail "job $k in the range is $(job_state "$k")"
done
[ "$(job_state "$kb")" = PENDING ] || fail "bob's job $kb in alice's range is $(job_state "$kb")"
expect_exit 2 cohort cancel "$k2-$k1"
stderr_one_line "cohort: cancel: invalid job range"
# --name as bob: only his own.
as_user "$C" bob
expect_exit 0 cohort cancel --name k
[ "$(job_state "$kb")" = CANCELLED ] || fail "bob's cancel --name k left $kb $(job_state "$kb")"
as_user "$C" alice
[ "$(job_state "$blk")" = RUNNING ] || fail "bob's cancel --name touched alice's $blk"
expect_exit 0 cohort cancel --state RUNNING,PENDING
wait_state 20 "$blk" CANCELLED
exit 0
