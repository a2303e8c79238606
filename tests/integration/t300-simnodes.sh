#!/bin/bash
# cohort-simnodes: 50 simulated nodes in one process against a real
# controller. They register under the topology the program writes, gang
# jobs of 1-16 nodes run on them and complete, a --topology leaf job stays
# under one leaf, a simulated crash (SIGUSR1) restarts the job that ran
# there, and SIGTERM stops the program cleanly.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the node this test crashes (SIGUSR1)
# goes DOWN, and its job restarts.
expect_log_error 'cohortd: warning: node node[0-9]+: DOWN: no heartbeat'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*went DOWN \(no heartbeat'

SIM=$top_builddir/cohort-simnodes
[ -x "$SIM" ] || fail "$SIM is not built"
C=$T/cluster
N=50
mkdir -p "$C"
cohort-pki "$C" --controller 127.0.0.1 --admins ops --users alice \
	>"$T/pki.out" 2>&1 || fail "cohort-pki: $(cat "$T/pki.out")"

# The topology: eight nodes per leaf, node01..node50.
expect_exit 0 "$SIM" --nodes "$N" --write-topology "$C/topology.conf" \
	--nodes-per-leaf 8
grep -qx 'SwitchName=leaf0 Nodes=node\[01-08\]' "$C/topology.conf" ||
	fail "unexpected topology: $(cat "$C/topology.conf")"
grep -qx 'SwitchName=leaf6 Nodes=node\[49-50\]' "$C/topology.conf" ||
	fail "unexpected last leaf: $(cat "$C/topology.conf")"

cat >"$C/cohortd.conf" <<EOF
[controller]
listen = 127.0.0.1:0
port_file = cohortd.port
database = cohort.db
topology = topology.conf
node_timeout = 3s
heartbeat_interval = 500ms
[tls]
ca = ca.pem
cert = controller.crt
key = controller.key
[limits]
max_connections = 256
EOF
watch_log "$C/cohortd.log"
watch_log "$C/sim.log"
cohortd -c "$C/cohortd.conf" -f >"$C/cohortd.log" 2>&1 &
track_pid $!
wait_for 10 test -s "$C/cohortd.port" || fail "cohortd wrote no port file"
PORT=$(tr -dc 0-9 <"$C/cohortd.port")

"$SIM" --server "127.0.0.1:$PORT" --ca "$C/ca.pem" --ca-key "$C/ca.key" \
	--nodes "$N" --task-seconds 1 --stats 0 >"$C/sim.out" 2>"$C/sim.log" &
SIMPID=$!
track_pid "$SIMPID"
wait_for 30 grep -q "^ready $N nodes registered" "$C/sim.out" ||
	fail "not all $N nodes registered: $(cat "$C/sim.out")"
grep -q "^minted $N certificates" "$C/sim.out" || fail "no minting line"

export COHORT_SERVER=127.0.0.1:$PORT COHORT_CA=$C/ca.pem \
	COHORT_CERT=$C/admin-ops.crt COHORT_KEY=$C/admin-ops.key
cohort nodes --json >"$T/nodes.json" || fail "cohort nodes --json failed"
[ "$(json_get "$T/nodes.json" 'len([n for n in d["nodes"] if n["state"] == "UP"])')" = "$N" ] ||
	fail "not $N nodes UP: $(head -c 2000 "$T/nodes.json")"
[ "$(json_get "$T/nodes.json" '[n for n in d["nodes"] if n["name"] == "node09"][0]["switch"]')" = leaf1 ] ||
	fail "node09 is not under leaf1"
[ "$(json_get "$T/nodes.json" '[n for n in d["nodes"] if n["name"] == "node09"][0]["gpus_total"]')" = 8 ] ||
	fail "node09 does not have 8 GPUs"

# Gang jobs of several sizes complete.
ids=()
for n in 1 2 4 8 16 16; do
	ids+=("$(job_submit --nodes "$n" --gpus-per-node 8 -- train)")
done
leaf=$(job_submit --nodes 8 --topology leaf --env SIM_SECONDS=3 -- train)
wait_state 20 "$leaf" RUNNING COMPLETED
ids+=("$leaf")
# All eight under one leaf: the leaves hold node01-08, node09-16, ...
leaves=$(json_get "$T/job-$leaf.json" '" ".join(sorted(set(str((int(p["node"][4:]) - 1) // 8) for p in d["placement"])))')
[ "$(json_get "$T/job-$leaf.json" 'len(d["placement"])')" = 8 ] ||
	fail "leaf job placement: $(json_get "$T/job-$leaf.json" 'd["placement"]')"
[ "$(echo "$leaves" | wc -w)" = 1 ] || fail "leaf job spans leaves $leaves"
for id in "${ids[@]}"; do
	wait_state 30 "$id" COMPLETED
done

# A simulated crash under a running job: the node goes DOWN after
# node_timeout and the job runs again elsewhere.
long=$(job_submit --nodes 2 --env SIM_SECONDS=600 -- train)
wait_state 20 "$long" RUNNING
kill -USR1 "$SIMPID"
wait_for 5 grep -q "^crash node[0-9]* time_ms [0-9]* jobs $long\$" "$C/sim.out" ||
	fail "no crash line for job $long: $(cat "$C/sim.out")"
crashed=$(sed -n "s/^crash \(node[0-9]*\) .* jobs $long\$/\1/p" "$C/sim.out")
wait_node 15 "$crashed" 'n["state"] == "DOWN"'
wait_job 20 "$long" 'd["state"] == "RUNNING" and d["restarts"] >= 1'
json_get "$T/job-$long.json" '[p["node"] for p in d["placement"]]' | grep -q "$crashed" &&
	fail "job $long restarted on the crashed node $crashed"
# SIGUSR2 brings it back.
kill -USR2 "$SIMPID"
wait_node 15 "$crashed" 'n["state"] == "UP"'

# Stop cancels the simulated ranks, which report SIGTERM.
expect_exit 0 cohort cancel "$long"
wait_state 10 "$long" CANCELLED

# SIGTERM: a clean stop, with a last stats line.
kill -TERM "$SIMPID"
wait_for 10 proc_gone "$SIMPID" || fail "cohort-simnodes did not stop on SIGTERM"
rc=0
wait "$SIMPID" || rc=$?
[ "$rc" -eq 0 ] || fail "cohort-simnodes exited $rc"
grep -q '^stats .*ready=' "$C/sim.out" || fail "no final stats line"
echo "ok: $N simulated nodes, ${#ids[@]} gang jobs, one crash"
