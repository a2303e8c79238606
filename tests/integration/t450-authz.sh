#!/bin/bash
# The authorization matrix's tour through real daemons and TLS. The whole
# matrix (every message of the dispatch table, daemon/controller/rpc/
# rpc.c, by eight kinds of identity, each refusal changing nothing) is
# tests/unit/check_rpc.c's, in milliseconds; here a row of each kind
# (read, a user's own job, an admin's, an agent's, a task exit only the
# job's node may report, a reply nobody asked for) is sent by each
# identity a certificate gives: alice (a user, owner of the target job),
# bob (another user), an admin, the agent of the job's node and the
# agent of another node. Each cell is one request through the independent client
# (pyclient send), on a connection of its own; it is allowed (the reply
# the row names) or refused (ERROR_DENIED, or ERROR_PROTOCOL for a reply
# nobody asked for) as the table below says, and a refused request
# changes nothing (jobs and their states, nodes and their drains).
#
# Adding an identity is one entry in IDS (and a column in each row);
# adding a message is one row.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: Forged node reports are refused; the agent is displaced by the test's connections as node01.
expect_log_error 'cohortd: warning: node node02: refused \(task_exit\): job [0-9]+ attempt [0-9]+ rank [0-9]+ runs elsewhere'
expect_log_error 'cohortd: warning: node node02: DOWN: no heartbeat'
expect_log_error 'cohort-agent: warning: controller: this node registered again on a newer connection'
need_python_protobuf

C=$T/cluster
# node01 runs the jobs; node02 has a certificate but no agent, so that its
# agent's cells come from a stolen certificate, not a running agent.
# node02 is meant to go DOWN (the DeleteNode row).
COHORT_LOCAL_NODE_TIMEOUT=5s cluster_up "$C" --nodes 2 --gpus 4 --no-agents
cohort-local start "$C" node01 >/dev/null 2>&1 || fail "cannot start node01's agent"
wait_node 20 node01 'n["state"] == "UP"'
W=$(world_dir work)

# Identities: column name, then certificate base name in $C.
IDS=(alice bob admin agent other)
declare -A CERT=(
	[alice]=user-alice [bob]=user-bob [admin]=admin-ops
	[agent]=agent-node01 [other]=agent-node02
)
declare -A IS_AGENT=([agent]=1 [other]=1)

# A running job of alice's on node01, and its launch attempt (from the
# agent's spool, SPOOL/jobs/JOB.ATTEMPT).
running_job() {
	local id d
	id=$(job_submit --name authz --gpus-per-node 1 --workdir "$W" -- sleep 600)
	wait_state 20 "$id" RUNNING
	wait_for 10 eval "ls -d '$C'/node01/spool/jobs/$id.* >/dev/null 2>&1" ||
		fail "job $id has no spool directory on node01"
	d=$(ls -d "$C"/node01/spool/jobs/"$id".* | head -n 1)
	printf '%s %s\n' "$id" "${d##*.}"
}
# A pending job of alice's that does not start (held).
pending_job() {
	job_submit --name authz-pending --hold -- true
}

read -r J JATTEMPT <<<"$(running_job)"
[ -n "${JATTEMPT:-}" ] || fail "no running job to aim at"

# What a refused request must leave as it was: every job's state and
# restarts, every node's drain. (Taken some 200 times: the admin's
# settings are read once, and one Python reads both listings.)
ADMIN_ENV=$(cohort-local env "$C" --as admin) || fail "cohort-local env --as admin failed"
snapshot() {
	(
		eval "$ADMIN_ENV"
		cohort jobs --all --json >"$T/snap-jobs.json" || exit 1
		cohort nodes --json >"$T/snap-nodes.json" || exit 1
	) || fail "snapshot: cohort jobs/nodes failed"
	"$PYTHON" - "$T/snap-jobs.json" "$T/snap-nodes.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = json.load(open(sys.argv[2]))
print(json.dumps(sorted((x["id"], x["state"], x.get("restarts")) for x in j["jobs"])))
print(json.dumps(sorted((x["name"], x["drain"]) for x in n["nodes"])))
PY
}

