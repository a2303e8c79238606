#!/bin/bash
# Log reads waiting on an agent count toward the connection's limits from
# the moment they are forwarded: a client that pipelines hundreds of
# LogsRequests for a job with 1 MiB of output and reads none of the
# answers is stopped being read once ~16 MiB are owed to it, so the
# controller's memory stays flat (it grew by the whole output times the
# requests before), and the answers all come once it reads.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf
export COHORT_MUX=no
C=$T/cluster
# Under AddressSanitizer freed replies wait in its quarantine and would
# count as held: none, so that RSS measures what is really kept.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
export ASAN_OPTIONS
cluster_up "$C" --nodes 1 --gpus 1
as_user "$C" alice
W=$(world_dir out)
id=$(job_submit --name big --nodes 1 --workdir "$W" -- sh -c 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1100000; sleep 600')
wait_state 30 "$id" RUNNING
log_full() { [ "$(cohort logs "$id" 2>/dev/null | wc -c)" -ge 1048576 ]; }
wait_for 30 log_full || fail "job $id's output did not reach 1 MiB"
pid=$(cat "$C/cohortd.pid")
rss0=$(rss_kib "$pid")

N=200
pyclient --timeout 20 logflood --job "$id" --count "$N" --send-s 2 --hold 4 >"$T/flood.out" 2>&1 &
flood=$!
track_pid "$flood"
sent() { grep -q '^sent' "$T/flood.out"; }
wait_for 20 sent || fail "the flood did not start: $(cat "$T/flood.out")"
# While it holds (reads nothing), sample the controller's memory.
max=$rss0
for ((i = 0; i < 15; i++)); do
	r=$(rss_kib "$pid")
	[ "$r" -gt "$max" ] && max=$r
	sleep 0.2
done
grow=$(((max - rss0) / 1024))
echo "controller RSS $((rss0 / 1024)) MiB -> max $((max / 1024)) MiB while $N log reads were pipelined"
[ "$grow" -lt 80 ] || fail "the controller grew by $grow MiB for a client that reads none of its log answers"
# Others are still served meanwhile.
as_user "$C" admin
expect_exit 0 timeout 10 cohort nodes
as_user "$C" alice
wait "$flood" || fail "pyclient logflood: $(cat "$T/flood.out")"
counts=$(tail -n 1 "$T/flood.out")
echo "answers: $counts"
# Every request answered once reading resumed: data, or a refusal of
# too many reads at once; nothing else.
total=0
for kv in $counts; do
	case "${kv%%=*}" in
	logs_reply | ERROR_LIMIT) total=$((total + ${kv#*=})) ;;
	*) fail "unexpected answer kind in: $counts" ;;
	esac
done
[ "$total" = "$N" ] || fail "$total of $N log reads were answered: $counts"
exit 0
