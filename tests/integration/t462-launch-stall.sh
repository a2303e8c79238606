#!/bin/bash
# A hostile launch must not stall a node's agent. 512 tasks on one node
# with a 4 KiB -o pattern (%t and some 600 %n) made the agent expand
# patterns O(ranks^2) in its event loop: no heartbeat for tens of
# seconds, the node went DOWN, and every job on it was restarted.
#  1. bob's job runs on both nodes (node01 and node02).
#  2. alice launches the probe on node01: 512 tasks, the 4 KiB pattern
#     (each %n names the directory "0", so the files can be made).
#  3. While it starts, and until it has completed, node01 stays UP with
#     the same "since" (by the controller's own accounting no heartbeat
#     was missed: no "DOWN: no heartbeat"), its last heartbeat keeps
#     advancing, bob's job is RUNNING with no restart, and the probe
#     wrote each rank's file.
# Nothing here compares a duration: only states and counters.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir work)
mkdir -m 1777 "$W/0" || fail "cannot create $W/0"

### 1. bob's job on both nodes.
as_user "$C" bob
bobjob=$(job_submit --nodes 2 --gpus-per-node 1 --workdir "$W" -- sh -c "$(gate stop-bob)")
wait_state 60 "$bobjob" RUNNING
as_user "$C" admin
wait_node 20 node01 'n["state"] == "UP"'
since=$(cohort nodes --json | "$PYTHON" -c 'import json,sys; print([n["since"] for n in json.load(sys.stdin)["nodes"] if n["name"] == "node01"][0])')

### 2. The probe: "%n/../" 600 times, then o-%t: 3,600 bytes of pattern
### after the directory, each rank's file in $W.
pat="$W/$(printf '%%n/../%.0s' $(seq 600))o-%t"
[ "${#pat}" -gt 3600 ] && [ "${#pat}" -le 4096 ] || fail "pattern of ${#pat} bytes"
as_user "$C" alice
probe=$(job_submit --nodes 1 --nodelist node01 --gpus-per-node 0 --tasks-per-node 512 \
	--workdir "$W" -o "$pat" -- true)

### 3. Until the probe has ended: node01 UP, its heartbeats advancing.
as_user "$C" admin
samples=0
beats=0
last=
_probe_over() {
	local st hb
	cohort nodes --json >"$T/nodes.json" 2>"$T/nodes.err" || return 1
	st=$(json_get "$T/nodes.json" '[n["state"] for n in d["nodes"] if n["name"] == "node01"][0]')
	# wait_for hides what the command prints: note it, stop waiting.
	if [ "$st" != UP ]; then
		echo "node01 is $st while the probe starts: $(grep 'node node01' "$C/cohortd.log" | tail -2)" >"$T/not-up"
		return 0
	fi
	hb=$(json_get "$T/nodes.json" '[n["last_heartbeat"] for n in d["nodes"] if n["name"] == "node01"][0]')
	samples=$((samples + 1))
	[ "$hb" = "$last" ] || beats=$((beats + 1))
	last=$hb
	# Also a heartbeat seen to advance, however fast the probe ran: a
	# fast machine may start 512 tasks inside one heartbeat interval.
	[ "$beats" -ge 2 ] &&
		(as_user "$C" alice && _job_in_state "$probe" COMPLETED FAILED CANCELLED)
}
wait_for 300 _probe_over || fail "the probe did not end: $(cohort show "$probe" 2>&1 | head -5)"
[ ! -e "$T/not-up" ] || fail "$(cat "$T/not-up")"
as_user "$C" alice
[ "$(job_state "$probe")" = COMPLETED ] ||
	fail "the probe is $(job_state "$probe"): $(json_get "$T/job-$probe.json" 'd["reason"]')"
n=$(find "$W" -maxdepth 1 -name 'o-*' | wc -l)
[ "$n" -eq 512 ] || fail "the probe wrote $n files, not 512"
# Both sent once the launch was under way: the agent says so.
grep -q "job $probe: starting 512 tasks" "$C/node01.log" ||
	fail "the agent did not start the probe's tasks in rounds: $(grep "job $probe" "$C/node01.log" | head -3)"
grep -q "job $probe: all 512 tasks started" "$C/node01.log" ||
	fail "the agent did not finish the probe's launch"
log "node01's last heartbeat changed $beats times in $samples looks while the probe ran"
log "agent: $(grep -E "job $probe: (starting|all)" "$C/node01.log" | tr '\n' ' ')"
[ "$beats" -ge 2 ] || fail "node01's last heartbeat changed $beats times in $samples looks"

# By the controller's accounting: never DOWN, the same state since.
as_user "$C" admin
grep -q "node node01: DOWN" "$C/cohortd.log" && fail "node01 went DOWN: $(grep 'node node01: DOWN' "$C/cohortd.log")"
now=$(cohort nodes --json | "$PYTHON" -c 'import json,sys; print([n["since"] for n in json.load(sys.stdin)["nodes"] if n["name"] == "node01"][0])')
[ "$now" = "$since" ] || fail "node01 changed state since $since (now since $now)"
as_user "$C" bob
[ "$(job_state "$bobjob")" = RUNNING ] || fail "bob's job is $(job_state "$bobjob")"
[ "$(json_get "$T/job-$bobjob.json" 'd["restarts"]')" = 0 ] ||
	fail "bob's job was restarted: $(json_get "$T/job-$bobjob.json" 'd["restarts"]')"
touch "$W/stop-bob"
wait_state 60 "$bobjob" COMPLETED
exit 0
