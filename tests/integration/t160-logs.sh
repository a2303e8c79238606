#!/bin/bash
# cohort logs: the output of a 2-node job's tasks through the controller,
# rank 0's by default or rank R's (--rank R); stdout, and stderr apart
# (--stderr).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 2
cohort_has logs || fail "this cohort has no 'logs' command"
W=$(world_dir out)
MARK="t160-$$-$RANDOM"

id=$(job_submit --name logger --nodes 2 --workdir "$W" -- sh -c "
echo \"$MARK out rank \$RANK line 1\"
echo \"$MARK err rank \$RANK\" >&2
echo \"$MARK out rank \$RANK line 2\"")
wait_state 20 "$id" COMPLETED FAILED CANCELLED TIMEOUT
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"

# has_line TEXT: $OUT holds a line containing TEXT.
has_line() {
	grep -qF -- "$1" "$OUT" || fail "'cohort logs $id ${2:-}' lacks '$1': $(head -c 2000 "$OUT")"
}
lacks_line() {
	! grep -qF -- "$1" "$OUT" || fail "'cohort logs $id ${2:-}' shows '$1': $(head -c 2000 "$OUT")"
}

expect_exit 0 cohort logs "$id" --rank 1
has_line "$MARK out rank 1 line 1" "--rank 1"
has_line "$MARK out rank 1 line 2" "--rank 1"
lacks_line "$MARK err" "--rank 1"
lacks_line "rank 0" "--rank 1"
# Line order within a rank is kept.
[ "$(grep -F -- "$MARK out rank 1" "$OUT" | sed 's/.*line //')" = "$(printf '1\n2')" ] ||
	fail "rank 1's lines are out of order: $(cat "$OUT")"

expect_exit 0 cohort logs "$id" --rank 1 --stderr
has_line "$MARK err rank 1" "--rank 1 --stderr"
lacks_line "$MARK out" "--rank 1 --stderr"

expect_exit 0 cohort logs "$id" --rank 0
has_line "$MARK out rank 0 line 1" "--rank 0"
lacks_line "rank 1" "--rank 0"

# Without --rank: rank 0's output.
expect_exit 0 cohort logs "$id"
has_line "$MARK out rank 0 line 1"
has_line "$MARK out rank 0 line 2"
lacks_line "rank 1"

# Bad requests: a rank the job does not have, a job that does not exist.
expect_exit 1 cohort logs "$id" --rank 7
stderr_one_line "cohort: " 'rank|7'
expect_exit 1 cohort logs 999999
stderr_one_line "cohort: " '999999|not found|no such'
exit 0
