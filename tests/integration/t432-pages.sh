#!/bin/bash
# Listings come in pages on the wire (page_size, a cursor, has_more) and
# the CLI pages transparently: with a page of 3, cohort jobs, nodes and
# events still show everything exactly once, and a raw request gets at
# most one page.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
need_python_protobuf

C=$T/cluster
NODES=7
cluster_up "$C" --nodes "$NODES" --gpus 1
printf '\n[tenants]\npage_size = 3\n' >>"$C/cohortd.conf"
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
as_user "$C" alice

# Jobs that never start (held), from two users, some of them cancelled.
: >"$T/all"
for ((i = 1; i <= 10; i++)); do
	job_submit --name "page-$i" --hold -- true >>"$T/all"
done
as_user "$C" bob
for ((i = 1; i <= 2; i++)); do
	job_submit --name "bob-$i" --hold -- true | tee -a "$T/bob" >>"$T/all"
done
as_user "$C" alice
expect_exit 0 cohort cancel "$(sed -n 2p "$T/all")" "$(sed -n 5p "$T/all")"
grep -vxF -e "$(sed -n 2p "$T/all")" -e "$(sed -n 5p "$T/all")" "$T/all" >"$T/active"

# ids_of FILE: a listing's ids, one a line, in the order listed.
ids_of() {
	json_get "$1" '"\n".join(str(j["id"]) for j in d["jobs"])'
}

### cohort jobs: every job once, in id order, whatever the filter.
expect_exit 0 cohort jobs --all --json
ids_of "$OUT" >"$T/got-all"
diff "$T/all" "$T/got-all" >"$T/diff" || fail "cohort jobs --all --json over pages of 3: $(cat "$T/diff")"
expect_exit 0 cohort jobs --json
ids_of "$OUT" >"$T/got-active"
diff "$T/active" "$T/got-active" >"$T/diff" || fail "cohort jobs --json over pages of 3: $(cat "$T/diff")"
expect_exit 0 cohort jobs --all --user bob --json
ids_of "$OUT" >"$T/got-bob"
diff "$T/bob" "$T/got-bob" >"$T/diff" || fail "cohort jobs --user bob over pages of 3: $(cat "$T/diff")"
expect_exit 0 cohort jobs --all
[ "$(awk 'NR > 1 { print $1 }' "$OUT")" = "$(cat "$T/all")" ] ||
	fail "cohort jobs --all (table) over pages of 3: $(cat "$OUT")"
[ "$(grep -c '^JOBID' "$OUT")" = 1 ] || fail "cohort jobs --all printed more than one header: $(cat "$OUT")"

### A raw ListJobs gets one page, and has_more says there is more.
pyclient list jobs --all >"$T/p1.json" 2>"$T/py.err" || fail "pyclient list jobs: $(cat "$T/py.err")"
[ "$(json_get "$T/p1.json" '[len(d["jobs"]), d["has_more"], int(d["next_after"]) == int(d["jobs"][-1]["id"])]')" = '[3, true, true]' ] ||
	fail "first raw page: $(cat "$T/p1.json")"
[ "$(json_get "$T/p1.json" '[int(j["id"]) for j in d["jobs"]]')" = "[$(head -n 3 "$T/all" | paste -sd, | sed 's/,/, /g')]" ] ||
	fail "first raw page holds the wrong jobs: $(cat "$T/p1.json")"
# Following the cursor by hand reaches the end exactly once.
after=0 seen=0 pages=0
while :; do
	pyclient list jobs --all --after "$after" >"$T/p.json" 2>"$T/py.err" || fail "pyclient list jobs --after $after: $(cat "$T/py.err")"
	n=$(json_get "$T/p.json" 'len(d.get("jobs", []))')
	[ "$n" -le 3 ] || fail "a raw page holds $n jobs, more than page_size 3"
	seen=$((seen + n)) pages=$((pages + 1))
	[ "$(json_get "$T/p.json" 'd["has_more"]')" = true ] || break
	after=$(json_get "$T/p.json" 'd["next_after"]')
	[ "$pages" -lt 20 ] || fail "the raw pages do not end"
done
[ "$seen" = 12 ] && [ "$pages" = 4 ] || fail "raw pages: $seen jobs in $pages pages, expected 12 in 4"
# A smaller limit is honoured; a larger one is capped.
pyclient list jobs --all --limit 2 >"$T/p.json" || fail "pyclient list jobs --limit 2"
[ "$(json_get "$T/p.json" '[len(d["jobs"]), d["has_more"]]')" = '[2, true]' ] || fail "--limit 2: $(cat "$T/p.json")"
pyclient list jobs --all --limit 1000 >"$T/p.json" || fail "pyclient list jobs --limit 1000"
[ "$(json_get "$T/p.json" 'len(d["jobs"])')" = 3 ] || fail "--limit 1000 was not capped at 3: $(cat "$T/p.json")"
# Past the end: nothing, and no more.
pyclient list jobs --all --after 999999 >"$T/p.json" || fail "pyclient list jobs --after 999999"
[ "$(json_get "$T/p.json" '[len(d.get("jobs", [])), d["has_more"]]')" = '[0, false]' ] || fail "past the end: $(cat "$T/p.json")"

