#!/bin/bash
# The HTTP listener admits a bounded number of connections: 2,000 idle
# TCP connections to the status page's port (a flood from anyone who can
# reach it) leave the controller holding at most the cap (64, see
# cohortd.conf(5), [http]) of them; the rest wait in the kernel's backlog.
#  (a) while the flood lasts, the controller's descriptors stay under what
#      it held before plus the cap and a margin;
#  (b) `cohort jobs` and a submit work and the node stays UP (the RPC
#      port still accepts);
#  (c) once the flood is gone, / and /metrics answer again, over
#      HTTP/1.1 and HTTP/1.0 (the reply is complete when the controller
#      closes the connection right after it);
#  (d) three times the cap of requests in a row, each on a connection of
#      its own, all succeed: a closed connection gives its slot back.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
command -v curl >/dev/null || { echo "SKIP: $TEST_NAME needs curl"; exit 77; }
CAP=64		# HTTP_MAX_CONNS in daemon/controller/web/http.h
MARGIN=32	# descriptors the rest of the controller may open meanwhile
FLOOD=2000

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
[ -n "${COHORT_HTTP:-}" ] || fail "cohort-local up printed no COHORT_HTTP"
hp=${COHORT_HTTP#http://}
pid=$(tr -dc 0-9 <"$C/cohortd.pid")
[ -d "/proc/$pid/fd" ] || fail "no controller process $pid"
fds() {
	find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}
# metric NAME: its value in /metrics, or nothing.
metric() {
	curl -fsS -m 10 "$COHORT_HTTP/metrics" 2>/dev/null |
		awk -v m="$1" '$1 == m { print $2; exit }'
}
node_up() {
	cohort nodes --json >"$T/nodes.json" 2>/dev/null &&
		[ "$(json_get "$T/nodes.json" '" ".join(n["state"] for n in d["nodes"])')" = UP ]
}
wait_for 20 node_up || fail "the node is not UP before the flood"
W=$(world_dir work)
expect_exit 0 curl -fsS -o /dev/null "$COHORT_HTTP/metrics"
base=$(fds)
limit=$((base + CAP + MARGIN))

# The flood: non-blocking connects that never send a byte, held until
# killed. Its own descriptor limit raised to fit them.
"$PYTHON" - "${hp%:*}" "${hp##*:}" "$FLOOD" "$T/flood.ready" >"$T/flood.out" 2>&1 <<'PY' &
import resource, socket, sys, time
host, port, n, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY:
    n = min(n, hard - 64)
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64 if hard == resource.RLIM_INFINITY else min(n + 64, hard), hard))
socks = []
for i in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex((host, port))
    socks.append(s)
open(ready, "w").write("%d\n" % n)
while True:
    time.sleep(60)
PY
flood=$!
track_pid "$flood"
wait_for 30 test -s "$T/flood.ready" || fail "the flood did not start: $(cat "$T/flood.out")"
opened=$(cat "$T/flood.ready")
[ "$opened" -gt $((4 * CAP)) ] || fail "the flood opened only $opened connections"

# (a) Until the controller is full (it stopped accepting), and then
# around every check below, its descriptors stay under the limit.
max=0
check_fds() {
	local n
	n=$(fds)
	[ "$n" -le "$max" ] || max=$n
	[ "$n" -le "$limit" ] ||
		fail "(a) the controller holds $n descriptors during the flood of $opened connections: over $base before it + $CAP + $MARGIN by $((n - limit))"
}
# Full: it holds about the cap (/metrics cannot say so: it waits in the
# backlog too).
full() {
	check_fds
	[ "$(fds)" -ge $((base + CAP - 8)) ]
}
deadline=$(($(_now_us) + 30000000))
until full; do
	[ "$(_now_us)" -lt "$deadline" ] ||
		fail "(a) the controller never held $CAP HTTP connections; it holds $(fds) descriptors ($base before the flood)"
	sleep 0.1
done
check_fds

# (b) The RPC port is served.
expect_exit 0 timeout 20 cohort jobs
check_fds
id=$(job_submit --name flood --nodes 1 --workdir "$W" -- true)
wait_state 20 "$id" COMPLETED
check_fds
node_up || fail "(b) the node is not UP during the flood: $(cat "$T/nodes.json")"
check_fds
proc_alive "$flood" || fail "the flood ended before the checks did: $(cat "$T/flood.out")"
kill "$flood"
wait "$flood" 2>/dev/null || true

# (c) The page and the metrics answer again.
page_ok() {
	curl -fsS -m 10 -o "$T/page.html" "$COHORT_HTTP/" &&
		grep -q '</html>' "$T/page.html"
}
wait_for 30 page_ok || fail "(c) the status page does not answer after the flood"
expect_exit 0 curl -fsS -m 10 "$COHORT_HTTP/metrics"
grep -q '^cohort_http_connections ' "$OUT" || fail "(c) /metrics lacks cohort_http_connections"
pauses=$(awk '$1 == "cohort_http_accept_pauses_total" { print $2 }' "$OUT")
[ "${pauses:-0}" -ge 1 ] || fail "(c) cohort_http_accept_pauses_total is '${pauses:-}' after the flood filled the cap"
log "flood of $opened: at most $max descriptors (limit $limit), accepting paused $pauses times"
expect_exit 0 curl -fsS -m 10 --http1.0 -o "$T/page10.html" "$COHORT_HTTP/"
grep -q '</html>' "$T/page10.html" || fail "(c) the HTTP/1.0 page is cut short: $(tail -c 200 "$T/page10.html")"

# (d) Sequential requests, a connection each, closed by the controller
# after the reply (Connection: close); each reply whole (urllib checks
# Content-Length).
"$PYTHON" - "$COHORT_HTTP" $((3 * CAP)) >"$T/seq.out" 2>&1 <<'PY' || fail "(d) sequential requests: $(tail -n 5 "$T/seq.out")"
import sys, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    path = "/metrics" if i % 2 else "/"
    r = urllib.request.Request(url + path, headers={"Connection": "close"})
    body = urllib.request.urlopen(r, timeout=10).read()
    if path == "/" and b"</html>" not in body:
        sys.exit("request %d: %s cut short (%d bytes)" % (i, path, len(body)))
print("%d requests" % n)
PY
n=$(metric cohort_http_connections)
[ "${n:-99}" -le 2 ] || fail "(d) $n HTTP connections still counted after the requests"
exit 0
