#!/bin/bash
# NVLink blocks: six 2-GPU nodes in three blocks of two
# (nvl0 node01-02, nvl1 node03-04, nvl2 node05-06), also under two leaf
# switches that do not follow the blocks. A --segment 2 -N 4 gang spans
# exactly two whole blocks, each segment of consecutive ranks in one;
# --topology block -N 3 is refused at submit (no block has 3 nodes);
# --topology block -N 2 lands in one block, and waits with reason
# Topology while the free nodes are in different blocks, as does a
# --segment 2 -N 2 job; #SBATCH --segment is read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cat >"$T/topology.conf" <<'EOF'
SwitchName=leaf0 Nodes=node[01-03]
SwitchName=leaf1 Nodes=node[04-06]
SwitchName=spine0 Switches=leaf[0-1]
BlockName=nvl0 Nodes=node[01-02]
BlockName=nvl1 Nodes=node[03-04]
BlockName=nvl2 Nodes=node[05-06]
EOF
COHORT_LOCAL_TOPOLOGY=$T/topology.conf cluster_up "$C" --nodes 6 --gpus 2
W=$(world_dir out)
for n in node01 node02 node03 node04 node05 node06; do
	wait_node 20 "$n" "n['state'] == 'UP'"
done

block_of() {
	case "$1" in
	node01 | node02) echo nvl0 ;;
	node03 | node04) echo nvl1 ;;
	node05 | node06) echo nvl2 ;;
	*) echo "?" ;;
	esac
}
nodes_of() {
	job_show "$1"
	json_get "$T/job-$1.json" '" ".join(p["node"] for p in d["placement"])'
}
sub() {
	job_submit --time 5m --workdir "$W" --gpus-per-node 2 "$@"
}

### 0. node show names a node's block (and its leaf switch).
expect_exit 0 cohort node show node03
grep -Eq '^ *Block: +nvl1$' "$OUT" || fail "node show node03: $(cat "$OUT")"
grep -Eq '^ *Switch: +leaf0$' "$OUT" || fail "node show node03: $(cat "$OUT")"
grep -q 'Torus:' "$OUT" && fail "node show node03 names a torus: $(cat "$OUT")"

### 1. --segment 2 -N 4: two whole blocks, rank pairs in one block each.
a=$(sub --segment 2 -N 4 -- sleep 300)
wait_state 20 "$a" RUNNING
read -r -a got <<<"$(nodes_of "$a")"
[ "${#got[@]}" = 4 ] || fail "segment job on ${got[*]}"
[ "$(block_of "${got[0]}")" = "$(block_of "${got[1]}")" ] &&
	[ "$(block_of "${got[2]}")" = "$(block_of "${got[3]}")" ] &&
	[ "$(block_of "${got[0]}")" != "$(block_of "${got[2]}")" ] ||
	fail "segments of job $a are not whole blocks: ${got[*]}"
[ "$(json_get "$T/job-$a.json" 'd["segment"]')" = 2 ] ||
	fail "show --json segment: $(json_get "$T/job-$a.json" 'd.get("segment")')"
expect_exit 0 cohort show "$a"
grep -Eq '^ *Segment: +2 nodes per NVLink block$' "$OUT" || fail "show $a: $(cat "$OUT")"
expect_exit 0 cohort cancel "$a"
wait_state 20 "$a" CANCELLED

### 2. Refused at submit: a block larger than any, segments that do not
# divide the gang, segments larger than any block, a segment within a
# switch level.
expect_exit 1 cohort submit --time 5m -N 3 --topology block -- true
stderr_has '--nodes 3 with --topology block: the largest block holds only 2 nodes'
expect_exit 1 cohort submit --time 5m -N 3 --segment 2 -- true
stderr_has '--segment: 3 nodes are not a multiple of the segment size 2'
expect_exit 1 cohort submit --time 5m -N 4 --segment 4 -- true
stderr_has '--nodes 4 with --segment 4: the blocks hold only 0 such segments'
expect_exit 1 cohort submit --time 5m -N 2 --segment 2 --topology leaf -- true
stderr_has '--segment: cannot be combined with --topology leaf'
expect_exit 2 cohort submit --time 5m --segment 0 -- true

### 3. One node busy in nvl0 and one in nvl1: --topology block -N 2 takes
# nvl2 whole; the next one waits (Topology) though two nodes are free,
# as does a segment of 2; a plain -N 2 job is not held up.
b=$(sub -w node01 -- sleep 300)
c=$(sub -w node03 -- sleep 300)
wait_state 20 "$b" RUNNING
wait_state 20 "$c" RUNNING
d=$(sub --topology block -N 2 -- sleep 300)
wait_state 20 "$d" RUNNING
read -r -a got <<<"$(nodes_of "$d")"
[ "${got[*]}" = "node05 node06" ] || fail "block job $d on ${got[*]}, not nvl2"
e=$(sub --topology block -N 2 -- sleep 300)
f=$(sub --segment 2 -N 2 -- sleep 300)
wait_job 20 "$e" 'd["reason"].startswith("Topology")'
wait_job 20 "$f" 'd["reason"].startswith("Topology")'
[ "$(job_state "$e")" = PENDING ] || fail "job $e is $(job_state "$e")"
expect_exit 0 cohort jobs --format id,reason
grep -Eq "^ *$e +Topology" "$OUT" || fail "cohort jobs: $(cat "$OUT")"
# node01 frees: nvl0 is whole again and the first waiting block job
# gets it.
expect_exit 0 cohort cancel "$b"
wait_state 20 "$e" RUNNING
read -r -a got <<<"$(nodes_of "$e")"
[ "${got[*]}" = "node01 node02" ] || fail "block job $e on ${got[*]}, not nvl0"
expect_exit 0 cohort cancel "$c" "$d" "$e" "$f"
for j in "$c" "$d" "$e" "$f"; do wait_state 20 "$j" CANCELLED; done

### 4. #SBATCH --segment maps to --segment.
cat >"$W/job.sh" <<'SCRIPT'
#!/bin/sh
#SBATCH -N 2
#SBATCH --segment=2
sleep 300
SCRIPT
chmod 755 "$W/job.sh"
g=$(sub "$W/job.sh")
wait_state 20 "$g" RUNNING
read -r -a got <<<"$(nodes_of "$g")"
[ "$(block_of "${got[0]}")" = "$(block_of "${got[1]}")" ] ||
	fail "#SBATCH --segment job on ${got[*]}"
[ "$(json_get "$T/job-$g.json" 'd["segment"]')" = 2 ] ||
	fail "#SBATCH segment: $(json_get "$T/job-$g.json" 'd.get("segment")')"
expect_exit 0 cohort cancel "$g"
exit 0
