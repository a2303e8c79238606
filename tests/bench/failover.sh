#!/bin/bash
# Failover benchmark (not part of make check): how long from an injected
# GPU failure to the job running again, and how much work it loses.
#
#   top_srcdir=SRC top_builddir=BUILD bash tests/bench/failover.sh [RUNS]
#
# On a cohort-local cluster (4 nodes, 2 per leaf; agents' heartbeat and
# health interval 1 s, as cohort-local sets them), RUNS times (default 10):
# a 2-node fake training job (80 steps of 0.1 s, a checkpoint every 10)
# runs; once it has a checkpoint, after a random extra 0-1 s,
# 'cohort-local fail DIR NODE gpu 0 xid=79' hits one of its nodes. It
# measures, polling cohort show every ~20 ms, the time from that command
# to the job RUNNING again (restarts 1), reads the controller's own
# figure (failure seen -> running again, from its log), the steps the
# fake job redid (its "verified" line) and the controller's lost_work_s;
# then heals and resumes the node for the next run. Prints one line per
# run and the medians.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the XID 79 injected on each run, and the
# job's restart after it.
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(.*xid=79'

RUNS=${1:-10}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || fail "RUNS must be a positive integer, not '$RUNS'"

C=$T/cluster
cluster_up "$C" --nodes 4 --gpus 4 --nodes-per-leaf 2
W=$(world_dir work)
FT=$(fake_train "$W")
echo "# cohort-local: heartbeat $(sed -n 's/^heartbeat_interval = //p' "$C/node01.conf"), health interval $(sed -n '/^\[health\]/,$s/^interval = //p' "$C/node01.conf"), node_timeout $(sed -n 's/^node_timeout = //p' "$C/cohortd.conf")"

# poll_restart ID: print ms from now until job ID is RUNNING with
# restarts >= 1 (gives up after 30 s).
poll_restart() {
	"$PYTHON" - "$1" <<'EOF'
import json, subprocess, sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 30:
    try:
        d = json.loads(subprocess.run(["cohort", "show", sys.argv[1], "--json"],
                       capture_output=True, check=True).stdout)
        if d["restarts"] >= 1 and d["state"] in ("RUNNING", "COMPLETED"):
            print(int((time.monotonic() - t0) * 1000))
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.02)
sys.exit(1)
EOF
}

: >"$T/results"
for ((r = 1; r <= RUNS; r++)); do
	rm -rf "$W/ckpt-$r"
	id=$(job_submit --name "failover-$r" --nodes 2 --topology leaf \
		--checkpoint-dir "$W/ckpt-$r" --workdir "$W" -- sh "$FT" 80 0.1 10)
	wait_state 20 "$id" RUNNING
	wait_job 20 "$id" 'd["checkpoint"] is not None and d["checkpoint"]["step"] >= 10'
	# A random point between checkpoints.
	sleep "0.$((RANDOM % 10))"
	node=$(json_get "$T/job-$id.json" 'd["placement"][1]["node"]')
	offset=$(stat -c %s "$C/cohortd.log")
	cohort-local fail "$C" "$node" gpu 0 xid=79 || fail "cohort-local fail $node"
	ms=$(poll_restart "$id") || fail "run $r: job $id did not run again within 30 s"
	wait_state 30 "$id" COMPLETED FAILED CANCELLED TIMEOUT
	[ "$(json_get "$T/job-$id.json" 'd["state"]')" = COMPLETED ] ||
		fail "run $r: job $id ended $(json_get "$T/job-$id.json" '[d["state"], d["reason"]]')"
	lost_s=$(json_get "$T/job-$id.json" 'round(d["lost_work_s"], 3)')
	expect_exit 0 cohort logs "$id" --rank 0
	redone=$(sed -n 's/^fake-train: verified .*; \([0-9]*\) step(s) redone.*/\1/p' "$OUT")
	[ -n "$redone" ] || fail "run $r: rank 0 did not verify: $(tail -n 3 "$OUT")"
	# What was on disk: the old run's last step, the newest checkpoint
	# it had written, and the one the new run resumed from.
	old_last=$(tail -n 1 "$W/ckpt-$r/run-0.steps")
	resumed=$(($(sed -n 's/^1 //p' "$W/ckpt-$r/runs") - 1))
	ctl_ms=$(tail -c +"$((offset + 1))" "$C/cohortd.log" |
		sed -n "s/.*job $id: running again \([0-9]*\) ms after the failure.*/\1/p" | head -n 1)
	printf 'run %2d: job %s, %s failed: running again %5s ms after the fail command (controller: %s ms after it saw the failure); lost_work_s %s; fake job redid %s step(s) (%s s): old run stopped at step %s, newest checkpoint on disk %s, resumed from %s\n' \
		"$r" "$id" "$node" "$ms" "${ctl_ms:-?}" "$lost_s" "$redone" "$(awk -v n="$redone" 'BEGIN { printf "%.1f", n * 0.1 }')" \
		"$old_last" "$((old_last / 10 * 10))" "$resumed"
	printf '%s %s %s %s\n' "$ms" "${ctl_ms:-0}" "$lost_s" "$redone" >>"$T/results"
	cohort-local heal "$C" "$node" || fail "cohort-local heal $node"
	as_user "$C" admin
	wait_for 10 cohort resume "$node" || fail "cohort resume $node kept failing"
	as_user "$C" alice
	wait_node 10 "$node" 'n["drain"] is None and n["health"] == "OK"'
done

"$PYTHON" - "$T/results" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
col = lambda i: [r[i] for r in rows]
m = statistics.median
print("# %d runs: fail -> RUNNING again: median %.0f ms (min %.0f, max %.0f); "
      "controller's failure-seen -> running: median %.0f ms; "
      "lost work: controller lost_work_s median %.2f s, fake job median %.0f step(s) redone "
      "(%.1f s at 0.1 s/step; min %.0f, max %.0f)"
      % (len(rows), m(col(0)), min(col(0)), max(col(0)), m(col(1)), m(col(2)),
         m(col(3)), m(col(3)) * 0.1, min(col(3)), max(col(3))))
EOF
exit 0