### cohort nodes: every node once, by name.
wait_for 30 node_expr "node$(printf '%02d' "$NODES")" 'n["state"] == "UP"' || fail "node$NODES is not UP"
expect_exit 0 cohort nodes --json
[ "$(json_get "$OUT" '[n["name"] for n in d["nodes"]]')" = "[$(for ((i = 1; i <= NODES; i++)); do printf '"node%02d"' "$i"; [ "$i" -lt "$NODES" ] && printf ', '; done)]" ] ||
	fail "cohort nodes --json over pages of 3: $(cat "$OUT")"
expect_exit 0 cohort nodes
[ "$(awk 'NR > 1 { print $1 }' "$OUT" | paste -sd' ')" = "$(for ((i = 1; i <= NODES; i++)); do printf 'node%02d ' "$i"; done | sed 's/ $//')" ] ||
	fail "cohort nodes (table) over pages of 3: $(cat "$OUT")"
pyclient list nodes >"$T/p.json" || fail "pyclient list nodes"
[ "$(json_get "$T/p.json" '[[n["name"] for n in d["nodes"]], d["has_more"], d["next_after"]]')" = '[["node01", "node02", "node03"], true, "node03"]' ] ||
	fail "first raw page of nodes: $(cat "$T/p.json")"
pyclient list nodes --after node06 >"$T/p.json" || fail "pyclient list nodes --after node06"
[ "$(json_get "$T/p.json" '[[n["name"] for n in d["nodes"]], d["has_more"]]')" = '[["node07"], false]' ] ||
	fail "last raw page of nodes: $(cat "$T/p.json")"
# A cursor that is no node's name still works: the names after it.
pyclient list nodes --after node02x >"$T/p.json" || fail "pyclient list nodes --after node02x"
[ "$(json_get "$T/p.json" '[n["name"] for n in d["nodes"]][0]')" = node03 ] || fail "--after node02x: $(cat "$T/p.json")"

### cohort events: every event once, in order.
expect_exit 0 cohort events --json
json_get "$OUT" '"\n".join(str(e["id"]) for e in d["events"])' >"$T/ev"
n=$(wc -l <"$T/ev")
[ "$n" -gt 12 ] || fail "cohort events shows $n events, expected more than 12"
sort -n -u "$T/ev" | diff "$T/ev" - >/dev/null || fail "cohort events repeats or reorders events: $(paste -sd' ' "$T/ev")"
last=$(tail -n 1 "$T/ev")
# As many as the database holds up to the last one shown (read beside
# the running controller, which may have added more since).
if command -v sqlite3 >/dev/null; then
	indb=$(sqlite3 "file:$C/cohort.db?mode=ro" "SELECT count(*) FROM events WHERE id <= $last") ||
		fail "cannot count the events in the database"
	[ "$n" = "$indb" ] || fail "cohort events shows $n events up to id $last, the database holds $indb"
fi
expect_exit 0 cohort events --job "$(head -n 1 "$T/all")" --json
[ "$(json_get "$OUT" 'len(d["events"])')" -ge 1 ] || fail "cohort events --job shows nothing: $(cat "$OUT")"
pyclient list events >"$T/p.json" || fail "pyclient list events"
[ "$(json_get "$T/p.json" '[len(d["events"]), d["has_more"]]')" = '[3, true]' ] || fail "first raw page of events: $(cat "$T/p.json")"
pyclient list events --after "$last" >"$T/p.json" || fail "pyclient list events --after $last"
[ "$(json_get "$T/p.json" '[len(d.get("events", [])), d["has_more"]]')" = '[0, false]' ] || fail "events past the last: $(cat "$T/p.json")"

### A filter that matches little: each request examines at most 10 jobs
### per item of its page; an empty page then says "more" with the last
### job examined as the cursor, and the CLI follows it to the end.
pyclient list jobs --all --user nobody --limit 1 >"$T/p.json" || fail "pyclient list jobs --user nobody --limit 1"
[ "$(json_get "$T/p.json" '[len(d.get("jobs", [])), d["has_more"], int(d["next_after"])]')" = "[0, true, $(sed -n 10p "$T/all")]" ] ||
	fail "an empty page cut by the scan bound: $(cat "$T/p.json")"
sed -i 's/^page_size = 3$/page_size = 1/' "$C/cohortd.conf"
cohort-local kill "$C" controller >"$T/kill.out" 2>&1 || fail "cohort-local kill: $(cat "$T/kill.out")"
cohort-local start "$C" controller >"$T/start.out" 2>&1 || fail "cohort-local start: $(cat "$T/start.out")"
expect_exit 0 cohort jobs --all --user nobody --json
[ "$(json_get "$OUT" 'len(d["jobs"])')" = 0 ] || fail "cohort jobs --user nobody: $(cat "$OUT")"
expect_exit 0 cohort jobs --all --user bob --json
ids_of "$OUT" >"$T/got-bob"
diff "$T/bob" "$T/got-bob" >"$T/diff" || fail "cohort jobs --user bob past empty pages: $(cat "$T/diff")"
sed -i 's/^page_size = 1$/page_size = 3/' "$C/cohortd.conf"

# page_size out of range is refused at start.
sed -i 's/^page_size = 3$/page_size = 0/' "$C/cohortd.conf"
expect_exit 1 cohortd -f -c "$C/cohortd.conf"
stderr_has 'page_size'
exit 0
