#!/bin/bash
# Admin commands that name nodes by hostlists, on 4 nodes of
# 2 GPUs with one 1-GPU job on node01:
#  - drain and resume take hostlists and comma lists; a list naming an
#    unknown node, or a malformed or huge one, changes nothing;
#  - who drained a node and when show in cohort nodes (table, --json,
#    --reasons) and node show; re-draining with the same reason is a
#    no-op, another reason is refused naming the drain, --force replaces;
#  - cohort nodes NODES, --state, --summary (A/I/O/T figures) and --json;
#  - a DOWN node shows health UNKNOWN and its GPUs as unavailable.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the agent this test kills goes DOWN.
expect_log_error 'cohortd: warning: node node04: DOWN: no heartbeat'

export COHORT_LOCAL_NODE_TIMEOUT=5s
C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2 --nodes-per-leaf 2
W=$(world_dir work)

id=$(job_submit --name t740 --nodes 1 --gpus-per-node 1 --nodelist node01 \
	--workdir "$W" -- sleep 3600)
wait_state 20 "$id" RUNNING
wait_node 20 node01 "$id in n['jobs']"

# drains: [name, drain, reason] of each drained node, from cohort nodes
# --json (kept in $T/drains.json).
drains() {
	cohort nodes --json >"$T/drains.json" || fail "cohort nodes --json failed"
	json_get "$T/drains.json" '[(n["name"], n["drain"], n["reason"]) for n in d["nodes"] if n["drain"]]'
}

as_user "$C" admin

### An unknown node anywhere in the list: nothing changes.
expect_exit 1 cohort drain node01 node09 --reason maint
[ "$(drains)" = "[]" ] || fail "a drain refused for node09 drained $(drains)"
grep -q "no such node: node09; nothing changed" "$ERR" || fail "drain node01 node09: $(cat "$ERR")"
expect_exit 1 cohort drain 'node[01-03],node09' --reason maint
grep -q "no such node: node09" "$ERR" || fail "drain with node09 does not name it: $(cat "$ERR")"
grep -q "nothing changed" "$ERR" || fail "drain with node09 does not say nothing changed: $(cat "$ERR")"
[ "$(drains)" = "[]" ] || fail "a refused drain drained $(drains)"
expect_exit 1 cohort drain 'node0[3-9]' --reason maint
grep -q "no such nodes: node\[05-09\] (named by 'node0\[3-9\]')" "$ERR" ||
	fail "drain node0[3-9] does not name node[05-09]: $(cat "$ERR")"
[ "$(drains)" = "[]" ] || fail "a refused drain drained $(drains)"
# Malformed and oversized lists are usage errors, refused before sending.
expect_exit 2 cohort drain 'node[01-' --reason maint
grep -q 'hostlist' "$ERR" || fail "a malformed hostlist: $(cat "$ERR")"
expect_exit 2 cohort drain 'n[1-99999999]' --reason maint
grep -q 'more than 65536 names' "$ERR" || fail "a hostlist of 10^8 names: $(cat "$ERR")"
expect_exit 2 cohort node delete 'node[03-04]'
grep -q 'one node at a time' "$ERR" || fail "node delete of a list: $(cat "$ERR")"

### A hostlist and a comma list drain several nodes at once.
expect_exit 0 cohort drain 'node[03-04]' --reason maint
[ "$(drains)" = '[["node03", "DRAINED", "maint"], ["node04", "DRAINED", "maint"]]' ] ||
	fail "drain node[03-04]: $(drains)"
json_get "$T/drains.json" '[(n["drained_by"], n["drained_at"] is not None, n["drain_health"], n["gpus_free"], n["gpus_unavailable"], n["summary_state"]) for n in d["nodes"] if n["name"] == "node03"][0]' >"$T/n03"
[ "$(cat "$T/n03")" = '["ops", true, false, 0, 2, "DRAINED"]' ] || fail "node03 drained: $(cat "$T/n03")"
at=$(json_get "$T/drains.json" '[n["drained_at"] for n in d["nodes"] if n["name"] == "node03"][0]')

