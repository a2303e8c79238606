#!/bin/bash
# Slurm's query and control commands, answered by cohort under their
# names, on a real cluster: squeue's default header and widths, -h, -o
# with width modifiers; sinfo's default lines; sacct's parsable
# separators and ExitCode; scontrol show job/hostnames and update (an
# unknown key refused, nothing changed); an unknown option refused; and
# scancel of a pending job, then its state in squeue and sacct.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
cluster_up "$C" --nodes 2 --gpus 4
[ "$(command -v squeue)" = "$top_builddir/slurm/squeue" ] ||
	fail "squeue on PATH is $(command -v squeue), not the build's link"

G=$T/go
r=$(job_submit --name runner --nodes 2 --gpus-per-node 2 --time 1h -- sh -c "$(gate "$G")")
wait_state 30 "$r" RUNNING
p=$(job_submit --name waiter --nodes 2 --gpus-per-node 4 -- true)
wait_job 20 "$p" 'd["state"] == "PENDING" and d["reason"] != ""'

# line N FILE: the Nth line of FILE.
line() { sed -n "${1}p" "$2"; }

### squeue: Slurm's default header, widths and rows.
expect_exit 0 squeue
[ "$(line 1 "$OUT")" = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)" ] ||
	fail "squeue header: '$(line 1 "$OUT")'"
# The TIME cell changes as it runs: compared up to it.
want=$(printf '%18s %9s %8s %8s %2s' "$r" default runner alice R)
[ "$(grep -E "^ +$r " "$OUT" | cut -c1-47)" = "$(echo "$want" | cut -c1-47)" ] ||
	fail "squeue running row: '$(grep -E "^ +$r " "$OUT")', want like '$want'"
grep -E "^ +$r " "$OUT" | grep -Eq '      2 node\[01-02\]$' || fail "squeue running row's NODES/NODELIST: $(cat "$OUT")"
grep -Eq "^ +$p +default +waiter +alice +PD +0:00 +2 \((Resources|Priority)\)$" "$OUT" ||
	fail "squeue pending row: $(cat "$OUT")"

### -h and -o with width and justification.
expect_exit 0 squeue -h -o '%.6i|%-8j|%T|%t|%D|%u|%P|%b|%l' -j "$r"
[ "$(cat "$OUT")" = "$(printf '%6s|%-8s|RUNNING|R|2|alice|default|gres:gpu:2|1:00:00' "$r" runner)" ] ||
	fail "squeue -o: '$(cat "$OUT")'"
expect_exit 0 squeue -h -t PD -o '%i %t %R'
[ "$(cat "$OUT")" = "$p PD (Resources)" ] || [ "$(cat "$OUT")" = "$p PD (Priority)" ] ||
	fail "squeue -t PD: '$(cat "$OUT")'"
expect_exit 0 squeue -h -O 'JobID:8,StateCompact:.4' -j "$r"
[ "$(cat "$OUT")" = "$(printf '%-8s%4s' "$r" R)" ] || fail "squeue -O: '$(cat "$OUT")'"

### An option Cohort's squeue does not have: named, exit 1.
expect_exit 1 squeue --clusters=x
grep -q "unrecognized option '--clusters=x'" "$ERR" || fail "squeue --clusters: $(cat "$ERR")"
expect_exit 1 squeue -t WAITING
grep -q 'squeue: error: Invalid job state specified: WAITING' "$ERR" || fail "squeue -t: $(cat "$ERR")"

