#!/bin/bash
# tests/bench/vs-slurm.sh in its smoke sizes: it must run, print every row
# of its table with numbers, exit 0 and leave no process behind. make
# check times nothing.
#
# Here --cohort-only only (Slurm's programs on PATH are stand-ins that
# record any call, so that none is made); the comparison with Slurm is
# t091-vs-slurm-full.sh, which is skipped (exit 77) where it cannot run.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/vs-slurm.lib.sh"

# ---- --cohort-only, always. Stand-ins for Slurm's and munge's programs
# (and apt-get) record any call and fail.
FAKE=$T/fake-slurm
mkdir -p "$FAKE"
for p in slurmctld slurmd sbatch squeue sinfo scancel srun munged munge unmunge apt-get; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/called"\nexit 1\n' "$p" "$T" >"$FAKE/$p"
	chmod 755 "$FAKE/$p"
done
# A bound on a hang, not a timing: an idle machine runs it in ~6 s, a
# sanitizer build on a loaded 2-core one in over 30 (57 ms of CLI CPU a
# submit seen).
t0=$SECONDS
rc=0
env "$MARK" TMPDIR="$T" PATH="$FAKE:$PATH" timeout -k 5 120 \
	"$VS" --cohort-only --jobs 6 --parallel 2 --gangs 1 --array-tasks 8 --chain 3 \
	--steps-repeat 2 --short-steps 5 --builddir "$top_builddir" \
	>"$OUT" 2>"$ERR" || rc=$?
cat "$OUT"
[ "$rc" = 0 ] || fail "vs-slurm.sh --cohort-only exited $rc after $((SECONDS - t0)) s: $(tail -n 20 "$ERR")"
log "vs-slurm.sh --cohort-only took $((SECONDS - t0)) s"
[ ! -e "$T/called" ] || fail "--cohort-only called Slurm programs: $(cat "$T/called")"
grep -q -- '--cohort-only: no Slurm' "$ERR" || fail "no '--cohort-only: no Slurm' on stderr: $(cat "$ERR")"
check_table "$OUT" cohort-only 6 2 8 3 2 5 || fail "vs-slurm.sh --cohort-only table is not as expected"
no_leftovers "vs-slurm.sh --cohort-only"
ls -d "$T"/vs-slurm.* >/dev/null 2>&1 && fail "vs-slurm.sh --cohort-only left its directory: $(ls -d "$T"/vs-slurm.*)"

# Bad sizes are refused before anything starts.
expect_exit 1 env "$MARK" TMPDIR="$T" "$VS" --cohort-only --jobs 0 --builddir "$top_builddir"
stderr_has 'not a positive integer'
no_leftovers "vs-slurm.sh --jobs 0"

exit 0
