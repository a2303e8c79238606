#!/bin/bash
# Job steps under attack and under control, on a 2-node cluster. Attacks
# on a running batch job of alice's (each refused, the job and its steps
# left as they were): bob presents alice's step credential; alice
# presents a forged one, none, or her job's for another job; a step that
# asks for more than the allocation (nodes outside it, more nodes, more
# GPUs than a node has); bob signals alice's step. Control: squeue -s
# lists the running step, scancel JOB.STEP cancels it (srun returns, the
# script goes on), sacct shows it CANCELLED.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 4
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"
job_config "$W"

cat >long.sh <<'SH'
#!/bin/bash
#SBATCH -N 2
#SBATCH --gpus-per-node=4
srun -J longstep --gpus-per-node=1 sleep 600
echo "LONG_RC=$?" >long.rc
sleep 600
SH
expect_exit 0 sbatch --parsable --export=XDG_CONFIG_HOME="$JOB_CFG" -o long.out long.sh
id=$(cat "$OUT")
wait_state 60 "$id" RUNNING
_step_runs() {
	squeue -s -h -o '%i %j' >"$T/steps" 2>&1 && grep -qx "$id.0 longstep" "$T/steps"
}
wait_for 60 _step_runs || fail "squeue -s does not list step $id.0: $(cat "$T/steps")"

# The credential as the agent keeps it for the job's user.
cred_file=$(ls "$C"/node01/spool/jobs/"$id".*/step-cred | head -n 1)
[ -f "$cred_file" ] || fail "no step credential for job $id on node01"
hex=$(cat "$cred_file")
b64() { printf '%s' "$1" | xxd -r -p | base64 -w0; }
cred=$(b64 "$hex")
forged=$(b64 "$(printf '%s' "$hex" | tr '0-9a-f' '1-9a-f0')")

# step_create AS JSON_EXTRA: the word pyclient prints for the reply.
step_create() {
	local as=$1 body=$2 certs=()
	[ "$as" = bob ] && certs=(--cert "$C/user-bob.crt" --key "$C/user-bob.key")
	pyclient "${certs[@]}" send step_create --json "$body" 2>>"$T/py.err"
}
other=$(job_submit --name other --gpus-per-node 0 -- sleep 600)
wait_state 30 "$other" RUNNING
base='"argv":["true"],"noGpus":true,"overlap":true'
check_word() {
	[ "$2" = "$1" ] || fail "$3: answered '$2', want $1 ($(tail -n 1 "$T/py.err"))"
}
check_word ERROR_DENIED "$(step_create bob "{\"jobId\":$id,\"cred\":\"$cred\",$base}")" \
	"bob with alice's credential"
check_word ERROR_DENIED "$(step_create alice "{\"jobId\":$id,\"cred\":\"$forged\",$base}")" \
	"a forged credential"
check_word ERROR_DENIED "$(step_create alice "{\"jobId\":$id,\"cred\":\"\",$base}")" \
	"no credential"
check_word ERROR_DENIED "$(step_create alice "{\"jobId\":$other,\"cred\":\"$cred\",$base}")" \
	"job $id's credential for job $other"
check_word ERROR_INVALID "$(step_create alice "{\"jobId\":$id,\"cred\":\"$cred\",$base,\"nodes\":3}")" \
	"three nodes of a two-node allocation"
check_word ERROR_INVALID "$(step_create alice "{\"jobId\":$id,\"cred\":\"$cred\",\"argv\":[\"true\"],\"gpusPerNode\":5}")" \
	"five GPUs of a four-GPU node"
out_node=node03
check_word ERROR_INVALID "$(step_create alice "{\"jobId\":$id,\"cred\":\"$cred\",$base,\"nodelist\":\"$out_node\"}")" \
	"a node outside the allocation"
# The GPUs the running step holds are not handed out twice.
check_word ERROR_BUSY "$(step_create alice "{\"jobId\":$id,\"cred\":\"$cred\",\"argv\":[\"true\"]}")" \
	"all GPUs while a step holds one per node"
# With the right credential the same request starts a step: the
# refusals above were for what they said.
check_word step_create_reply "$(step_create alice "{\"jobId\":$id,\"cred\":\"$cred\",$base}")" \
	"alice with her job's credential"
check_word ERROR_DENIED "$(pyclient --cert "$C/user-bob.crt" --key "$C/user-bob.key" \
	send step_signal --json "{\"jobId\":$id,\"stepId\":0,\"signal\":9}" 2>>"$T/py.err")" \
	"bob cancelling alice's step"
grep -qx "$id.0 longstep" <(squeue -s -h -o '%i %j') || fail "step $id.0 is gone after the attacks"

# scancel JOB.STEP: the step ends CANCELLED, srun returns, the script
# goes on.
expect_exit 0 scancel "$id.0"
wait_for 60 test -s "$W/long.rc" || fail "srun did not return after scancel $id.0: $(cat "$W/long.out")"
grep -q '^LONG_RC=[1-9]' "$W/long.rc" || fail "srun of the cancelled step returned $(cat "$W/long.rc")"
expect_exit 0 sacct -j "$id" -P -n -o JobID,State
grep -qx "$id.0|CANCELLED" "$OUT" || fail "sacct has no $id.0|CANCELLED: $(cat "$OUT")"
grep -qx "$id.1|COMPLETED" "$OUT" || fail "sacct has no $id.1|COMPLETED: $(cat "$OUT")"
[ "$(json_get "$T/job-$id.json" 'd["state"]' 2>/dev/null || true)" != FAILED ] || true
expect_exit 0 cohort cancel "$id" "$other"
wait_state 30 "$id" CANCELLED
