#!/bin/bash
# The bash completion (completion/cohort), sourced as bash-completion
# would source it, in plain bash:
#  1. commands, a command's options (from its --help), values of --by and
#     help's commands, with no controller;
#  2. job ids for cancel and show, node names for drain, resume and node
#     show, features for --constraint, asked of a real controller, also with the connection given as
#     flags on the command line rather than in the environment;
#  3. a controller that accepts and never answers costs at most
#     COHORT_COMPLETION_TIMEOUT seconds and completes nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v timeout >/dev/null 2>&1 || {
	echo "SKIP: $TEST_NAME needs timeout (coreutils)"
	exit 77
}
# shellcheck source=../../completion/cohort
. "$top_srcdir/completion/cohort"
[[ $(complete -p cohort) == *'-F _cohort'* ]] || fail "the completion does not register _cohort for cohort"

# comp WORD...: COMPREPLY for the command line WORD... (the last one is
# being completed), sorted, one per line, in $T/comp.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_cohort cohort "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' ${COMPREPLY[@]+"${COMPREPLY[@]}"} | sort >"$T/comp"
}
# offers WORD: $T/comp holds WORD; only WORD...: exactly those.
offers() {
	grep -qxF -- "$1" "$T/comp" || fail "completing '${COMP_WORDS[*]}' does not offer '$1': $(tr '\n' ' ' <"$T/comp")"
}
only() {
	printf '%s\n' "$@" | sort | cmp -s - "$T/comp" ||
		fail "completing '${COMP_WORDS[*]}' offers '$(tr '\n' ' ' <"$T/comp")', not '$*'"
}

# ---- 1. offline ------------------------------------------------------------
comp cohort dr
only drain
comp cohort ""
for c in $(cohort --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'); do
	offers "$c"
done
comp cohort submit --
for o in --nodes --gpus-per-node --tasks-per-node --time --checkpoint-dir \
	--array --dependency --export --nodelist --help; do
	offers "$o"
done
comp cohort submit --ti
only --time
comp cohort --ser
only --server
comp cohort logs 1 --
offers --follow
offers --rank
comp cohort help re
only release requeue resume
comp cohort usage --by ""
only user queue state day
comp cohort submit -N 2 -- ba
offers bash
log "offline: commands, options and values"

# ---- 2. against a controller -----------------------------------------------
C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 1
expect_exit 0 cohort submit --hold -- true
ID=$(cat "$OUT")
comp cohort cancel ""
offers "$ID"
comp cohort show ""
offers "$ID"
comp cohort drain ""
only node01 node02
comp cohort resume node0
only node01 node02
comp cohort node ""
only show delete
comp cohort node show n
only node01 node02
# Features for --constraint, derived ones included, also after an
# operator.
comp cohort submit -C ""
only h100 nvidia-h100-80gb-hbm3
comp cohort nodes --constraint 'fp64&h'
only 'fp64&h100'
# The connection as flags only.
S=$COHORT_SERVER CE=$COHORT_CERT K=$COHORT_KEY CA=$COHORT_CA
unset COHORT_SERVER COHORT_CERT COHORT_KEY COHORT_CA
comp cohort cancel ""
only
comp cohort --server "$S" --cert "$CE" --key "$K" --ca "$CA" hold ""
offers "$ID"
comp cohort drain --server "$S" --cert "$CE" --key "$K" --ca "$CA" ""
only node01 node02
log "online: job $ID and both nodes offered"

# ---- 3. a controller that never answers --------------------------------------
"$PYTHON" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept()
    conns.append(c)
' >"$T/silent.port" &
track_pid $!
wait_for 5 test -s "$T/silent.port" || fail "the silent listener did not start"
P=$(cat "$T/silent.port")
t0=$(date +%s%N)
COHORT_COMPLETION_TIMEOUT=1 COHORT_MUX=no \
	comp cohort --server "127.0.0.1:$P" --cert "$CE" --key "$K" --ca "$CA" cancel ""
ms=$((($(date +%s%N) - t0) / 1000000))
only
log "a silent controller: nothing offered, in $ms ms"
