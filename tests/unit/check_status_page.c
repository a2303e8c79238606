/* The status page (daemon/controller/web/status_page*.c): the HTML escape, and
 * pages rendered from a real controller domain (tests/domain/domain.h):
 * GPU cells by state, switches from a topology, pending reasons, events,
 * outside strings escaped, bounded tables, switches collapsed on large
 * clusters. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/domain/suspect.h"
#include "daemon/controller/web/status_page.h"
#include "daemon/sched/topo.h"
#include "tests/domain/domain.h"

static struct domain D;
static struct topo *topo;
static const struct peer admin = { "root", ROLE_ADMIN };

/* ---- The escape ------------------------------------------------------- */

static char *
escaped(const char *s)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *out;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(status_page_html_escape(b, s), 0);
	n = evbuffer_get_length(b);
	out = calloc(1, n + 1);
	ck_assert_ptr_nonnull(out);
	evbuffer_remove(b, out, n);
	evbuffer_free(b);
	return out;
}

#define ESCAPES(in, want) do {						\
	char *got_ = escaped(in);					\
	ck_assert_msg(strcmp(got_, (want)) == 0,			\
	    "escape(\"%s\") is \"%s\", not \"%s\"", #in, got_, (want));	\
	free(got_);							\
} while (0)

#define FFFD "\xef\xbf\xbd"

