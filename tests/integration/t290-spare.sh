#!/bin/bash
# A hot spare (agent config "spare = yes") is never given to a job that
# is not restarting; when a node of a running gang fails, the restart
# keeps the healthy node and takes the spare as the replacement.
#   leaf0: node01, node02 (spare)    leaf1: node03, node04
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The injected XID 79 fails a GPU; its job restarts on a spare.
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*xid=79'

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 4 --nodes-per-leaf 2
W=$(world_dir work)

# Make node02 a spare: restart its agent with the flag set.
sed -i 's/^\[agent\]$/[agent]\nspare = yes/' "$C/node02.conf"
grep -qx 'spare = yes' "$C/node02.conf" || fail "cannot mark node02 as a spare"
cohort-local kill "$C" node02 >/dev/null || fail "cohort-local kill node02"
cohort-local start "$C" node02 >/dev/null || fail "cohort-local start node02"
wait_node 10 node02 'n["state"] == "UP"'

# Three whole-node jobs fit on node01, node03, node04; a fourth waits
# rather than take the spare.
ids=""
for i in 1 2 3 4; do
	ids="$ids $(job_submit --name fill$i --nodes 1 --gpus-per-node 4 \
		--workdir "$W" -- sleep 300)"
done
set -- $ids
for id in "$1" "$2" "$3"; do
	wait_state 20 "$id" RUNNING
	[ "$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')" != node02 ] ||
		fail "job $id (not restarting) was placed on the spare node02"
done
sleep_until=$(($(date +%s) + 2))
wait_for 10 sh -c "[ \$(date +%s) -ge $sleep_until ]"
[ "$(job_state "$4")" = PENDING ] ||
	fail "the fourth job should wait rather than take the spare: $(json_get "$T/job-$4.json" '[d["state"], d["placement"]]')"
expect_exit 0 cohort cancel $ids

# A 2-node gang: not on the spare. When one of its nodes fails, the
# restart keeps the other and takes the spare.
id=$(job_submit --name gang --nodes 2 --gpus-per-node 4 --max-restarts 2 \
	--workdir "$W" -- sleep 300)
wait_state 20 "$id" RUNNING
nodes=$(json_get "$T/job-$id.json" '" ".join(p["node"] for p in d["placement"])')
case " $nodes " in
*" node02 "*) fail "gang $id placed on the spare: $nodes" ;;
esac
set -- $nodes
keep=$1
victim=$2
log "gang $id on $nodes; $victim fails"
cohort-local fail "$C" "$victim" gpu 0 xid=79 || fail "cohort-local fail $victim"
wait_job 20 "$id" 'd["restarts"] >= 1 and d["state"] == "RUNNING"'
after=$(json_get "$T/job-$id.json" '" ".join(p["node"] for p in d["placement"])')
log "restarted on $after"
case " $after " in
*" $keep "*) ;;
*) fail "the restart did not keep the healthy node $keep: $after" ;;
esac
case " $after " in
*" node02 "*) ;;
*) fail "the restart did not take the spare node02: $after" ;;
esac
expect_exit 0 cohort cancel "$id"
exit 0