# Per-row set-up, run before each cell: prints the target job id (and
# attempt) the row's body may use as $TJ / $TA.
setup_none() { echo "$J $JATTEMPT"; }
# A cell that may cancel gets a job of its own; a refused one aims at J.
setup_cancel() { if [ "$1" = ok ]; then echo "$(pending_job) 0"; else setup_none; fi; }
# A cell that may end a task gets a running job of its own.
setup_exit() { if [ "$1" = ok ]; then running_job; else setup_none; fi; }
# Resume acts on a drained node: drain node01 first (as admin).
setup_drained() {
	(as_user "$C" admin && cohort drain node01 --reason authz-setup >/dev/null 2>&1) || true
	node_expr node01 'n["drain"] is not None' || fail "cannot drain node01 for the resume row"
	setup_none
}

# DeleteNode removes a DOWN node: node02, whose stolen certificate
# registered in the rows above, once its connection is gone.
setup_down() {
	if [ "$1" = ok ]; then
		wait_node 30 node02 'n["state"] == "DOWN"' || fail "node02 is not DOWN for the delete row"
	fi
	setup_none
}

# The matrix. Columns: ROW (the message), TYPE (its Envelope body field),
# OK (the reply an allowed request gets; "none" when it has none), SETUP,
# FLAGS for pyclient send (comma-separated: no-hello, register and probe,
# the last two for agents only), BODY (JSON; $TJ/$TA the set-up's job and
# attempt, $CN the sender's certificate name), then one expected outcome
# per identity in IDS order: ok, DENIED or PROTOCOL.
#
# GetJob by bob is allowed but shows no private data (t430 checks
# that); Hold and Requeue answer per job inside their reply (which
# job of whose each may touch: t610), so the matrix aims them at no job; Logs are private data (owner and admins only); an agent's TaskExit counts only for a rank its node holds in
# the job's current attempt (node02 holds none: DENIED).
MATRIX=$(cat <<'EOF'
Hello       hello        hello_reply    setup_none    no-hello       {"major":1,"minor":0}                                   ok       ok       ok       ok       ok
Submit      submit       submit_reply   setup_none    -              {"spec":{"name":"m","hold":true,"argv":["true"]}}      ok       ok       ok       DENIED   DENIED
GetJob      get_job      get_job_reply  setup_none    -              {"jobId":$TJ}                                           ok       ok       ok       DENIED   DENIED
Cancel      cancel       cancel_reply   setup_cancel  -              {"jobId":$TJ}                                           ok       DENIED   ok       DENIED   DENIED
Logs        logs         logs_reply     setup_none    -              {"jobId":$TJ}                                           ok       DENIED   ok       DENIED   DENIED
Drain       drain        drain_reply    setup_none    -              {"nodes":["node01"],"reason":"authz"}                   DENIED   DENIED   ok       DENIED   DENIED
Resume      resume       resume_reply   setup_drained -              {"nodes":["node01"]}                                    DENIED   DENIED   ok       DENIED   DENIED
Register    register     register_reply setup_none    -              {"name":"$CN","inventory":{"source":"simulated"}}      DENIED   DENIED   DENIED   ok       ok
Heartbeat   heartbeat    none           setup_none    register,probe {}                                                      DENIED   DENIED   DENIED   ok       ok
TaskExit    task_exit    task_exit_ack  setup_exit    register       {"jobId":$TJ,"restart":$TA,"rank":0,"waitStatus":0}     DENIED   DENIED   DENIED   ok       DENIED
DeleteNode  delete_node  delete_node_reply setup_down -              {"name":"node02"}                                       DENIED   DENIED   ok       DENIED   DENIED
Error       error        -              setup_none    -              {"code":"ERROR_INTERNAL","text":"unasked"}              PROTOCOL PROTOCOL PROTOCOL PROTOCOL PROTOCOL
LaunchReply launch_reply -              setup_none    -              {"jobId":$TJ,"restart":$TA}                             PROTOCOL PROTOCOL PROTOCOL PROTOCOL PROTOCOL
EOF
)

