#!/bin/bash
# Eight simulated 8-GPU nodes under two leaf switches (four per leaf):
# a 4-node --topology leaf job lands under one leaf, on whole quads of
# GPUs; a big job that cannot start gets a reservation, small jobs that
# end before it backfill, and one that would delay it waits.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 8 --gpus 8 --nodes-per-leaf 4
W=$(world_dir out)

leaf_of() {
	case "$1" in
	node0[1-4]) echo leaf0 ;;
	node0[5-8]) echo leaf1 ;;
	*) echo "?" ;;
	esac
}

# 1. Required topology: all four nodes under one leaf.
id=$(job_submit --name leafjob --nodes 4 --gpus-per-node 8 --topology leaf \
	--time 5m --workdir "$W" -- sleep 300)
wait_state 20 "$id" RUNNING
nodes=$(json_get "$T/job-$id.json" '" ".join(p["node"] for p in d["placement"])')
set -- $nodes
[ $# -eq 4 ] || fail "leaf job placed on '$nodes'"
l=$(leaf_of "$1")
for n in "$@"; do
	[ "$(leaf_of "$n")" = "$l" ] || fail "leaf job spans leaves: $nodes"
done

# 2. A 4-GPU job on a free node gets one NVLink quad (0-3 or 4-7).
q=$(job_submit --name quad --nodes 1 --gpus-per-node 4 --time 5m \
	--workdir "$W" -- sleep 300)
wait_state 20 "$q" RUNNING
gpus=$(json_get "$T/job-$q.json" '",".join(str(g) for g in d["placement"][0]["gpus"])')
case "$gpus" in
0,1,2,3 | 4,5,6,7) ;;
*) fail "4-GPU job got GPUs $gpus, not one NVLink quad" ;;
esac

# 3. Reservation and backfill. The other leaf has 4 nodes, one of them
# half used by the quad job: a job wanting 8 whole nodes must wait for
# the leaf job (5 minutes), and gets a reservation.
big=$(job_submit --name big --nodes 8 --gpus-per-node 8 --time 10m \
	--workdir "$W" -- sleep 1)
wait_for 10 sh -c "cohort show $big --json | grep -q 'reserved'" ||
	{ job_show "$big"; fail "big job has no reservation: $(json_get "$T/job-$big.json" 'd["reason"]')"; }
# A short job fits now and ends before the reservation starts: backfills.
short=$(job_submit --name short --nodes 1 --gpus-per-node 8 --time 1m \
	--workdir "$W" -- sleep 300)
wait_state 20 "$short" RUNNING
# A long job would hold a reserved node past the reservation: waits.
long=$(job_submit --name long --nodes 1 --gpus-per-node 8 --time 2h \
	--workdir "$W" -- sleep 300)
sleep_until=$(($(date +%s) + 3))
wait_for 10 sh -c "[ \$(date +%s) -ge $sleep_until ]"
[ "$(job_state "$long")" = PENDING ] ||
	fail "the 2 h job started and would delay the reservation: $(json_get "$T/job-$long.json" 'd["state"]')"
[ "$(job_state "$big")" = PENDING ] || fail "big job should still wait"

# Once the leaf job and the others end, the big job starts.
expect_exit 0 cohort cancel "$id" "$q" "$short" "$long"
wait_state 30 "$big" RUNNING COMPLETED
exit 0
