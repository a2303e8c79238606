#!/bin/bash
# History and usage: a job that completes, one that fails, one
# cancelled; `cohort jobs --all --state completed,failed --format ...`
# lists the right rows with exit codes, elapsed times, node lists and
# GPU-hours; --since/--until select by the window (as sacct -S/-E) and
# --limit caps; `cohort usage --by user --json` adds up to GPUs x run
# time; `--by state` shows FAILED's wasted hours; a job blocked behind a
# running one gets an expected start (`cohort jobs --start`, `cohort
# show`); times print in one form, with their zone.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
COHORT_LOCAL_CONTROLLER_CONF='[controller]
job_retention = 30d
event_retention = 30d'
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 2 --gpus 4
unset COHORT_LOCAL_CONTROLLER_CONF
W=$(world_dir out)
# jb fails on purpose.
expect_log_error 'job [0-9]+: FAILED: max restarts \(0\) reached; last failure: rank 0 exited with 3'

### 1. Three jobs: completed, failed, cancelled.
ja=$(job_submit --name ja --gpus-per-node 2 --workdir "$W" -- sleep 2)
wait_state 30 "$ja" COMPLETED
# A second boundary between ja's end and the next submits, for the window.
t1=$(($(date +%s) + 1))
wait_for 5 bash -c "[ \$(date +%s) -ge $t1 ]" || fail "the clock did not pass $t1"
t1_iso=$(date -u -d "@$t1" +%Y-%m-%dT%H:%M:%SZ)
jb=$(job_submit --name jb --gpus-per-node 1 --max-restarts 0 --workdir "$W" -- sh -c 'sleep 2; exit 3')
jc=$(job_submit --name jc --gpus-per-node 1 --workdir "$W" -- sleep 300)
wait_state 30 "$jb" FAILED
wait_state 30 "$jc" RUNNING
expect_exit 0 cohort cancel "$jc"
wait_state 30 "$jc" CANCELLED

### 2. The listing of finished jobs with custom columns.
expect_exit 0 cohort jobs --all --state completed,failed --format id,state,exit,elapsed,nodes,gpuh
cp "$OUT" "$T/hist.txt"
head -1 "$T/hist.txt" | grep -Eq '^JOBID +STATE +EXIT +ELAPSED +NODELIST +GPU_HOURS$' ||
	fail "unexpected header: $(head -1 "$T/hist.txt")"
[ "$(wc -l <"$T/hist.txt")" -eq 3 ] || fail "expected 2 rows: $(cat "$T/hist.txt")"
grep -Eq "^$ja +COMPLETED +0 +00:00:(0[1-9]|[1-5][0-9]) +node0[12] +0\.[0-9]{2}$" "$T/hist.txt" ||
	fail "no row for $ja: $(cat "$T/hist.txt")"
grep -Eq "^$jb +FAILED +3 +00:00:(0[1-9]|[1-5][0-9]) +node0[12] +0\.[0-9]{2}$" "$T/hist.txt" ||
	fail "no row for $jb: $(cat "$T/hist.txt")"
grep -q "^$jc " "$T/hist.txt" && fail "the cancelled job is listed: $(cat "$T/hist.txt")"
# An unknown state or column is a usage error, with one line.
expect_exit 2 cohort jobs --state running,bogus
stderr_one_line "cohort: jobs: --state: unknown state 'bogus'"
expect_exit 2 cohort jobs --format id,bogus
stderr_one_line "cohort: jobs: --format: unknown column 'bogus'"

### 3. The window and the limit.
ids() { "$PYTHON" -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))'; }
got=$(cohort jobs --until "$t1_iso" --json | ids)
[ "$got" = "$ja" ] || fail "--until $t1_iso listed '$got', not $ja"
got=$(cohort jobs --since "$t1_iso" --json | ids)
[ "$got" = "$jb $jc" ] || fail "--since $t1_iso listed '$got', not '$jb $jc'"
got=$(cohort jobs --all --limit 2 --json | ids)
[ "$got" = "$ja $jb" ] || fail "--limit 2 listed '$got'"
# A time printed for people reads back (one form, with its zone).
expect_exit 0 cohort show "$ja"
ended=$(sed -n 's/^ *Ended: *//p' "$OUT")
[[ "$ended" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2}\ [A-Z]+$ ]] ||
	fail "cohort show prints Ended as '$ended'"
grep -Eq '^ *GPU time: +0\.[0-9]{2} GPU-hours' "$OUT" || fail "cohort show has no GPU time: $(cat "$OUT")"
got=$(cohort jobs --since "$ended" --json | ids)
[ "$got" = "$ja $jb $jc" ] || fail "--since '$ended' listed '$got'"

### 4. Usage: GPUs x run time, a total, the wasted part of the failure.
expect_exit 0 cohort usage --by user --json
cp "$OUT" "$T/usage.json"
for j in "$ja" "$jb" "$jc"; do job_show "$j"; done
"$PYTHON" - "$T/usage.json" "$T/job-$ja.json" "$T/job-$jb.json" "$T/job-$jc.json" <<'PY' || fail "usage does not add up (above)"
import json, sys
from datetime import datetime
u = json.load(open(sys.argv[1]))
jobs = [json.load(open(p)) for p in sys.argv[2:]]
def ms(t):
    return datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").timestamp() * 1000
