#!/bin/bash
# Node features derived from the inventory (lib/features.h), on
# three 4-GPU simulated nodes of H100s in one NVLink domain, node02 with
# features = fp64,ib; node03 is restarted with A100s and no NVLink. The
# CLI (cohort nodes --json / --long / --constraint, node show) and the
# status page show configured and derived features apart; --constraint
# h100 / a100 / nvlink land on the right nodes; a pending job whose
# constraint no node meets any more says so in its reason, and starts
# when a node with the feature is back.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node02: features = fp64,ib" \
	cluster_up "$C" --nodes 3 --gpus 4
W=$(world_dir out)
HTTP=${COHORT_HTTP:-}
[ -n "$HTTP" ] || fail "cohort-local printed no COHORT_HTTP"
for n in node01 node02 node03; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

nodes_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(sorted(p["node"] for p in d["placement"]))'
}
sub() {
	job_submit --time 5m --workdir "$W" "$@"
}
# restart_agent NODE MODEL NVLINK: node NODE's agent again, with other
# simulated GPUs ("" for the default model).
restart_agent() {
	cohort-local kill "$C" "$1" >"$T/kill.out" 2>&1 ||
		fail "cohort-local kill $1: $(cat "$T/kill.out")"
	sed -i -e '/^model = /d' -e "s/^nvlink = .*/nvlink = $3/" "$C/$1.conf"
	[ -z "$2" ] || sed -i "s/^\[gpu\]\$/[gpu]\nmodel = $2/" "$C/$1.conf"
	cohort-local start "$C" "$1" >"$T/start.out" 2>&1 ||
		fail "cohort-local start $1: $(cat "$T/start.out")"
}
H100='["h100", "nvidia-h100-80gb-hbm3", "nvlink"]'
A100='["a100", "nvidia-a100-sxm4-80gb"]'

### 1. Derived features: the controller's, apart from the configured.
restart_agent node03 "NVIDIA A100-SXM4-80GB" none
wait_node 20 node03 "n['derived_features'] == $A100 and n['state'] == 'UP'"
wait_node 10 node01 "n['derived_features'] == $H100 and n['features'] == []"
wait_node 10 node02 "n['derived_features'] == $H100 and n['features'] == ['fp64', 'ib']"
expect_exit 0 cohort node show node02
grep -Eq '^ *Features: +fp64,ib$' "$OUT" || fail "node show node02: $(cat "$OUT")"
grep -Eq '^ *Derived features: +h100,nvidia-h100-80gb-hbm3,nvlink$' "$OUT" ||
	fail "node show node02: $(cat "$OUT")"
expect_exit 0 cohort node show node03 --json
json_get "$OUT" 'd["derived_features"] == ["a100", "nvidia-a100-sxm4-80gb"] and d["features"] == []' |
	grep -qx true || fail "node show --json node03: $(cat "$OUT")"

### 2. The table: no FEATURES column by default; --long adds it;
# --constraint lists the nodes that meet an expression.
expect_exit 0 cohort nodes
head -1 "$OUT" | grep -q FEATURES && fail "default table has FEATURES: $(cat "$OUT")"
expect_exit 0 cohort nodes --long
head -1 "$OUT" | grep -Eq '^NODE +STATE +HEALTH +GPUS +MODEL +SWITCH +FEATURES +SCORE +REASON' ||
	fail "nodes --long header: $(head -1 "$OUT")"
grep -Eq '^node02 .* fp64,ib,h100,nvidia-h100-80gb-hbm3,nvlink( |$)' "$OUT" ||
	fail "nodes --long node02: $(cat "$OUT")"
grep -Eq '^node03 .* a100,nvidia-a100-sxm4-80gb( |$)' "$OUT" ||
	fail "nodes --long node03: $(cat "$OUT")"
listed() {
	expect_exit 0 cohort nodes --json "$@"
	json_get "$OUT" '" ".join(n["name"] for n in d["nodes"])'
}
[ "$(listed --constraint h100)" = "node01 node02" ] || fail "--constraint h100: $(listed --constraint h100)"
[ "$(listed -C 'a100|fp64')" = "node02 node03" ] || fail "-C 'a100|fp64': $(listed -C 'a100|fp64')"
[ "$(listed -C 'nvlink&ib' node0[1-2])" = node02 ] || fail "-C 'nvlink&ib' node0[1-2]: $(listed -C 'nvlink&ib' 'node0[1-2]')"
[ -z "$(listed -C nosuchfeature)" ] || fail "-C nosuchfeature lists $(listed -C nosuchfeature)"
expect_exit 2 cohort nodes -C 'h100&'
stderr_has "nodes: --constraint 'h100&': at column 6: expected a feature name"
expect_exit 2 cohort node show node01 --constraint h100
stderr_has 'is an option of cohort nodes'

### 3. The status page shows both, derived ones dimmed.
curl -fsS "$HTTP/" >"$T/page.html" || fail "GET / failed"
grep -q '<th>node02</th>.*<td class="feat">fp64,ib <span class="dim" title="derived from the inventory">h100,nvidia-h100-80gb-hbm3,nvlink</span></td>' "$T/page.html" ||
	fail "status page: no features for node02: $(grep node02 "$T/page.html")"
grep -q '<th>node03</th>.*<td class="feat"><span class="dim" title="derived from the inventory">a100,nvidia-a100-sxm4-80gb</span></td>' "$T/page.html" ||
	fail "status page: no features for node03: $(grep node03 "$T/page.html")"

### 4. Placement by derived features.
a=$(sub -C h100 -N 2 --gpus-per-node 1 -- sleep 300)
b=$(sub -C a100 --gpus-per-node 4 -- sleep 300)
c=$(sub -C 'nvlink&fp64' --gpus-per-node 1 -- sleep 300)
for j in "$a" "$b" "$c"; do wait_state 20 "$j" RUNNING; done
[ "$(nodes_of "$a")" = "node01 node02" ] || fail "-C h100 -N 2 on $(nodes_of "$a")"
[ "$(nodes_of "$b")" = node03 ] || fail "-C a100 on $(nodes_of "$b")"
[ "$(nodes_of "$c")" = node02 ] || fail "-C 'nvlink&fp64' on $(nodes_of "$c")"
# A feature no node has is refused at submit, derived or not.
expect_exit 1 cohort submit --time 5m -C h200 -- true
stderr_has '--constraint h200: no node has feature h200'

### 5. An A100 job waits behind b; node03 comes back with H100s: no node
# has a100 now, and its reason says so. With A100s again it runs.
d=$(sub -C a100 --gpus-per-node 1 -- sleep 300)
wait_job 10 "$d" 'd["reason"].startswith("Resources")'
restart_agent node03 "" all
wait_node 20 node03 "n['derived_features'] == $H100 and n['state'] == 'UP'"
wait_job 10 "$d" 'd["reason"] == "BadConstraints: no node has feature a100"'
expect_exit 0 cohort jobs
grep -E "^ *$d .*BadConstraints: no node has feature a100" "$OUT" >/dev/null ||
	fail "cohort jobs: $(cat "$OUT")"
expect_exit 0 cohort cancel "$b"
wait_state 20 "$b" CANCELLED
restart_agent node03 "NVIDIA A100-SXM4-80GB" none
wait_state 20 "$d" RUNNING
[ "$(nodes_of "$d")" = node03 ] || fail "-C a100 after node03's return on $(nodes_of "$d")"
expect_exit 0 cohort cancel "$a" "$c" "$d"
exit 0
