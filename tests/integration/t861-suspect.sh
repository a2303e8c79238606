#!/bin/bash
# Suspect nodes on a real cluster: node03 is a "black hole" (every job's
# command fails there, as with a broken mount). Jobs of alice and bob
# land on it (alone on its leaf switch, it is the best fit of every
# one-node job, and always free), fail early, restart elsewhere (the
# restart does not keep the node it failed on) and complete. After the
# third, node03 is drained with a reason that starts "suspect:" and
# names the jobs; cohort nodes --long shows its score, /metrics counts
# it, and an admin's resume clears it. A job that fails everywhere (its
# owner's bug) counts against no node.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the early failures and the drain.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart [0-9]+ of [0-9]+, .*FailedEarly: rank 0 exited with 1 after [0-9]+ s; retry in [0-9]+ s$'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: max restarts \([0-9]+\) reached'
expect_log_error 'cohortd: warning: node node03: suspect: 3 jobs failed early here'

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 2
HTTP=$COHORT_HTTP
metric() {
	curl -fsS "$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
wait_node 20 node03 'n["state"] == "UP"'
BAD='[ "$COHORT_NODELIST" != node03 ] || exit 1'

# black_hole USER: a job of USER that fails on node03 and succeeds
# elsewhere; its id.
black_hole() {
	local id
	as_user "$C" "$1"
	id=$(job_submit --name "bh-$1" --nodes 1 --max-restarts 3 -- sh -c "$BAD")
	wait_state 60 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" '[d["state"], d["restarts"]]')" = '["COMPLETED", 1]' ] ||
		fail "job $id of $1: $(json_get "$T/job-$id.json" '[d["state"], d["restarts"], d["reason"]]')"
	printf '%s\n' "$id"
}

### 1. A user's bug fails everywhere: nothing is held against any node.
as_user "$C" bob
bug=$(job_submit --name bug --nodes 1 --max-restarts 2 -- sh -c 'exit 1')
wait_state 60 "$bug" FAILED COMPLETED CANCELLED TIMEOUT
for n in node01 node02 node03; do
	node_expr "$n" 'n.get("suspect_score", -1) == 0 and not n.get("drained_by")' ||
		fail "$n holds the failures of job $bug: $(cohort node show "$n" 2>&1)"
done

### 2. Jobs of two users fail on node03 and complete elsewhere.
a1=$(black_hole alice)
node_expr node03 'n["suspect_score"] == 1' || fail "node03's score after job $a1: $(cohort node show node03 2>&1)"
b1=$(black_hole bob)
node_expr node03 'not n.get("drained_by")' || fail "node03 drained after two jobs"
a2=$(black_hole alice)
wait_node 20 node03 'n.get("drained_by") == "suspect" and n["reason"].startswith("suspect:")'
as_user "$C" alice
expect_exit 0 cohort nodes --json node03
json_get "$OUT" 'd["nodes"][0]["reason"]' >"$T/reason"
for j in "$a1 (alice)" "$b1 (bob)" "$a2 (alice)"; do
	grep -qF "job $j" "$T/reason" || fail "the reason does not name job $j: $(cat "$T/reason")"
done
[ "$(metric cohort_nodes_suspect_drained_total)" = 1 ] ||
	fail "cohort_nodes_suspect_drained_total is '$(metric cohort_nodes_suspect_drained_total)'"
[ "$(metric 'cohort_node_suspect_score{node="node03"}')" = 3 ] ||
	fail "node03's score in /metrics: $(curl -fsS "$HTTP/metrics" | grep suspect)"

### 3. cohort nodes --long and node show.
expect_exit 0 cohort nodes --long
head -1 "$OUT" | grep -Eq '^NODE +STATE +HEALTH +GPUS +MODEL +SWITCH +FEATURES +SCORE +REASON' ||
	fail "nodes --long header: $(head -1 "$OUT")"
grep -Eq '^node03 +DRAINED .* 3 +suspect: 3 jobs failed early here' "$OUT" ||
	fail "nodes --long node03: $(cat "$OUT")"
grep -Eq '^node02 .* 0 ' "$OUT" || fail "nodes --long node02: $(cat "$OUT")"
expect_exit 0 cohort node show node03
grep -Eq '^Suspect score: +3$' "$OUT" || fail "node show node03: $(cat "$OUT")"
grep -Eq "^Failures: .*early job $a2 \\(alice\\)" "$OUT" || fail "node show node03's failures: $(cat "$OUT")"

### 4. An admin's resume clears the suspicion; --exempt keeps it from
# coming back.
as_user "$C" admin
expect_exit 0 cohort resume node03 --exempt
node_expr node03 'not n.get("drained_by") and n["suspect_score"] == 0 and n["suspect_exempt"] and n["suspect_reason"] is None' ||
	fail "node03 after resume: $(cohort node show node03 2>&1)"
expect_exit 2 cohort resume node03 --exempt --no-exempt
expect_exit 0 cohort resume node03 --no-exempt
node_expr node03 'not n["suspect_exempt"]' || fail "node03 still exempt"
[ "$(metric cohort_node_suspect_score'{node="node03"}')" = "" ] ||
	fail "node03 still scored in /metrics after the resume"
log "node03 drained as a suspect after jobs $a1 $b1 $a2, cleared by resume"
