#!/bin/bash
# srun --pty in real terminals (tmux): task 0 runs on a pseudo-terminal
# of its node (tty, the window at the start and after a resize), Ctrl-C
# interrupts the remote foreground command and the shell goes on, exit 3
# is srun's 3, the local terminal is as it was afterwards (also when the
# node's agent is killed under the session); cohort attach joins a
# running --pty step (its output, and keys with -i); bob can neither
# attach to nor type into alice's session; cohort run --pty does it all
# in an allocation of its own.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected: node01's agent is killed under a session (its node goes
# DOWN, the allocation's job fails with it), and cohort run --pty's
# command exits 4.
expect_log_error 'cohortd: warning: node node01: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: max restarts \(0\) reached; last failure: node node01 went DOWN'
expect_log_error 'cohortd: warning: job [0-9]+: FAILED: max restarts \(0\) reached; last failure: the batch script exited with 4'

command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
W=$(world_dir work)
cd "$W" || fail "cannot enter $W"
ALICE_ENV=$(env | grep -E '^COHORT_' | sed 's/^/export /')

expect_exit 0 salloc --no-shell -N 2
jid=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$ERR")
[ -n "$jid" ] || fail "salloc --no-shell printed no granted line: $(cat "$ERR")"
wait_state 30 "$jid" RUNNING

