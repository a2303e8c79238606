/* client/nodes_view.c: --state names, the state each node is counted
 * under, GPUs as A/I/O that add up, the --summary figures and text, the
 * --reasons groups, and the REASON cell with who and when. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/nodes_view.h"

/* A node: up, drain, busy, total, held, unavailable. */
static struct nodes_view_node
mk(const char *name, bool up, const char *drain, bool busy, unsigned total,
    unsigned held, unsigned unavail)
{
	struct nodes_view_node n;

	memset(&n, 0, sizeof(n));
	n.name = name;
	n.up = up;
	n.drain = drain;
	n.busy = busy;
	n.gpus_total = total;
	n.gpus_held = held;
	n.gpus_unavailable = unavail;
	return n;
}

START_TEST(test_states_parse)
{
	unsigned mask = 0;
	struct cerr err;

	ck_assert_int_eq(nodes_view_states_parse("idle,Mixed,DOWN", &mask,
	    &err), 0);
	ck_assert_uint_eq(mask, (1u << NODES_VIEW_IDLE) |
	    (1u << NODES_VIEW_MIXED) | (1u << NODES_VIEW_DOWN));
	mask = 0;
	ck_assert_int_eq(nodes_view_states_parse("up", &mask, &err), 0);
	ck_assert_uint_eq(mask, NODES_VIEW_BIT_UP);
	ck_assert_int_eq(nodes_view_states_parse("drained,busy", &mask,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, "'busy' is not a node state") != NULL,
	    "%s", err.text);
	ck_assert_int_eq(nodes_view_states_parse("", &mask, &err), -1);
	ck_assert_int_eq(nodes_view_states_parse("idle,", &mask, &err), -1);
	ck_assert_int_eq(nodes_view_states_parse("IDLEX", &mask, &err), -1);
}
END_TEST

START_TEST(test_state)
{
	struct nodes_view_node n;
	unsigned a, i, o;

	n = mk("a", true, "", false, 8, 0, 0);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_IDLE);
	n = mk("a", true, "", true, 8, 3, 1);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_MIXED);
	nodes_view_gpus(&n, &a, &i, &o);
	ck_assert_uint_eq(a, 3);
	ck_assert_uint_eq(i, 4);
	ck_assert_uint_eq(o, 1);
	/* A CPU-only job on a GPU node: MIXED; on a node without GPUs:
	 * ALLOCATED. */
	n = mk("a", true, "", true, 8, 0, 0);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_MIXED);
	n = mk("a", true, "", true, 0, 0, 0);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_ALLOCATED);
	n = mk("a", true, "", true, 8, 8, 0);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_ALLOCATED);
	ck_assert_uint_eq(nodes_view_bits(&n), NODES_VIEW_BIT_UP |
	    (1u << NODES_VIEW_ALLOCATED));
	n = mk("a", true, "DRAINING", true, 8, 2, 6);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_DRAINING);
	nodes_view_gpus(&n, &a, &i, &o);
	ck_assert_uint_eq(a + i + o, 8);
	ck_assert_uint_eq(o, 6);
	/* DOWN and drained: counted DOWN, found by DRAINED too, not UP;
	 * every GPU is other, whatever the controller still counts held. */
	n = mk("a", false, "DRAINED", false, 8, 2, 8);
	ck_assert_int_eq(nodes_view_state(&n), NODES_VIEW_DOWN);
	ck_assert_str_eq(nodes_view_state_name(nodes_view_state(&n)), "DOWN");
	ck_assert_uint_eq(nodes_view_bits(&n), (1u << NODES_VIEW_DOWN) |
	    (1u << NODES_VIEW_DRAINED));
	nodes_view_gpus(&n, &a, &i, &o);
	ck_assert_uint_eq(a, 0);
	ck_assert_uint_eq(i, 0);
	ck_assert_uint_eq(o, 8);
	/* A controller that counts more unavailable than there is room for
	 * cannot make them add up to more than the total. */
	n = mk("a", true, "", true, 4, 3, 4);
	nodes_view_gpus(&n, &a, &i, &o);
	ck_assert_uint_eq(a + i + o, 4);
	ck_assert_uint_eq(i, 0);
}
END_TEST

/* Print s into a string. */
static char *
summary_text(const struct nodes_view_summary *s)
{
	char *buf = NULL;
	size_t len;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(nodes_view_summary_print(s, fp), 0);
	fclose(fp);
	return buf;
}

