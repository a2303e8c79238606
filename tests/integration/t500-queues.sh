#!/bin/bash
# Queues at submit and in `cohort queues`: two queues under a
# parent. A submit to a queue the user is not in, to an unknown queue or
# to an inner queue is refused with one clear line and stores nothing;
# the default queue is the first listing the user; max_gpus_per_job and
# max_time are enforced (max_time is also the default --time); `cohort
# queues --json` adds up (used, pending, borrowed and lent) while jobs
# run; a queue admin may cancel another user's job in that queue, a
# plain user may not; fair share survives a controller restart; a bad
# [queue] section stops cohortd at start with PATH:LINE.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
# alice is in team-a, bob in team-b and an admin of team-a. Two nodes of
# four GPUs: 8 GPUs, team-a's 4 and team-b's 4.
COHORT_LOCAL_CONTROLLER_CONF='[queue research]
[queue team-a]
parent = research
gpus = 4
users = alice
admins = bob
max_gpus_per_job = 4
max_time = 1h
[queue team-b]
parent = research
gpus = 4
users = bob'
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 2 --gpus 4
unset COHORT_LOCAL_CONTROLLER_CONF
W=$(world_dir out)

# queues_json: cohort queues --json into $T/queues.json.
queues_json() {
	cohort queues --json >"$T/queues.json" 2>"$T/queues.err" ||
		fail "cohort queues --json failed: $(cat "$T/queues.err")"
}
# q NAME FIELD: that field of queue NAME's row.
q() {
	json_get "$T/queues.json" "[r for r in d['queues'] if r['name'] == '$1'][0]['$2']"
}

### 1. Refused submits: one line each, nothing stored.
expect_exit 1 cohort submit --queue team-b -- true
stderr_one_line_with "alice may not submit to queue team-b"
expect_exit 1 cohort submit --queue nope -- true
stderr_one_line_with "no queue 'nope' (queues: team-a, team-b)"
expect_exit 1 cohort submit --queue research -- true
stderr_one_line_with "research has sub-queues and takes no jobs"
# Checked by the CLI before it sends anything: a usage error.
expect_exit 2 cohort submit --queue 'a/b' -- true
stderr_one_line_with "--queue: 'a/b' may only contain letters, digits"
expect_exit 1 cohort submit --nodes 2 --gpus-per-node 4 -- true
stderr_one_line_with "8 GPUs is above the queue's max_gpus_per_job of 4"
expect_exit 1 cohort submit --gpus-per-node 1 --time 2h -- true
stderr_one_line_with "--time: 7200 s is above queue team-a's max_time of 3600 s"
expect_exit 1 cohort submit --gpus-per-node 1 --service -- true
stderr_one_line_with "--service: queue team-a has a max_time"
expect_exit 1 cohort submit --gpus-per-node 1 --service --time 1m --queue team-a -- true
stderr_one_line_with "--service: a service has no time limit (leave out --time)"
# The same from a script's #COHORT lines.
printf '#!/bin/sh\n#COHORT --queue team-b\ntrue\n' >"$T/to-b.sh"
expect_exit 1 cohort submit "$T/to-b.sh"
stderr_one_line_with "alice may not submit to queue team-b"
printf '#!/bin/sh\n#COHORT --service\n#COHORT --time 1m\ntrue\n' >"$T/svc.sh"
expect_exit 1 cohort submit "$T/svc.sh"
stderr_one_line_with "--service: a service has no time limit (leave out --time)"
[ "$(job_count --all)" = 0 ] || fail "refused submits stored $(job_count --all) jobs"

### 2. The default queue, and max_time as the default --time.
a1=$(job_submit --name a1 --gpus-per-node 4 --workdir "$W" -- sleep 300)
job_show "$a1"
[ "$(json_get "$T/job-$a1.json" 'd["queue"]')" = team-a ] ||
	fail "alice's job went to '$(json_get "$T/job-$a1.json" 'd["queue"]')', not team-a"