# Under /tmp, not $T: a socket path must fit in 108 bytes.
tdir=$(mktemp -d /tmp/t691.XXXXXX) || fail "cannot make a directory for tmux"
sock=$tdir/tmux.sock
cleanup_tmux() { tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$tdir"; }
at_exit cleanup_tmux
# The local shell: its terminal's settings before and after each srun.
printf '%s\nexport PATH=%q PS1=%q\ncd %q\nstty -g >%q\n' \
	"$ALICE_ENV" "$PATH" 'local$ ' "$W" "$T/stty.before" >"$T/tmux.sh"
SHELL=/bin/sh tmux -S "$sock" new-session -d -x 120 -y 40 "bash --rcfile $T/tmux.sh -i; sleep 600" ||
	fail "tmux did not start"
# The pane's whole history, not just what shows.
pane() { tmux -S "$sock" capture-pane -p -S -200 -t 0 >"$T/pane" 2>/dev/null; }
pane_has() { pane; grep -q -- "$1" "$T/pane"; }
keys() { tmux -S "$sock" send-keys -t 0 "$@"; }
wait_for 30 pane_has '^local\$' || fail "no local prompt in tmux: $(cat "$T/pane")"

remote_shell() {
	keys "PS1='remote\$ ' srun --jobid $jid -N1 -w node01 --pty bash --norc -i; echo rc=\$?; stty -g >$T/stty.after" Enter
	wait_for 60 pane_has '^remote\$' || fail "no remote prompt: $(cat "$T/pane")"
}

remote_shell
keys 'tty; echo host=$SLURMD_NODENAME; stty size' Enter
wait_for 30 pane_has '^/dev/pts/' || fail "the task's stdin is not a pty: $(cat "$T/pane")"
wait_for 30 pane_has '^host=node01' || fail "no host line: $(cat "$T/pane")"
wait_for 30 pane_has '^40 120' || fail "the remote window is not 40 x 120: $(cat "$T/pane")"

# A resize reaches the remote terminal (SIGWINCH to srun, then to it).
tmux -S "$sock" resize-window -t 0 -x 100 -y 30 || fail "tmux cannot resize"
keys 'stty size' Enter
wait_for 30 pane_has '^30 100' || fail "the resize did not reach the remote terminal: $(cat "$T/pane")"

# Ctrl-C interrupts the remote sleep; the remote shell goes on.
keys 'sleep 6061; echo slept' Enter
wait_for 30 pgrep -x -f 'sleep 6061' >/dev/null || fail "the remote sleep did not start"
keys C-c
keys 'echo after-$((6*7))' Enter
wait_for 30 pane_has '^after-42' || fail "Ctrl-C did not interrupt the remote sleep: $(cat "$T/pane")"
pane_has '^slept' && fail "the sleep ran to its end: Ctrl-C reached srun, not the remote shell"
pgrep -x -f 'sleep 6061' >/dev/null && fail "the remote sleep outlived Ctrl-C"

# Attach: bob may not; alice sees the session and types into it.
( as_user "$C" bob; expect_exit 1 cohort attach --input "$jid.$(($(sacct -j "$jid" -n -o JobID 2>/dev/null | grep -c "^$jid\.[0-9]") - 1))" </dev/null; stderr_has 'not yours' ) ||
	fail "bob attached to alice's step"
sid=$(sacct -j "$jid" -n -P -o JobID,State | sed -n "s/^$jid\.\([0-9]*\)|RUNNING$/\1/p" | tail -n 1)
[ -n "$sid" ] || fail "no running step of job $jid in sacct"
( as_user "$C" bob; expect_exit 1 cohort attach "$jid.$sid" </dev/null; stderr_has 'not yours' ) ||
	fail "bob attached to alice's step $jid.$sid"
mkfifo "$T/keys" || fail "mkfifo"
cohort attach -i "$jid.$sid" <"$T/keys" >"$T/attach.out" 2>"$T/attach.err" &
apid=$!
exec 7>"$T/keys"
wait_for 30 grep -q 'attached to StepId' "$T/attach.err" || fail "attach did not start: $(cat "$T/attach.err")"
printf 'echo via-attach-$((6*7))\n' >&7
wait_for 30 pane_has '^via-attach-42' || fail "the attached input did not reach the session: $(cat "$T/pane")"
wait_for 30 grep -q 'via-attach-42' "$T/attach.out" || fail "attach did not show the session's output: $(cat "$T/attach.out")"
grep -q 'after-42' "$T/attach.out" || fail "attach did not show the output from the step's start"

# exit 3: srun's code; the local terminal is back as it was.
keys 'exit 3' Enter
wait_for 30 pane_has '^rc=3' || fail "srun --pty did not exit 3: $(cat "$T/pane")"
wait_for 30 not proc_alive "$apid" || fail "attach went on after the step ended"
exec 7>&-
rc=0; wait "$apid" || rc=$?
[ "$rc" = 3 ] || fail "attach exited $rc, not the step's 3"
wait_for 30 test -s "$T/stty.after" || fail "no stty after srun"
cmp -s "$T/stty.before" "$T/stty.after" ||
	fail "the local terminal was left changed: $(cat "$T/stty.before") vs $(cat "$T/stty.after")"

# The agent under a session killed: srun ends saying so, and the
# terminal is restored.
# The first session's rc=3 must not answer the wait for this one's end:
# the screen and its history are cleared first.
rm -f "$T/stty.after"
keys clear Enter
_pane_cleared() { tmux -S "$sock" clear-history -t 0 && ! pane_has '^rc='; }
wait_for 30 _pane_cleared || fail "the pane still shows an rc= line: $(cat "$T/pane")"
remote_shell
kill -9 "$(cat "$C/node01.pid")" || fail "cannot kill node01's agent"
wait_for 120 pane_has '^rc=' || fail "srun --pty went on after its node's agent died: $(cat "$T/pane")"
wait_for 30 test -s "$T/stty.after" || fail "no stty after srun"
cmp -s "$T/stty.before" "$T/stty.after" ||
	fail "the terminal was left changed after the agent died: $(cat "$T/stty.after")"
grep -q 'srun: error: .*node' "$T/pane" || fail "srun said nothing of its node: $(cat "$T/pane")"

# cohort run --pty: an allocation of its own, the command on a terminal
# of its node, its exit code cohort run's, the allocation released.
rm -f "$T/stty.after"
keys "clear; PS1='run\$ ' cohort run --pty -N 1 --gpus-per-node 0 -- bash --norc -i; echo rc=\$?; stty -g >$T/stty.after" Enter
wait_for 60 pane_has '^run\$' || fail "no prompt from cohort run --pty: $(cat "$T/pane")"
keys 'tty; echo on-$SLURMD_NODENAME; exit 4' Enter
wait_for 30 pane_has '^rc=4' || fail "cohort run --pty did not exit 4: $(cat "$T/pane")"
grep -q '^/dev/pts/' "$T/pane" && grep -q '^on-node02' "$T/pane" ||
	fail "cohort run --pty's command was not on a terminal of node02: $(cat "$T/pane")"
grep -q 'Relinquishing job allocation' "$T/pane" || fail "cohort run --pty did not release its allocation"
wait_for 30 test -s "$T/stty.after" || fail "no stty after cohort run --pty"
cmp -s "$T/stty.before" "$T/stty.after" || fail "cohort run --pty left the terminal changed"
exit 0
