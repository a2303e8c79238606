#!/bin/bash
# Private data: another user sees a job's name, owner, state, resources,
# reason and times, but never its environment values, command line,
# script body, output, working directory, file paths or idempotency key. Alice (the owner) and the admin see all of it;
# with private_data = no, so does everyone.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 2
W=$(world_dir out)
ENV_SECRET="s3cret-env-$$-$RANDOM"
SCRIPT_SECRET="s3cret-script-$$-$RANDOM"
ARG_SECRET="s3cret-arg-$$-$RANDOM"
KEY_SECRET="s3cret-key-$$-$RANDOM"
DIR_SECRET="s3cret-dir-$$-$RANDOM"
WD=$W/$DIR_SECRET
mkdir -p "$WD/ckpt" && chmod -R 777 "$WD" || fail "cannot create $WD"

# The script holds a secret in its text (a comment never printed), is
# given one as an argument, and prints the environment's to its log.
cat >"$W/private-job.sh" <<EOF
#!/bin/sh
# deploy key: $SCRIPT_SECRET
echo "token is \$TOKEN"
echo "argument is \$1"
EOF
chmod 644 "$W/private-job.sh"
# --export NONE: the environment shown below is the --env variable alone.
id=$(job_submit --name private-job --export NONE --env "TOKEN=$ENV_SECRET" --workdir "$WD" \
	--idempotency-key "$KEY_SECRET" --checkpoint-dir "$WD/ckpt" -e "$WD/err-%j" \
	"$W/private-job.sh" "$ARG_SECRET")
wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"

# no_secret WHAT FILE: FILE holds none of the three secrets.
no_secret() {
	local s
	for s in "$ENV_SECRET" "$SCRIPT_SECRET" "$ARG_SECRET" "$KEY_SECRET" "$DIR_SECRET"; do
		! grep -qF -- "$s" "$2" || fail "$1 shows a secret ('$s'): $(head -c 1500 "$2")"
	done
}
# has_secret WHAT FILE SECRET...: FILE holds each SECRET.
has_secret() {
	local what="$1" f="$2" s
	shift 2
	for s in "$@"; do
		grep -qF -- "$s" "$f" || fail "$what lacks '$s': $(head -c 1500 "$f")"
	done
}
# pyclient_get ID FILE: the raw GetJob reply as JSON, the script body
# (base64 on the wire's JSON) decoded into FILE.script.
pyclient_get() {
	pyclient get "$1" >"$2" 2>"$T/py.err" || fail "pyclient get $1: $(cat "$T/py.err")"
	json_get "$2" '__import__("base64").b64decode(d["spec"].get("script", "")).decode()' >"$2.script"
}

### Bob, another user, sees the job but nothing private.
as_user "$C" bob
expect_exit 0 cohort show "$id"
no_secret "bob's cohort show" "$OUT"
grep -q '^User: *alice$' "$OUT" || fail "bob's cohort show lacks the owner: $(cat "$OUT")"
grep -q '^Name: *private-job$' "$OUT" || fail "bob's cohort show lacks the name: $(cat "$OUT")"
grep -q '^State: *COMPLETED$' "$OUT" || fail "bob's cohort show lacks the state: $(cat "$OUT")"
grep -q '^Environment: *(private' "$OUT" || fail "bob's cohort show does not say the environment is private: $(cat "$OUT")"
grep -q 'TOKEN' "$OUT" && fail "bob's cohort show names the environment's keys: $(cat "$OUT")"

expect_exit 0 cohort show "$id" --json
no_secret "bob's cohort show --json" "$OUT"
[ "$(json_get "$OUT" '[d["user"], d["name"], d["state"], d["private"], d["env"], d["argv"], d["nodes_min"]]')" = \
	'["alice", "private-job", "COMPLETED", true, [], [], 1]' ] ||
	fail "bob's cohort show --json: $(cat "$OUT")"

