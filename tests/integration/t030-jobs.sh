#!/bin/bash
# Jobs through the real CLI against a local controller: submit (flags and
# #COHORT script lines), jobs, show, cancel and who may cancel what, and
# refusals that change nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C"

# submit ARGS...: submit as the current user; the id alone on stdout.
submit() {
	expect_exit 0 cohort submit "$@"
	[ "$(wc -l <"$OUT")" -eq 1 ] || fail "submit printed more than the id: $(cat "$OUT")"
	grep -Eqx '[1-9][0-9]*' "$OUT" || fail "submit printed '$(cat "$OUT")', not an id"
	cat "$OUT"
}

# show_json ID: cohort show ID --json into $T/show-ID.json.
show_json() {
	expect_exit 0 cohort show "$1" --json
	cp "$OUT" "$T/show-$1.json"
	json_get "$T/show-$1.json" 'd["id"]' >/dev/null || fail "show --json is not a job object: $(cat "$OUT")"
}

# check_fields FILE JSON: every key of the JSON object has that value in
# the job of FILE ("env" may be a list of K=V or an object; a value
# "~REGEX" matches a string case-insensitively).
check_fields() {
	"$PYTHON" - "$1" "$2" <<'PY' || fail "show $(basename "$1"): fields differ (above)"
import json, re, sys
job = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
bad = []
for k, v in want.items():
    if k not in job:
        bad.append(f"{k}: missing")
        continue
    got = job[k]
    if k == "env" and isinstance(got, dict):
        got = sorted(f"{a}={b}" for a, b in got.items())
        v = sorted(v)
    elif k == "env":
        got, v = sorted(got), sorted(v)
    if isinstance(v, str) and v.startswith("~"):
        ok = isinstance(got, str) and re.search(v[1:], got, re.I)
    else:
        ok = got == v
    if not ok:
        bad.append(f"{k}: got {got!r}, want {v!r}")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

state_of() {
	show_json "$1"
	json_get "$T/show-$1.json" 'd["state"]'
}

# refused CODE REGEX ARGS...: cohort ARGS exits CODE with one line
# "cohort: ..." matching REGEX.
refused() {
	local code="$1" re="$2"
	shift 2
	expect_exit "$code" cohort "$@"
	stderr_one_line "cohort: " "$re"
	[ ! -s "$OUT" ] || fail "'cohort $*' printed on stdout: $(cat "$OUT")"
}

### Submit with every flag (as alice). --export NONE: the environment
### checked below is what --env gives (t621-export.sh checks ALL).
id1=$(submit --export NONE --name first --nodes 2 --gpus-per-node 4 --tasks-per-node 4 \
	--gpu-type H100 --time 30m --priority 50 --topology leaf \
	--checkpoint-dir /ckpt/first --max-restarts 5 --checkpoint-signal USR2@30 \
	--hang-timeout 10m --env FOO=bar --env X=1 --workdir /tmp \
	-- python3 train.py --lr 0.1)
id2=$(submit --name second -- true)
id3=$(submit --name elastic --nodes 1:3 --topology-prefer spine -- sleep 60)
[ "$id2" -gt "$id1" ] && [ "$id3" -gt "$id2" ] || fail "ids do not increase: $id1 $id2 $id3"

show_json "$id1"
check_fields "$T/show-$id1.json" "{\"id\": $id1, \"name\": \"first\", \"user\": \"alice\",
	\"state\": \"PENDING\", \"nodes_min\": 2, \"nodes_max\": 2, \"gpus_per_node\": 4,
	\"tasks_per_node\": 4, \"gpu_type\": \"H100\", \"time_limit_s\": 1800,
	\"priority\": 50, \"topology_mode\": \"~req\", \"topology_level\": \"leaf\",
	\"checkpoint_dir\": \"/ckpt/first\", \"max_restarts\": 5,
	\"checkpoint_signal\": \"USR2@30\", \"hang_timeout_s\": 600,
	\"env\": [\"FOO=bar\", \"X=1\"], \"workdir\": \"/tmp\",
	\"argv\": [\"python3\", \"train.py\", \"--lr\", \"0.1\"], \"restarts\": 0}"
for k in reason submit_time exit_code script_name; do
	json_get "$T/show-$id1.json" "'$k' in d" | grep -qx true || fail "show --json has no '$k'"
done

# Defaults of docs/SPEC.md.
show_json "$id2"
check_fields "$T/show-$id2.json" "{\"name\": \"second\", \"nodes_min\": 1, \"nodes_max\": 1,
	\"tasks_per_node\": 1, \"priority\": 100, \"max_restarts\": 3,
	\"checkpoint_signal\": \"USR1@60\", \"argv\": [\"true\"], \"state\": \"PENDING\"}"
show_json "$id3"
check_fields "$T/show-$id3.json" "{\"nodes_min\": 1, \"nodes_max\": 3,
	\"topology_mode\": \"~pref\", \"topology_level\": \"spine\"}"

# Human show: the name, the user and the state are there.
expect_exit 0 cohort show "$id1"
for w in first alice PENDING H100 /ckpt/first; do
	grep -q -- "$w" "$OUT" || fail "cohort show $id1 does not mention $w: $(cat "$OUT")"
done

### A script with #COHORT lines; a flag overrides one of them, and a
### #COHORT line after the first command is not an option.
cat >"$T/train.sh" <<'SH'
#!/bin/bash
# a training job
#COHORT --nodes 2 --gpus-per-node 4 --name fromscript
#COHORT --time 1h --env 'GREETING=hello world'

echo "training"
#COHORT --priority 10
SH
id4=$(submit --export NONE --gpus-per-node 2 "$T/train.sh")
[ "$id4" -gt "$id3" ] || fail "ids do not increase: $id3 $id4"
show_json "$id4"
check_fields "$T/show-$id4.json" '{"name": "fromscript", "nodes_min": 2, "nodes_max": 2,
	"gpus_per_node": 2, "time_limit_s": 3600, "env": ["GREETING=hello world"],
	"priority": 100, "script_name": "~train\\.sh$", "user": "alice"}'

