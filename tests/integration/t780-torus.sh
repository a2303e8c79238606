#!/bin/bash
# Torus and Dragonfly+ topologies, on eight 1-GPU nodes that
# are both a 2x2x2 torus (node01 at 0,0,0, x fastest: node01-04 are the
# plane z=0, node05-08 z=1) and two Dragonfly+ groups (g0: the plane y=0,
# node01,02,05,06; g1: y=1). --topology torus puts a gang in one compact
# box, a second one takes the other plane, --topology group keeps a gang
# in one group, and what can never fit is refused at submit.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cat >"$T/topology.conf" <<'TOPO'
TorusName=t0 Dims=2x2x2 Wrap=yes Nodes=node[01-08]
GroupName=g0 Nodes=node[01-02,05-06] NodesPerRouter=2
GroupName=g1 Nodes=node[03-04,07-08] NodesPerRouter=2
TOPO
COHORT_LOCAL_TOPOLOGY="$T/topology.conf" \
	cluster_up "$C" --nodes 8 --gpus 1
W=$(world_dir out)
for n in node01 node02 node03 node04 node05 node06 node07 node08; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

nodes_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(sorted(p["node"] for p in d["placement"]))'
}
sub() {
	job_submit --time 5m --workdir "$W" --gpus-per-node 1 "$@"
}
# Is every node of $2 in the set $1 (space separated)?
within() {
	local n
	for n in $2; do
		case " $1 " in *" $n "*) ;; *) return 1 ;; esac
	done
}

### 0. node show says where a node sits on the torus (x fastest).
expect_exit 0 cohort node show node06
grep -Eq '^ *Torus: +\(1,0,1\)$' "$OUT" || fail "node show node06: $(cat "$OUT")"
expect_exit 0 cohort nodes --json
python3 -c 'import json, sys
d = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert d["node06"]["torus"] == [1, 0, 1], d["node06"]["torus"]
assert d["node06"]["block"] is None' "$OUT" || fail "nodes --json: torus/block of node06"

### 1. Three nodes in one compact box: a 2x2 face (one z plane), not
# spread over both planes.
a=$(sub -N 3 --topology torus -- sleep 300)
wait_state 20 "$a" RUNNING
na=$(nodes_of "$a")
within "node01 node02 node03 node04" "$na" ||
	within "node05 node06 node07 node08" "$na" ||
	fail "job $a (-N 3 --topology torus) not in one plane: $na"

### 2. Four more, required: the only compact box left is the other
# plane, whole.
b=$(sub -N 4 --topology torus -- sleep 300)
wait_state 20 "$b" RUNNING
nb=$(nodes_of "$b")
case "$na" in
node0[1-4]*) want="node05 node06 node07 node08" ;;
*) want="node01 node02 node03 node04" ;;
esac
[ "$nb" = "$want" ] || fail "job $b (-N 4 --topology torus) on '$nb', want '$want'"
# Two more nodes would not be one box (one node of each plane is
# left... none: the cluster has one free node): it waits.
c=$(sub -N 2 --topology torus -- sleep 300)
wait_job 10 "$c" 'd["reason"].startswith("Resources") or d["reason"].startswith("Topology")'
expect_exit 0 cohort cancel "$a" "$b" "$c"
for j in "$a" "$b" "$c"; do wait_state 20 "$j" CANCELLED; done

### 3. Dragonfly+: --topology group keeps four nodes in one group.
d=$(sub -N 4 --topology group -- sleep 300)
wait_state 20 "$d" RUNNING
nd=$(nodes_of "$d")
[ "$nd" = "node01 node02 node05 node06" ] || [ "$nd" = "node03 node04 node07 node08" ] ||
	fail "job $d (-N 4 --topology group) across groups: $nd"
# --topology router: two nodes on one router.
e=$(sub -N 2 --topology router -- sleep 300)
wait_state 20 "$e" RUNNING
ne=$(nodes_of "$e")
case "$ne" in
"node01 node02" | "node05 node06" | "node03 node04" | "node07 node08") ;;
*) fail "job $e (-N 2 --topology router) on $ne" ;;
esac
expect_exit 0 cohort cancel "$d" "$e"
for j in "$d" "$e"; do wait_state 20 "$j" CANCELLED; done

### 4. Refused at submit: a gang no group can hold, more nodes than the
# torus has.
expect_exit 1 cohort submit --time 5m -N 5 --topology group -- true
stderr_has '--nodes 5 with --topology group:required: the largest group holds only 4 nodes'
expect_exit 1 cohort submit --time 5m -N 9 --topology torus -- true
stderr_has '--nodes 9'
exit 0
