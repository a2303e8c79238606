#!/bin/bash
# /metrics adds up and passes promtool: on a cluster of four
# 2-GPU nodes with two queues, a running job, a pending one, a drained
# node, then also a failed GPU, then also a DOWN node (its agent killed):
#  - `promtool check metrics` accepts every scrape, and every histogram is
#    well formed (buckets cumulative, +Inf = _count; metrics-check.py);
#  - cohort_gpus{free,allocated,failed,spare,unavailable} adds up to the
#    8 GPUs each time, free only on UP undrained nodes; cohort_nodes
#    (UP/DOWN) and cohort_nodes_drain (none/draining/drained) each add up
#    to the 4 nodes;
#  - the RPC latency histogram counted the submits, the list, the drain
#    and the logs request (answered later, by the agent), the pass
#    histogram counted every pass; the per-queue families show the running job's queue;
#  - HEAD / and HEAD /metrics answer 200 with no body; /metrics?x=1 is
#    /metrics;
#  - every metric the Grafana dashboard (etc/grafana-cohort.json) uses is
#    in a real scrape.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: a GPU fails and an agent is killed.
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: node node0[0-9]: DOWN: no heartbeat'
command -v promtool >/dev/null 2>&1 || {
	echo "SKIP: promtool not found (Debian package prometheus; scripts/deps installs it)"
	exit 77
}
MC="$PYTHON $top_srcdir/tests/integration/metrics-check.py"

C=$T/cluster
COHORT_LOCAL_CONTROLLER_CONF='[queue research]
[queue team-a]
parent = research
gpus = 4
users = alice
[queue team-b]
parent = research
gpus = 4
users = bob'
COHORT_LOCAL_NODE_TIMEOUT=5s
export COHORT_LOCAL_CONTROLLER_CONF COHORT_LOCAL_NODE_TIMEOUT
cluster_up "$C" --nodes 4 --gpus 2
unset COHORT_LOCAL_CONTROLLER_CONF COHORT_LOCAL_NODE_TIMEOUT
HTTP=$COHORT_HTTP
W=$(world_dir work)
n=0

# scrape: /metrics into F=$T/m.N (N counts up), checked by promtool and
# by metrics-check.py lint.
scrape() {
	n=$((n + 1))
	curl -fsS "$HTTP/metrics" >"$T/m.$n" || fail "GET /metrics failed"
	promtool check metrics <"$T/m.$n" >"$T/promtool.$n" 2>&1 ||
		fail "promtool check metrics refused scrape $n: $(head -c 2000 "$T/promtool.$n")"
	$MC lint "$T/m.$n" >&2 || fail "scrape $n: a histogram is not well formed"
	F=$T/m.$n
}
# val FILE SERIES: the sample's value.
val() {
	$MC get "$1" "$2"
}
# gpus FILE FREE ALLOCATED FAILED UNAVAILABLE: cohort_gpus by state, and
# every family adding up.
gpus() {
	local f="$1" s want got
	$MC addup "$f" 8 4 || fail "$(basename "$f"): does not add up"
	shift
	for s in free allocated failed unavailable; do
		want=$1
		shift
		got=$(val "$f" "cohort_gpus{state=\"$s\"}")
		[ "$got" = "$want" ] ||
			fail "$(basename "$f"): cohort_gpus{state=\"$s\"} is $got, not $want: $(grep '^cohort_gpus{' "$f" | tr '\n' ' ')"
	done
}

### 1. An idle cluster: every GPU free.
scrape
f=$F
gpus "$f" 8 0 0 0
[ "$(val "$f" 'cohort_nodes{state="UP"}')" = 4 ] || fail "not 4 nodes UP: $(grep '^cohort_nodes' "$f")"

### 2. A running job (team-a, one node), a pending one, a drained node.
run=$(job_submit --name t700-run --gpus-per-node 2 --workdir "$W" -- \
	sh -c "$(gate go)")
wait_state 20 "$run" RUNNING
nA=$(json_get "$T/job-$run.json" 'd["placement"][0]["node"]')
pend=$(job_submit --name t700-wait --nodes 4 --gpus-per-node 2 --workdir "$W" -- true)
others=()
for x in node01 node02 node03 node04; do
	[ "$x" = "$nA" ] || others+=("$x")
done
nD=${others[0]} nF=${others[1]} nX=${others[2]}
as_user "$C" admin
expect_exit 0 cohort drain "$nD" --reason "t700 maintenance"
as_user "$C" alice
wait_node 30 "$nD" 'n["drain"] == "DRAINED"'
expect_exit 0 cohort jobs
# Answered once the node's agent sends the log back (timed to then).
expect_exit 0 cohort logs "$run"
scrape
f=$F
gpus "$f" 4 2 0 2
[ "$(val "$f" 'cohort_nodes_drain{state="drained"}')" = 1 ] ||
	fail "cohort_nodes_drain: $(grep '^cohort_nodes_drain' "$f" | tr '\n' ' ')"
[ "$(val "$f" 'cohort_jobs{state="RUNNING"}')" = 1 ] &&
	[ "$(val "$f" 'cohort_jobs{state="PENDING"}')" = 1 ] ||
	fail "cohort_jobs: $(grep '^cohort_jobs{' "$f" | tr '\n' ' ')"