START_TEST(test_escape_markup)
{
	ESCAPES("plain text 123", "plain text 123");
	ESCAPES("", "");
	ESCAPES("<script>alert('x')</script>",
	    "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
	ESCAPES("a & b \"c\"", "a &amp; b &quot;c&quot;");
	ESCAPES("&amp;", "&amp;amp;");
	ESCAPES("\" onmouseover=\"x", "&quot; onmouseover=&quot;x");
	ESCAPES("tab\tand\nnewline", "tab\tand\nnewline");
	{
		struct evbuffer *b = evbuffer_new();

		ck_assert_int_eq(status_page_html_escape(b, NULL), 0);
		ck_assert_uint_eq(evbuffer_get_length(b), 0);
		evbuffer_free(b);
	}
}
END_TEST

START_TEST(test_escape_utf8)
{
	/* Valid UTF-8 goes through as it is. */
	ESCAPES("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80",
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
	/* Control characters (C0, DEL, C1) are no text in HTML. */
	ESCAPES("a\x01z", "a" FFFD "z");
	ESCAPES("\x1b[31mred", FFFD "[31mred");
	ESCAPES("del\x7f", "del" FFFD);
	ESCAPES("c1\xc2\x85", "c1" FFFD);
	/* Bytes of no valid sequence, one U+FFFD each. */
	ESCAPES("\xff", FFFD);
	ESCAPES("cut \xe2\x82", "cut " FFFD FFFD);
	ESCAPES("\xc0\xaf", FFFD FFFD);			/* overlong '/' */
	ESCAPES("\xe0\x80\xbc", FFFD FFFD FFFD);	/* overlong '<' */
	ESCAPES("\xed\xa0\x80", FFFD FFFD FFFD);	/* a surrogate */
	ESCAPES("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* > U+10FFFF */
	ESCAPES("\xc3<", FFFD "&lt;");
}
END_TEST

/* ---- Pages from a domain ---------------------------------------------- */

static void
open_domain(const char *topology, unsigned nnodes, unsigned ngpus)
{
	struct cluster_opts o = {
		.node_timeout_ms = 10000,
		.heartbeat_ms = 2000,
		.stop_timeout_ms = 60000,
		.accept_unknown_nodes = true,
	};
	struct cerr err;
	char name[16], ebuf[256];
	unsigned i;

	if (topology != NULL) {
		topo = topo_parse(topology, strlen(topology), "test", ebuf,
		    sizeof(ebuf));
		ck_assert_msg(topo != NULL, "topo_parse: %s", ebuf);
		o.topo = topo;
	}
	ck_assert_msg(domain_open(&D, &o, &err) == 0, "domain_open: %s",
	    err.text);
	for (i = 1; i <= nnodes; i++) {
		snprintf(name, sizeof(name), nnodes > 99 ? "node%04u" :
		    "node%02u", i);
		ck_assert_msg(domain_add_node(&D, name, ngpus, false, &err) != 0,
		    "add %s: %s", name, err.text);
	}
}

static void
teardown(void)
{
	domain_close(&D);
	topo_destroy(topo);
	topo = NULL;
}

static size_t open_nodes;	/* status_page_in.open_nodes */
static const char *switch_name;	/* status_page_in.switch_name */

static char *
page(void)
{
	struct status_page_in in = {
		.open_nodes = open_nodes,
		.switch_name = switch_name,
		.jobs = D.js,
		.nodes = D.ns,
		.topo = topo,
		.store = D.st,
		.suspect = D.sus,
		.health = { .now_ms = D.now, .started_ms = D.now - 3600000 },
	};
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *out;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(status_page_write(&in, b), 0);
	n = evbuffer_get_length(b);
	out = calloc(1, n + 1);
	ck_assert_ptr_nonnull(out);
	evbuffer_remove(b, out, n);
	evbuffer_free(b);
	return out;
}

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* The text of the section with this id. */
static char *
section(const char *p, const char *id)
{
	char open[64];
	const char *a, *z;

	snprintf(open, sizeof(open), "<section id=\"%s\">", id);
	a = strstr(p, open);
	ck_assert_msg(a != NULL, "no section %s", id);
	z = strstr(a, "</section>");
	ck_assert_ptr_nonnull(z);
	return strndup(a, (size_t)(z - a));
}

static void
name_spec(struct job_spec *spec, void *arg)
{
	free(spec->name);
	spec->name = strdup(arg);
}

static uint64_t
submit(unsigned nodes, unsigned gpus, const char *name)
{
	struct cerr err;
	uint64_t id;

	id = domain_submit(&D, "alice", nodes, gpus,
	    name != NULL ? name_spec : NULL, (void *)name, &err);
	ck_assert_msg(id != 0, "submit: %s", err.text);
	return id;
}

#define HAS(p, s) ck_assert_msg(strstr((p), (s)) != NULL, \
	"the page lacks %s", (s))
#define LACKS(p, s) ck_assert_msg(strstr((p), (s)) == NULL, \
	"the page holds %s", (s))

START_TEST(test_page_states)
{
	const char *tp = "SwitchName=leafA Nodes=node[01-02]\n"
	    "SwitchName=leafB Nodes=node[03-04]\n";
	struct cerr err;
	char want[256], *p, *s, *q;
	const struct job *j;
	uint64_t run, big;

	open_domain(tp, 5, 4);
	run = submit(1, 4, "train<script>alert(1)</script>");
	domain_pass(&D);
	domain_answer_launches(&D, NULL);
	ck_assert_int_eq(domain_job(&D, run)->state, JOB_RUNNING);
	/* An admin drains an idle node with a reason holding markup. */
	j = domain_job(&D, run);
	ck_assert_msg(recovery_drain(D.cl, &admin, strcmp(j->place[0].node,
	    "node03") == 0 ? "node04" : "node03",
	    "disk <b>bad</b> \"x\"", false, D.now, &err) == 0, "drain: %s",
	    err.text);
	domain_commit(&D);
	/* A job too big to start waits, with its reason. */
	big = submit(5, 4, NULL);
	domain_pass(&D);
	ck_assert_int_eq(domain_job(&D, big)->state, JOB_PENDING);
	ck_assert_str_ne(domain_job(&D, big)->reason, "");

	p = page();
	/* Valid HTML5 begins so; no script, ever. */
	ck_assert_msg(strncmp(p, "<!DOCTYPE html>\n<html lang=\"en\">", 32) ==
	    0, "the page begins %.40s", p);
	HAS(p, "</body></html>\n");
	LACKS(p, "<script");
	/* Switches from the topology, and the node under none. */
	HAS(p, "<b>leafA</b> 2 nodes, 8 GPUs");
	HAS(p, "<b>leafB</b> 2 nodes, 8 GPUs");
	HAS(p, "<b>no switch: node05</b> 1 node, 4 GPUs");
	ck_assert_msg(strstr(p, "<b>leafA</b>") < strstr(p, "<b>leafB</b>") &&
	    strstr(p, "<b>leafB</b>") < strstr(p, "no switch: node05"),
	    "switches out of order");
	/* The running job's four GPUs carry its id, its name escaped. */
	snprintf(want, sizeof(want), "<i class=\"g j%u\" title=\"GPU 3: job "
	    "%llu train&lt;script&gt;alert(1)&lt;/script&gt; (alice)\">%llu"
	    "</i>", (unsigned)(run % 12), (unsigned long long)run,
	    (unsigned long long)run);
	HAS(p, want);
	snprintf(want, sizeof(want), "title=\"GPU 0: job %llu ",
	    (unsigned long long)run);
	ck_assert_uint_eq(count(p, want), 1);
	/* The running job's ETTR: it has only run, all of it kept. */
	s = section(p, "running");
	HAS(s, "<th>Restarts</th><th>ETTR</th></tr>");
	HAS(s, "<td class=\"r\">0</td><td class=\"r\">1.000</td></tr>");
	free(s);
	/* The drained node: marked, its GPUs hatched, the reason escaped. */
	HAS(p, "UP <b class=\"drain\">DRAINED</b>");
	HAS(p, "disk &lt;b&gt;bad&lt;/b&gt; &quot;x&quot; <span class=\"dim\">"
	    "(by root)</span>");
	LACKS(p, "<b>bad</b>");
	HAS(p, "<details class=\"sw\" id=\"attention\" open><summary><b>"
	    "Needing attention</b> 1 node: 0 DOWN, 1 drained, 0 with GPUs "
	    "not OK</summary>");
	/* In the attention table and under its switch: 2 × 4 cells. */
	ck_assert_uint_eq(count(p, "<i class=\"g drained\" title="), 8);
	/* The waiting job and its reason as cohort jobs shows it. */
	s = section(p, "pending");
	snprintf(want, sizeof(want), "<td class=\"why\">%s</td>",
	    domain_job(&D, big)->reason);
	HAS(s, want);
	HAS(s, "Waiting jobs (1)");
	free(s);
	s = section(p, "running");
	HAS(s, "Running jobs (1)");
	free(s);
	/* The events, the drain among them. */
	s = section(p, "events");
	HAS(s, "<td>drain</td>");
	free(s);
	free(p);

	/* A GPU of the running job fails: its cell says so, the node is
	 * drained for its health, the job restarts. */
	domain_health(&D, domain_job(&D, run)->place[0].node, HEALTH_FAILED,
	    2, "xid=79 <i>");
	p = page();
	snprintf(want, sizeof(want), "<i class=\"g failed\" title=\"GPU 2 "
	    "FAILED: xid=79 &lt;i&gt; (job %llu)\">&times;</i>",
	    (unsigned long long)run);
	/* In the attention table and under its switch. */
	ck_assert_uint_eq(count(p, want), 2);
	/* The node's reason names the GPU. */
	ck_assert_uint_eq(count(p, "<td>GPU 2 FAILED: xid=79 &lt;i&gt;</td>"),
	    2);
	free(p);

	/* One switch's page: its nodes' rows, the others as links. */
	switch_name = "leafB";
	p = page();
	s = section(p, "nodes");
	/* After the attention list (which may hold any node). */
	q = strstr(s, "<details class=\"sw\" open><summary><b>leafB</b> 2 "
	    "nodes");
	ck_assert_msg(q != NULL, "no open leafB: %s", s);
	memmove(s, q, strlen(q) + 1);
	HAS(s, "<th>node03</th>");
	HAS(s, "<th>node04</th>");
	LACKS(s, "<th>node01</th>");
	LACKS(s, "<th>node05</th>");
	HAS(s, "<div class=\"sw\"><a href=\"/?switch=leafA\"><b>leafA</b>"
	    "</a> 2 nodes, 8 GPUs");
	HAS(s, "<a href=\"/?switch=unswitched-1\"><b>no switch: node05</b>"
	    "</a> 1 node, 4 GPUs");
	LACKS(s, "/?switch=leafB\"");
	free(s);
	free(p);
	switch_name = "unswitched-1";
	p = page();
	s = section(p, "nodes");
	q = strstr(s, "<details class=\"sw\" open><summary><b>no switch: "
	    "node05");
	ck_assert_msg(q != NULL, "no open unswitched-1: %s", s);
	memmove(s, q, strlen(q) + 1);
	HAS(s, "<th>node05</th>");
	LACKS(s, "<th>node01</th>");
	LACKS(s, "<th>node03</th>");
	free(s);
	free(p);
	switch_name = NULL;

	/* A node whose agent went away is DOWN: all its cells say so; its
	 * health, FAILED when last heard, is UNKNOWN now. */
	domain_health(&D, "node05", HEALTH_FAILED, 1, "xid=48");
	domain_disconnect(&D, "node05");
	domain_run_for(&D, 15000, 1000);
	ck_assert_int_eq(nodes_get(D.ns, "node05")->state, NODE_DOWN);
	p = page();
	ck_assert_uint_eq(count(p, "<i class=\"g down\" title="), 8);
	HAS(p, "<tr class=\"off\"><th>node05</th><td>DOWN");
	s = strstr(p, "<th>node05</th><td>");
	ck_assert_ptr_nonnull(s);
	s = strndup(s, (size_t)(strstr(s, "</td>") - s));
	HAS(s, "<span class=\"dim\">UNKNOWN</span>");
	LACKS(s, "FAILED");
	free(s);
	free(p);
}
END_TEST

START_TEST(test_page_bounds)
{
	char *p, *s;
	size_t i;

	open_domain(NULL, 2, 2);
	for (i = 0; i < STATUS_PAGE_JOBS_MAX + 30; i++)
		submit(3, 2, NULL);
	domain_pass(&D);
	p = page();
	s = section(p, "pending");
	HAS(s, "Waiting jobs (130)");
	ck_assert_uint_eq(count(s, "<td class=\"why\">"), STATUS_PAGE_JOBS_MAX);
	HAS(s, "and 30 more waiting");
	free(s);
	/* Far more than 20 events (a submit each): the latest 20 only, the
	 * newest first. */
	s = section(p, "events");
	ck_assert_uint_eq(count(s, "<tr><td>"), STATUS_PAGE_EVENTS);
	ck_assert_msg(strstr(s, "<td>130</td>") != NULL &&
	    strstr(s, "<td>111</td>") != NULL &&
	    strstr(s, "<td>110</td>") == NULL, "not the latest 20: %s", s);
	ck_assert_msg(strstr(s, "<td>130</td>") < strstr(s, "<td>111</td>"),
	    "the newest event is not first");
	free(s);
	/* Without a topology the nodes are one group, open. */
	HAS(p, "<details class=\"sw\" open><summary><b>node01 &ndash; node02"
	    "</b>");
	free(p);
}
END_TEST

/* Above STATUS_PAGE_OPEN_NODES nodes (here a smaller bound: the same
 * code) the page holds no node row, one summary row per group linking
 * to /?switch=NAME; nodes under no switch come in groups of
 * STATUS_PAGE_GROUP_NODES named unswitched-1, unswitched-2, ... */
START_TEST(test_page_collapse)
{
	char *p;

	open_domain(NULL, 101, 1);
	open_nodes = 101;
	p = page();
	ck_assert_uint_eq(count(p, "<details class=\"sw\" open>"), 4);
	ck_assert_uint_eq(count(p, "<th>node"), 101);
	LACKS(p, "follow a switch to see its nodes");
	LACKS(p, "<div class=\"sw\">");
	free(p);
	open_nodes = 100;
	p = page();
	LACKS(p, "<details class=\"sw\"");
	ck_assert_uint_eq(count(p, "<th>node"), 0);
	ck_assert_uint_eq(count(p, "<div class=\"sw\"><a href=\"/?switch="),
	    (101 + STATUS_PAGE_GROUP_NODES - 1) / STATUS_PAGE_GROUP_NODES);
	HAS(p, "<div class=\"sw\"><a href=\"/?switch=unswitched-1\"><b>"
	    "node0001 &ndash; node0032</b></a> 32 nodes, 32 GPUs: "
	    "<span class=\"n free\">32 free</span>");
	HAS(p, "<a href=\"/?switch=unswitched-4\"><b>node0097 &ndash; "
	    "node0101</b></a> 5 nodes, 5 GPUs:");
	HAS(p, "follow a switch to see its nodes");
	free(p);
	/* One group's page: its rows only, the others as links. */
	switch_name = "unswitched-4";
	p = page();
	ck_assert_uint_eq(count(p, "<details class=\"sw\" open>"), 1);
	ck_assert_uint_eq(count(p, "<th>node"), 5);
	HAS(p, "<th>node0097</th>");
	HAS(p, "<th>node0101</th>");
	ck_assert_uint_eq(count(p, "<div class=\"sw\"><a href=\"/?switch="),
	    3);
	LACKS(p, "/?switch=unswitched-4\"");
	HAS(p, "<section id=\"events\">");
	free(p);
	/* A name no group has: said, and every group as a link. */
	switch_name = "leaf9";
	p = page();
	HAS(p, "<b class=\"bad\">No switch leaf9.</b>");
	ck_assert_uint_eq(count(p, "<th>node"), 0);
	ck_assert_uint_eq(count(p, "<div class=\"sw\"><a href=\"/?switch="),
	    4);
	free(p);
	switch_name = NULL;
	open_nodes = 0;
}
END_TEST

/* Which names /?switch= takes. */
START_TEST(test_switch_ok)
{
	char name[PEER_NAME_MAX + 2];

	ck_assert(status_page_switch_ok("leaf0"));
	ck_assert(status_page_switch_ok("unswitched-1"));
	ck_assert(status_page_switch_ok("r1.sw_2-a"));
	ck_assert(!status_page_switch_ok(""));
	ck_assert(!status_page_switch_ok("-leaf"));
	ck_assert(!status_page_switch_ok("leaf 0"));
	ck_assert(!status_page_switch_ok("a<b"));
	ck_assert(!status_page_switch_ok("caf\xc3\xa9"));
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert(status_page_switch_ok(name + 1));	/* 64 */
	ck_assert(!status_page_switch_ok(name));	/* 65 */
}
END_TEST

/* Each node's row shows its features as --constraint matches them: the
 * configured ones, then the derived ones dimmed (lib/features.h). */
START_TEST(test_page_features)
{
	struct cerr err;
	struct node *n;
	char *p, *s;

	open_domain(NULL, 2, 4);
	ck_assert_msg(domain_add_node(&D, "node03", 1, false, &err) != 0,
	    "add node03: %s", err.text);
	n = nodes_get(D.ns, "node02");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(inventory_set_features(n->inv, "fp64,ib", err.text,
	    sizeof(err.text)), 0);
	p = page();
	s = section(p, "nodes");
	HAS(s, "<td class=\"feat\"><span class=\"dim\" title=\"derived from "
	    "the inventory\">h100,nvidia-h100-80gb-hbm3,nvlink</span></td>");
	HAS(s, "<td class=\"feat\">fp64,ib <span class=\"dim\" title=\"derived "
	    "from the inventory\">h100,nvidia-h100-80gb-hbm3,nvlink</span>"
	    "</td>");
	/* One GPU: no NVLink to speak of. */
	HAS(s, "\">h100,nvidia-h100-80gb-hbm3</span></td>");
	ck_assert_uint_eq(count(s, "<td class=\"feat\">"), 3);
	free(s);
	free(p);
}
END_TEST

/* Nodes with a suspect score: none, no table; else each with its score,
 * highest first, whether it crossed, its evidence. */
START_TEST(test_page_suspects)
{
	char reason[SUSPECT_REASON_MAX + 1], *p, *s;
	struct suspect_opts so;
	struct cerr err;

	suspect_opts_default(&so);
	ck_assert_msg(domain_open_suspect(&D, NULL, &so, &err) == 0,
	    "domain_open: %s", err.text);
	ck_assert_msg(domain_add_nodes(&D, 3, 4, &err) == 0, "add nodes: %s",
	    err.text);
	p = page();
	s = section(p, "nodes");
	LACKS(s, "id=\"suspects\"");
	free(s);
	free(p);
	ck_assert_int_ge(suspect_hardware(D.sus, "node02", SUSPECT_XID, 0,
	    "xid=79", D.now, reason, sizeof(reason), &err), 0);
	D.now += 1000;
	ck_assert_int_ge(suspect_hardware(D.sus, "node03", SUSPECT_HEALTH, 0,
	    "gpu 1 FAILED", D.now, reason, sizeof(reason), &err), 0);
	/* A second incident two hours on, not the same one seen twice. */
	D.now += 2 * 3600000;
	ck_assert_int_ge(suspect_hardware(D.sus, "node03", SUSPECT_DOWN, 0,
	    "no heartbeat", D.now, reason, sizeof(reason), &err), 0);
	domain_commit(&D);
	p = page();
	s = section(p, "nodes");
	HAS(s, "<b>Suspect nodes</b> 2 with failures that count against "
	    "them</summary>");
	/* Two hardware failures within 72 h: it crossed. */
	HAS(s, "<tr><td>node03</td><td class=\"r\">2</td><td><b "
	    "class=\"drain\">suspect</b></td><td class=\"why\">down at ");
	HAS(s, "<tr><td>node02</td><td class=\"r\">1</td><td>-</td>"
	    "<td class=\"why\">xid at ");
	ck_assert(strstr(s, "<td>node03</td>") < strstr(s, "<td>node02</td>"));
	LACKS(s, "<td>node01</td><td class=\"r\">");
	free(s);
	free(p);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("status_page");
	TCase *t = tcase_create("escape");

	tcase_add_test(t, test_escape_markup);
	tcase_add_test(t, test_escape_utf8);
	tcase_add_test(t, test_switch_ok);
	suite_add_tcase(s, t);
	t = tcase_create("page");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_page_states);
	tcase_add_test(t, test_page_bounds);
	tcase_add_test(t, test_page_collapse);
	tcase_add_test(t, test_page_features);
	tcase_add_test(t, test_page_suspects);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed == 0 ? 0 : 1;
}