# The same reason again: nothing to do, the first drain stays.
expect_exit 0 cohort drain node03,node04 --reason maint
drains >/dev/null
[ "$(json_get "$T/drains.json" '[n["drained_at"] for n in d["nodes"] if n["name"] == "node03"][0]')" = "$at" ] ||
	fail "re-draining with the same reason changed the drain"
# Another reason: refused, naming the drain in place, until --force.
expect_exit 1 cohort drain 'node[02-03]' --reason other
grep -q "node node03 is already drained by ops at .*: 'maint'.*--force" "$ERR" ||
	fail "re-drain with another reason: $(cat "$ERR")"
[ "$(drains)" = '[["node03", "DRAINED", "maint"], ["node04", "DRAINED", "maint"]]' ] ||
	fail "a refused re-drain changed $(drains)"
expect_exit 0 cohort drain 'node[03-04]' --reason other --force
[ "$(drains)" = '[["node03", "DRAINED", "other"], ["node04", "DRAINED", "other"]]' ] ||
	fail "drain --force: $(drains)"

# The events of a hostlist of nodes.
expect_exit 0 cohort events --node 'node[03-04]' --kind drain --json
[ "$(json_get "$OUT" '[(e["node"], e["detail"]) for e in d["events"]]')" = \
	'[["node03", "maint"], ["node04", "maint"], ["node03", "other"], ["node04", "other"]]' ] ||
	fail "events --node node[03-04]: $(cat "$OUT")"
expect_exit 0 cohort events --node 'node[03]' --kind drain --json
[ "$(json_get "$OUT" '[e["node"] for e in d["events"]]')" = '["node03", "node03"]' ] ||
	fail "events --node node[03]: $(cat "$OUT")"

### Who and when, in the table, --reasons and node show.
expect_exit 0 cohort nodes
grep -E '^node03 .*other \(ops, [0-9-]+ [0-9:]+ ' "$OUT" >/dev/null || fail "the table's REASON: $(cat "$OUT")"
expect_exit 0 cohort nodes --reasons
head -n 1 "$OUT" | grep -Eq '^REASON +USER +TIMESTAMP +NODELIST$' || fail "--reasons header: $(cat "$OUT")"
grep -Eq '^other +ops +[0-9-]+ [0-9:]+ [A-Z]+ +node\[03-04\]$' "$OUT" || fail "--reasons: $(cat "$OUT")"
expect_exit 0 cohort node show 'node[03-04]'
[ "$(grep -c '^Drained by: *ops$' "$OUT")" = 2 ] || fail "node show node[03-04]: $(cat "$OUT")"
expect_exit 0 cohort node show 'node[03-04]' --json
[ "$(json_get "$OUT" '[(n["name"], n["drained_by"], len(n["gpus"])) for n in d]')" = '[["node03", "ops", 2], ["node04", "ops", 2]]' ] ||
	fail "node show node[03-04] --json: $(cat "$OUT")"
expect_exit 1 cohort node show node01,node09
grep -q 'no such node: node09' "$ERR" || fail "node show node09: $(cat "$ERR")"

### Filters, summary, JSON.
expect_exit 0 cohort nodes 'node[01-02]' --json
[ "$(json_get "$OUT" '[n["name"] for n in d["nodes"]]')" = '["node01", "node02"]' ] || fail "nodes node[01-02]: $(cat "$OUT")"
expect_exit 1 cohort nodes 'node[04-05]'
grep -q 'no such node: node05' "$ERR" || fail "nodes node[04-05]: $(cat "$ERR")"
# The controller picks the named nodes itself (ListNodesRequest.names),
# page by page.
if "$PYTHON" -c 'import google.protobuf' 2>/dev/null; then
	pyclient list nodes --names 'node[02-03],node09' --names node01 --limit 2 >"$T/p.json" || fail "pyclient list nodes --names"
	[ "$(json_get "$T/p.json" '[[n["name"] for n in d["nodes"]], d["has_more"]]')" = '[["node01", "node02"], true]' ] ||
		fail "ListNodes names node[02-03],node09,node01, first page of 2: $(cat "$T/p.json")"
	pyclient list nodes --names 'node[02-03],node09' --names node01 --after node02 >"$T/p.json" || fail "pyclient list nodes --names --after"
	[ "$(json_get "$T/p.json" '[[n["name"] for n in d["nodes"]], d["has_more"]]')" = '[["node03"], false]' ] ||
		fail "ListNodes names after node02: $(cat "$T/p.json")"
