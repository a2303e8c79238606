#!/bin/bash
# Per-user limits: past max_pending_per_user waiting jobs a submit is
# refused with ERROR_LIMIT (exit 1, one clear line) and changes nothing;
# other users are not affected; a job that ends makes room; the count
# survives kill -9 of the controller. A burst above submit_rate is
# refused the same way. Both are counted in /metrics.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
# No agents: every job stays PENDING.
cluster_up "$C"

restart_controller() {
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
	as_user "$C" "$1"
}

# metric NAME{LABELS}: its value on /metrics.
metric() {
	"$PYTHON" - "$COHORT_HTTP/metrics" "$1" <<'EOF'
import sys, urllib.request
body = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
for line in body.splitlines():
    name, _, value = line.rpartition(" ")
    if name == sys.argv[2]:
        print(value)
        sys.exit(0)
sys.exit("no metric %s" % sys.argv[2])
EOF
}

# pending_count: alice's jobs that are PENDING, as she lists them.
pending_count() {
	job_count --user alice --state PENDING
}

printf '\n[tenants]\nmax_pending_per_user = 5\nsubmit_rate = 0\n' >>"$C/cohortd.conf"
restart_controller alice

### 1. The sixth pending job is refused, with a clear text, and nothing changes.
ids=()
for ((i = 1; i <= 5; i++)); do
	ids+=("$(job_submit --name "lim-$i" -- true)")
done
expect_exit 1 cohort submit --name lim-6 -- true
stderr_one_line "cohort: submit: alice has 5 pending jobs, the limit is 5" 'max_pending_per_user'
[ "$(pending_count)" = 5 ] || fail "a refused submit changed the queue: $(pending_count) pending"
# The wire says ERROR_LIMIT, to any client.
expect_exit 1 pyclient submit --name lim-py -- true
stderr_has 'ERROR_LIMIT: alice has 5 pending jobs'
[ "$(job_count --all)" = 5 ] || fail "refused submits created jobs: $(job_count --all)"
[ "$(metric 'cohort_submits_refused_total{limit="pending"}')" = 2 ] ||
	fail "cohort_submits_refused_total{limit=\"pending\"} is $(metric 'cohort_submits_refused_total{limit="pending"}'), expected 2"

### 2. Bob is not affected.
as_user "$C" bob
bob1=$(job_submit --name bob-1 -- true)

### 3. A job that ends makes room for exactly one more.
as_user "$C" alice
expect_exit 0 cohort cancel "${ids[0]}"
ids+=("$(job_submit --name lim-7 -- true)")
expect_exit 1 cohort submit --name lim-8 -- true
stderr_has 'alice has 5 pending jobs'
# Bob cannot make room for alice by cancelling her jobs (he is refused).
as_user "$C" bob
expect_exit 1 cohort cancel "${ids[1]}"
as_user "$C" alice
expect_exit 1 cohort submit --name lim-9 -- true

### 4. The count survives kill -9 of the controller.
restart_controller alice
expect_exit 1 cohort submit --name lim-after-kill -- true
stderr_has 'alice has 5 pending jobs, the limit is 5'
as_user "$C" bob
job_submit --name bob-2 -- true >/dev/null
as_user "$C" alice
expect_exit 0 cohort cancel "${ids[1]}" "${ids[2]}"
job_submit --name lim-10 -- true >/dev/null
job_submit --name lim-11 -- true >/dev/null
expect_exit 1 cohort submit --name lim-12 -- true
[ "$(pending_count)" = 5 ] || fail "alice has $(pending_count) pending jobs, expected 5"

### 5. The submit rate: a burst above submit_burst is refused.
sed -i -e 's/^max_pending_per_user = 5$/max_pending_per_user = 0/' \
	-e 's/^submit_rate = 0$/submit_rate = 1\nsubmit_burst = 5/' "$C/cohortd.conf"
restart_controller bob
BURST=15
t0=$(_now_us)
accepted=0 refused=0
for ((i = 1; i <= BURST; i++)); do
	if cohort submit --name "burst-$i" -- true >"$OUT" 2>"$ERR"; then
		accepted=$((accepted + 1))
	else
		stderr_one_line "cohort: submit: bob submits faster than the limit of 1 per second" 'retry in [0-9]+ ms'
		refused=$((refused + 1))
	fi
done
secs=$((($(_now_us) - t0) / 1000000 + 1))
log "burst of $BURST in <= ${secs}s: $accepted accepted, $refused refused"
# The bucket holds 5 and refills at 1 a second.
[ "$accepted" -ge 5 ] && [ "$accepted" -le $((5 + secs)) ] ||
	fail "$accepted of a burst of $BURST accepted in ${secs}s, expected 5 to $((5 + secs))"
[ "$(metric 'cohort_submits_refused_total{limit="rate"}')" = "$refused" ] ||
	fail "cohort_submits_refused_total{limit=\"rate\"} is $(metric 'cohort_submits_refused_total{limit="rate"}'), expected $refused"
# Alice's bucket is her own.
as_user "$C" alice
job_submit --name alice-during-bob-burst -- true >/dev/null
# After a second bob may submit again.
as_user "$C" bob
wait_for 5 cohort submit --name after-burst -- true || fail "bob still refused 5 s after his burst"

### 6. Bad values are refused at start, naming the key.
sed -i 's/^submit_rate = 1$/submit_rate = -1/' "$C/cohortd.conf"
expect_exit 1 cohortd -f -c "$C/cohortd.conf"
stderr_has 'submit_rate'
exit 0