### sinfo: Slurm's default header and the partition marked '*'.
expect_exit 0 sinfo
[ "$(line 1 "$OUT")" = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST" ] || fail "sinfo header: '$(line 1 "$OUT")'"
[ "$(line 2 "$OUT")" = "default*     up   infinite      2    mix node[01-02]" ] || fail "sinfo line: '$(line 2 "$OUT")'"
expect_exit 0 sinfo -h -N -o '%N %t %G'
[ "$(cat "$OUT")" = "$(printf 'node01 mix gpu:4\nnode02 mix gpu:4')" ] || fail "sinfo -N -o: '$(cat "$OUT")'"

### scontrol: hostnames without a controller, show job, update.
expect_exit 0 env -u COHORT_SERVER scontrol show hostnames 'node[01-02]'
[ "$(cat "$OUT")" = "$(printf 'node01\nnode02')" ] || fail "show hostnames: '$(cat "$OUT")'"
expect_exit 0 scontrol show job "$r"
grep -q "^JobId=$r JobName=runner$" "$OUT" || fail "show job: $(cat "$OUT")"
grep -q '^   JobState=RUNNING Reason=None' "$OUT" || fail "show job state: $(cat "$OUT")"
grep -q '^   NodeList=node\[01-02\]$' "$OUT" || fail "show job nodes: $(cat "$OUT")"
expect_exit 1 scontrol update JobId="$p" TimeLimit=30 Bogus=1
grep -q 'not supported: Bogus=1' "$ERR" || fail "update Bogus: $(cat "$ERR")"
expect_exit 0 squeue -h -j "$p" -o '%l'
[ "$(cat "$OUT")" = UNLIMITED ] || fail "a refused update changed the limit: $(cat "$OUT")"
expect_exit 0 scontrol update JobId="$p" TimeLimit=30 JobName=renamed
expect_exit 0 squeue -h -j "$p" -o '%l %j'
[ "$(cat "$OUT")" = "30:00 renamed" ] || fail "update: '$(cat "$OUT")'"

### scancel of the pending job; its state then.
expect_exit 1 scancel --signal=USR1 "$p"
grep -q 'scancel: error: --signal=USR1 is not supported for a job: Cohort signals a job step' "$ERR" || fail "scancel -s: $(cat "$ERR")"
# A step id that is not one is refused before anything is sent.
expect_exit 1 scancel "$p.x"
grep -q "scancel: error: Invalid job id $p.x" "$ERR" || fail "scancel J.x: $(cat "$ERR")"
expect_exit 0 scancel "$p"
wait_state 20 "$p" CANCELLED
expect_exit 0 squeue -h -j "$p" -o '%T %t'
[ "$(cat "$OUT")" = "CANCELLED CA" ] || fail "squeue of the cancelled job: '$(cat "$OUT")'"
expect_exit 1 scancel 999999
stderr_one_line "scancel: error: Kill job error on job id 999999: "

### sacct after the runner ends: parsable, ExitCode, states.
touch "$G"
wait_state 30 "$r" COMPLETED
expect_exit 0 sacct -P -o JobID,JobName,State,ExitCode,NodeList,Partition -j "$r,$p"
[ "$(cat "$OUT")" = "$(printf 'JobID|JobName|State|ExitCode|NodeList|Partition\n%s|runner|COMPLETED|0:0|node[01-02]|default\n%s|renamed|CANCELLED|0:0|None assigned|default' "$r" "$p")" ] ||
	fail "sacct -P: '$(cat "$OUT")'"
expect_exit 0 sacct -p -n -X -j "$r" -o JobID,State
[ "$(cat "$OUT")" = "$r|COMPLETED|" ] || fail "sacct -p -n: '$(cat "$OUT")'"
expect_exit 0 sacct -j "$r"
[ "$(line 1 "$OUT")" = "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode " ] ||
	fail "sacct header: '$(line 1 "$OUT")'"
[ "$(line 2 "$OUT")" = "------------ ---------- ---------- ---------- ---------- ---------- -------- " ] ||
	fail "sacct dashes: '$(line 2 "$OUT")'"
[ "$(line 3 "$OUT")" = "$(printf '%-12s %10s %10s %10s %10s %10s %8s ' "$r" runner default '' 2 COMPLETED 0:0)" ] ||
	fail "sacct row: '$(line 3 "$OUT")'"
echo "$TEST_NAME: ok"
