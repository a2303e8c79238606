#!/bin/bash
# Three vfsuv replicas (option b) on loopback: rates, then FAILOVERS rounds
# of SIGKILL of the leader (and restart of the killed one), then SIGTERM to
# all for the acknowledged-writes check. Usage: run-vfsuv.sh ROWS [FAILOVERS]
cd "$(dirname "$0")"
K=${1:-1}; ROUNDS=${2:-3}
D=$(mktemp -d /tmp/vfsuv.XXXXXX)
P=(x 0 0 0)
start() { ./vfsuv $1 $D/n$1 $K >>$D/n$1.out 2>>$D/n$1.err & P[$1]=$!; }
for i in 1 2 3; do mkdir -p $D/n$i; done
trap 'kill -9 ${P[1]} ${P[2]} ${P[3]} 2>/dev/null; rm -rf $D' EXIT
for i in 1 2 3; do start $i; done
sleep 8
leader() { for i in 1 2 3; do
	l=$(grep -c LEADER $D/n$i.out); [ "$l" -gt 0 ] || continue
	echo "$(grep LEADER $D/n$i.out | tail -1 | awk '{print $4}') $i"
	done | sort -n | tail -1 | awk '{print $2}'; }
for r in $(seq $ROUNDS); do
	L=$(leader)
	echo "round $r: leader $L, its last rates:"; grep commits/s $D/n$L.out | tail -3
	T=$(date +%s.%N); kill -9 ${P[$L]}; wait ${P[$L]} 2>/dev/null
	sleep 4
	N=$(leader)
	F=$(grep -h FIRST_ACK $D/n*.out | awk -v t=$T '$3 > t {print $3}' | sort -n | head -1)
	echo "  killed $L; new leader $N; first ack $(echo "$F - $T" | bc) s after the kill"
	E=$(grep -h "LEADER at" $D/n*.out | awk -v t=$T '$4 > t {print $4}' | sort -n | head -1)
	echo "FAILOVER_S $(echo "$F - $T" | bc) ELECTED_S $(echo "$E - $T" | bc)"
	start $L; sleep 4
done
for i in 1 2 3; do kill -USR1 ${P[$i]}; done; sleep 2
for i in 1 2 3; do kill -TERM ${P[$i]}; done
for i in 1 2 3; do wait ${P[$i]}; done
grep -h "FINAL\| seq \|relayed" $D/n*.out; cat $D/n*.err | sort | uniq -c | head
du -sh $D/n1 $D/n2 $D/n3
