#!/bin/bash
# Slow ranks: each rank of a stand-in for training writes "STEP
# COMPUTE_MS" to its $COHORT_STEP_FILE; the ranks on one node write twice
# their peers' time.
#  - with the default --on-straggler=report the slow rank is named (an
#    event "straggler" naming job, rank and node, a line in cohort show,
#    stragglers[] in show --json) and the job stays where it is;
#  - with --on-straggler=replace the job is checkpointed and, at that
#    checkpoint, the slow node's ranks move to the hot spare while the
#    other node is kept; no restart is used.
#   leaf0: node01, node02    leaf1: node03, node04 (spare)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the stragglers named, the move.
expect_log_error 'cohortd: warning: job [0-9]+: straggler: rank 1 on node0[1-3]'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*straggler: rank 1 on node0[1-3] is 2\.0× slower.*\(checkpoint written\)'

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 2 --nodes-per-leaf 2
W=$(world_dir work)

# Windows of 2 reports, named after 2 of them: a few heartbeats.
printf '\n[straggler]\nwindow = 2\nwindows = 2\nfactor = 1.5\n' >>"$C/cohortd.conf"
cohort-local kill "$C" controller >/dev/null || fail "cohort-local kill controller"
cohort-local start "$C" controller >/dev/null || fail "cohort-local start controller"
sed -i 's/^\[agent\]$/[agent]\nspare = yes/' "$C/node04.conf"
grep -qx 'spare = yes' "$C/node04.conf" || fail "cannot mark node04 as a spare"
cohort-local kill "$C" node04 >/dev/null || fail "cohort-local kill node04"
cohort-local start "$C" node04 >/dev/null || fail "cohort-local start node04"
for n in node01 node02 node03 node04; do
	wait_node 20 "$n" 'n["state"] == "UP"'
done

# The stand-in: a step every 0.2 s; compute time 100 ms, or 200 ms on
# the node named in $W/slow; rank 0 checkpoints on SIGUSR1 (LATEST by
# rename) and a start resumes after its checkpoint.
cat >"$W/straggle.sh" <<'SH'
#!/bin/sh
set -u
w=$1
dir=${COHORT_CHECKPOINT_DIR:?}
rank=${RANK:-0}
node=$(echo "$COHORT_NODELIST" | cut -d, -f$((COHORT_NODE_RANK + 1)))
ask=0
trap 'ask=1' USR1
step=0
if [ -n "${COHORT_RESUME_CHECKPOINT:-}" ]; then
	step=$(cat "$COHORT_RESUME_CHECKPOINT") || exit 1
fi
echo "straggle: rank $rank on $node from step $step (restart ${COHORT_RESTART_COUNT:-0})"
while [ "$step" -lt 100000 ]; do
	step=$((step + 1))
	ms=100
	if grep -qx "$node" "$w/slow" 2>/dev/null; then
		ms=200
	fi
	# The checkpoint signal goes to the whole process group: an mv it
	# kills fails, and the write is done again at the next step rather
	# than ending the rank.
	printf '%s %s\n' "$step" "$ms" >"$COHORT_STEP_FILE.tmp" &&
		mv -f "$COHORT_STEP_FILE.tmp" "$COHORT_STEP_FILE" || true
	if [ "$ask" = 1 ] && [ "$rank" = 0 ] &&
		echo "$step" >"$dir/step-$step" &&
		printf '%s %s\n' "$step" "$dir/step-$step" >"$dir/LATEST.tmp" &&
		mv -f "$dir/LATEST.tmp" "$dir/LATEST"; then
		echo "straggle: checkpoint at step $step"
		ask=0
	fi
	sleep 0.2
done
SH
chmod 755 "$W/straggle.sh"

# Keep node03 busy, so that the only place left for a moved rank is the
# spare.
filler=$(job_submit --name filler --nodes 1 --nodelist node03 --workdir "$W" -- sleep 600)
wait_state 20 "$filler" RUNNING

# straggler_events JOB: its straggler events into $T/sg.json (at least one).
straggler_events() {
	cohort events --job "$1" --kind straggler --json >"$T/sg.json" 2>"$T/sg.err" &&
		[ "$(json_get "$T/sg.json" 'len(d["events"])')" -ge 1 ]
}

# ---- report: named, not moved ------------------------------------------
mkdir -p "$W/ck1" && chmod 1777 "$W/ck1"
id=$(job_submit --name t862-report --nodes 2 --checkpoint-dir "$W/ck1" \
	--workdir "$W" -- sh "$W/straggle.sh" "$W")
