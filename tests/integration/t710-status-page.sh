#!/bin/bash
# The status page at /, fetched with curl from a live cluster:
#  - served as text/html (GET and HEAD), a well-formed HTML5 document
#    without any script;
#  - every node, grouped under its leaf switch;
#  - a running job's id on each of its GPUs; its name, which holds
#    <script>, escaped;
#  - a node an admin drained, marked, its reason (markup in it) escaped;
#  - a waiting job with its pending reason as `cohort show` gives it;
#  - the latest events (the drain);
#  - one switch's page (/?switch=leaf0): its nodes' rows, the other
#    switch as a link; an unknown switch said; a bad name refused (400);
#  - a GPU failed through the node's health check, marked failed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# Expected in the daemons' logs: the injected XID 79 fails a GPU; its job restarts.
expect_log_error 'cohort-agent: warning: health: (node FAILED: )?gpu [0-9]+ FAILED:? xid=79'
expect_log_error 'cohortd: warning: job [0-9]+: RESTARTING \(restart 1 of [0-9]+, .*xid=79'
command -v curl >/dev/null || { echo "SKIP: $TEST_NAME needs curl"; exit 77; }

C=$T/cluster
cluster_up "$C" --nodes 3 --gpus 4 --nodes-per-leaf 2
HTTP=$COHORT_HTTP
[ -n "$HTTP" ] || fail "cohort-local up printed no COHORT_HTTP"
W=$(world_dir work)

# fetch [PATH]: GET PATH (/) into $T/page.html, its headers into
# $T/page.head.
fetch() {
	curl -fsS -D "$T/page.head" -o "$T/page.html" "$HTTP${1:-/}" ||
		fail "GET $HTTP${1:-/} failed"
}
# lacks TEXT: the page does not hold TEXT.
lacks() {
	! grep -qF -- "$1" "$T/page.html" || fail "the page holds: $1"
}
# has TEXT: the page holds TEXT (fixed string).
has() {
	grep -qF -- "$1" "$T/page.html" || fail "the page lacks: $1"
}
# html TEXT: TEXT as the page must write it (HTML-escaped).
html() {
	"$PYTHON" -c 'import html,sys; print(html.escape(sys.argv[1]))' "$1"
}

name='x<script>alert(1)</script>'
id=$(job_submit --name "$name" --nodes 1 --gpus-per-node 4 --max-restarts 3 \
	--workdir "$W" -- sleep 120)
wait_state 20 "$id" RUNNING
node=$(json_get "$T/job-$id.json" 'd["placement"][0]["node"]')
case "$node" in
node01) other=node02 ;;
*) other=node01 ;;
esac
reason='<b>disk</b> & "smart" failing'
as_user "$C" admin
expect_exit 0 cohort drain "$other" --reason "$reason"
as_user "$C" alice
# Three whole nodes cannot start while one is drained: it waits.
big=$(job_submit --nodes 3 --gpus-per-node 4 --workdir "$W" -- true)
wait_job 10 "$big" 'd["state"] == "PENDING" and d["reason"] not in ("", "Launching")'
why=$(json_get "$T/job-$big.json" 'd["reason"]')

fetch
grep -qi '^content-type: text/html; charset=utf-8' "$T/page.head" ||
	fail "GET / is not text/html: $(cat "$T/page.head")"
# Well formed: every element closed in order, no script element at all.
"$PYTHON" - "$T/page.html" <<'PY' || fail "the page is not well-formed HTML (above)"
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.bad = [], []
    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.bad.append("a <script> element")
        if tag not in VOID:
            self.stack.append(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.bad.append("</%s> closes %s" % (tag, self.stack[-1:] or "nothing"))
        else:
            self.stack.pop()
text = open(sys.argv[1], encoding="utf-8").read()
if not text.startswith("<!DOCTYPE html>"):
    print("no <!DOCTYPE html>"); sys.exit(1)
p = P(); p.feed(text); p.close()
if p.stack:
    p.bad.append("left open: %s" % p.stack)
for b in p.bad[:5]:
    print(b)
sys.exit(1 if p.bad else 0)
PY

# Nodes under their switches.
for n in node01 node02 node03; do
	has "<th>$n</th>"
done
has '<b>leaf0</b> 2 nodes, 8 GPUs'
has '<b>leaf1</b> 1 node, 4 GPUs'
# The job's id on each of its four GPUs, its name escaped.
for g in 0 1 2 3; do
	has "title=\"GPU $g: job $id $(html "$name") (alice)\">$id</i>"
done
grep -qF '<script>alert' "$T/page.html" && fail "the job's name is not escaped"
# The drained node, its reason escaped.
has "<th>$other</th><td>UP <b class=\"drain\">DRAINED</b></td>"
has "$(html "$reason") <span class=\"dim\">(by "
grep -qF '<b>disk</b>' "$T/page.html" && fail "the drain reason is not escaped"
# The waiting job and its reason.
has "<td>$big</td>"
has "<td class=\"why\">$(html "$why")</td>"
# The drain among the latest events.
"$PYTHON" - "$T/page.html" "$other" <<'PY' || fail "no drain event of $other in the page's events"
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
ev = page[page.index('<section id="events">'):]
ev = ev[:ev.index("</section>")]
sys.exit(0 if re.search(r"<td>drain</td><td></td><td>%s</td>" % re.escape(sys.argv[2]), ev) else 1)
PY

# One switch's page: leaf0's nodes (node01, node02), leaf1 as a link.
fetch '/?switch=leaf0'
has '<details class="sw" open><summary><b>leaf0</b> 2 nodes, 8 GPUs'
has '<th>node01</th>'
has '<th>node02</th>'
lacks '<th>node03</th>'
has '<div class="sw"><a href="/?switch=leaf1"><b>leaf1</b></a> 1 node, 4 GPUs'
has "<td class=\"why\">$(html "$why")</td>"
fetch '/?switch=leaf9'
has '<b class="bad">No switch leaf9.</b>'
code=$(curl -sS -o /dev/null -w '%{http_code}' "$HTTP/?switch=%3Cb%3E") ||
	fail "GET /?switch=%3Cb%3E failed"
[ "$code" = 400 ] || fail "GET /?switch=<b> answered $code, not 400"

# HEAD: the same headers, no body.
curl -fsS -I "$HTTP/" >"$T/head" || fail "HEAD / failed"
grep -qi '^content-type: text/html' "$T/head" || fail "HEAD / is not text/html: $(cat "$T/head")"

# A GPU of the job's node fails (its health check says so): the cell is
# marked failed, the node drained for its health.
cohort-local fail "$C" "$node" gpu 2 xid=79 || fail "cohort-local fail $node gpu 2"
wait_node 10 "$node" 'n["health"] == "FAILED" and n["drain"] in ("DRAINING", "DRAINED")'
fetch
has '<i class="g failed" title="GPU 2 FAILED: xid=79'
grep -qE "<th>$node</th><td>UP <b class=\"drain\">DRAIN(ING|ED)</b> <b class=\"bad\">FAILED</b>" "$T/page.html" ||
	fail "$node is not marked drained and FAILED: $(grep -F "<th>$node</th>" "$T/page.html" | head -n 1)"
exit 0
