/* metrics_gpu_state: each GPU is in exactly one state of cohort_gpus,
 * and "free" only where a new job could go now (UP, not drained, not a
 * spare, healthy, no job). Every combination of node state, drain,
 * spare, GPU health and job is checked against the rule written out. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/web/metrics.h"
#include "daemon/controller/domain/nodes.h"

static void
node_with(struct node *n, bool up, bool drained, bool spare, bool failed,
    bool held)
{
	/* One node at a time: its inventory and verdict live here. */
	static struct inventory inv;
	static struct node_health health;

	memset(n, 0, sizeof(*n));
	memset(&inv, 0, sizeof(inv));
	memset(&health, 0, sizeof(health));
	n->inv = &inv;
	n->health = &health;
	n->state = up ? NODE_UP : NODE_DOWN;
	n->drained = drained;
	n->spare = spare;
	n->inv->ngpus = 2;
	/* GPU 1 is the one looked at; GPU 0 stays healthy and idle. */
	if (failed) {
		n->health->ngpus = 1;
		n->health->gpus[0].index = 1;
		n->health->gpus[0].health = HEALTH_FAILED;
	}
	n->gpu_job[1] = held ? 42 : 0;
}

START_TEST(test_every_combination)
{
	struct node n;
	const char *want, *got;
	int m;

	for (m = 0; m < 32; m++) {
		bool up = m & 1, drained = m & 2, spare = m & 4,
		    failed = m & 8, held = m & 16;

		node_with(&n, up, drained, spare, failed, held);
		if (!up)
			want = "unavailable";
		else if (failed)
			want = "failed";
		else if (held)
			want = "allocated";
		else if (drained)
			want = "unavailable";
		else if (spare)
			want = "spare";
		else
			want = "free";
		got = metrics_gpu_state(&n, 1);
		ck_assert_msg(strcmp(got, want) == 0, "up %d drained %d spare "
		    "%d failed %d held %d: %s, not %s", up, drained, spare,
		    failed, held, got, want);
		/* The other GPU of the node: healthy and idle. */
		want = !up || drained ? "unavailable" : spare ? "spare" :
		    "free";
		ck_assert_str_eq(metrics_gpu_state(&n, 0), want);
	}
}
END_TEST

START_TEST(test_down_hides_what_was_heard)
{
	struct node n;

	/* A DOWN node's last verdict and allocation are stale: its GPUs are
	 * unavailable, not failed or allocated. */
	node_with(&n, false, false, false, true, true);
	ck_assert_str_eq(metrics_gpu_state(&n, 1), "unavailable");
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_combination);
	tcase_add_test(tc, test_down_hides_what_was_heard);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(metrics_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
