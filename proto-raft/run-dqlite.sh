#!/bin/bash
# Three dqlite nodes, one process each, on 127.0.0.1; then the dqlite
# prototype's steps (docs/REPLICATION.md).
# Usage: run-dqlite.sh [LATENCY_MS [FAILOVERS]]   (LATENCY_MS 0: dqlite's own)
set -e
cd "$(dirname "$0")"
LAT=${1:-0}; ROUNDS=${2:-3}
[ "$LAT" = 0 ] && LAT=
D=$(mktemp -d /tmp/dqproto.XXXXXX)
A=(x 127.0.0.1:29001 127.0.0.1:29002 127.0.0.1:29003)
P=(x 0 0 0)
start() { ./dqnode $1 ${A[$1]} $D/n$1 $LAT 2>>$D/n$1.log & P[$1]=$!; }
for i in 1 2 3; do mkdir -p $D/n$i; done
trap 'kill ${P[1]} ${P[2]} ${P[3]} 2>/dev/null; wait 2>/dev/null; rm -rf $D' EXIT
start 1; sleep 0.5; start 2; start 3; sleep 0.5
AS="${A[1]} ${A[2]} ${A[3]}"
./dqbench join $AS
sleep 1
for n in 1 10 100; do ./dqbench load $n $AS; done
./dqbench rate 1 5 1 $AS
./dqbench rate 1 5 16 $AS
./dqbench rate 100 5 1 $AS
./dqbench rate 100 5 16 $AS
for r in $(seq $ROUNDS); do
	./dqbench failover ${P[1]},${P[2]},${P[3]} $AS 2>$D/fo.err
	grep -v KILLED $D/fo.err | head -3 || true
	k=$(sed -n 's/^KILLED //p' $D/fo.err)
	wait ${P[$k]} 2>/dev/null || true
	start $k	# the killed node comes back and catches up
	sleep 2
done
./dqbench count $AS
du -sh $D/n1 $D/n2 $D/n3