wait_state 20 "$id" RUNNING
slow=$(json_get "$T/job-$id.json" 'd["placement"][1]["node"]')
keep=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
echo "$slow" >"$W/slow"
log "job $id on $keep and $slow; $slow's rank writes twice the time"
wait_for 30 straggler_events "$id" ||
	fail "job $id: no straggler event within 30 s: $(cat "$T/sg.json" "$T/sg.err")"
[ "$(json_get "$T/sg.json" 'd["events"][0]["node"]')" = "$slow" ] ||
	fail "the straggler event names another node than $slow: $(cat "$T/sg.json")"
json_get "$T/sg.json" 'd["events"][0]["detail"]' | grep -q "^rank 1 on $slow: median 200 ms.*peers' 100 ms (2.0×)" ||
	fail "the straggler event lacks the evidence: $(cat "$T/sg.json")"
expect_exit 0 cohort show "$id"
grep -Eq "Stragglers: +rank 1 on $slow: 200 ms per step, peers 100 ms \(2\.0×\)" "$OUT" ||
	fail "cohort show does not list the straggler: $(cat "$OUT")"
grep -Eq "On straggler: +report" "$OUT" || fail "cohort show does not say report: $(cat "$OUT")"
expect_exit 0 cohort show "$id" --json
cp "$OUT" "$T/show.json"
[ "$(json_get "$T/show.json" 'd["stragglers"][0]["node"]')" = "$slow" ] ||
	fail "show --json: stragglers[] does not name $slow: $(cat "$T/show.json")"
[ "$(json_get "$T/show.json" 'd["stragglers"][0]["replaced"]')" = false ] ||
	fail "show --json: a reported straggler is marked replaced"
# report moves nothing: no checkpoint signal, the same nodes.
job_expr "$id" "d['state'] == 'RUNNING' and d['restarts'] == 0 and [p['node'] for p in d['placement']] == ['$keep', '$slow']" ||
	fail "job $id moved with --on-straggler=report: $(json_get "$T/job-$id.json" '[d["state"], d["placement"]]')"
[ ! -e "$W/ck1/LATEST" ] || fail "job $id was asked for a checkpoint with --on-straggler=report"
expect_exit 0 cohort cancel "$id"
wait_state 20 "$id" CANCELLED

# ---- replace: the slow node's ranks move to the spare ------------------
mkdir -p "$W/ck2" && chmod 1777 "$W/ck2"
id=$(job_submit --name t862-replace --nodes 2 --on-straggler=replace \
	--checkpoint-dir "$W/ck2" --checkpoint-signal USR1@60 --workdir "$W" \
	-- sh "$W/straggle.sh" "$W")
wait_state 20 "$id" RUNNING
slow=$(json_get "$T/job-$id.json" 'd["placement"][1]["node"]')
keep=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
case "$slow $keep" in *node04*) fail "job $id placed on the spare: $keep $slow" ;; esac
echo "$slow" >"$W/slow"
log "job $id on $keep and $slow; $slow's rank writes twice the time"
wait_for 30 straggler_events "$id" ||
	fail "job $id: no straggler event within 30 s: $(cat "$T/sg.json" "$T/sg.err")"
json_get "$T/sg.json" 'd["events"][0]["detail"]' | grep -q "moving $slow's ranks at the next checkpoint" ||
	fail "the straggler event does not say it moves $slow: $(cat "$T/sg.json")"
wait_for 30 job_expr "$id" "d['state'] == 'RUNNING' and [p['node'] for p in d['placement']] == ['$keep', 'node04']" || {
	job_show "$id"
	fail "job $id did not move rank 1 from $slow to the spare node04 (keeping $keep): $(json_get "$T/job-$id.json" '[d["state"], d["placement"]]')"
}
[ -e "$W/ck2/LATEST" ] || fail "job $id moved without the checkpoint it was asked for"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 0 ] ||
	fail "a straggler move used up a restart: $(json_get "$T/job-$id.json" 'd["restarts"]')"
expect_exit 0 cohort show "$id" --json
cp "$OUT" "$T/show.json"
[ "$(json_get "$T/show.json" 'd["stragglers"][0]["replaced"]')" = true ] ||
	fail "show --json: the moved straggler is not marked replaced: $(cat "$T/show.json")"
[ "$(json_get "$T/show.json" 'd["on_straggler"]')" = replace ] ||
	fail "show --json: on_straggler is not replace"
expect_exit 0 cohort cancel "$id" "$filler"
exit 0
