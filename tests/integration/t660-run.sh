#!/bin/bash
# cohort run: submits, streams every rank's output while the job runs
# (prefixed by rank when there are several), exits with the job's exit
# code, and cancels the job on Ctrl-C.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2

# One rank: the output as is, and the job's exit code as run's.
expect_log_error 'job [0-9]+: FAILED: .*rank 0 exited with 3'
expect_exit 3 cohort run --max-restarts 0 -- sh -c 'echo hello from the job; echo to stderr >&2; exit 3'
grep -qx 'hello from the job' "$OUT" || fail "run did not print the job's output: $(cat "$OUT")"
grep -qx 'to stderr' "$ERR" || fail "run did not print the job's stderr on its own: $(cat "$ERR")"
grep -q 'to stderr' "$OUT" && fail "the job's stderr went to run's stdout"
grep -q '^0: ' "$OUT" && fail "one rank's lines were prefixed: $(cat "$OUT")"
stderr_has 'ended FAILED'
expect_exit 0 cohort run --name ok -- true

# Two nodes: each rank's lines, prefixed by its rank.
expect_exit 0 cohort run --nodes 2 -- sh -c 'echo "rank $RANK of $WORLD_SIZE"; echo "again $RANK"'
for r in 0 1; do
	grep -qx "$r: rank $r of 2" "$OUT" || fail "rank $r's line missing or unprefixed: $(cat "$OUT")"
	grep -qx "$r: again $r" "$OUT" || fail "rank $r's second line missing: $(cat "$OUT")"
done

# Streaming: the first line shows while the job still runs; Ctrl-C
# (SIGINT) cancels the job and run exits 130.
cohort run --name streamer -- sh -c 'echo first line; sleep 60; echo never' \
	>"$T/stream.out" 2>"$T/stream.err" &
RUN=$!
track_pid "$RUN"
wait_for 30 grep -qx 'first line' "$T/stream.out" ||
	fail "no output streamed while the job runs: $(cat "$T/stream.out" "$T/stream.err")"
ID=$(cohort jobs --json | "$PYTHON" -c 'import json,sys; print([j["id"] for j in json.load(sys.stdin)["jobs"] if j["name"] == "streamer"][0])')
[ "$(job_state "$ID")" = RUNNING ] || fail "job $ID is not running while its output streams"
kill -INT "$RUN"
rc=0
wait "$RUN" || rc=$?
[ "$rc" -eq 130 ] || fail "run exited $rc after Ctrl-C, expected 130: $(cat "$T/stream.err")"
grep -q 'cancelling job' "$T/stream.err" || fail "run did not say it cancels: $(cat "$T/stream.err")"
wait_state 30 "$ID" CANCELLED
grep -q never "$T/stream.out" && fail "the job went on after the cancel"

# Refusals: nothing is submitted.
before=$(cohort jobs --all --json | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
expect_exit 2 cohort run
expect_exit 2 cohort run --nodes x -- true
# --pty takes a command as cohort run does (after --); one without any
# is refused before anything is asked of the controller.
expect_exit 2 cohort run --pty bash
stderr_has "put it after --"
expect_exit 2 cohort run --pty -N 1
stderr_has "missing command"
after=$(cohort jobs --all --json | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
[ "$before" = "$after" ] || fail "a refused run submitted a job"
log "ok"
