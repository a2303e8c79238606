#!/bin/bash
# What idempotency keys cost a submit (docs/BENCHMARKS.md):
#
#   cd build && PATH=$PWD:$PWD/../scripts:$PATH bash ../tests/bench/idem-keys.sh [JOBS [ROUNDS]]
#
# ROUNDS (default 3) times, three modes in turn, each on a fresh
# cohort-local cluster (no agents; the per-user submit limits lifted):
# bench_submit --clients 16 --jobs JOBS (default 16000) without keys;
# with random keys and migration 011's unique index on (user, idem_key)
# created by hand (what the controller had before the keys moved to
# memory); with random keys as built. Prints one line a run: the
# bench_submit figures and the controller's CPU seconds over the run.
# Needs sqlite3 and bc.
set -u
J=${1:-16000}
R=${2:-3}
BENCH=${BENCH:-tests/bench/bench_submit}
[ -x "$BENCH" ] || { echo "idem-keys.sh: run it in the build directory ($BENCH)" >&2; exit 2; }
D=$(mktemp -d /tmp/idem-keys.XXXXXX) || exit 1
trap 'cohort-local down "$D/c" >/dev/null 2>&1; rm -rf "$D"' EXIT
for i in $(seq "$R"); do
	for mode in plain keys+index keys; do
		rm -rf "$D/c"
		COHORT_LOCAL_CONTROLLER_CONF=$'[tenants]\nsubmit_rate = 0\nmax_pending_per_user = 0' \
			cohort-local up "$D/c" --nodes 0 >/dev/null || exit 1
		eval "$(cohort-local env "$D/c")"
		pid=$(cat "$D/c/cohortd.pid")
		a=
		case $mode in
		keys+index)
			sqlite3 "$D/c/cohort.db" "CREATE UNIQUE INDEX jobs_user_idem_key ON jobs (user, idem_key) WHERE idem_key IS NOT NULL" || exit 1
			a=--idempotency-keys ;;
		keys) a=--idempotency-keys ;;
		esac
		c0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
		out=$("$BENCH" --clients 16 --jobs "$J" $a) || exit 1
		c1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
		echo "$mode run $i: ${out#bench_submit: } controller_cpu_s=$(echo "scale=2; ($c1 - $c0) / $(getconf CLK_TCK)" | bc)"
		cohort-local down "$D/c" >/dev/null 2>&1
	done
done
