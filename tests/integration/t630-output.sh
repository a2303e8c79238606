#!/bin/bash
# Job output:
#  1. a 2-node x 2-task job with --output out-%j-%t.txt --error
#     err-%j-%t.txt writes each rank's stdout and stderr to its own files
#     in the workdir, apart, owned by the account the tasks run as;
#     cohort logs (and --stderr) says which file on which node, exit 1;
#  2. --output alone: stderr goes with stdout into the one file; a file
#     that cannot be opened fails the job at once, the reason naming it;
#  3. in the spool: cohort logs shows stdout only and --stderr the
#     stderr; --all-ranks prefixes every line with its rank;
#  4. a job that fails once then succeeds: --attempt 1 shows the first
#     attempt's output and the default the latest's, and its --output
#     file holds both (the restart appends); --follow goes on from the
#     first attempt's log into the second's;
#  5. a venv's PATH reaches the job, and the Slurm names are set.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the job that fails once restarts; the unopenable output file fails its job.
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 1 of [0-9]+, .*: rank 0 exited with 3($| after )'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: rank 0 could not start: cannot open the output file \(its path is in the task.s log\)'

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir out)
# Tasks run as nobody when the agents are root (cohort-local's map).
if [ "$(id -u)" -eq 0 ]; then OWNER=$(id -u nobody); else OWNER=$(id -u); fi

ended_ok() {
	wait_state 30 "$1" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$1.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $1 ended $(json_get "$T/job-$1.json" '[d["state"], d["reason"]]')"
}
# file_is PATH TEXT: PATH holds exactly TEXT (lines) and is OWNER's.
file_is() {
	[ -f "$1" ] || fail "$1 is missing: $(ls "$W")"
	[ "$(cat "$1")" = "$2" ] || fail "$1 holds '$(cat "$1")', not '$2'"
	[ "$(stat -c %u "$1")" = "$OWNER" ] || fail "$1 belongs to uid $(stat -c %u "$1"), not $OWNER"
}

### 1. --output and --error, one file per rank.
id=$(job_submit --name files --nodes 2 --tasks-per-node 2 --workdir "$W" \
	--output 'out-%j-%t.txt' --error 'err-%j-%t.txt' -- \
	sh -c 'echo "out $RANK on $COHORT_NODE_RANK"; echo "err $RANK" >&2')
ended_ok "$id"
for r in 0 1 2 3; do
	file_is "$W/out-$id-$r.txt" "out $r on $((r / 2))"
	file_is "$W/err-$id-$r.txt" "err $r"
done
node1=$(json_get "$T/job-$id.json" '[p["node"] for p in d["placement"] if p["node_rank"] == 1][0]')
expect_exit 1 cohort logs "$id" --rank 3
[ ! -s "$OUT" ] || fail "cohort logs printed output: $(cat "$OUT")"
stderr_one_line "cohort: " "rank 3's output is in $W/out-$id-3.txt on node $node1"
expect_exit 1 cohort logs "$id" --rank 2 --stderr
stderr_one_line "cohort: " "rank 2's stderr is in $W/err-$id-2.txt on node $node1 \(--error\)"
expect_exit 1 cohort logs "$id" --all-ranks
stderr_one_line "cohort: " "rank 0's output is in $W/out-$id-0.txt"

### 2. --output alone: both streams in one file; a file that cannot be
### opened.
id=$(job_submit --name one --nodes 1 --workdir "$W" --output '%x-%j.log' -- \
	sh -c 'echo first; echo second >&2; echo third')
ended_ok "$id"
file_is "$W/one-$id.log" "$(printf 'first\nsecond\nthird')"
expect_exit 1 cohort logs "$id" --stderr
stderr_one_line "cohort: " "rank 0's stderr is in $W/one-$id.log on node .* \(with its output"
id=$(job_submit --name bad --nodes 1 --workdir "$W" --max-restarts 3 \
	--output "$W/no-such-dir-t630/out" -- echo never)
