#!/bin/bash
# --export: an activated venv reaches the job. By default (ALL, as sbatch)
# the job gets the submitter's PATH and VIRTUAL_ENV, so a command that
# only the venv has is found on the node, while what names the login
# session (SSH_AUTH_SOCK, DISPLAY) stays behind; --export NONE gives
# neither (the agent's PATH); --export VIRTUAL_ENV,FOO=bar gives those
# only. An environment over the job limits is refused with its size.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
W=$(world_dir out)

# A venv with a command of its own. Tasks may run as nobody: 755.
VENV=$T/venv
mkdir -p "$VENV/bin"
printf '#!/bin/sh\necho "hello from the venv"\n' >"$VENV/bin/t621-venv-tool"
chmod 755 "$VENV" "$VENV/bin" "$VENV/bin/t621-venv-tool"

# show: what the job sees, one variable a line ("unset" when unset).
show='for v in PATH VIRTUAL_ENV FOO T621_MINE SSH_AUTH_SOCK DISPLAY; do
	eval "printf \"%s=%s\\n\" $v \"\${$v-unset}\""
done'

# run_job OUTFILE ARGS...: submit (in the venv's environment), wait until
# COMPLETED, copy rank 0's output to OUTFILE.
run_job() {
	local out="$1" id
	shift
	id=$(PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV" T621_MINE=mine \
		SSH_AUTH_SOCK=/tmp/t621-agent.sock DISPLAY=:77 \
		job_submit --workdir "$W" --max-restarts 0 "$@")
	wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
		fail "job $id ($*) ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	expect_exit 0 cohort logs "$id"
	cp "$OUT" "$out"
}

# val FILE NAME: the value the job printed for NAME.
val() {
	sed -n "s/^$2=//p" "$1"
}

### Default (ALL): the venv's PATH and VIRTUAL_ENV, its command found.
run_job "$T/all.out" -- sh -c "t621-venv-tool; $show"
grep -qx 'hello from the venv' "$T/all.out" ||
	fail "the venv's command did not run: $(cat "$T/all.out")"
[ "$(val "$T/all.out" PATH)" = "$VENV/bin:$PATH" ] ||
	fail "the job's PATH is '$(val "$T/all.out" PATH)', not the submitter's '$VENV/bin:$PATH'"
[ "$(val "$T/all.out" VIRTUAL_ENV)" = "$VENV" ] ||
	fail "VIRTUAL_ENV: '$(val "$T/all.out" VIRTUAL_ENV)'"
[ "$(val "$T/all.out" T621_MINE)" = mine ] ||
	fail "T621_MINE did not travel: $(cat "$T/all.out")"
for v in SSH_AUTH_SOCK DISPLAY; do
	[ "$(val "$T/all.out" $v)" = unset ] ||
		fail "$v travelled with ALL: '$(val "$T/all.out" $v)'"
done

# --export ALL written out, with --env on top.
run_job "$T/all2.out" --export ALL --env FOO=flag -- sh -c "$show"
[ "$(val "$T/all2.out" VIRTUAL_ENV)" = "$VENV" ] && [ "$(val "$T/all2.out" FOO)" = flag ] ||
	fail "--export ALL --env FOO=flag: $(cat "$T/all2.out")"

### NONE: neither; the PATH is the agent's.
run_job "$T/none.out" --export NONE -- sh -c "$show"
case ":$(val "$T/none.out" PATH):" in
*":$VENV/bin:"*) fail "--export NONE: the venv is on the job's PATH: $(val "$T/none.out" PATH)" ;;
::) fail "--export NONE: the job has no PATH" ;;
esac
for v in VIRTUAL_ENV T621_MINE FOO SSH_AUTH_SOCK DISPLAY; do
	[ "$(val "$T/none.out" $v)" = unset ] ||
		fail "$v travelled with NONE: '$(val "$T/none.out" $v)'"
done

### A list: those only, values from the environment or the list.
run_job "$T/list.out" --export VIRTUAL_ENV,FOO=bar -- sh -c "$show"
[ "$(val "$T/list.out" VIRTUAL_ENV)" = "$VENV" ] && [ "$(val "$T/list.out" FOO)" = bar ] ||
	fail "--export VIRTUAL_ENV,FOO=bar: $(cat "$T/list.out")"
[ "$(val "$T/list.out" T621_MINE)" = unset ] ||
	fail "T621_MINE travelled with a list that does not name it"
[ "$(val "$T/list.out" PATH)" = "$(val "$T/none.out" PATH)" ] ||
	fail "a list without PATH: PATH is '$(val "$T/list.out" PATH)', not the agent's '$(val "$T/none.out" PATH)'"

### Refusals: nothing is submitted.
before=$(job_count --all)
expect_exit 2 cohort submit --export COHORT_X=1 -- true
stderr_one_line "cohort: " '--export COHORT_X: COHORT_\* variables are set by Cohort'
expect_exit 2 cohort submit --export 'A,,B' -- true
stderr_one_line "cohort: " '--export: an empty item'
# Three variables of 100 KB: over the 256 KiB a job takes.
big=$(head -c 100000 /dev/zero | tr '\0' x)
expect_exit 2 env T621_BIG1="$big" T621_BIG2="$big" T621_BIG3="$big" \
	cohort submit -- true
stderr_one_line "cohort: " 'environment has [0-9]+ variables to export \([0-9]+ bytes\).*--export NONE'
[ "$(job_count --all)" = "$before" ] || fail "a refused submit created a job"
# The same environment with NONE is fine.
id=$(T621_BIG1="$big" T621_BIG2="$big" T621_BIG3="$big" \
	job_submit --export NONE --hold -- true)
expect_exit 0 cohort cancel "$id"
exit 0
