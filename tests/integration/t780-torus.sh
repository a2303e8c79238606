#!/bin/bash
# Torus and Dragonfly+ through the real CLI, wire and controller config:
# four 1-GPU nodes that are both a 2x2 torus (x fastest: node04 at 1,1,0)
# and two Dragonfly+ groups (g0 node01-02, g1 node03-04). node show and
# nodes --json say where a node sits; --topology torus and group reach
# the job and run it; the controller's refusal of a gang no group holds
# comes back whole. Where boxes and groups place, and when a gang waits,
# is check_cluster's test_torus_box_and_dragonfly_group and the core's
# check_torus; the refusals check_feasible test_topology_torus and
# test_topology_group.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cat >"$T/topology.conf" <<'TOPO'
TorusName=t0 Dims=2x2 Wrap=yes Nodes=node[01-04]
GroupName=g0 Nodes=node[01-02] NodesPerRouter=2
GroupName=g1 Nodes=node[03-04] NodesPerRouter=2
TOPO
COHORT_LOCAL_TOPOLOGY="$T/topology.conf" \
	cluster_up "$C" --nodes 4 --gpus 1
W=$(world_dir out)
for n in node01 node02 node03 node04; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

expect_exit 0 cohort node show node04
grep -Eq '^ *Torus: +\(1,1,0\)$' "$OUT" || fail "node show node04: $(cat "$OUT")"
expect_exit 0 cohort nodes --json
python3 -c 'import json, sys
d = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert d["node04"]["torus"] == [1, 1, 0], d["node04"]["torus"]
assert d["node04"]["block"] is None' "$OUT" || fail "nodes --json: torus/block of node04"

# ran LEVEL ID: job ID ran, and asked for --topology LEVEL.
ran() {
	wait_state 20 "$2" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$2.json" '[d["state"], d["topology_mode"], d["topology_level"], len(d["placement"])]')" = \
		"[\"COMPLETED\", \"required\", \"$1\", 2]" ] ||
		fail "job $2: $(json_get "$T/job-$2.json" '[d["state"], d.get("topology_mode"), d.get("topology_level"), d["placement"]]')"
}
a=$(job_submit --time 5m --workdir "$W" -N 2 --topology torus -- true)
ran torus "$a"
g=$(job_submit --time 5m --workdir "$W" -N 2 --topology group -- true)
ran group "$g"
case "$(json_get "$T/job-$g.json" '" ".join(sorted(p["node"] for p in d["placement"]))')" in
"node01 node02" | "node03 node04") ;;
*) fail "job $g (--topology group) across groups: $(json_get "$T/job-$g.json" 'd["placement"]')" ;;
esac

expect_exit 1 cohort submit --time 5m -N 3 --topology group -- true
stderr_has '--nodes 3 with --topology group:required: the largest group holds only 2 nodes'
exit 0
