#!/bin/bash
# The largest submits a user may make must not stall the controller's
# loop, and the next larger ones are refused, naming the option and its
# limit, with nothing created.
#  1. One node (features fp64) heartbeats throughout.
#  2. Accepted, held: 1,024 --env variables (one key given twice), a
#     65,536-name --exclude, a 1,024-character --constraint, a 256-item
#     --dependency, and an array that brings alice to one short of her
#     max_pending_per_user.
#  3. Refused: 1,025 distinct variables, a range of 100,000,000 names, 1,025
#     characters of constraint, 257 dependency items, 100,001 array
#     tasks; the job count does not move.
#  4. By the controller's accounting node01 never went DOWN, is UP with
#     the same "since", and its last heartbeat moved on.
# Nothing here compares a duration: only states, counts and texts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_AGENT_CONF="node01: features = fp64" cluster_up "$C" --nodes 1 --gpus 1
as_user "$C" admin
wait_node 20 node01 'n["state"] == "UP"'
_node() {
	cohort nodes --json >"$T/nodes.json" || fail "cohort nodes failed"
	json_get "$T/nodes.json" "[n[\"$1\"] for n in d[\"nodes\"] if n[\"name\"] == \"node01\"][0]"
}
since=$(_node since)
beat0=$(_node last_heartbeat)
as_user "$C" alice

### 2. The largest accepted.
envs=()
for i in $(seq 1 1023); do envs+=(--env "V$i=$i"); done
envs+=(--env "V7=last")
e=$(job_submit --hold --export NONE "${envs[@]}" -- true)
job_show "$e"
[ "$(json_get "$T/job-$e.json" 'len(d["env"])')" = 1023 ] ||
	fail "job $e keeps $(json_get "$T/job-$e.json" 'len(d["env"])') variables, not 1023"
x=$(job_submit --hold --exclude "x[00001-65536]" -- true)
con=fp64
while [ "${#con}" -le 1016 ]; do con="$con|f${#con}"; done
[ "${#con}" -le 1024 ] || fail "constraint of ${#con} characters"
c=$(job_submit --hold --constraint "$con" -- true)
dep=afterany:$e
for i in $(seq 2 256); do dep="$dep,afterany:$e"; done
d=$(job_submit --hold --dependency "$dep" -- true)
have=$(job_count)
# One short of alice's 10,000: the refusals below must be for their size.
a=$(job_submit --hold --array "0-$((10000 - have - 2))" -- true)
total=$(job_count)
[ "$total" -eq 9999 ] || fail "$total jobs after the array, not 9999"
log "accepted: env $e, exclude $x, constraint $c, dependency $d, array $a"

### 3. One step over each limit: refused (by the CLI or the controller,
### whichever sees it first), naming the option and its limit.
refused() {
	local want="$1" rc=0
	shift
	cohort submit --hold "$@" -- true >"$OUT" 2>"$ERR" || rc=$?
	[ "$rc" -ne 0 ] || fail "a submit past a limit was accepted: job $(cat "$OUT")"
	stderr_has "$want"
}
refused "--env.*1024" --export NONE "${envs[@]}" --env W=1 --env X=1
refused "--exclude: names more than [0-9]+ nodes" --exclude "x[0-99999999]"
refused "--constraint.*1024" --constraint "$con|zzzzzzzz"
refused "--dependency.*256" --dependency "$dep,afterany:$e"
refused "--array.*100000" --array 0-100000
[ "$(job_count)" -eq "$total" ] || fail "a refused submit made a job: $(job_count) jobs, not $total"

### 4. node01 stayed UP all along.
as_user "$C" admin
wait_for 30 sh -c "[ \"\$(cohort nodes --json | $PYTHON -c 'import json,sys; print([n[\"last_heartbeat\"] for n in json.load(sys.stdin)[\"nodes\"] if n[\"name\"] == \"node01\"][0])')\" != '$beat0' ]" ||
	fail "node01's last heartbeat stayed at $beat0"
grep -q "node node01: DOWN" "$C/cohortd.log" && fail "node01 went DOWN: $(grep 'node node01: DOWN' "$C/cohortd.log")"
[ "$(_node state)" = UP ] || fail "node01 is $(_node state)"
[ "$(_node since)" = "$since" ] || fail "node01 changed state since $since (now since $(_node since))"
log "submit stamps: $(grep -E "submitted by alice" "$C/cohortd.log" | cut -c1-60 | tr '\n' ' ')"
exit 0
