#!/bin/bash
# srun's standard input goes to task 0 of its step: lines through a
# pipe, an input larger than a pipe's buffer (so that the agent's full
# pipe holds srun back), an input at EOF from the start, and -i none
# (tasks read /dev/null: a never-ending input does not hold cat). A
# never-ending input does not hold srun after its step ends either.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 1 --gpus 1
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"
job_config "$W"
chown "$JOB_ACCT" "$W" || fail "cannot give $W to $JOB_ACCT"

cat >stdin.sh <<'SH'
#!/bin/bash
#SBATCH -N 1
set -u
echo "LINES=$(printf 'a\nb\n' | srun -N1 -n1 sh -c 'wc -l')"
echo "LAST=$(seq 1 200000 | srun -n1 sh -c 'tail -n1')"
echo "NULL=[$(srun -n1 cat </dev/null)] rc=$?"
# An input that never ends: a FIFO this shell keeps open for writing.
mkfifo never && exec 3<>never
echo "NONE=[$(srun -i none -n1 cat <never)] rc=$?"
echo "ECHO=[$(srun -n1 echo hi <never)] rc=$?"
exit 0
SH
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -o out.%j stdin.sh
id=$(cat "$OUT")
wait_state 90 "$id" COMPLETED FAILED CANCELLED TIMEOUT
cat "$W/out.$id" >&2
[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
	fail "job $id: $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]'), want COMPLETED"
for want in "LINES=2" "LAST=200000" "NULL=[] rc=0" "NONE=[] rc=0" "ECHO=[hi] rc=0"; do
	grep -qxF "$want" "$W/out.$id" || fail "no line '$want' in the job's output (above)"
done
