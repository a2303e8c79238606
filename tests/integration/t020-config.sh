#!/bin/bash
# cohortd's command line and configuration: --version, and a bad config
# exits non-zero with exactly one line on stderr naming FILE:LINE; a good
# one starts, answers, and stops cleanly on SIGTERM and SIGINT.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the controller this test starts has no
# nodes, and says that it will refuse every agent.
expect_log_error "cohortd: warning: neither a topology nor 'nodes' is configured: every agent registration will be refused"

cohort-pki "$T" --controller 127.0.0.1 --admins ops >/dev/null || fail "cohort-pki failed"

# --version: exit 0, a version on stdout.
expect_exit 0 cohortd --version
grep -Eq '[0-9]+\.[0-9]+' "$OUT" || fail "cohortd --version printed no version: $(cat "$OUT")"

# write_conf NAME [KEY=VALUE|-KEY ...]: a config file in $T from the good
# one, with keys replaced (KEY=VALUE in its section) or dropped (-KEY).
write_conf() {
	local name="$1"
	shift
	"$PYTHON" - "$T/$name" "$@" <<'PY'
import sys
good = [("controller", "listen", "127.0.0.1:0"), ("controller", "port_file", "cohortd.port"),
        ("controller", "database", "cohort.db"), ("tls", "ca", "ca.pem"),
        ("tls", "cert", "controller.crt"), ("tls", "key", "controller.key"),
        ("limits", "max_frame", "4M"), ("limits", "max_connections", "1024"),
        ("limits", "max_script", "1M")]
path, edits = sys.argv[1], sys.argv[2:]
drop = {e[1:] for e in edits if e.startswith("-")}
repl = dict(e.split("=", 1) for e in edits if "=" in e)
lines, section = ["# test config"], None
for sec, k, v in good:
    if sec != section:
        lines.append(f"[{sec}]")
        section = sec
    if k in drop:
        continue
    lines.append(f"{k} = {repl.get(k, v)}")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
PY
}

# bad_conf FILE LINE: cohortd refuses FILE with one line naming FILE:LINE
# (LINE "" when the complaint is about the file as a whole).
bad_conf() {
	local conf="$1" line="$2"
	expect_exit_nonzero timeout 10 cohortd -f -c "$conf"
	stderr_one_line "cohortd: " "$conf${line:+:$line}:"
	[ ! -e "$T/cohortd.port" ] || fail "a bad config wrote the port file"
}

expect_exit_nonzero() {
	local rc=0
	"$@" >"$OUT" 2>"$ERR" || rc=$?
	[ "$rc" -ne 0 ] || fail "'$*' succeeded; expected a failure"
	[ "$rc" -ne 124 ] || fail "'$*' did not exit within 10 s"
}

# Missing file.
expect_exit_nonzero timeout 10 cohortd -f -c "$T/nonexistent.conf"
stderr_one_line "cohortd: " "nonexistent.conf"

# Unknown key on line 3 (after the comment and [controller]).
write_conf unknown.conf
sed -i '3i bogus_key = 1' "$T/unknown.conf"
bad_conf "$T/unknown.conf" 3
stderr_has "bogus_key"

# Unknown section.
write_conf section.conf
printf '[nonsense]\nx = 1\n' >>"$T/section.conf"
bad_conf "$T/section.conf" "$(grep -n '^x = 1' "$T/section.conf" | cut -d: -f1)"

# Bad ports, on the listen line (line 3).
for listen in 127.0.0.1:99999 127.0.0.1:http 127.0.0.1 ""; do
	write_conf port.conf "listen=$listen"
	bad_conf "$T/port.conf" 3
done

# Bad sizes.
write_conf size.conf "max_frame=lots"
bad_conf "$T/size.conf" "$(grep -n '^max_frame' "$T/size.conf" | cut -d: -f1)"

# Missing database key: about the file as a whole.
write_conf nodb.conf -database
bad_conf "$T/nodb.conf" ""
stderr_has "database"

# Missing and garbage certificate files. These are found when the daemon
# starts, so the line may carry a log timestamp before "cohortd: ".
write_conf nocert.conf "cert=missing.crt"
expect_exit_nonzero timeout 10 cohortd -f -c "$T/nocert.conf"
stderr_one_line_with "cohortd: " "missing.crt"
echo "not a certificate" >"$T/garbage.crt"
write_conf garbage.conf "cert=garbage.crt"
expect_exit_nonzero timeout 10 cohortd -f -c "$T/garbage.conf"
stderr_one_line_with "cohortd: " "garbage.crt"
write_conf badkey.conf "key=ca.pem"
expect_exit_nonzero timeout 10 cohortd -f -c "$T/badkey.conf"
stderr_one_line_with "cohortd: "
# A key that does not belong to the certificate.
write_conf otherkey.conf "key=admin-ops.key"
expect_exit_nonzero timeout 10 cohortd -f -c "$T/otherkey.conf"
stderr_one_line_with "cohortd: "

# A good config, with paths relative to the config's directory, started
# from another directory.
write_conf good.conf

# run_good SIGNAL: start, wait for readiness, answer a request, stop on
# SIGNAL with exit status 0 within a bounded time.
run_good() {
	local sig="$1" pid port rc=0
	rm -f "$T/cohortd.port"
	watch_log "$T/cohortd.log"
	(cd / && exec cohortd -f -c "$T/good.conf") >>"$T/cohortd.log" 2>&1 &
	pid=$!
	track_pid "$pid"
	wait_for 20 test -s "$T/cohortd.port" || fail "cohortd wrote no port file within 20 s"
	grep -Eqx '[0-9]+' "$T/cohortd.port" || fail "port file holds '$(cat "$T/cohortd.port")'"
	port=$(cat "$T/cohortd.port")
	[ "$port" -gt 0 ] && [ "$port" -lt 65536 ] || fail "bad port $port"
	expect_exit 0 env COHORT_SERVER="127.0.0.1:$port" COHORT_CERT="$T/admin-ops.crt" \
		COHORT_KEY="$T/admin-ops.key" COHORT_CA="$T/ca.pem" cohort jobs
	[ -e "$T/cohort.db" ] || fail "the database is not $T/cohort.db (relative to the config)"
	kill -s "$sig" "$pid"
	wait_for 10 proc_gone "$pid" || fail "cohortd did not stop within 10 s of SIG$sig"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "cohortd exited $rc on SIG$sig, expected 0"
}
run_good TERM
# The same state again (the database exists and is migrated), then SIGINT.
run_good INT
exit 0
