#!/bin/bash
# salloc on a 2-node cluster, run where the test runs: its shell's srun
# starts steps on both nodes, its exit code ends the job (FAILED 3,
# COMPLETED 0) and is salloc's; --no-shell leaves a running job that
# srun --jobid attaches a step to; scancel under a running shell revokes
# it; the credential file never outlives salloc; bob cannot get alice's
# credential; and, with tmux, an interactive shell typed into.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
W=$(world_dir work)
cd "$W" || fail "cannot enter $W"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR" || fail "cannot make $TMPDIR"
ALICE_ENV=$(env | grep -E '^COHORT_' | sed 's/^/export /')

no_cred_left() {
	[ -z "$(ls -A "$TMPDIR")" ] || fail "credential files left in $TMPDIR: $(ls -l "$TMPDIR")"
}

# The command's steps on both nodes, its code salloc's and the job's.
expect_exit 3 salloc -N 2 --gpus-per-node 1 sh -c \
	'echo "JOB=$SLURM_JOB_ID NN=$SLURM_NNODES NL=$SLURM_JOB_NODELIST"; ls -l "$COHORT_STEP_CRED" | cut -c1-10; srun -l printenv SLURMD_NODENAME; exit 3'
cat "$OUT" "$ERR" >&2
id=$(sed -n 's/^JOB=\([0-9]*\) .*/\1/p' "$OUT")
[ -n "$id" ] || fail "the shell printed no SLURM_JOB_ID"
grep -qx "JOB=$id NN=2 NL=node\[01-02\]" "$OUT" || fail "the shell's SLURM_* are wrong: $(cat "$OUT")"
grep -qx -- '-rw-------' "$OUT" || fail "the credential file is not 0600: $(cat "$OUT")"
grep -qx '0: node01' "$OUT" && grep -qx '1: node02' "$OUT" ||
	fail "srun in salloc did not run on both nodes: $(cat "$OUT")"
for l in "salloc: Pending job allocation $id" "salloc: Granted job allocation $id" \
	"salloc: Nodes node[01-02] are ready for job" "salloc: Relinquishing job allocation $id"; do
	grep -qxF "$l" "$ERR" || fail "no line '$l' on salloc's stderr"
done
wait_state 30 "$id" FAILED
expect_log_error "job $id: FAILED: max restarts \\(0\\) reached; last failure: the batch script exited with 3"
[ "$(json_get "$T/job-$id.json" 'd.get("exit_code")')" = 3 ] ||
	fail "job $id ended with $(json_get "$T/job-$id.json" 'd.get("exit_code")'), want 3"
no_cred_left

expect_exit 0 salloc -N 1 -J ok true
id=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$ERR")
[ -n "$id" ] || fail "no granted line: $(cat "$ERR")"
wait_state 30 "$id" COMPLETED
no_cred_left

# --no-shell: the job runs on, and srun --jobid attaches a step to it.
expect_exit 0 salloc --no-shell -N 1
nid=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$ERR")
[ -n "$nid" ] || fail "salloc --no-shell printed no granted line: $(cat "$ERR")"
wait_state 10 "$nid" RUNNING
expect_exit 0 env -u SLURM_JOB_ID srun --jobid "$nid" printenv SLURMD_NODENAME
[ "$(cat "$OUT")" = node01 ] || fail "srun --jobid $nid printed '$(cat "$OUT")'"
# Outside an allocation without --jobid: still refused, saying so.
expect_exit 1 env -u SLURM_JOB_ID srun hostname
stderr_has 'SLURM_JOB_ID is not set'

# Another user gets no credential of alice's job (nor keeps it alive).
(
	as_user "$C" bob
	expect_exit 1 env -u SLURM_JOB_ID srun --jobid "$nid" true
	stderr_has "not yours"
) || exit 1
expect_exit 0 scancel "$nid"
wait_state 30 "$nid" CANCELLED

# scancel under a running shell: revoked, the shell hung up.
salloc -N 1 sh -c 'sleep 600' >"$T/rev.out" 2>"$T/rev.err" &
spid=$!
wait_for 30 grep -q '^salloc: Granted job allocation' "$T/rev.err" ||
	fail "the salloc to revoke was not granted: $(cat "$T/rev.err")"
rid=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$T/rev.err")
expect_exit 0 scancel "$rid"
wait_for 60 not proc_alive "$spid" || fail "salloc went on after scancel: $(cat "$T/rev.err")"
rc=0
wait "$spid" || rc=$?
[ "$rc" -ne 0 ] || fail "salloc exited 0 after its allocation was revoked"
grep -qxF "salloc: Job allocation $rid has been revoked." "$T/rev.err" ||
	fail "no revoked line: $(cat "$T/rev.err")"
no_cred_left

# An interactive shell in a terminal, if tmux is here.
if command -v tmux >/dev/null 2>&1; then
	# Under /tmp, not $T: a socket path must fit in 108 bytes, and the
	# tree the tests run in may have a long path.
	tdir=$(mktemp -d /tmp/t690.XXXXXX) || fail "cannot make a directory for tmux"
	sock=$tdir/tmux.sock
	printf '%s\nexport TMPDIR=%q PATH=%q PS1=%q\ncd %q\nexec salloc -N 2\n' \
		"$ALICE_ENV" "$TMPDIR" "$PATH" 'ready$ ' "$W" >"$T/tmux.sh"
	SHELL=/bin/sh tmux -S "$sock" new-session -d -x 120 -y 40 "bash --norc $T/tmux.sh; sleep 600" ||
		fail "tmux did not start"
	track_tmux() { tmux -S "$sock" capture-pane -p -t 0 >"$T/pane" 2>/dev/null; }
	pane_has() { track_tmux; grep -q -- "$1" "$T/pane"; }
	wait_for 30 pane_has 'ready\$' || fail "no shell prompt in tmux: $(cat "$T/pane")"
	tmux -S "$sock" send-keys -t 0 'srun -N2 printenv SLURMD_NODENAME | sort | tr "\n" " "; echo' Enter
	wait_for 60 pane_has '^node01 node02$' || fail "srun -N2 in the tmux shell: $(cat "$T/pane")"
	tmux -S "$sock" send-keys -t 0 'exit' Enter
	wait_for 30 pane_has 'Relinquishing job allocation' || fail "no relinquish in tmux: $(cat "$T/pane")"
	tmux -S "$sock" kill-server 2>/dev/null
	rm -rf "$tdir"
	no_cred_left
else
	echo "SKIP: tmux is not installed: the interactive shell part is not run"
fi
exit 0