else
	log "no google.protobuf in $PYTHON: the controller's name filter is not checked here"
fi
for q in drained:node03,node04 mixed:node01 idle:node02 up,draining:node01,node02,node03,node04 ALLOCATED:; do
	expect_exit 0 cohort nodes --state "${q%%:*}" --json
	[ "$(json_get "$OUT" '",".join(n["name"] for n in d["nodes"])')" = "${q#*:}" ] ||
		fail "--state ${q%%:*}: $(json_get "$OUT" '[n["name"] for n in d["nodes"]]')"
done
expect_exit 2 cohort nodes --state busy
grep -q "'busy' is not a node state" "$ERR" || fail "--state busy: $(cat "$ERR")"
expect_exit 0 cohort nodes --summary
sed -n 2p "$OUT" | grep -Eq '^1/1/2/4 +1/3/4/8$' || fail "--summary totals: $(cat "$OUT")"
grep -Eq '^DRAINED +2 +0/0/4/4 +node\[03-04\]$' "$OUT" || fail "--summary DRAINED: $(cat "$OUT")"
grep -Eq '^MIXED +1 +1/1/0/2 +node01$' "$OUT" || fail "--summary MIXED: $(cat "$OUT")"
expect_exit 0 cohort nodes --summary --json
[ "$(json_get "$OUT" '[d["nodes"], d["gpus"]["idle"], [(s["state"], s["nodelist"]) for s in d["states"]]]')" = \
	'[{"allocated": 1, "idle": 1, "other": 2, "total": 4}, 3, [["DRAINED", "node[03-04]"], ["MIXED", "node01"], ["IDLE", "node02"]]]' ] ||
	fail "--summary --json: $(cat "$OUT")"

### Resume: all or nothing too.
expect_exit 1 cohort resume 'node[03-04],node09'
[ "$(drains)" = '[["node03", "DRAINED", "other"], ["node04", "DRAINED", "other"]]' ] ||
	fail "a refused resume changed $(drains)"
expect_exit 0 cohort resume 'node[03-04]'
[ "$(drains)" = "[]" ] || fail "resume node[03-04] left $(drains)"

### A DOWN node: health UNKNOWN, its GPUs unavailable.
node_expr node04 'n["health"] == "OK" and n["gpus_free"] == 2' || fail "node04 before the kill: $(cohort nodes node04 --json)"
cohort-local kill "$C" node04 >"$T/kill.out" 2>&1 || fail "cohort-local kill node04: $(cat "$T/kill.out")"
wait_node 30 node04 'n["state"] == "DOWN"'
node_expr node04 'n["health"] == "UNKNOWN" and n["gpus_free"] == 0 and n["gpus_unavailable"] == 2 and n["summary_state"] == "DOWN"' ||
	fail "node04 DOWN: $(cohort nodes node04 --json)"
expect_exit 0 cohort node show node04
grep -Eq '^Health: +UNKNOWN$' "$OUT" || fail "node show of a DOWN node: $(cat "$OUT")"
grep -Eq '^GPUs: +2 \(0 free, 0 held by jobs, 2 unavailable\)$' "$OUT" || fail "node show GPUs of a DOWN node: $(cat "$OUT")"
expect_exit 0 cohort node show node04 --json
[ "$(json_get "$OUT" '[g["health"] for g in d["gpus"]]')" = '["UNKNOWN", "UNKNOWN"]' ] || fail "GPU health of a DOWN node: $(cat "$OUT")"
expect_exit 0 cohort nodes
grep -Eq '^node04 +DOWN +UNKNOWN +0/2 ' "$OUT" || fail "the table for a DOWN node: $(cat "$OUT")"
expect_exit 0 cohort nodes --summary
sed -n 2p "$OUT" | grep -Eq '^1/2/1/4 +1/5/2/8$' || fail "--summary with node04 DOWN: $(cat "$OUT")"
expect_exit 0 cohort cancel "$id"
exit 0