START_TEST(test_summary)
{
	struct nodes_view_summary *s = nodes_view_summary_new();
	struct nodes_view_node v[5];
	char *text, *dump;
	json_t *j;
	size_t i;

	v[0] = mk("node01", true, "", true, 2, 1, 0);
	v[1] = mk("node02", true, "", false, 2, 0, 0);
	v[2] = mk("node03", true, "DRAINED", false, 2, 0, 2);
	v[3] = mk("node04", true, "DRAINED", false, 2, 0, 2);
	v[4] = mk("node05", false, "", false, 2, 0, 2);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(nodes_view_summary_add(s, &v[i]), 0);
	text = summary_text(s);
	ck_assert_str_eq(text,
	    "NODES(A/I/O/T)  GPUS(A/I/O/T)\n"
	    "1/1/3/5         1/3/6/10\n"
	    "\n"
	    "STATE    NODES  GPUS(A/I/O/T)  NODELIST\n"
	    "DOWN     1      0/0/2/2        node05\n"
	    "DRAINED  2      0/0/4/4        node[03-04]\n"
	    "MIXED    1      1/1/0/2        node01\n"
	    "IDLE     1      0/2/0/2        node02\n");
	free(text);
	j = nodes_view_summary_json(s);
	ck_assert_ptr_nonnull(j);
	dump = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(dump,
	    "{\"gpus\":{\"allocated\":1,\"idle\":3,\"other\":6,\"total\":10},"
	    "\"nodes\":{\"allocated\":1,\"idle\":1,\"other\":3,\"total\":5},"
	    "\"states\":["
	    "{\"gpus\":{\"allocated\":0,\"idle\":0,\"other\":2,\"total\":2},"
	    "\"nodelist\":\"node05\",\"nodes\":1,\"state\":\"DOWN\"},"
	    "{\"gpus\":{\"allocated\":0,\"idle\":0,\"other\":4,\"total\":4},"
	    "\"nodelist\":\"node[03-04]\",\"nodes\":2,\"state\":\"DRAINED\"},"
	    "{\"gpus\":{\"allocated\":1,\"idle\":1,\"other\":0,\"total\":2},"
	    "\"nodelist\":\"node01\",\"nodes\":1,\"state\":\"MIXED\"},"
	    "{\"gpus\":{\"allocated\":0,\"idle\":2,\"other\":0,\"total\":2},"
	    "\"nodelist\":\"node02\",\"nodes\":1,\"state\":\"IDLE\"}]}");
	free(dump);
	json_decref(j);
	nodes_view_summary_free(s);
	/* No nodes: zeros and an empty table. */
	s = nodes_view_summary_new();
	text = summary_text(s);
	ck_assert_str_eq(text, "NODES(A/I/O/T)  GPUS(A/I/O/T)\n"
	    "0/0/0/0         0/0/0/0\n\nSTATE  NODES  GPUS(A/I/O/T)  "
	    "NODELIST\n");
	free(text);
	nodes_view_summary_free(s);
}
END_TEST

START_TEST(test_reasons)
{
	struct nodes_view_reasons *r = nodes_view_reasons_new();
	struct nodes_view_node v[5];
	char *buf = NULL, *dump;
	size_t len, i;
	json_t *j;
	FILE *fp;

	/* Same reason, who and second: one group, whatever the ms. */
	v[0] = mk("node01", true, "DRAINED", false, 2, 0, 2);
	v[0].reason = "maint";
	v[0].drain_actor = "ops";
	v[0].drain_ms = 1000;
	v[1] = v[0];
	v[1].name = "node02";
	v[1].drain_ms = 1999;
	/* Another second: its own group. */
	v[2] = v[0];
	v[2].name = "node03";
	v[2].drain_ms = 2000;
	/* DOWN, not drained: no one, its DOWN time. */
	v[3] = mk("node04", false, "", false, 2, 0, 2);
	v[3].reason = "no heartbeat for 5 s";
	v[3].since_ms = 500;
	/* UP, not drained: not listed. */
	v[4] = mk("node05", true, "", false, 2, 0, 0);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(nodes_view_reasons_add(r, &v[i]), 0);
	ck_assert_ptr_nonnull(fp = open_memstream(&buf, &len));
	setenv("TZ", "UTC", 1);
	ck_assert_int_eq(nodes_view_reasons_print(r, fp), 0);
	fclose(fp);
	ck_assert_str_eq(buf,
	    "REASON                USER  TIMESTAMP                NODELIST\n"
	    "no heartbeat for 5 s  -     1970-01-01 00:00:00 UTC  node04\n"
	    "maint                 ops   1970-01-01 00:00:01 UTC  node[01-02]\n"
	    "maint                 ops   1970-01-01 00:00:02 UTC  node03\n");
	free(buf);
	j = nodes_view_reasons_json(r);
	dump = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(dump,
	    "[{\"nodelist\":\"node04\",\"nodes\":[\"node04\"],"
	    "\"reason\":\"no heartbeat for 5 s\",\"time\":"
	    "\"1970-01-01T00:00:00Z\",\"user\":null},"
	    "{\"nodelist\":\"node[01-02]\",\"nodes\":[\"node01\",\"node02\"],"
	    "\"reason\":\"maint\",\"time\":\"1970-01-01T00:00:01Z\","
	    "\"user\":\"ops\"},"
	    "{\"nodelist\":\"node03\",\"nodes\":[\"node03\"],"
	    "\"reason\":\"maint\",\"time\":\"1970-01-01T00:00:02Z\","
	    "\"user\":\"ops\"}]");
	free(dump);
	json_decref(j);
	nodes_view_reasons_free(r);
}
END_TEST