[ "$(json_get "$T/job-$a1.json" 'd["time_limit_s"]')" = 3600 ] ||
	fail "team-a's max_time is not the job's limit: $(json_get "$T/job-$a1.json" 'd["time_limit_s"]')"
[ "$(json_get "$T/job-$a1.json" 'd["service"]')" = false ] || fail "a1 is a service"
cohort show "$a1" >"$T/show.txt" || fail "cohort show $a1 failed"
grep -Eq '^ *Queue: +team-a$' "$T/show.txt" || fail "cohort show has no 'Queue: team-a': $(cat "$T/show.txt")"
grep -Eq '^ *Preemptions: +-$' "$T/show.txt" || fail "cohort show has no 'Preemptions: -': $(cat "$T/show.txt")"
cohort jobs >"$T/jobs.txt" || fail "cohort jobs failed"
grep -Eq "^$a1 +a1 +alice +team-a +" "$T/jobs.txt" || fail "cohort jobs has no QUEUE column: $(cat "$T/jobs.txt")"
wait_state 20 "$a1" RUNNING
# cohort show lists the job's preemptions: the events of kind "preempt"
# about it (the controller writes them; here one is written behind its
# back, as the lead's preemption would, among other events of the job;
# now, or the event retention would purge it).
if command -v sqlite3 >/dev/null; then
	sqlite3 -cmd '.timeout 5000' "$C/cohort.db" "INSERT INTO events (time_ms, job_id, kind, actor, detail) VALUES ($(date +%s%3N), $a1, 'preempt', 'controller', 'preempted by job 99 of team-b; checkpoint step 7; lost 42 s')" ||
		fail "cannot add an event"
	expect_exit 0 cohort show "$a1"
	grep -Eq '^ *Preemptions: +.*preempted by job 99 of team-b; checkpoint step 7; lost 42 s$' "$OUT" ||
		fail "cohort show does not list the preemption: $(cat "$OUT")"
	[ "$(grep -c 'preempted by' "$OUT")" = 1 ] || fail "other events listed as preemptions: $(cat "$OUT")"
	job_show "$a1"
	[ "$(json_get "$T/job-$a1.json" '[p["detail"] for p in d["preemptions"]]')" = '["preempted by job 99 of team-b; checkpoint step 7; lost 42 s"]' ] ||
		fail "show --json preemptions: $(json_get "$T/job-$a1.json" 'd["preemptions"]')"
	# The same through cohort events --kind.
	expect_exit 0 cohort events --kind preempt --json
	[ "$(json_get "$OUT" '[(e["kind"], e["job_id"]) for e in d["events"]]')" = "[[\"preempt\", $a1]]" ] ||
		fail "cohort events --kind preempt: $(cat "$OUT")"
fi

### 3. Borrowing: a second 4-GPU job of team-a runs on team-b's idle GPUs.
a2=$(job_submit --name a2 --gpus-per-node 4 --workdir "$W" -- sleep 300)
wait_state 20 "$a2" RUNNING
# A third waits: every GPU is taken.
a3=$(job_submit --name a3 --gpus-per-node 2 --workdir "$W" -- sleep 300)
as_user "$C" bob
b1=$(job_submit --name b1 --queue team-b --gpus-per-node 1 --service --workdir "$W" -- sleep 300)
job_show "$b1"
[ "$(json_get "$T/job-$b1.json" 'd["service"]')" = true ] || fail "b1 is not a service"
[ "$(json_get "$T/job-$b1.json" 'd["time_limit_s"]')" = 0 ] || fail "b1, a service, has a time limit"
queues_json
[ "$(json_get "$T/queues.json" '[r["name"] for r in d["queues"]]')" = '["research", "team-a", "team-b"]' ] ||
	fail "rows are not parents first in file order: $(cat "$T/queues.json")"