wait_state 20 "$id" FAILED COMPLETED CANCELLED TIMEOUT
reason=$(json_get "$T/job-$id.json" 'd["reason"]')
[ "$(json_get "$T/job-$id.json" '[d["state"], d["restarts"]]')" = '["FAILED", 0]' ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["restarts"]]'): $reason"
grep -qF "cannot open the output file (its path is in the task's log): No such file or directory" <<<"$reason" ||
	fail "job $id: reason '$reason' does not say the output file could not be opened"
! grep -qF "no-such-dir-t630" <<<"$reason" || fail "job $id: reason '$reason' names the private output path"

### 3. The spool: streams apart; every rank, labelled.
id=$(job_submit --name spool --nodes 2 --tasks-per-node 2 --workdir "$W" -- \
	sh -c 'echo "o$RANK a"; echo "e$RANK" >&2; echo "o$RANK b"')
ended_ok "$id"
expect_exit 0 cohort logs "$id" --rank 1
[ "$(cat "$OUT")" = "$(printf 'o1 a\no1 b')" ] || fail "cohort logs --rank 1: '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --rank 3 --stderr
[ "$(cat "$OUT")" = e3 ] || fail "cohort logs --rank 3 --stderr: '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --all-ranks
want=$(printf '0: o0 a\n0: o0 b\n1: o1 a\n1: o1 b\n2: o2 a\n2: o2 b\n3: o3 a\n3: o3 b')
[ "$(cat "$OUT")" = "$want" ] || fail "cohort logs --all-ranks: '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --all-ranks --stderr --follow
[ "$(sort "$OUT")" = "$(printf '0: e0\n1: e1\n2: e2\n3: e3')" ] ||
	fail "cohort logs --all-ranks --stderr --follow: '$(cat "$OUT")'"
