#!/bin/bash
# tests/bench/vs-slurm.sh's full comparison at a tiny size, both columns
# checked: it must run, print every row of its table with numbers, exit 0
# and leave no process behind. Opt-in (VS_SLURM_SMOKE_FULL=1), as root
# with Slurm and munge installed: under a parallel make check on 2 cores,
# bringing Slurm up does not fit a seconds-long smoke. Anywhere else, and
# where Slurm itself cannot be brought up, the test is SKIPPED (exit 77)
# with the reason: it never reports a comparison it did not run as a pass.
# On the machine's network: Debian's slurmctld 22.05 does not start in a
# namespace with a loopback only ("Unable to resolve (null)").
COHORT_TEST_NETNS=${COHORT_TEST_NETNS:-host}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/vs-slurm.lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}

if [ "${VS_SLURM_SMOKE_FULL:-0}" != 1 ]; then
	skip "the comparison with Slurm is opt-in: VS_SLURM_SMOKE_FULL=1"
fi
if [ "$(id -u)" != 0 ]; then
	skip "not root (slurmd must run as root)"
fi
for p in slurmctld slurmd sbatch squeue sinfo scancel munged munge unmunge; do
	command -v "$p" >/dev/null || {
		skip "Slurm is not installed ($p is missing)"
	}
done
t0=$SECONDS
rc=0
env "$MARK" TMPDIR="$T" timeout -k 10 60 \
	"$VS" --jobs 4 --parallel 2 --gangs 1 --array-tasks 4 --chain 2 \
	--steps-repeat 2 --short-steps 5 --slurm-timeout 20 --builddir "$top_builddir" \
	>"$OUT" 2>"$ERR" || rc=$?
cat "$OUT"
if [ "$rc" != 0 ]; then
	# Slurm that cannot start here is this machine's matter, not Cohort's.
	if grep -Eq 'vs-slurm: (munged exited|munged did not|munge round trip|slurmctld exited|Slurm nodes not idle)' "$ERR"; then
		no_leftovers "vs-slurm.sh (Slurm not up)"
		skip "Slurm did not come up on this machine: $(grep -E '^vs-slurm: ' "$ERR" | head -n 3)"
	fi
	fail "vs-slurm.sh exited $rc after $((SECONDS - t0)) s: $(tail -n 20 "$ERR")"
fi
log "vs-slurm.sh (with Slurm) took $((SECONDS - t0)) s"
check_table "$OUT" full 4 2 4 2 2 5 || fail "vs-slurm.sh table is not as expected"
no_leftovers "vs-slurm.sh"
exit 0