[ "$(q team-a depth)" = 1 ] && [ "$(q research depth)" = 0 ] || fail "depths: $(cat "$T/queues.json")"
[ "$(q research nominal)" = 8 ] || fail "research's nominal is not its children's 8: $(q research nominal)"
[ "$(q team-a used)" = 8 ] || fail "team-a uses $(q team-a used) GPUs, expected 8"
[ "$(q team-a borrowed)" = 4 ] || fail "team-a borrowed $(q team-a borrowed), expected 4"
[ "$(q team-b used)" = 0 ] && [ "$(q team-b lent)" = 4 ] ||
	fail "team-b: used $(q team-b used), lent $(q team-b lent); expected 0 and 4"
[ "$(q research used)" = $(($(q team-a used) + $(q team-b used))) ] ||
	fail "research's used is not its children's: $(cat "$T/queues.json")"
[ "$(q team-a pending)" = 2 ] && [ "$(q team-b pending)" = 1 ] && [ "$(q research pending)" = 3 ] ||
	fail "pending GPUs do not add up: $(cat "$T/queues.json")"
[ "$(q research pending_jobs)" = 2 ] && [ "$(q research running_jobs)" = 2 ] ||
	fail "job counts do not add up: $(cat "$T/queues.json")"
[ $(($(q team-a borrowed) + $(q team-b borrowed))) = $(($(q team-a lent) + $(q team-b lent) + $(q research from_above))) ] ||
	fail "borrowed does not add up to lent + from_above: $(cat "$T/queues.json")"
# GPUs used agree with the running jobs' allocations.
cohort jobs --json >"$T/all.json" || fail "cohort jobs --json failed"
[ "$(json_get "$T/all.json" 'sum(sum(len(p["gpus"]) for p in j["placement"]) for j in d["jobs"] if j["state"] == "RUNNING")')" = "$(q research used)" ] ||
	fail "running jobs' GPUs differ from the tree's used: $(cat "$T/all.json")"
# The table: the tree indented, none for unlimited.
expect_exit 0 cohort queues
grep -Eq '^research +8 +8 ' "$OUT" || fail "no research row: $(cat "$OUT")"
grep -Eq '^  team-a +4 +8 +4 +0 +2 ' "$OUT" || fail "team-a's row is not indented or wrong: $(cat "$OUT")"

### 3b. Fair share survives a controller restart: the usage of the jobs
### that ran is charged again from the job table. team-a used everything
### among its siblings: key 2 (twice its share), factor 2^-2; team-b
### nothing: factor 1.
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
as_user "$C" bob
queues_json
[ "$(q team-a factor)" = 0.25 ] && [ "$(q team-b factor)" = 1.0 ] ||
	fail "fair share after a restart: team-a $(q team-a factor), team-b $(q team-b factor)"
[ "$(q team-a used)" = 8 ] || fail "after a restart team-a uses $(q team-a used) GPUs"

### 4. A queue admin cancels another user's job in that queue; a plain
### user may not cancel a job of another queue.
expect_exit 0 cohort cancel "$a3"
wait_state 10 "$a3" CANCELLED
as_user "$C" alice
expect_exit 1 cohort cancel "$b1"
stderr_one_line_with "only its owner, an admin or an admin of its queue may cancel it"
job_show "$b1"
[ "$(json_get "$T/job-$b1.json" 'd["state"]')" = PENDING ] || fail "alice's refused cancel changed b1"
expect_exit 0 cohort cancel "$a1" "$a2"
as_user "$C" bob
expect_exit 0 cohort cancel "$b1"

### 5. A bad [queue] section stops cohortd at start, naming the line.
sed '/^\[queue team-b\]/,$d' "$C/cohortd.conf" >"$C/bad.conf"
printf '[queue team-b]\nparent = nowhere\n' >>"$C/bad.conf"
line=$(grep -n '^\[queue team-b\]' "$C/bad.conf" | cut -d: -f1)
expect_exit 1 cohortd -f -c "$C/bad.conf"
stderr_one_line_with "$C/bad.conf:$line: queue team-b: parent 'nowhere' is not a queue"
printf '[queue team-a]\n' >>"$C/bad.conf"
expect_exit 1 cohortd -f -c "$C/bad.conf"
stderr_has "bad.conf:[0-9]+: \[queue team-a\] given twice \(first on line [0-9]+\)"
