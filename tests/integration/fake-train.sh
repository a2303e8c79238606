#!/bin/sh
# fake-train.sh STEPS [SECONDS_PER_STEP] [CHECKPOINT_EVERY]
#
# A stand-in for a training job that keeps Cohort's checkpoint contract
# (docs/SPEC.md): every rank counts steps; rank 0 writes a checkpoint every
# CHECKPOINT_EVERY steps and whenever it gets SIGUSR1, by writing
# $COHORT_CHECKPOINT_DIR/step-N and then LATEST ("N PATH") through a
# rename; a start with COHORT_RESUME_CHECKPOINT set resumes after that
# step. Each rank rewrites $COHORT_PROGRESS_FILE every step.
#
# A file "pace" in the checkpoint directory, once there, replaces
# SECONDS_PER_STEP (tests write it when the rest is only waiting). A pace
# of 0 runs no sleep at all: a step is then only shell builtins, so the
# steps left take well under a second even on a loaded machine (a
# forked sleep costs 15 ms a step here on two busy cores).
#
# With FT_CKPT_MS set, rank 0 reports each checkpoint's cost as that many
# milliseconds: "N MS" in $COHORT_CHECKPOINT_DIR/CKPT_MS, renamed into
# place before LATEST.
#
# Rank 0 keeps a ledger of the steps each run did (run-R.steps, R being
# the run's number in the order runs started). When it reaches STEPS it checks the whole story:
# every run started right after the checkpoint it resumed from (or at 1),
# that checkpoint had been written by an earlier run, and the last run
# reached STEPS; so no step was skipped or done twice since the last
# checkpoint. It prints "fake-train: verified ..." with the work lost
# (steps done again) and exits 0, or explains and exits 1.
set -u
steps=${1:?usage: fake-train.sh STEPS [SECONDS_PER_STEP] [CHECKPOINT_EVERY]}
pace=${2:-0.2}
every=${3:-10}
dir=${COHORT_CHECKPOINT_DIR:?no COHORT_CHECKPOINT_DIR: submit with --checkpoint-dir}
rank=${RANK:-0}

start=1
if [ -n "${COHORT_RESUME_CHECKPOINT:-}" ]; then
	start=$(($(cat "$COHORT_RESUME_CHECKPOINT") + 1)) || {
		# What a test's failure should show: who we are, what is
		# there, and whether the disk took the checkpoint at all.
		echo "fake-train: rank $rank (uid $(id -u)) cannot read" \
			"$COHORT_RESUME_CHECKPOINT; its directory holds:" \
			"$(ls -ln "$(dirname "$COHORT_RESUME_CHECKPOINT")" 2>&1 | tail -n 6 | paste -sd '|' -);" \
			"$(df -P "$(dirname "$COHORT_RESUME_CHECKPOINT")" 2>&1 | tail -n 1)" >&2
		exit 1
	}
fi
echo "fake-train: rank $rank: steps $start..$steps" \
	"(restart ${COHORT_RESTART_COUNT:-0}, resume='${COHORT_RESUME_CHECKPOINT:-}')"

# A checkpoint is published (LATEST) only once it is whole on disk: a
# write that failed (a full disk, say) names nothing, and is told on
# stderr. Returns 1 then, so that an asked-for one is tried again.
checkpoint() {
	[ "$rank" -eq 0 ] || return 0
	if ! { printf '%s\n' "$1" >"$dir/step-$1.tmp" &&
		mv -f "$dir/step-$1.tmp" "$dir/step-$1" &&
		echo "$1" >>"$dir/checkpoints" &&
		{ [ -z "${FT_CKPT_MS:-}" ] ||
			{ printf '%s %s\n' "$1" "$FT_CKPT_MS" >"$dir/CKPT_MS.tmp" &&
			mv -f "$dir/CKPT_MS.tmp" "$dir/CKPT_MS"; }; } &&
		printf '%s %s\n' "$1" "$dir/step-$1" >"$dir/LATEST.tmp" &&
		mv -f "$dir/LATEST.tmp" "$dir/LATEST"; }; then
		echo "fake-train: cannot write the checkpoint of step $1;" \
			"$(df -P "$dir" 2>&1 | tail -n 1)" >&2
		return 1
	fi
	echo "fake-train: checkpoint at step $1"
}

want_ckpt=0
trap 'want_ckpt=1' USR1
trap 'echo "fake-train: rank $rank stopped at step $step"; exit 143' TERM

# Runs are numbered by rank 0 in the order they start (a planned move
# keeps COHORT_RESTART_COUNT, so that cannot name them).
run=0
if [ "$rank" -eq 0 ]; then
	mkdir -p "$dir" || exit 1
	run=$(cat "$dir/runs" 2>/dev/null | wc -l)
	echo "$run $start" >>"$dir/runs"
fi
step=$start
while [ "$step" -le "$steps" ]; do
	# A test hurries the job along once what it watches has happened
	# (lib.sh's ft_hurry): $dir/pace, when there, is the new pace.
	[ -r "$dir/pace" ] && read -r pace <"$dir/pace"
	# Sleep in the background so a signal is handled at once.
	if [ "$pace" != 0 ]; then
		sleep "$pace" &
		wait $! 2>/dev/null || wait $! 2>/dev/null
	fi
	[ "$rank" -eq 0 ] && echo "$step" >>"$dir/run-$run.steps"
	[ -n "${COHORT_PROGRESS_FILE:-}" ] && echo "$step" >"$COHORT_PROGRESS_FILE" 2>/dev/null
	if [ $((step % every)) -eq 0 ] || [ "$want_ckpt" -eq 1 ]; then
		checkpoint "$step" && want_ckpt=0
	fi
	step=$((step + 1))
done
[ "$rank" -eq 0 ] || exit 0

# Verify the story of every run, oldest first: the first starts at 1,
# each later one right after a checkpoint that an earlier run wrote (the
# controller may not have heard of the very latest one before a crash;
# resuming from an older one redoes steps but skips none).
lost=0
prev_last=0
while read -r r s; do
	if [ "$prev_last" -eq 0 ] && [ "$s" -ne 1 ]; then
		echo "fake-train: the first run started at step $s, not 1" >&2
		exit 1
	fi
	if [ "$prev_last" -gt 0 ] && { [ "$s" -gt $((prev_last + 1)) ] ||
		! grep -qx "$((s - 1))" "$dir/checkpoints" 2>/dev/null; }; then
		echo "fake-train: run $r resumed after step $((s - 1)), which no" \
			"earlier run checkpointed (the previous run ended at $prev_last)" >&2
		exit 1
	fi
	[ "$prev_last" -gt 0 ] && lost=$((lost + prev_last - (s - 1)))
	first=$(head -n 1 "$dir/run-$r.steps" 2>/dev/null || echo none)
	last=$(tail -n 1 "$dir/run-$r.steps" 2>/dev/null || echo 0)
	n=$(wc -l <"$dir/run-$r.steps" 2>/dev/null || echo 0)
	if [ "$first" != "$s" ] || [ "$n" -ne $((last - s + 1)) ]; then
		echo "fake-train: run $r did steps $first..$last ($n lines), not a run from $s" >&2
		exit 1
	fi
	prev_last=$last
done <"$dir/runs"
if [ "$prev_last" -ne "$steps" ]; then
	echo "fake-train: the last run ended at $prev_last, not $steps" >&2
	exit 1
fi
echo "fake-train: verified $steps steps over $(wc -l <"$dir/runs") run(s); $lost step(s) redone after failures"
exit 0