rows=0 cells=0 bad=0
header=$(printf '%-13s' "")
for id in "${IDS[@]}"; do header+=$(printf ' %-9s' "$id"); done
echo "$header"
while read -r row type okword setup flags body expect; do
	[ -n "$row" ] || continue
	read -r -a want <<<"$expect"
	[ "${#want[@]}" = "${#IDS[@]}" ] ||
		fail "matrix row $row: ${#want[@]} outcomes for ${#IDS[@]} identities"
	line=$(printf '%-13s' "$row")
	for k in "${!IDS[@]}"; do
		id=${IDS[$k]}
		exp=${want[$k]}
		read -r TJ TA <<<"$("$setup" "$exp")"
		[ -n "${TA:-}" ] || fail "$row as $id: set-up $setup failed"
		CN=${CERT[$id]#*-}
		json=${body//\$TJ/$TJ}
		json=${json//\$TA/$TA}
		json=${json//\$CN/$CN}
		args=(--cert "$C/${CERT[$id]}.crt" --key "$C/${CERT[$id]}.key" send "$type" --json "$json" --wait 5)
		case ",$flags," in *,no-hello,*) args+=(--no-hello) ;; esac
		if [ -n "${IS_AGENT[$id]:-}" ]; then
			case ",$flags," in *,register,*) args+=(--register) ;; esac
			case ",$flags," in *,probe,*) args+=(--probe) ;; esac
		fi
		before=$(snapshot)
		got=$(pyclient "${args[@]}" 2>"$T/cell.err") ||
			fail "$row as $id: pyclient failed: $(cat "$T/cell.err")"
		case "$exp" in
		ok) ok=$okword ;;
		*) ok=ERROR_$exp ;;
		esac
		if [ "$got" = "$ok" ]; then
			mark=$exp
		else
			mark="!$got"
			bad=$((bad + 1))
			echo "MISMATCH: $row as $id: expected $ok, got $got ($(cat "$T/cell.err"))"
		fi
		if [ "$exp" != ok ] && [ "$(snapshot)" != "$before" ]; then
			mark="!changed"
			bad=$((bad + 1))
			echo "MISMATCH: $row as $id was refused but changed something:"
			diff <(echo "$before") <(snapshot) || true
		fi
		line+=$(printf ' %-9s' "$mark")
		cells=$((cells + 1))
	done
	echo "$line"
	rows=$((rows + 1))
	# Leave node01 in service for the rows after (drain/resume rows).
	if [ "$row" = Drain ] || [ "$row" = Resume ]; then
		(as_user "$C" admin && cohort resume node01 >/dev/null 2>&1) || true
	fi
done <<<"$MATRIX"
echo "authorization matrix: $rows rows x ${#IDS[@]} identities = $cells cells, $bad mismatches"
[ "$cells" = $((rows * ${#IDS[@]})) ] || fail "counted $cells cells for $rows rows"
[ "$rows" -ge 13 ] || fail "only $rows rows in the matrix"
[ "$bad" = 0 ] || fail "$bad cells of the authorization matrix are wrong"

# Refusals are logged within a budget, however many a peer sends: at
# most 20 lines per 10 s window (lib/ratelim.c's unit tests check the
# windows themselves, in check_reports). Bob's drains, each on a connection of its own, in
# bursts of 60 through pyclient (milliseconds a request), until more
# were sent than the budget of the time they took: a burst of E ms
# meets at most E/10000 + 2 windows, so at most 20 * (E/10000 + 2)
# lines. Sending past that bound, however slow the machine, is what
# makes the check able to fail: a limiter that logged every refusal
# would exceed it.
lines0=$(wc -l <"$C/cohortd.log")
start=$(_now_us)
sent=0
while :; do
	got=$(pyclient --cert "$C/user-bob.crt" --key "$C/user-bob.key" send drain \
		--json '{"nodes":["node01"],"reason":"authz-burst"}' --wait 5 --repeat 60 2>"$T/burst.err") ||
		fail "bob's burst of drains: pyclient failed: $(cat "$T/burst.err")"
	[ "$got" = ERROR_DENIED=60 ] || fail "bob's 60 drains were answered '$got', not ERROR_DENIED=60"
	sent=$((sent + 60))
	took=$((($(_now_us) - start) / 1000))
	most=$((20 * (took / 10000 + 2)))
	[ "$sent" -le "$most" ] || break
	[ "$sent" -lt 1200 ] || fail "1200 refused drains took $took ms: too slow to exceed the log budget"
done
nlines=$(tail -n +"$((lines0 + 1))" "$C/cohortd.log" | grep -c 'request refused' || true)
log "$sent refused requests in $took ms wrote $nlines log lines (budget: $most)"
[ "$nlines" -le "$most" ] ||
	fail "$sent refused requests in $took ms wrote $nlines log lines, more than 20 per 10 s window ($most)"
as_user "$C" alice

# The controller still serves; the job the refused requests aimed at is
# still alice's and running.
expect_exit 0 cohort show "$J" --json
[ "$(json_get "$OUT" 'd["state"]')" = RUNNING ] || fail "job $J is no longer RUNNING"
exit 0
