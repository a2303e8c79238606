#!/bin/bash
# No acknowledged submit is lost when the controller is killed with -9:
# first with the controller idle, then in the middle of a stream of
# concurrent submits.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

N=40
SUBMITTERS=4
PER_SUBMITTER=250        # bound on submits per background submitter
STREAM_S=15              # bound on the stream's duration

C=$T/cluster
cluster_up "$C"

restart_controller() {
	cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
	[ ! -e "$C/cohortd.pid" ] || fail "cohort-local kill left the pid file"
	[ ! -e "$C/cohortd.port" ] || fail "cohort-local kill left the port file"
	expect_exit 3 cohort jobs
	cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
	as_user "$C" alice
}

# present_ids FILE: the ids of cohort jobs --all --json, one a line.
present_ids() {
	expect_exit 0 cohort jobs --all --json
	json_get "$OUT" '"\n".join(str(j["id"]) for j in d["jobs"])' | sort -n >"$1"
}

### 1. N acknowledged submits survive kill -9 with their specs.
: >"$T/want"
for ((i = 1; i <= N; i++)); do
	nodes=$((i % 3 + 1))
	expect_exit 0 cohort submit --name "k9-$i" --nodes "$nodes" --gpus-per-node 2 -- echo "$i"
	printf '%s k9-%s %s\n' "$(cat "$OUT")" "$i" "$nodes" >>"$T/want"
done
restart_controller
expect_exit 0 cohort jobs --all --json
json_get "$OUT" '"\n".join("%s %s %s" % (j["id"], j["name"], j["nodes_min"]) for j in d["jobs"])' |
	sort -n >"$T/got"
sort -n "$T/want" | diff - "$T/got" >"$T/diff" || fail "jobs after kill -9 differ from what was acknowledged: $(cat "$T/diff")"
last_id=$(tail -n 1 "$T/got" | cut -d' ' -f1)
# The details survive too, not only the listing.
expect_exit 0 cohort show "$(head -n 1 "$T/want" | cut -d' ' -f1)" --json
[ "$(json_get "$OUT" '[d["name"], d["gpus_per_node"], d["argv"]]')" = '["k9-1", 2, ["echo", "1"]]' ] ||
	fail "job k9-1 came back as $(cat "$OUT")"

### 2. A concurrent stream of submits, killed midway.
submitter() {
	local k="$1" i id deadline
	trap - EXIT
	deadline=$(($(_now_us) + STREAM_S * 1000000))
	for ((i = 0; i < PER_SUBMITTER; i++)); do
		[ ! -e "$T/stop" ] || break
		[ "$(_now_us)" -lt "$deadline" ] || break
		if id=$(cohort submit --name "s$k-$i" -- true 2>>"$T/submitter-$k.err"); then
			echo "$id" >>"$T/acked.$k"
		else
			sleep 0.02
		fi
	done
}

acked_total() {
	cat "$T"/acked.* 2>/dev/null | wc -l
}

at_least() {
	[ "$(acked_total)" -ge "$1" ]
}

rm -f "$T/stop"
pids=()
for ((k = 1; k <= SUBMITTERS; k++)); do
	: >"$T/acked.$k"
	submitter "$k" &
	pids+=("$!")
	track_pid "$!"
done
wait_for "$STREAM_S" at_least 40 || fail "the submitters got fewer than 40 acks in ${STREAM_S}s"
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
touch "$T/stop"
for p in "${pids[@]}"; do
	wait_for 20 proc_gone "$p" || fail "a submitter did not stop"
	wait "$p" || true
done
acked=$(acked_total)
log "acknowledged before and around the kill: $acked"
cat "$T"/acked.* | sort -n >"$T/acked"
[ -z "$(uniq -d "$T/acked")" ] || fail "the same id was acknowledged twice: $(uniq -d "$T/acked" | head)"
awk -v last="$last_id" '$1 <= last' "$T/acked" | grep -q . && fail "an id from before the first restart was reused"

cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
as_user "$C" alice
present_ids "$T/present"
missing=$(comm -23 <(sort "$T/acked") <(sort "$T/present"))
[ -z "$missing" ] || fail "acknowledged jobs lost by kill -9: $(echo "$missing" | tr '\n' ' ')"
# The first N are still there as well.
missing=$(comm -23 <(cut -d' ' -f1 "$T/want" | sort) <(sort "$T/present"))
[ -z "$missing" ] || fail "jobs of part 1 lost by the second kill -9: $missing"

# New ids keep increasing past everything acknowledged.
expect_exit 0 cohort submit --name after -- true
new_id=$(cat "$OUT")
max_acked=$(tail -n 1 "$T/acked")
[ "$new_id" -gt "$max_acked" ] || fail "new id $new_id is not above the last acknowledged $max_acked"
exit 0