for s in 'cohort_queue_jobs{queue="team-a",state="running"} 1' \
	'cohort_queue_jobs{queue="team-a",state="pending"} 1' \
	'cohort_queue_jobs{queue="research",state="running"} 1' \
	'cohort_queue_jobs{queue="team-b",state="running"} 0' \
	'cohort_queue_gpus_in_use{queue="team-a"} 2' \
	'cohort_queue_gpus_nominal{queue="team-a"} 4' \
	'cohort_queue_gpus_pending{queue="team-a"} 8' \
	'cohort_queue_info{queue="team-b",parent="research"} 1'; do
	[ "$(val "$f" "${s% *}")" = "${s##* }" ] ||
		fail "$(basename "$f"): ${s% *} is $(val "$f" "${s% *}"), not ${s##* }"
done
c=$(val "$f" 'cohort_rpc_request_seconds_count{type="submit"}')
[ "$c" -ge 2 ] 2>/dev/null || fail "cohort_rpc_request_seconds_count{type=\"submit\"} is $c after 2 submits"
c=$(val "$f" 'cohort_rpc_request_seconds_count{type="list_jobs"}')
[ "$c" -ge 1 ] 2>/dev/null || fail "cohort_rpc_request_seconds_count{type=\"list_jobs\"} is $c after cohort jobs"
c=$(val "$f" 'cohort_rpc_request_seconds_count{type="logs"}')
[ "$c" = 1 ] || fail "cohort_rpc_request_seconds_count{type=\"logs\"} is $c after one cohort logs"
c=$(val "$f" 'cohort_rpc_request_seconds_count{type="drain"}')
[ "$c" = 1 ] || fail "cohort_rpc_request_seconds_count{type=\"drain\"} is $c after one drain"
c=$(val "$f" 'cohort_sched_pass_seconds_count')
[ "$c" -ge 1 ] 2>/dev/null || fail "cohort_sched_pass_seconds_count is $c after a job started"
[ "$(val "$f" 'cohort_sched_pass_seconds_count')" = "$(val "$f" 'cohort_sched_passes_total')" ] ||
	fail "cohort_sched_pass_seconds_count $(val "$f" 'cohort_sched_pass_seconds_count') != cohort_sched_passes_total $(val "$f" 'cohort_sched_passes_total')"

### 3. HEAD and a query string.
# head PATH: the raw answer to HEAD PATH (HTTP/1.0: the server closes).
head_req() {
	local path="$1" hp=${HTTP#http://}
	exec 3<>"/dev/tcp/${hp%:*}/${hp##*:}" || fail "cannot connect to $hp"
	printf 'HEAD %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hp" >&3
	timeout 5 cat <&3 >"$T/head.out"
	exec 3<&-
}
for p in / /metrics /nowhere; do
	head_req "$p"
	want=200
	[ "$p" = /nowhere ] && want=404
	head -n 1 "$T/head.out" | grep -q "^HTTP/1\.[01] $want" ||
		fail "HEAD $p: $(head -n 1 "$T/head.out"), not $want"
	# Nothing after the blank line that ends the headers.
	"$PYTHON" -c 'import sys
d = open(sys.argv[1], "rb").read()
h, sep, body = d.partition(b"\r\n\r\n")
sys.exit(0 if sep and body == b"" else 1)' "$T/head.out" ||
		fail "HEAD $p sent a body: $(wc -c <"$T/head.out") bytes: $(tail -c 200 "$T/head.out")"
done
curl -fsS "$HTTP/metrics?x=1" >"$T/mq" || fail "GET /metrics?x=1 failed"
grep -q '^cohort_gpus{state="free"} ' "$T/mq" || fail "/metrics?x=1 is not the exposition: $(head -c 300 "$T/mq")"

### 4. A failed GPU: its node drained by its health.
cohort-local fail "$C" "$nF" gpu 1 xid=79 || fail "cohort-local fail $nF gpu 1"
wait_node 30 "$nF" 'n["health"] == "FAILED" and n["drain"] == "DRAINED"'
scrape
f=$F
gpus "$f" 2 2 1 3

### 5. A DOWN node: its agent killed.
cohort-local kill "$C" "$nX" >"$T/kill.out" 2>&1 || fail "cohort-local kill $nX: $(cat "$T/kill.out")"
wait_node 30 "$nX" 'n["state"] == "DOWN"'
scrape
f=$F
gpus "$f" 0 2 1 5
[ "$(val "$f" 'cohort_nodes{state="DOWN"}')" = 1 ] || fail "cohort_nodes: $(grep '^cohort_nodes{' "$f" | tr '\n' ' ')"

### 6. The dashboard uses only what a scrape has.
$MC dashboard "$f" "$top_srcdir/etc/grafana-cohort.json" >"$T/dash.out" ||
	fail "etc/grafana-cohort.json: $(cat "$T/dash.out")"
log "$(cat "$T/dash.out")"
touch "$W/go"
wait_state 20 "$run" COMPLETED
