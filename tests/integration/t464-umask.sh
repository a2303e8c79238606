#!/bin/bash
# A task's files follow its submitter's umask, not the agent's (Slurm's
# SLURM_UMASK). The agent runs under umask 027; then
#  1. a submit under umask 077 makes its -o file, and a file the task
#     creates, 0600, and cohort show --json says "0077";
#  2. under umask 022 they are 0644 ("0022"), which the agent's 027
#     would have made 0640;
#  3. cohort run and sbatch send the umask too;
#  4. a client that sends none (pyclient, as an older cohort) gets 0077,
#     never the agent's, and show --json says null (with python3-protobuf
#     only).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
# The agent's umask, which no task's file must follow.
umask 027
cluster_up "$C" --nodes 1 --gpus 1
umask 022
W=$(world_dir umask)

ended_ok() {
	wait_state 30 "$1" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$1.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $1 ended $(json_get "$T/job-$1.json" '[d["state"], d["reason"]]')"
}
# mode_is PATH MODE: PATH exists with permission bits MODE (stat's %a).
mode_is() {
	[ -f "$1" ] || fail "$1 is missing: $(ls "$W")"
	[ "$(stat -c %a "$1")" = "$2" ] || fail "$1 has mode $(stat -c %a "$1"), not $2"
}

### 1, 2. cohort submit under 077 and under 022.
for m in 077 022; do
	id=$(umask "$m"; job_submit --name "u$m" --nodes 1 --workdir "$W" \
		--output "u$m-%j.out" -- sh -c 'echo hi; : >"made-$COHORT_JOB_ID"')
	ended_ok "$id"
	[ "$(json_get "$T/job-$id.json" 'd["umask"]')" = "0$m" ] ||
		fail "umask $m: show --json has umask $(json_get "$T/job-$id.json" 'd.get("umask")')"
	want=$([ "$m" = 077 ] && echo 600 || echo 644)
	mode_is "$W/u$m-$id.out" "$want"
	mode_is "$W/made-$id" "$want"
	[ "$(cat "$W/u$m-$id.out")" = hi ] || fail "$W/u$m-$id.out holds '$(cat "$W/u$m-$id.out")'"
done

### 3. cohort run and sbatch.
(umask 077; cd "$W" && cohort run --nodes 1 --name run077 -- \
	sh -c ': >"made-$COHORT_JOB_ID"; echo "$COHORT_JOB_ID"') >"$T/run.out" 2>"$T/run.err" ||
	fail "cohort run failed: $(cat "$T/run.err")"
rid=$(tail -n 1 "$T/run.out")
grep -Eqx '[1-9][0-9]*' <<<"$rid" || fail "cohort run printed '$(cat "$T/run.out")'"
mode_is "$W/made-$rid" 600
(umask 027; cd "$W" && sbatch --parsable --hold --wrap=true) >"$T/sbatch.out" 2>"$T/sbatch.err" ||
	fail "sbatch failed: $(cat "$T/sbatch.err")"
sid=$(cat "$T/sbatch.out")
job_show "$sid"
[ "$(json_get "$T/job-$sid.json" 'd["umask"]')" = 0027 ] ||
	fail "sbatch under umask 027: show --json has umask $(json_get "$T/job-$sid.json" 'd.get("umask")')"
expect_exit 0 cohort cancel "$sid"

### 4. No umask sent: 0077, whatever the agent's.
if "$PYTHON" -c 'import google.protobuf' 2>/dev/null; then
	pyclient submit --name old --workdir "$W" -- sh -c ': >"made-$COHORT_JOB_ID"' >"$T/py.out" ||
		fail "pyclient submit failed"
	id=$(cat "$T/py.out")
	ended_ok "$id"
	[ "$(json_get "$T/job-$id.json" 'd["umask"]')" = null ] ||
		fail "a spec without a umask: show --json has umask $(json_get "$T/job-$id.json" 'd.get("umask")')"
	mode_is "$W/made-$id" 600
else
	echo "note: $PYTHON has no google.protobuf: part 4 (no umask sent) not run"
fi
exit 0