START_TEST(test_reason_cell)
{
	struct nodes_view_node n = mk("node01", true, "DRAINED", false, 2, 0,
	    2);
	char buf[256];

	setenv("TZ", "UTC", 1);
	ck_assert_ptr_null(nodes_view_reason_cell(&n, buf, sizeof(buf)));
	n.reason = "maint";
	ck_assert_str_eq(nodes_view_reason_cell(&n, buf, sizeof(buf)),
	    "maint");
	n.drain_actor = "ops";
	n.drain_ms = 86400000;
	ck_assert_str_eq(nodes_view_reason_cell(&n, buf, sizeof(buf)),
	    "maint (ops, 1970-01-02 00:00:00 UTC)");
}
END_TEST

/* The FEATURES cell and --constraint on both lists. */
START_TEST(test_features)
{
	static const char *const conf[] = { "fp64", "ib" };
	static const char *const derived[] = { "h100",
	    "nvidia-h100-80gb-hbm3", "nvlink", "ib" };
	struct nodes_view_node n = mk("a", true, "", false, 8, 0, 0);
	char buf[256];

	ck_assert_ptr_null(nodes_view_features_cell(&n, buf, sizeof(buf)));
	ck_assert_int_eq(nodes_view_matches(&n, "h100"), 0);
	n.derived = derived;
	n.nderived = 3;
	ck_assert_str_eq(nodes_view_features_cell(&n, buf, sizeof(buf)),
	    "h100,nvidia-h100-80gb-hbm3,nvlink");
	n.features = conf;
	n.nfeatures = 2;
	n.nderived = 4;		/* ib both configured and derived: once */
	ck_assert_str_eq(nodes_view_features_cell(&n, buf, sizeof(buf)),
	    "fp64,ib,h100,nvidia-h100-80gb-hbm3,nvlink");
	/* Too small a buffer: no cut list. */
	ck_assert_ptr_null(nodes_view_features_cell(&n, buf, 12));
	ck_assert_str_eq(nodes_view_features_cell(&n, buf, 42),
	    "fp64,ib,h100,nvidia-h100-80gb-hbm3,nvlink");
	ck_assert_ptr_null(nodes_view_features_cell(&n, buf, 41));
	ck_assert_int_eq(nodes_view_matches(&n, "h100&fp64"), 1);
	ck_assert_int_eq(nodes_view_matches(&n, "nvlink&(a100|ib)"), 1);
	ck_assert_int_eq(nodes_view_matches(&n, "a100"), 0);
	ck_assert_int_eq(nodes_view_matches(&n, "fp64&nvl72"), 0);
	n.nfeatures = 0;
	ck_assert_int_eq(nodes_view_matches(&n, "fp64"), 0);
	ck_assert_int_eq(nodes_view_matches(&n, "ib"), 1);
}
END_TEST

static Suite *
nodes_view_suite(void)
{
	Suite *s = suite_create("nodes_view");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_states_parse);
	tcase_add_test(tc, test_state);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_reasons);
	tcase_add_test(tc, test_reason_cell);
	tcase_add_test(tc, test_features);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(nodes_view_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
