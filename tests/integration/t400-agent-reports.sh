#!/bin/bash
# Agent reports are bound to the placement: with node B's own
# agent certificate (its agent stopped, so the attacker registers as B),
# forged reports about alice's job on node A change nothing:
#  - a TaskExit (success, then failure) for the job's rank: refused
#    (ERROR_DENIED), the job stays RUNNING with 0 restarts and its task
#    alive; the same exit inside a heartbeat is refused silently;
#  - a checkpoint naming a path of the attacker's choosing: ignored (the
#    job keeps no checkpoint); progress: refused;
#  - a running task of the job reported by B: B alone is told to stop it;
#  - exits of an old attempt and of a job the controller never had are
#    still acknowledged (the agent can forget them), changing nothing;
#    running tasks of those are stopped on the reporting node;
#  - a heartbeat listing 100,000 made-up tasks is refused whole
#    (ERROR_LIMIT): the controller stays responsive and its log grows by
#    a few lines; 3,000 made-up running tasks make at most 64 stops;
#  - every refusal shows in cohort_agent_reports_rejected_total;
#  - an agent certificate for a node in no topology cannot register
#    (ERROR_DENIED, closed) and receives nothing;
#  - cohort node delete: users may not; a node that is UP or holds a job
#    is refused; a DOWN one goes, from `cohort nodes` and, after a
#    controller restart, for good;
# and the job's real node still completes it after the controller
# restarted (reports from the rightful node are accepted).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Reports of node02 about other nodes' work and an unknown node are refused; the fake node02 goes DOWN.
expect_log_error 'cohortd: warning: node node02: refused \((task_exit|progress|checkpoint)\): job [0-9]+ attempt [0-9]+'
expect_log_error 'cohortd: warning: node evil01: refused \(register\): the node is neither in the topology nor in .nodes.'
expect_log_error 'cohortd: warning: node node02: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: job 987654 runs on a node but is not in the database'
need_python_protobuf

C=$T/cluster
# The fake node02 is meant to go DOWN.
COHORT_LOCAL_NODE_TIMEOUT=5s cluster_up "$C" --nodes 2 --gpus 2
HTTP=$COHORT_HTTP
W=$(world_dir work)

