#!/bin/bash
# Connection floods: certificate-less plain TCP connections, reopened
# as soon as they are dropped, used to take every connection slot (they
# sat out the 15 s Hello deadline): the admin was refused and a
# restarting agent could not come back. Here 400 such connections flood a
# controller limited to 300 slots, 128 handshakes and 64 per source (all
# from 127.0.0.1, like the admin and the agents), for as long as the test
# needs. Meanwhile the admin's `cohort nodes` works, and an agent killed
# and restarted reconnects: its node is UP again and its job keeps
# running, never restarted. The evictions show in /metrics.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf
# Each command on its own connection, so each goes through admission.
export COHORT_MUX=no

C=$T/cluster
# The agent restarts below must come back within node_timeout, or the
# job is restarted: 20 s, not the harness's 5 s, which a loaded machine
# (kill, start, hwloc, TLS; 8 s seen) can take.
COHORT_LOCAL_NODE_TIMEOUT=20s cluster_up "$C" --nodes 2 --gpus 4
# The [limits] section is the file's last.
sed -i '/^max_connections = /d' "$C/cohortd.conf"
cat >>"$C/cohortd.conf" <<'CONF'
max_connections = 300
max_handshakes = 128
max_handshakes_per_source = 64
handshake_timeout = 2s
CONF
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill controller: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start controller: $(cat "$T/start.out")"
admin_env=$(cohort-local env "$C" --as admin)
alice_env=$(cohort-local env "$C" --as alice)

# metric NAME{LABELS}: its value in /metrics (0 when absent).
metric() {
	"$PYTHON" - "$(tr -dc 0-9 <"$C/http.port")" "$1" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode()
for line in body.splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(line.split()[-1]); break
else:
    print(0)
PY
}
nodes_up() {
	eval "$admin_env"
	timeout 10 cohort nodes --json >"$T/nodes.json" 2>"$T/nodes.err" || return 1
	[ "$(json_get "$T/nodes.json" 'len([n for n in d["nodes"] if n["state"] == "UP"])')" = "$1" ]
}
wait_for 20 nodes_up 2 || fail "the nodes are not UP after the controller restart: $(cat "$T/nodes.err")"

eval "$alice_env"
W=$(world_dir out)
id=$(job_submit --name steady --nodes 1 --workdir "$W" -- sleep 600)
wait_state 20 "$id" RUNNING
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
wait_pidfiles 10 "$C" "$id" 1
read -r _ pgid <"$(job_pidfiles "$C" "$id")"

"$PYTHON" "$PYCLIENT" flood --seconds 600 --conns 400 >"$T/flood.out" 2>"$T/flood.err" &
flood=$!
track_pid "$flood"
# The flood is on once the controller evicts its handshakes.
_evicting() {
	[ "$(metric 'cohort_connections_refused_total{reason="source"}')" -gt 100 ]
}
wait_for 20 _evicting || fail "the flood made no evictions: $(cat "$T/flood.err")"

# The admin is served, three times over.
eval "$admin_env"
for i in 1 2 3; do
	expect_exit 0 timeout 20 cohort nodes
done
grep -q "$node" "$OUT" || fail "cohort nodes did not list $node: $(cat "$OUT")"

# An agent killed and restarted comes back.
cohort-local kill "$C" "$node" >"$T/kill.out" 2>&1 || fail "cohort-local kill $node: $(cat "$T/kill.out")"
pgid_alive "$pgid" || fail "the task died with its agent"
cohort-local start "$C" "$node" >"$T/start.out" 2>&1 ||
	fail "agent $node could not reconnect during the flood: $(cat "$T/start.out")"
wait_for 20 nodes_up 2 || fail "$node is not UP again during the flood: $(cat "$T/nodes.json")"
proc_alive "$flood" || fail "the flood ended before the checks did: $(cat "$T/flood.out" "$T/flood.err")"
before=$(metric 'cohort_connections_refused_total{reason="source"}')
sleep 1
[ "$(metric 'cohort_connections_refused_total{reason="source"}')" -gt "$before" ] ||
	fail "the flood was no longer evicted when the checks ended"

eval "$alice_env"
job_show "$id"
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = RUNNING ] ||
	fail "job $id is $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]') after the flood"
[ "$(json_get "$T/job-$id.json" 'd.get("restarts", 0)')" -eq 0 ] || fail "job $id was restarted"
pgid_alive "$pgid" || fail "the task of job $id died"
log "evicted by source cap: $(metric 'cohort_connections_refused_total{reason="source"}'), by budget: $(metric 'cohort_connections_refused_total{reason="handshakes"}'), handshakes timed out: $(metric 'cohort_connections_timed_out_total{reason="handshake_timeout"}')"
kill "$flood"
# The log says so, rate-limited: a few lines, not one per eviction.
n=$(grep -c 'handshakes at once; dropping its oldest' "$C/cohortd.log" || true)
[ "$n" -ge 1 ] && [ "$n" -le 30 ] || fail "$n log lines about evictions (want 1..30)"
exit 0
