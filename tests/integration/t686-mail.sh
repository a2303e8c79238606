#!/bin/bash
# sbatch --mail-type/--mail-user through [controller] mail_program, as
# Slurm's MailProg: the program gets exactly "-s SUBJECT USER" as three
# words and an empty stdin, once per event asked for (Began when the job
# runs, Ended when it completes), and /metrics counts what it sent. The
# domain's rules (which event mails what, the time-limit shares, the
# subjects) are check_mail's, in virtual time; this checks the wiring.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

C=$T/cluster
M=$T/mail
mkdir -p "$M" && chmod 1777 "$M" || fail "cannot create $M"
# Each run appends its arguments, bracketed, as one line; a stdin that
# is not empty adds "stdin:" and what it held.
cat >"$M/mailprog" <<'SH'
#!/bin/sh
line=$(printf '[%s]' "$@")
if IFS= read -r x; then line="$line stdin:$x"; fi
printf '%s\n' "$line" >>"$(dirname "$0")/sent"
SH
chmod 755 "$M/mailprog" || fail "cannot make $M/mailprog executable"
COHORT_LOCAL_CONTROLLER_CONF="[controller]
mail_program = $M/mailprog"
export COHORT_LOCAL_CONTROLLER_CONF
cluster_up "$C" --nodes 1 --gpus 2
unset COHORT_LOCAL_CONTROLLER_CONF
W=$(world_dir sub)
cd "$W" || fail "cannot enter $W"

# sent_line REGEX: a line of the mail program's record matches REGEX.
sent_line() {
	grep -Eqx "$1" "$M/sent" 2>/dev/null
}

### Slurm's type names in any case, the address as given.
printf '#!/bin/sh\ntrue\n' >mailjob.sh
expect_exit 0 sbatch --parsable -J mailjob --mail-type=begin,END \
	--mail-user=x@example.org mailjob.sh
id=$(cat "$OUT")
grep -Eqx '[1-9][0-9]*' <<<"$id" || fail "sbatch --parsable printed '$id'"
t='[0-9]{2}:[0-9]{2}:[0-9]{2}'
began="\[-s\]\[Slurm Job_id=$id Name=mailjob Began, Queued time $t\]\[x@example\.org\]"
ended="\[-s\]\[Slurm Job_id=$id Name=mailjob Ended, Run time $t, COMPLETED, ExitCode 0\]\[x@example\.org\]"
wait_for 60 sent_line "$began" || fail "no Began mail for job $id: $(cat "$M/sent" 2>&1)"
wait_for 60 sent_line "$ended" || fail "no Ended mail for job $id: $(cat "$M/sent" 2>&1)"
# One each, nothing else (stdin was empty).
[ "$(wc -l <"$M/sent")" -eq 2 ] || fail "want 2 mails, the program ran for: $(cat "$M/sent")"
log "job $id: Began and Ended mailed to x@example.org"

### The counter says so.
curl -fsS "$COHORT_HTTP/metrics" >"$T/m" || fail "GET /metrics failed"
sent_total() {
	curl -fsS "$COHORT_HTTP/metrics" | grep -qx 'cohort_mail_sent_total 2'
}
wait_for 30 sent_total || fail "cohort_mail_sent_total: $(grep '^cohort_mail' "$T/m")"

### Refused, naming what: an unknown type, a type Cohort has not, a
### recipient that would read as an option.
expect_exit 1 sbatch --mail-type=BEGIN,Began --wrap=true
grep -q "'Began'" "$ERR" || fail "unknown type not named: $(cat "$ERR")"
expect_exit 1 sbatch --mail-type=STAGE_OUT --wrap=true
grep -q 'STAGE_OUT: not supported by Cohort' "$ERR" || fail "STAGE_OUT: $(cat "$ERR")"
expect_exit 2 cohort submit --mail-type END --mail-user=-oX -- true
grep -q -- "--mail-user: .-oX. does not start with a letter" "$ERR" || fail "--mail-user -oX: $(cat "$ERR")"
[ "$(wc -l <"$M/sent")" -eq 2 ] || fail "a refused submit mailed: $(cat "$M/sent")"
log "refusals name the type or the option"