# Live: each rank's lines as they come, before the job ends.
lid=$(job_submit --name live --nodes 2 --workdir "$W" -- sh -c '
echo "r$RANK start"; while [ ! -e go-$COHORT_JOB_ID ]; do sleep 0.05; done
echo "r$RANK end"')
cohort logs "$lid" --all-ranks --follow >"$T/live.out" 2>"$T/live.err" &
lpid=$!
track_pid "$lpid"
started() { [ "$(grep -c ' start$' "$T/live.out")" -eq 2 ]; }
wait_for 20 started || fail "cohort logs --all-ranks --follow printed '$(cat "$T/live.out")' $(cat "$T/live.err")"
: >"$W/go-$lid"
wait_for 30 proc_gone "$lpid" || fail "cohort logs --all-ranks --follow did not end: '$(cat "$T/live.out")'"
wait "$lpid" || fail "cohort logs --all-ranks --follow failed: $(cat "$T/live.err")"
[ "$(sort "$T/live.out")" = "$(printf '0: r0 end\n0: r0 start\n1: r1 end\n1: r1 start')" ] ||
	fail "cohort logs --all-ranks --follow: '$(cat "$T/live.out")'"
[ "$(head -n 2 "$T/live.out" | grep -c ' start$')" -eq 2 ] ||
	fail "cohort logs --all-ranks --follow printed an end before both starts: '$(cat "$T/live.out")'"
expect_exit 2 cohort logs "$id" --all-ranks --rank 1
expect_exit 2 cohort logs "$id" --attempt 0

### 4. Fails once, then succeeds: every attempt's output is kept.
id=$(job_submit --name again --nodes 1 --workdir "$W" --output 'again-%j.txt' \
	--error 'again-%j.err' -- sh -c '
if [ -e marker-$COHORT_JOB_ID ]; then echo "second run"; exit 0; fi
: >marker-$COHORT_JOB_ID; echo "first run"; exit 3')
ended_ok "$id"
[ "$(json_get "$T/job-$id.json" 'd["restarts"]')" = 1 ] ||
	fail "job $id restarted $(json_get "$T/job-$id.json" 'd["restarts"]') times, not once"
file_is "$W/again-$id.txt" "$(printf 'first run\nsecond run')"
id=$(job_submit --name again2 --nodes 1 --workdir "$W" -- sh -c '
if [ -e marker-$COHORT_JOB_ID ]; then echo "second run"; exit 0; fi
: >marker-$COHORT_JOB_ID; echo "first run"; echo "first err" >&2; exit 3')
ended_ok "$id"
expect_exit 0 cohort logs "$id"
[ "$(cat "$OUT")" = "second run" ] || fail "cohort logs $id (the latest attempt): '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --attempt 1
[ "$(cat "$OUT")" = "first run" ] || fail "cohort logs $id --attempt 1: '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --attempt 1 --stderr
[ "$(cat "$OUT")" = "first err" ] || fail "cohort logs $id --attempt 1 --stderr: '$(cat "$OUT")'"
expect_exit 0 cohort logs "$id" --attempt 2 --stderr
[ ! -s "$OUT" ] || fail "cohort logs $id --attempt 2 --stderr: '$(cat "$OUT")'"
expect_exit 1 cohort logs "$id" --attempt 3
stderr_one_line "cohort: " "attempts 1\.\.2"
# An attempt whose log is gone from the node that ran it (the restart
# may have moved the rank: a job that fails early leaves that node).
n=$(cd "$C" && ls -d node*/spool/jobs/"$id".1 2>/dev/null | head -n 1 | cut -d/ -f1)
[ -n "$n" ] || fail "no spool directory of job $id attempt 1 on any node"
rm -rf "$C/$n/spool/jobs/$id.1"
expect_exit 1 cohort logs "$id" --attempt 1
stderr_one_line "cohort: " "node $n has no log of attempt 1"

# --follow goes on into the next attempt, from the start of its log.
id=$(job_submit --name follow --nodes 1 --workdir "$W" -- sh -c '
if [ -e marker-$COHORT_JOB_ID ]; then echo "second run"; exit 0; fi
: >marker-$COHORT_JOB_ID; echo "first run"
while [ ! -e go-$COHORT_JOB_ID ]; do sleep 0.05; done; exit 3')
cohort logs "$id" --follow >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
track_pid "$fpid"
followed() { grep -q "first run" "$T/follow.out"; }
wait_for 20 followed || fail "cohort logs --follow printed '$(cat "$T/follow.out")' $(cat "$T/follow.err")"
: >"$W/go-$id"
wait_for 30 proc_gone "$fpid" || fail "cohort logs --follow did not end: '$(cat "$T/follow.out")'"
wait "$fpid" || fail "cohort logs --follow failed: $(cat "$T/follow.err")"
[ "$(cat "$T/follow.out")" = "$(printf 'first run\nsecond run')" ] ||
	fail "cohort logs --follow across a restart printed '$(cat "$T/follow.out")'"

### 5. A venv's PATH; Slurm's names.
mkdir -p "$W/venv/bin"
printf '#!/bin/sh\necho "from the venv: $VIRTUAL_ENV $SLURM_JOB_ID $SLURM_PROCID/$SLURM_NTASKS $SLURM_JOB_NODELIST $SLURM_SUBMIT_DIR"\n' >"$W/venv/bin/t630-tool"
chmod 755 "$W/venv" "$W/venv/bin" "$W/venv/bin/t630-tool"
id=$(job_submit --name venv --nodes 1 --workdir "$W" --env "PATH=$W/venv/bin:/usr/bin:/bin" \
	--env "VIRTUAL_ENV=$W/venv" -- t630-tool)
ended_ok "$id"
node0=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
expect_exit 0 cohort logs "$id"
[ "$(cat "$OUT")" = "from the venv: $W/venv $id 0/1 $node0 $W" ] || fail "venv job: '$(cat "$OUT")'"
exit 0
