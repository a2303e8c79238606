#!/bin/bash
# The agent reads a job's files with the job user's privileges (a root
# agent that followed a LATEST symlink to a root-only file would show its
# content to every user in `cohort show`). Run as root, the
# agent runs tasks as nobody and reads as nobody:
#  A. LATEST a symlink to a root-only file holding "77 SECRET": refused
#     (a symbolic link), nothing of it in `cohort show` (alice, bob) or
#     the events, no checkpoint recorded;
#  B. the checkpoint directory a symlink into a root-only directory whose
#     LATEST belongs to nobody: refused (nobody may not reach it);
#  C. LATEST a FIFO: refused, and the agent keeps going (heartbeats: the
#     node stays UP past its timeout; another job runs meanwhile);
#  D. LATEST owned by another uid (root), world-readable: refused;
#  E. a normal LATEST: recorded;
#  F. LATEST naming a checkpoint that is not there (its write failed):
#     not recorded, said once in the agent's log; recorded once there.
# Not as root, tasks run as the invoking user and A-F need no second
# account: A runs with a file of the user's own (the symlink is refused
# all the same), C, E and F run, B and D are skipped (they need a file or a
# directory of another user's).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: The LATEST files this test plants are refused.
expect_log_error 'cohort-agent: warning: job [0-9]+: refusing to read .*/LATEST: (owned by another user|not a regular file|the job.s user may not read it|a symbolic link)'
expect_log_error 'cohort-agent: warning: job [0-9]+: LATEST names step 6 at .*/ckF/step-6, which does not exist'

ROOT=false
[ "$(id -u)" -ne 0 ] || ROOT=true
C=$T/cluster
COHORT_LOCAL_NODE_TIMEOUT=5s cluster_up "$C" --nodes 1 --gpus 8
ALOG=$C/node01.log
SECRET=TOPSECRET-$$-$RANDOM
W=$(world_dir out)

# holder NAME CKDIR SETUP: a job (one GPU) with checkpoint directory CKDIR
# that runs SETUP in $W, says it is ready and waits; its id on stdout.
holder() {
	local name="$1" ck="$2" setup="$3"
	job_submit --name "$name" --gpus-per-node 1 --max-restarts 0 \
		--checkpoint-dir "$ck" --workdir "$W" -- \
		sh -c "$setup && touch '$W/ready-$name' && exec sleep 3600"
}

# refused ID FILE WHY: the agent logged that it refused to read FILE for
# job ID, saying WHY.
_refused() { grep -F "job $1: refusing to read $2: $3" "$ALOG"; }
refused() {
	wait_for 10 _refused "$@" || fail "job $1: the agent did not refuse $2 ($3); its log: $(grep -F "job $1:" "$ALOG" | tail -5)"
}

# nothing_leaked ID: job ID has no checkpoint and SECRET appears nowhere
# alice or bob can see.
nothing_leaked() {
	local who
	for who in alice bob; do
		as_user "$C" "$who"
		cohort show "$1" --json >"$T/show-$1-$who.json" 2>&1 || fail "cohort show $1 as $who failed: $(cat "$T/show-$1-$who.json")"
		cohort show "$1" >"$T/show-$1-$who.txt" 2>&1 || fail "cohort show $1 as $who failed"
		cohort events --job "$1" >"$T/events-$1-$who.txt" 2>&1 || fail "cohort events --job $1 as $who failed"
		! grep -q "$SECRET" "$T/show-$1-$who.json" "$T/show-$1-$who.txt" "$T/events-$1-$who.txt" ||
			fail "job $1: $who sees the secret: $(grep -h "$SECRET" "$T/show-$1-$who.json" "$T/show-$1-$who.txt" "$T/events-$1-$who.txt")"
		[ "$(json_get "$T/show-$1-$who.json" 'd["checkpoint"]')" = null ] ||
			fail "job $1: a checkpoint was recorded: $(json_get "$T/show-$1-$who.json" 'd["checkpoint"]')"
	done
	as_user "$C" alice
}

### A. LATEST -> a root-only file.
printf '77 %s-A\n' "$SECRET" >"$T/secret-A"
chmod 600 "$T/secret-A"
ckA=$(world_dir ckA)
idA=$(holder A "$ckA" "ln -s '$T/secret-A' '$ckA/LATEST'")
wait_for 20 test -e "$W/ready-A" || fail "job $idA did not start: $(job_state "$idA")"
refused "$idA" "$ckA/LATEST" "a symbolic link"
nothing_leaked "$idA"
log "A: LATEST -> a root-only file: refused, nothing shown"