bad = []
want = 0
for j in jobs:
    gpus = sum(len(p["gpus"]) for p in j["placement"])
    run = ms(j["end_time"]) - ms(j["start_time"])
    got = j["gpu_hours"] * 3600e3
    # Times in JSON are whole seconds: a second of slack per GPU.
    if abs(got - gpus * run) > gpus * 1000 + 1:
        bad.append(f"job {j['id']}: {got} GPU-ms, {gpus} GPUs x {run} ms")
    if j["state"] in ("COMPLETED", "FAILED") and got < gpus * 1000:
        bad.append(f"job {j['id']}: {got} GPU-ms for a run of over 1 s")
    want += got
rows = u["rows"]
if [r["user"] for r in rows] != ["alice"]:
    bad.append(f"rows: {rows}")
tot = u["total"]["gpu_ms"]
if abs(tot - want) > 1:
    bad.append(f"total {tot} GPU-ms, the jobs' sum {want}")
if sum(r["gpu_ms"] for r in rows) != tot:
    bad.append("rows do not add up to the total")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
expect_exit 0 cohort usage --by state --json
cp "$OUT" "$T/state.json"
failed_ms=$(json_get "$T/job-$jb.json" 'round(d["gpu_hours"] * 3600e3)')
[ "$(json_get "$T/state.json" '[r["wasted_gpu_ms"] for r in d["rows"] if r["state"] == "FAILED"]')" = "[$failed_ms]" ] ||
	fail "FAILED's wasted GPU time is not its whole run ($failed_ms): $(cat "$T/state.json")"
[ "$(json_get "$T/state.json" '[r["wasted_gpu_ms"] for r in d["rows"] if r["state"] == "COMPLETED"]')" = "[0]" ] ||
	fail "COMPLETED wasted GPU time: $(cat "$T/state.json")"
expect_exit 0 cohort usage --by state
grep -Eq '^FAILED +0\.[0-9]{2} +0\.[0-9]{2} +1$' "$OUT" || fail "no FAILED row: $(cat "$OUT")"
grep -Eq '^TOTAL +0\.[0-9]{2} +0\.[0-9]{2}' "$OUT" || fail "no TOTAL row: $(cat "$OUT")"
# Another user sees everyone's usage (docs/SPEC.md: every job is visible to
# all; only environments, scripts and logs are private).
( as_user "$C" bob
  expect_exit 0 cohort usage --user alice --json
  [ "$(json_get "$OUT" 'd["total"]["gpu_ms"]')" = "$(json_get "$T/usage.json" 'd["total"]["gpu_ms"]')" ] ||
	fail "bob sees another total for alice: $(cat "$OUT")" )
expect_exit 2 cohort usage --by week
stderr_one_line "cohort: usage: --by: one of user, queue, state, day; not 'week'"
# A window before anything ran has nothing.
expect_exit 0 cohort usage --until 2020-01-01 --json
[ "$(json_get "$OUT" 'd["total"]["gpu_ms"]')" = 0 ] || fail "usage before 2020: $(cat "$OUT")"

### 5. The expected start of the job the scheduler reserves for.
jd=$(job_submit --name jd --nodes 2 --gpus-per-node 4 --time 10m --workdir "$W" -- sleep 300)
wait_state 30 "$jd" RUNNING
je=$(job_submit --name je --gpus-per-node 4 --time 5m --workdir "$W" -- true)
wait_job 30 "$je" 'd["expected_start"] is not None'
expect_exit 0 cohort jobs --start
cp "$OUT" "$T/start.txt"
head -1 "$T/start.txt" | grep -q ' START ' || fail "--start has no START column: $(cat "$T/start.txt")"
grep -Eq "^$je +je +alice .* PENDING .* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} [A-Z]+ +Resources" "$T/start.txt" ||
	fail "--start shows no start for $je: $(cat "$T/start.txt")"
grep -q "^$jd " "$T/start.txt" && fail "--start lists the running job: $(cat "$T/start.txt")"
# About when jd's limit runs out (10 min after it started).
"$PYTHON" - "$T/job-$je.json" "$T/job-$jd.json" <<'PY' || fail "expected start is off (above)"
import json, sys
from datetime import datetime
e, d = (json.load(open(p)) for p in sys.argv[1:])
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
delta = t(e["expected_start"]) - t(d["start_time"])
if not 590 <= delta <= 610:
    print(f"  expected start {e['expected_start']}, {delta} s after "
          f"jd started", file=sys.stderr)
    sys.exit(1)
PY
expect_exit 0 cohort show "$je"
grep -Eq '^ *Expected start: +[0-9]{4}-' "$OUT" || fail "cohort show has no Expected start: $(cat "$OUT")"
# The running job's GPUs count in usage up to now.
expect_exit 0 cohort usage --by state --json
[ "$(json_get "$OUT" '[r["state"] for r in d["rows"] if r["state"] == "RUNNING"]')" = '["RUNNING"]' ] ||
	fail "the running job is not in usage: $(cat "$OUT")"
expect_exit 0 cohort cancel "$jd" "$je"