expect_exit 0 cohort jobs --json --all
no_secret "bob's cohort jobs --json --all" "$OUT"
[ "$(json_get "$OUT" '[[j["user"], j["private"]] for j in d["jobs"] if j["id"] == '"$id"']')" = '[["alice", true]]' ] ||
	fail "bob's listing does not show job $id as alice's and private: $(cat "$OUT")"

expect_exit 1 cohort logs "$id"
no_secret "bob's cohort logs" "$OUT"
no_secret "bob's cohort logs (stderr)" "$ERR"
stderr_one_line "cohort: " 'belongs to alice.*owner and admins'

expect_exit 0 cohort events
no_secret "bob's cohort events" "$OUT"
grep -q 'private-job' "$OUT" || fail "bob's cohort events lacks the job's submit: $(head -c 1500 "$OUT")"
expect_exit 0 cohort events --json --job "$id"
no_secret "bob's cohort events --json" "$OUT"

# The wire itself, read by an independent client.
pyclient_get "$id" "$T/bob-get.json"
no_secret "bob's raw GetJob" "$T/bob-get.json"
no_secret "bob's raw GetJob script" "$T/bob-get.json.script"
[ "$(json_get "$T/bob-get.json" '[d.get("redacted"), d["spec"].get("env", []), d["spec"].get("argv", []), "script" in d["spec"], d["user"]]')" = \
	'[true, [], [], false, "alice"]' ] || fail "bob's raw GetJob: $(cat "$T/bob-get.json")"
pyclient list jobs --all >"$T/bob-list.json" 2>"$T/py.err" || fail "pyclient list jobs: $(cat "$T/py.err")"
no_secret "bob's raw ListJobs" "$T/bob-list.json"
expect_exit 1 pyclient logs "$id"
stderr_has 'ERROR_DENIED'
no_secret "bob's raw Logs" "$OUT"

### Alice, the owner, and the admin see everything.
for who in alice admin; do
	as_user "$C" "$who"
	expect_exit 0 cohort show "$id"
	has_secret "$who's cohort show" "$OUT" "TOKEN=$ENV_SECRET" "$ARG_SECRET"
	expect_exit 0 cohort show "$id" --json
	[ "$(json_get "$OUT" '[d["private"], d["env"], d["argv"]]')" = "[false, [\"TOKEN=$ENV_SECRET\"], [\"$ARG_SECRET\"]]" ] ||
		fail "$who's cohort show --json: $(cat "$OUT")"
	has_secret "$who's cohort show --json" "$OUT" "$KEY_SECRET" "$WD"
	expect_exit 0 cohort logs "$id"
	has_secret "$who's cohort logs" "$OUT" "token is $ENV_SECRET" "argument is $ARG_SECRET"
	pyclient_get "$id" "$T/$who-get.json"
	has_secret "$who's raw GetJob script" "$T/$who-get.json.script" "$SCRIPT_SECRET"
	[ "$(json_get "$T/$who-get.json" 'd.get("redacted", False)')" = false ] ||
		fail "$who's raw GetJob is redacted: $(cat "$T/$who-get.json")"
done

### private_data = no: today's openness, for sites that want it.
printf '\n[tenants]\nprivate_data = no\n' >>"$C/cohortd.conf"
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
as_user "$C" bob
# The log is read through the agent, which reconnects in a moment.
wait_for 30 cohort logs "$id" || fail "bob's cohort logs with private_data = no: $(cohort logs "$id" 2>&1)"
expect_exit 0 cohort show "$id" --json
[ "$(json_get "$OUT" '[d["private"], d["env"]]')" = "[false, [\"TOKEN=$ENV_SECRET\"]]" ] ||
	fail "with private_data = no, bob's cohort show --json: $(cat "$OUT")"
expect_exit 0 cohort logs "$id"
has_secret "bob's cohort logs with private_data = no" "$OUT" "token is $ENV_SECRET"

# A bad value is refused at start, naming the line.
sed -i 's/^private_data = no$/private_data = maybe/' "$C/cohortd.conf"
expect_exit 1 cohortd -f -c "$C/cohortd.conf"
stderr_has 'private_data.*not a boolean'
exit 0
