#!/bin/bash
# NVLink blocks through the real CLI, wire and agent config: four nodes
# in two blocks of two (nvl0 node01-02, nvl1 node03-04) under leaves that
# do not follow them. node show names a node's block and leaf; --segment,
# #SBATCH --segment and --topology block reach the job (show --json and
# text) and run in one block; the controller's refusal of a block larger
# than any comes back whole, and the CLI refuses --segment 0. Where
# segments and blocks place, and when a job waits with reason Topology,
# is check_cluster's test_blocks_segments_and_topology_reason and the
# core's check_sched_block; the refusals check_feasible test_blocks and
# check_job's.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cat >"$T/topology.conf" <<'EOF2'
SwitchName=leaf0 Nodes=node[01-03]
SwitchName=leaf1 Nodes=node[04]
SwitchName=spine0 Switches=leaf[0-1]
BlockName=nvl0 Nodes=node[01-02]
BlockName=nvl1 Nodes=node[03-04]
EOF2
COHORT_LOCAL_TOPOLOGY=$T/topology.conf cluster_up "$C" --nodes 4 --gpus 1
W=$(world_dir out)
for n in node01 node02 node03 node04; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

# one_block ID: job ID ran on the two nodes of one block.
one_block() {
	local got
	wait_state 20 "$1" COMPLETED FAILED CANCELLED TIMEOUT
	got=$(json_get "$T/job-$1.json" '" ".join(sorted(p["node"] for p in d["placement"]))')
	[ "$(job_state "$1")" = COMPLETED ] || fail "job $1 is $(job_state "$1")"
	case "$got" in
	"node01 node02" | "node03 node04") ;;
	*) fail "job $1 ran on $got, not one block" ;;
	esac
}
sub() {
	job_submit --time 5m --workdir "$W" --gpus-per-node 1 "$@"
}

expect_exit 0 cohort node show node03
grep -Eq '^ *Block: +nvl1$' "$OUT" || fail "node show node03: $(cat "$OUT")"
grep -Eq '^ *Switch: +leaf0$' "$OUT" || fail "node show node03: $(cat "$OUT")"
grep -q 'Torus:' "$OUT" && fail "node show node03 names a torus: $(cat "$OUT")"

a=$(sub --segment 2 -N 2 -- true)
one_block "$a"
[ "$(json_get "$T/job-$a.json" 'd["segment"]')" = 2 ] ||
	fail "show --json segment: $(json_get "$T/job-$a.json" 'd.get("segment")')"
expect_exit 0 cohort show "$a"
grep -Eq '^ *Segment: +2 nodes per NVLink block$' "$OUT" || fail "show $a: $(cat "$OUT")"

b=$(sub --topology block -N 2 -- true)
one_block "$b"
[ "$(json_get "$T/job-$b.json" '[d["topology_mode"], d["topology_level"]]')" = '["required", "block"]' ] ||
	fail "show --json topology: $(json_get "$T/job-$b.json" '[d.get("topology_mode"), d.get("topology_level")]')"

cat >"$W/job.sh" <<'SCRIPT'
#!/bin/sh
#SBATCH -N 2
#SBATCH --segment=2
true
SCRIPT
chmod 755 "$W/job.sh"
g=$(sub "$W/job.sh")
one_block "$g"
[ "$(json_get "$T/job-$g.json" 'd["segment"]')" = 2 ] ||
	fail "#SBATCH segment: $(json_get "$T/job-$g.json" 'd.get("segment")')"

expect_exit 1 cohort submit --time 5m -N 3 --topology block -- true
stderr_has '--nodes 3 with --topology block: the largest block holds only 2 nodes'
expect_exit 2 cohort submit --time 5m --segment 0 -- true
exit 0