### bob submits one.
as_user "$C" bob
id5=$(submit --name bobs -- hostname)

### Listings.
as_user "$C" alice
expect_exit 0 cohort jobs
head -n 1 "$OUT" | grep -qi 'id' || fail "cohort jobs has no header: $(head -n 1 "$OUT")"
[ "$(wc -l <"$OUT")" -eq 6 ] || fail "cohort jobs: expected a header and 5 rows: $(cat "$OUT")"
for id in "$id1" "$id2" "$id3" "$id4" "$id5"; do
	grep -Eq "^ *$id( |$)" "$OUT" || fail "cohort jobs has no row for job $id: $(cat "$OUT")"
done
grep -Eq "^ *$id5 .*bob" "$OUT" || fail "job $id5's row does not name bob"

expect_exit 0 cohort jobs --json
cp "$OUT" "$T/jobs.json"
[ "$(json_get "$T/jobs.json" 'sorted(j["id"] for j in d["jobs"])')" = "[$id1, $id2, $id3, $id4, $id5]" ] ||
	fail "jobs --json ids: $(json_get "$T/jobs.json" '[j["id"] for j in d["jobs"]]')"
[ "$(json_get "$T/jobs.json" 'sorted(set(j["state"] for j in d["jobs"]))')" = '["PENDING"]' ] ||
	fail "jobs --json states are not all PENDING"
[ "$(json_get "$T/jobs.json" '[j["name"] for j in d["jobs"] if j["id"] == '"$id4"']')" = '["fromscript"]' ] ||
	fail "jobs --json: job $id4 is not named fromscript"

expect_exit 0 cohort jobs --json --user bob
[ "$(json_get "$OUT" '[j["id"] for j in d["jobs"]]')" = "[$id5]" ] || fail "--user bob: $(cat "$OUT")"
expect_exit 0 cohort jobs --json --user alice
[ "$(json_get "$OUT" 'sorted(j["id"] for j in d["jobs"])')" = "[$id1, $id2, $id3, $id4]" ] ||
	fail "--user alice: $(cat "$OUT")"
expect_exit 0 cohort jobs --json --state PENDING
[ "$(json_get "$OUT" 'len(d["jobs"])')" = 5 ] || fail "--state PENDING: $(cat "$OUT")"
expect_exit 0 cohort jobs --json --state RUNNING
[ "$(json_get "$OUT" 'len(d["jobs"])')" = 0 ] || fail "--state RUNNING lists jobs: $(cat "$OUT")"

### Cancel: own job; twice; someone else's; as admin.
expect_exit 0 cohort cancel "$id2"
[ "$(state_of "$id2")" = CANCELLED ] || fail "job $id2 is not CANCELLED after cancel"
expect_exit 0 cohort jobs --json
json_get "$OUT" '[j["id"] for j in d["jobs"]]' | grep -Eq "(\[| )$id2(,|\])" &&
	fail "a cancelled job is listed without --all"
expect_exit 0 cohort jobs --all --json
[ "$(json_get "$OUT" '[j["state"] for j in d["jobs"] if j["id"] == '"$id2"']')" = '["CANCELLED"]' ] ||
	fail "jobs --all does not show job $id2 CANCELLED: $(cat "$OUT")"