### B. The checkpoint directory -> a directory only root may enter.
if $ROOT; then
	mkdir -m 700 "$T/private-B"
	printf '78 %s-B\n' "$SECRET" >"$T/private-B/LATEST"
	chown nobody "$T/private-B/LATEST"
	idB=$(holder B "$W/ckB" "ln -s '$T/private-B' '$W/ckB'")
	wait_for 20 test -e "$W/ready-B" || fail "job $idB did not start: $(job_state "$idB")"
	refused "$idB" "$W/ckB/LATEST" "the job's user may not read it"
	nothing_leaked "$idB"
	log "B: checkpoint dir -> a root-only directory: refused, nothing shown"
else
	log "B: skipped (needs root: a directory the task's user may not enter)"
fi

### C. LATEST is a FIFO: the agent must not hang on it.
ckC=$(world_dir ckC)
idC=$(holder C "$ckC" "mkfifo '$ckC/LATEST'")
wait_for 20 test -e "$W/ready-C" || fail "job $idC did not start: $(job_state "$idC")"
refused "$idC" "$ckC/LATEST" "not a regular file"
# Past the node timeout (5 s) twice over, the node is UP and a new job
# starts and ends: the agent's loop is alive. (Not a shorter timeout: a
# loaded machine can delay a 1 s heartbeat by more than a second.)
idC2=$(job_submit --name alive --gpus-per-node 1 --workdir "$W" -- true)
wait_state 20 "$idC2" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$idC2.json" 'd["state"]')" = COMPLETED ] || fail "job $idC2 did not complete while LATEST was a FIFO"
sleep 10
node_expr node01 'n["state"] == "UP"' || fail "node01 is not UP with a FIFO as LATEST: $(cohort nodes)"
[ "$(job_state "$idC")" = RUNNING ] || fail "job $idC is $(job_state "$idC"), not RUNNING"
nothing_leaked "$idC"
log "C: LATEST a FIFO: refused, node01 UP, another job ran"

### D. LATEST of another uid's (root's), readable by all.
if $ROOT; then
	ckD=$(world_dir ckD)
	printf '79 %s-D\n' "$SECRET" >"$ckD/LATEST"
	chmod 644 "$ckD/LATEST"
	idD=$(holder D "$ckD" "true")
	wait_for 20 test -e "$W/ready-D" || fail "job $idD did not start: $(job_state "$idD")"
	refused "$idD" "$ckD/LATEST" "owned by another user than the job's"
	nothing_leaked "$idD"
	log "D: LATEST owned by root: refused, nothing shown"
else
	log "D: skipped (needs root: a file owned by another uid)"
fi

### E. A normal LATEST, written by the job: recorded.
ckE=$(world_dir ckE)
idE=$(holder E "$ckE" "echo 5 >'$ckE/step-5' && echo '5 $ckE/step-5' >'$ckE/L.tmp' && mv '$ckE/L.tmp' '$ckE/LATEST'")
wait_job 20 "$idE" 'd["checkpoint"] is not None and d["checkpoint"]["step"] == 5'
[ "$(json_get "$T/job-$idE.json" 'd["checkpoint"]["path"]')" = "$ckE/step-5" ] ||
	fail "job $idE: checkpoint $(json_get "$T/job-$idE.json" 'd["checkpoint"]')"
log "E: a normal LATEST: recorded"

### F. LATEST names a checkpoint that is not there: a start handed it
### could not resume, so it is not one until it is there.
ckF=$(world_dir ckF)
idF=$(holder F "$ckF" "echo '6 $ckF/step-6' >'$ckF/L.tmp' && mv '$ckF/L.tmp' '$ckF/LATEST'")
_missing() { grep -F "job $idF: LATEST names step 6 at $ckF/step-6, which does not exist" "$ALOG"; }
wait_for 10 _missing || fail "job $idF: the agent did not say LATEST names a missing checkpoint; its log: $(grep -F "job $idF:" "$ALOG" | tail -5)"
job_show "$idF"
[ "$(json_get "$T/job-$idF.json" 'd["checkpoint"]')" = null ] ||
	fail "job $idF: a checkpoint that is not there was recorded: $(json_get "$T/job-$idF.json" 'd["checkpoint"]')"
echo 6 >"$ckF/step-6" || fail "cannot write $ckF/step-6"
wait_job 20 "$idF" 'd["checkpoint"] is not None and d["checkpoint"]["step"] == 6'
[ "$(grep -cF "job $idF: LATEST names" "$ALOG")" -eq 1 ] ||
	fail "job $idF: the agent said more than once that LATEST names a missing checkpoint"
log "F: LATEST naming a missing checkpoint: not recorded until it is there"

# Refusals are rate-limited: one line per job and reason so far.
n=$(grep -cF "job $idC: refusing to read" "$ALOG")
[ "$n" -eq 1 ] || fail "job $idC: $n refusal lines in the agent's log, expected 1 (once a minute)"
for id in $idA ${idB:-} $idC ${idD:-} $idE $idF; do
	expect_exit 0 cohort cancel "$id"
done
exit 0
