#!/bin/bash
# Fail-job XIDs in heartbeats are judged against the node's inventory and
# acted on once per GPU per message: with a node's own agent certificate
# (its agent stopped), heartbeats listing thousands of XIDs on GPUs the
# node does not have (gpu 2^31, which once read as "every GPU", and gpu
# 2 of a 2-GPU node) change nothing for the job on it, are counted in
# cohort_agent_reports_rejected_total{kind="xid"} and "too_many", and
# add a few log lines, not one per XID; thousands of XIDs on a GPU the
# job holds fail it over exactly once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The flood of XIDs is refused; the real XID fails the job's start and restarts it.
expect_log_error 'cohortd: warning: node node01: refused \((xid|too_many)\): '
expect_log_error 'cohortd: warning: job [0-9]+: start failed: rank 0 on node01: the node.s agent disconnected'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*xid=79 \(fail-job\)'
need_python_protobuf

C=$T/cluster
# A 30 s node timeout: between the pyclient runs that stand in for the
# killed agent, nothing heartbeats for the node (python start-up and the
# checks take seconds on a loaded machine).
COHORT_LOCAL_NODE_TIMEOUT=30s cluster_up "$C" --nodes 2 --gpus 2
HTTP=$COHORT_HTTP
metric() {
	curl -fsS "$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
rejected() {
	local v
	v=$(metric "cohort_agent_reports_rejected_total{kind=\"$1\"}")
	printf '%s\n' "${v:-missing}"
}
[ "$(rejected xid)" = 0 ] || fail "rejected{kind=xid} is '$(rejected xid)' before any XID"

id=$(job_submit --name victim --nodes 1 --gpus-per-node 2 --max-restarts 3 -- sleep 600)
wait_state 20 "$id" RUNNING
X=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
wait_pidfiles 10 "$C" "$id" 1
pidfile=$(job_pidfiles "$C" "$id")
d=${pidfile%/rank-*}
att=${d##*.}
[[ "$att" =~ ^[1-9][0-9]*$ ]] || fail "cannot read the attempt from $pidfile"
cohort-local kill "$C" "$X" >"$T/kill.out" 2>&1 || fail "cohort-local kill $X: $(cat "$T/kill.out")"
xidagent() {
	pyclient --server "$COHORT_SERVER" --cert "$C/agent-$X.crt" --key "$C/agent-$X.key" \
		--ca "$C/ca.pem" hbflood --gpus 2 --task "$id:$att:0" "$@"
}

LOG=$C/cohortd.log
lines0=$(grep -c 'xid=' "$LOG" || true)
xidagent --xid 2147483648:2048 --xid 2:2048 --beats 40 --hold 1 >"$T/x1.out" 2>&1 ||
	fail "pyclient hbflood: $(cat "$T/x1.out")"
job_show "$id"
got=$(json_get "$T/job-$id.json" '[d["state"], d["restarts"]]')
[ "$got" = '["RUNNING", 0]' ] || fail "XIDs on GPUs $X does not have changed job $id: $got ($(json_get "$T/job-$id.json" 'd["reason"]'))"
[ "$(rejected xid)" -ge 1 ] || fail "rejected{xid} is $(rejected xid)"
[ "$(rejected too_many)" -ge 1 ] || fail "rejected{too_many} is $(rejected too_many)"
lines=$(($(grep -c 'xid=' "$LOG" || true) - lines0))
log "163,840 XIDs on GPUs the node lacks: $lines log lines, rejected{xid}=$(rejected xid) too_many=$(rejected too_many)"
[ "$lines" -lt 40 ] || fail "$lines log lines for refused XIDs: $(grep 'xid=' "$LOG" | tail -n 3)"

# One heartbeat with thousands of XIDs on the job's GPUs: one fail-over.
xidagent --xid 0:2048 --xid 1:2048 --beats 1 --hold 1 >"$T/x2.out" 2>&1 ||
	fail "pyclient hbflood: $(cat "$T/x2.out")"
restarted() {
	job_show "$id"
	[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" -ge 1 ]
}
wait_for 20 restarted || fail "an XID on gpu 0 of $X did not fail job $id over"
expect_exit 0 cohort events --job "$id" --json
n=$(json_get "$OUT" 'sum(1 for e in d["events"] if e["kind"] == "restart" and "xid=79" in (e["detail"] or ""))')
[ "$n" = 1 ] || fail "job $id has $n restarts for xid=79, expected 1: $(cat "$OUT")"
exit 0