expect_exit 0 cohort jobs --all --json --state CANCELLED
[ "$(json_get "$OUT" '[j["id"] for j in d["jobs"]]')" = "[$id2]" ] || fail "--all --state CANCELLED: $(cat "$OUT")"
expect_exit 0 cohort jobs --all
grep -Eq "^ *$id2 .*CANCELLED" "$OUT" || fail "jobs --all has no CANCELLED row for $id2: $(cat "$OUT")"

refused 1 'already' cancel "$id2"

as_user "$C" bob
refused 1 'denied|not allowed|permission|own|may not|cannot cancel' cancel "$id1"
[ "$(state_of "$id1")" = PENDING ] || fail "bob's refused cancel changed job $id1"

as_user "$C" admin
expect_exit 0 cohort cancel "$id1"
[ "$(state_of "$id1")" = CANCELLED ] || fail "the admin's cancel did not cancel job $id1"
# An admin may raise a priority.
id6=$(submit --name urgent --priority 500 -- true)
show_json "$id6"
check_fields "$T/show-$id6.json" '{"priority": 500, "user": "ops"}'

### Invalid specs: exit 1, a message naming the option, no new job.
as_user "$C" alice
before=$(job_count --all)
refused 1 'nodes' submit --nodes 4:2 -- true
refused 1 'nodes' submit --nodes 0 -- true
refused 1 'tasks.per.node' submit --tasks-per-node 3 --gpus-per-node 8 -- true
refused 1 'env|COHORT_X' submit --env COHORT_X=1 -- true
refused 1 'priority' submit --priority 500 -- true
refused 1 'checkpoint.signal' submit --checkpoint-signal KILL@10 -- true
refused 1 'workdir' submit --workdir relative/dir -- true
[ "$(job_count --all)" = "$before" ] || fail "a refused submit created a job"

### Usage errors: exit 2, a first line "cohort: ..." (a usage hint may
### follow), nothing on stdout.
usage_error() {
	local re="$1"
	shift
	expect_exit 2 cohort "$@"
	head -n 1 "$ERR" | grep -Eq "^cohort: .*($re)" ||
		fail "'cohort $*': first stderr line is not 'cohort: ...$re...': $(cat "$ERR")"
	[ ! -s "$OUT" ] || fail "'cohort $*' printed on stdout: $(cat "$OUT")"
}
usage_error 'time' submit --time bogus -- true
usage_error '' submit --name nocommand
usage_error 'bogus' bogus
usage_error 'state|BOGUS' jobs --state BOGUS
usage_error 'iterate' show "$id1" --iterate 0
usage_error 'iterate' show "$id1" --iterate abc
usage_error 'iterate' nodes --iterate 1e9
expect_exit 2 cohort
grep -Eq '^cohort: |[Uu]sage' "$ERR" || fail "cohort without a command says nothing useful: $(cat "$ERR")"
[ "$(job_count --all)" = "$before" ] || fail "a usage error created a job"

### Unknown jobs.
refused 1 '999999|not found|no such' show 999999

### --iterate: a round a document, again and again, until the reader
### leaves (then the command ends: its stdout is gone); a round that
### fails (an unknown job) says why and the next one tries again.
iterate_docs() {
	timeout 120 "$@" --json --iterate 0.01 | "$PYTHON" -c '
import json, sys
dec, buf, n = json.JSONDecoder(), "", 0
while n < 3:
    line = sys.stdin.readline()
    if not line:
        break
    buf += line
    try:
        doc, end = dec.raw_decode(buf.lstrip())
    except ValueError:
        continue
    buf, n = "", n + 1
print(n)'
}
[ "$(iterate_docs cohort show "$id1")" = 3 ] || fail "cohort show --iterate did not print three rounds"
[ "$(iterate_docs cohort nodes)" = 3 ] || fail "cohort nodes --iterate did not print three rounds"
# Files of its own, and waited for once killed: a round it printed
# after the kill must not land in the next command's $ERR.
timeout 120 cohort show 999999 --json --iterate 0.01 >"$T/iterate.out" 2>"$T/iterate.err" &
pid=$!
track_pid "$pid"
two_failed_rounds() { [ "$(grep -c 999999 "$T/iterate.err")" -ge 2 ]; }
wait_for 60 two_failed_rounds ||
	fail "cohort show --iterate of an unknown job did not go on after a failed round: $(head -c 500 "$T/iterate.err")"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
refused 1 '999999|not found|no such' cancel 999999
exit 0