metric() {
	curl -fsS "$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
rejected() {
	local v
	v=$(metric "cohort_agent_reports_rejected_total{kind=\"$1\"}")
	printf '%s\n' "${v:-missing}"
}
for k in task_exit task_running checkpoint progress too_many register; do
	[ "$(rejected "$k")" = 0 ] || fail "rejected{kind=$k} is '$(rejected "$k")' before any attack, not 0"
done

id=$(job_submit --name victim --nodes 1 --gpus-per-node 2 --max-restarts 3 \
	--checkpoint-dir "$W/ckpt" --workdir "$W" -- \
	sh -c 'i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done; exit 0')
wait_state 20 "$id" RUNNING
A=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
case "$A" in
node01) B=node02 ;;
node02) B=node01 ;;
*) fail "job $id runs on '$A', not node01 or node02" ;;
esac
wait_pidfiles 10 "$C" "$id" 1
pidfile=$(job_pidfiles "$C" "$id")
d=${pidfile%/rank-*}
att=${d##*.}
[[ "$att" =~ ^[1-9][0-9]*$ ]] || fail "cannot read the attempt from $pidfile"
read -r sup pgid <"$pidfile"
pgid_alive "$pgid" || fail "job $id's task is not running"
log "job $id attempt $att on $A (task group $pgid); the attacker holds $B's certificate"

# B's agent goes; its certificate is the attacker's.
cohort-local kill "$C" "$B" >"$T/kill.out" 2>&1 || fail "cohort-local kill $B: $(cat "$T/kill.out")"
agent() {
	local cert="$1" name="$2"
	shift 2
	pyclient --server "$COHORT_SERVER" --cert "$cert.crt" --key "$cert.key" \
		--ca "$C/ca.pem" agent --name "$name" --gpus 2 --quiet 2 "$@"
}

LOG=$C/cohortd.log
log_before=$(stat -c %s "$LOG")
agent "$C/agent-$B" "$B" register \
	"exit:$id:$att:0:0" "exit:$id:$att:0:256" "ended:$id:$att:0:0" \
	"checkpoint:$id:$att:999:/tmp/evil-checkpoint" "progress:$id:$att" \
	"running:$id:$att:0" "exit:$id:$((att - 1)):0:256" "exit:987654:1:0:0" \
	"running:$id:$((att - 1)):0" "running:987654:1:0" \
	flood:100000 flood:3000 >"$T/attack.out" 2>"$T/attack.err" ||
	fail "pyclient agent failed: $(cat "$T/attack.out" "$T/attack.err")"
cat "$T/attack.out" | sed 's/^/# /'
expect_line() {
	grep -qxF -- "$1" "$T/attack.out" || fail "expected '$1' from the attack, got: $(cat "$T/attack.out")"
}
expect_line "register: registered"
expect_line "exit:$id:$att:0:0: ERROR_DENIED"
expect_line "exit:$id:$att:0:256: ERROR_DENIED"
expect_line "ended:$id:$att:0:0: -"
expect_line "checkpoint: -"
expect_line "progress:$id:$att: -"
# B holds no part of the job: B (and only B) is told to stop its copy.
expect_line "running:$id:$att:0: stop:$id"
expect_line "exit:$id:$((att - 1)):0:256: ack"
expect_line "exit:987654:1:0:0: ack"
# Running tasks of an old attempt or of an unknown job: stopped, on B.
expect_line "running:$id:$((att - 1)):0: stop:$id"
expect_line "running:987654:1:0: stop:987654"
expect_line "flood: ERROR_LIMIT"
expect_line "flood: stopx64"
grep -q 'does not hold rank 0 of job' "$T/attack.err" || fail "the refusal does not say why: $(cat "$T/attack.err")"

# Nothing changed for the job, and its task lives.
job_show "$id"
got=$(json_get "$T/job-$id.json" '[d["state"], d["restarts"], d["checkpoint"], d["placement"][0]["node"]]')
[ "$got" = "[\"RUNNING\", 0, null, \"$A\"]" ] || fail "job $id changed under forged reports: $got (reason '$(json_get "$T/job-$id.json" 'd["reason"]')')"
pgid_alive "$pgid" || fail "job $id's task (group $pgid) was killed by forged reports"
expect_exit 0 cohort events --job "$id" --json
not grep -q evil-checkpoint "$OUT" || fail "the forged checkpoint reached the job's events"

# Counted, by kind.
[ "$(rejected task_exit)" -ge 3 ] || fail "rejected{task_exit} is $(rejected task_exit), expected >= 3"
[ "$(rejected checkpoint)" -ge 1 ] || fail "rejected{checkpoint} is $(rejected checkpoint)"
[ "$(rejected progress)" -ge 1 ] || fail "rejected{progress} is $(rejected progress)"
[ "$(rejected task_running)" -ge 1 ] || fail "rejected{task_running} is $(rejected task_running)"
[ "$(rejected too_many)" -ge 1 ] || fail "rejected{too_many} is $(rejected too_many)"
log "rejected: task_exit=$(rejected task_exit) task_running=$(rejected task_running) checkpoint=$(rejected checkpoint) progress=$(rejected progress) too_many=$(rejected too_many)"

# The flood left the controller responsive and its log short.
t0=$(_now_us)
expect_exit 0 cohort jobs
t1=$(_now_us)
# Answered (the CLI's own timeout is the net for a blocked loop); how
# fast is reported, never compared.
log_growth=$(($(stat -c %s "$LOG") - log_before))
log "controller log grew by $log_growth bytes during the attack; cohort jobs answered in $(((t1 - t0) / 1000)) ms"
[ "$log_growth" -lt 16384 ] || fail "the controller log grew by $log_growth bytes during the attack: $(tail -c 2000 "$LOG")"
grep -q "node $B: refused (task_exit): job $id attempt $att rank 0" "$LOG" || fail "the refusal is not logged with the node's name"

# An agent certificate for a node in no topology: refused, closed, sent
# nothing (no launch, although the queue holds a job that would fit).
mkdir -p "$T/evil"
cp "$C/ca.pem" "$C/ca.key" "$T/evil/" || fail "cannot copy the CA"
cohort-pki "$T/evil" --controller 127.0.0.1 --agents evil01 >"$T/pki.out" 2>&1 ||
	fail "cohort-pki evil01: $(cat "$T/pki.out")"
spare=$(job_submit --name bait --nodes 1 --gpus-per-node 1 -- sleep 30)
agent "$T/evil/agent-evil01" evil01 register listen >"$T/evil.out" 2>"$T/evil.err" || true
[ "$(head -n 1 "$T/evil.out")" = "hello: ERROR_DENIED closed" ] ||
	fail "an unknown node's registration got: $(cat "$T/evil.out" "$T/evil.err")"
not grep -q launch "$T/evil.out" || fail "an unknown node received a launch: $(cat "$T/evil.out")"
grep -q "not known to this controller" "$T/evil.err" || fail "the refusal does not say why: $(cat "$T/evil.err")"
[ "$(rejected register)" -ge 1 ] || fail "rejected{register} is $(rejected register)"
expect_exit 0 cohort nodes --json
not grep -q evil01 "$OUT" || fail "evil01 is listed: $(cat "$OUT")"
expect_exit 0 cohort cancel "$spare"

# cohort node delete.
expect_exit 1 cohort node delete "$B"
stderr_has "may not send 'delete_node'"
as_user "$C" admin
expect_exit 1 cohort node delete "$A"
grep -qi 'UP\|allocated' "$ERR" || fail "deleting $A (UP, running job $id): $(cat "$ERR")"
expect_exit 1 cohort node delete nosuchnode
expect_exit 2 cohort node delete
wait_node 20 "$B" 'n["state"].startswith("DOWN")'
expect_exit 0 cohort node delete "$B"
expect_exit 0 cohort nodes --json
[ "$(json_get "$OUT" '",".join(sorted(x["name"] for x in d["nodes"]))')" = "$A" ] ||
	fail "after deleting $B, cohort nodes lists $(json_get "$OUT" '[x["name"] for x in d["nodes"]]')"
expect_exit 0 cohort events --node "$B" --json
[ "$(json_get "$OUT" 'len([e for e in d["events"] if e["kind"] == "node-delete" and e["actor"] not in ("", "alice")])')" = 1 ] ||
	fail "no node-delete event by the admin for $B: $(json_get "$OUT" '[(e["kind"], e["actor"]) for e in d["events"]]')"

# A controller restart: B stays gone, and A's own reports (its running
# task on re-registration, then its exit) still count.
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
as_user "$C" admin
wait_node 20 "$A" 'n["state"] == "UP"'
expect_exit 0 cohort nodes --json
[ "$(json_get "$OUT" '",".join(sorted(x["name"] for x in d["nodes"]))')" = "$A" ] ||
	fail "after a controller restart, cohort nodes lists $(json_get "$OUT" '[x["name"] for x in d["nodes"]]')"
pgid_alive "$pgid" || fail "job $id's task died when the controller restarted"
touch "$W/go"
wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" '[d["state"], d["restarts"]]')" = '["COMPLETED", 0]' ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["restarts"], d["reason"]]') after its own node reported"
exit 0
