#!/bin/bash
# Idempotent submits. One controller: a submit with
# --idempotency-key sent again answers the job the first one made (a note
# on stderr, nothing new), also after a restart of the controller, and
# with another environment; the key with another request is refused; the
# same key of another user is another job; a malformed key is refused by
# the CLI and, sent raw, by the controller, changing nothing; a submit
# without the flag carries a key of its own ("c-" and 32 hex digits).
# Three replicas: a keyed submit forwarded to a leader that is then
# killed before it answers is sent again by the CLI to the new leader
# (client/conn.c), and succeeds: exit 0, one job.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C"

# listed: how many jobs cohort jobs --all lists.
listed() {
	job_count --all
}

### One controller.
a=$(job_submit --idempotency-key run-42:step.3_a --hold -J first -- true)
[ ! -s "$ERR" ] || fail "a first keyed submit said something: $(cat "$ERR")"
# The same request again, from another environment (what a retry of a
# workflow step may bring): that job.
expect_exit 0 env RETRY_TRY_NUMBER=2 cohort submit --idempotency-key run-42:step.3_a --hold -J first -- true
[ "$(cat "$OUT")" = "$a" ] || fail "the key sent again answered '$(cat "$OUT")', not job $a"
stderr_one_line "cohort: submit: job $a was submitted with --idempotency-key run-42:step.3_a before: nothing new submitted"
[ "$(listed)" = 1 ] || fail "a keyed submit sent twice made $(listed) jobs"
# Another request with that key (another name, command, option): refused,
# naming the job, nothing made.
for other in "-J second -- true" "-J first -- false" "-J first --gpus-per-node 1 -- true"; do
	# shellcheck disable=SC2086 # the words of a request
	expect_exit 1 cohort submit --idempotency-key run-42:step.3_a --hold $other
	stderr_one_line "cohort: submit: --idempotency-key 'run-42:step.3_a' was used for job $a, which asked for something else"
done
[ "$(listed)" = 1 ] || fail "a key reused for other requests made $(listed) jobs"
job_show "$a"
[ "$(json_get "$T/job-$a.json" 'd["name"]')" = first ] || fail "job $a is not the first submit's"
[ "$(json_get "$T/job-$a.json" 'd["idempotency_key"]')" = run-42:step.3_a ] ||
	fail "show --json: idempotency_key is $(json_get "$T/job-$a.json" 'd.get("idempotency_key")')"

# Another user's key of the same name is his own.
(as_user "$C" bob && cohort submit --idempotency-key run-42:step.3_a --hold -- true) >"$OUT" 2>"$ERR" ||
	fail "bob's keyed submit: $(cat "$ERR")"
b=$(cat "$OUT")
[ "$b" != "$a" ] || fail "bob's submit with alice's key answered alice's job $a"

# Malformed keys: the CLI refuses them, usage (2), nothing sent.
for k in "run 42" "" "$(printf 'k%.0s' {1..65})" "é"; do
	expect_exit 2 cohort submit --idempotency-key "$k" --hold -- true
	stderr_one_line "cohort: submit: --idempotency-key: "
done
[ "$(listed)" = 2 ] || fail "refused keys made jobs: $(listed) listed"
# Sent raw, the controller refuses them the same way.
if "$PYTHON" -c 'import google.protobuf' 2>/dev/null; then
	expect_exit 1 pyclient submit --idempotency-key 'a/b' -- true
	grep -q "ERROR_INVALID: --idempotency-key: 'a/b' may only contain" "$ERR" ||
		fail "a raw submit with key 'a/b': $(cat "$OUT" "$ERR")"
	[ "$(listed)" = 2 ] || fail "a raw malformed key made a job"
else
	log "no python3-protobuf: the raw submit is not sent"
fi

# Without the flag: a key of the CLI's own, another for each submit.
c=$(job_submit --hold -- true)
d=$(job_submit --hold -- true)
[ "$c" != "$d" ] || fail "two plain submits answered one job"
job_show "$c"
job_show "$d"
kc=$(json_get "$T/job-$c.json" 'd["idempotency_key"]')
kd=$(json_get "$T/job-$d.json" 'd["idempotency_key"]')
[[ "$kc" =~ ^c-[0-9a-f]{32}$ ]] || fail "a plain submit's key is '$kc'"
[ "$kc" != "$kd" ] || fail "two plain submits had one key $kc"

# The keys live in the store: a restarted controller answers the same.
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "kill controller: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "start controller: $(cat "$T/start.out")"
expect_exit 0 cohort submit --idempotency-key run-42:step.3_a --hold -J first -- true
[ "$(cat "$OUT")" = "$a" ] || fail "after a restart the key answered '$(cat "$OUT")', not job $a"
expect_exit 1 cohort submit --idempotency-key run-42:step.3_a --hold -J second -- true
stderr_has "was used for job $a"
[ "$(listed)" = 4 ] || fail "after a restart the key made a job: $(listed) listed"

### Three replicas: the leader dies holding a keyed submit.
R=$T/replicas
cluster_up "$R" --controllers 3
# The mux connects to the leader (this command), and holds the connection
# for the submit below.
expect_exit 0 cohort jobs
k=$(ctl_leader "$R")
lpid=$(cat "$R/ctl$k/cohortd.pid")
lport=$(cat "$R/ctl$k/cohortd.port")
kill -STOP "$lpid"
cohort submit --idempotency-key failover-1 --hold -J fo -- true >"$T/fo.out" 2>"$T/fo.err" &
sub=$!
# The request waits unread in the stopped leader's socket.
queued() {
	ss -tnH state established "( sport = :$lport )" | awk '$1 > 0 { n++ } END { exit n ? 0 : 1 }'
}
wait_for 10 queued || fail "the submit never reached the stopped leader: $(ss -tn "( sport = :$lport )")"
kill -KILL "$lpid"
rc=0
wait "$sub" || rc=$?
[ "$rc" = 0 ] || fail "the keyed submit across the failover exited $rc: $(cat "$T/fo.err")"
grep -Eqx '[1-9][0-9]*' "$T/fo.out" || fail "it printed '$(cat "$T/fo.out")', not an id"
fo=$(cat "$T/fo.out")
[ "$(job_count --all --name fo)" = 1 ] || fail "the failover submit made $(job_count --all --name fo) jobs"
expect_exit 0 cohort submit --idempotency-key failover-1 --hold -J fo -- true
[ "$(cat "$OUT")" = "$fo" ] || fail "the new leader answered the key with '$(cat "$OUT")', not job $fo"
log "a keyed submit held by a killed leader: sent again, job $fo, once"
exit 0
