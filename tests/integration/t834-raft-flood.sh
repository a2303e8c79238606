#!/bin/bash
# The Raft port admits as the RPC port does. Certificate-less TCP
# connections that never start TLS, reopened as soon as they are dropped,
# flood the Raft ports of both followers (all from 127.0.0.1, like the
# replicas themselves); the leader is then killed. The followers must
# still elect a new leader, and a submit must be acknowledged, within
# t830's failover bound while the flood goes on: a newcomer evicts the
# oldest silent handshake instead of being refused when the slots are
# full, so the flood cannot keep the replicas' own streams out. A second
# flood comes from 127.0.0.2, no replica's address: it is closed before
# TLS, takes no slot, and the listeners say so.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# What the flood makes the followers say (rate-limited).
expect_log_error 'cohortd: warning: raft listener: '
SERVE_BOUND_S=15         # as t830: kill -> a submit acknowledged
FLOOD_CONNS=300          # per port: more than its 64 handshake slots

C=$T/cluster
cluster_up "$C" --controllers 3 --no-agents
old=$(ctl_leader "$C")
# DIR/controllers: "K HOST:PORT HOST:RAFTPORT [NETNS]" per replica.
ports=$(awk -v old="$old" '$1 != old { sub(/.*:/, "", $3); print $3 }' "$C/controllers")
[ "$(echo "$ports" | wc -w)" = 2 ] || fail "not two followers' Raft ports in $C/controllers: $(cat "$C/controllers")"

floods=()
for p in $ports; do
	COHORT_SERVER=127.0.0.1:$p "$PYTHON" "$PYCLIENT" flood --seconds 600 \
		--conns "$FLOOD_CONNS" >"$T/flood-$p.out" 2>"$T/flood-$p.err" &
	floods+=("$!")
	track_pid "$!"
	COHORT_SERVER=127.0.0.1:$p "$PYTHON" "$PYCLIENT" flood --seconds 600 \
		--conns "$FLOOD_CONNS" --source 127.0.0.2 >"$T/stranger-$p.out" \
		2>"$T/stranger-$p.err" &
	floods+=("$!")
	track_pid "$!"
done
# The flood holds every slot once each follower's listener turns
# connections away (it says so in its log).
_flooded() {
	local k
	for k in 1 2 3; do
		[ "$k" = "$old" ] && continue
		grep -q 'raft listener: ' "$C/ctl$k/cohortd.log" || return 1
	done
}
wait_for 30 _flooded || fail "the flood filled no Raft listener: $(cat "$T"/flood-*.err)"
_strangers_refused() {
	local k
	for k in 1 2 3; do
		[ "$k" = "$old" ] && continue
		grep -q "raft listener: refused 127.0.0.2: not a replica's address" \
			"$C/ctl$k/cohortd.log" || return 1
	done
}
wait_for 30 _strangers_refused ||
	fail "a follower did not refuse connections from 127.0.0.2 as a non-member: $(cat "$T"/stranger-*.err)"

pid=$(cat "$C/ctl$old/cohortd.pid")
kill -9 "$pid"
wait_for 10 proc_gone "$pid" || fail "replica $old (pid $pid) outlived kill -9"
_submitted() {
	timeout 10 cohort submit -J after-kill -- true >"$T/submit.out" 2>"$T/submit.err"
}
wait_for "$SERVE_BOUND_S" _submitted ||
	fail "no submit acknowledged within ${SERVE_BOUND_S}s of killing leader $old under the flood: $(cat "$T/submit.err")"
new=$(ctl_leader "$C" 1)
[ "$new" != "$old" ] || fail "replica $old leads again, but it was killed"
for f in "${floods[@]}"; do
	proc_alive "$f" || fail "a flood ended before the election: $(cat "$T"/flood-*.err "$T"/stranger-*.err)"
done
log "leader $old killed under a flood of $FLOOD_CONNS connections per follower; replica $new elected, submit $(cat "$T/submit.out") acknowledged"
exit 0
