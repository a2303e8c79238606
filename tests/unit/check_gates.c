/* daemon/controller/domain/gates.c in the controller domain (tests/domain): an
 * array's %N holds however many GPUs are free, and the task that ends
 * lets exactly one more start; a chain of afterok jobs advances one link
 * per pass, each end asking for that pass; a dependency that can never
 * hold cancels the job in the pass and asks for the pass that judges
 * what depends on it; singleton lets one of a name run though both fit. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "tests/domain/domain.h"

struct opt {
	const char *array;
	const char *dep;
	const char *name;
};

static void
set_spec(struct job_spec *spec, void *arg)
{
	const struct opt *o = arg;

	if (o->array != NULL)
		spec->array = strdup(o->array);
	if (o->dep != NULL)
		spec->dependency = strdup(o->dep);
	if (o->name != NULL)
		spec->name = strdup(o->name);
	spec->max_restarts = 0;
}

static uint64_t
submit(struct domain *d, const char *array, const char *dep,
    const char *name)
{
	struct opt o = { array, dep, name };
	struct cerr err;
	uint64_t id;

	id = domain_submit(d, "alice", 1, 1, set_spec, &o, &err);
	ck_assert_msg(id != 0, "%s", err.text);
	return id;
}

static void
setup(struct domain *d, unsigned nodes)
{
	struct cerr err;
	char name[16];
	unsigned i;

	ck_assert_msg(domain_open(d, NULL, &err) == 0, "%s", err.text);
	for (i = 0; i < nodes; i++) {
		snprintf(name, sizeof(name), "node%02u", i + 1);
		ck_assert(domain_add_node(d, name, 1, false, &err) != 0);
	}
}

/* The job ends with status on its node. */
static void
end(struct domain *d, uint64_t id, int status)
{
	const struct job *j = domain_job(d, id);
	struct cerr err;

	ck_assert_msg(domain_exit(d, domain_rank_node(j, 0), id, j->attempt,
	    0, status, &err) == 0, "%s", err.text);
}

START_TEST(test_throttle)
{
	struct domain d;
	uint64_t a;
	unsigned i;

	setup(&d, 4);
	a = submit(&d, "0-5%2", NULL, NULL);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 2);
	/* The first tasks, in index order. */
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, a, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, a + 1, 0), 1);
	ck_assert_str_eq(domain_job(&d, a + 2)->reason, "JobArrayTaskLimit");
	domain_answer_launches(&d, NULL);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 2);
	/* The second task ends first: the next to start is still the
	 * lowest waiting index, whatever holds GPUs before it. */
	for (i = 0; i < 4; i++) {
		end(&d, a + (i == 0 ? 1 : i == 1 ? 0 : i), 0);
		domain_pass(&d);
		ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0),
		    3 + i);
		ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, a + 2 + i,
		    0), 1);
		domain_answer_launches(&d, NULL);
	}
	domain_close(&d);
}
END_TEST

START_TEST(test_chain)
{
	struct domain d;
	uint64_t a, b, c, x;
	unsigned wanted;

	setup(&d, 2);
	a = submit(&d, NULL, NULL, NULL);
	ck_assert_uint_eq(a, 1);
	b = submit(&d, NULL, "afterok:1", NULL);
	c = submit(&d, NULL, "afterok:2", NULL);
	x = submit(&d, NULL, "afterany:2", NULL);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 1);
	ck_assert_str_eq(domain_job(&d, b)->reason, "Dependency");
	ck_assert_str_eq(domain_job(&d, c)->reason, "Dependency");
	domain_answer_launches(&d, NULL);
	/* a's end asks for a pass, which starts b. */
	wanted = d.passes_wanted;
	end(&d, a, 0);
	ck_assert_uint_gt(d.passes_wanted, wanted);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, b, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, 0, 0), 2);
	domain_answer_launches(&d, NULL);
	/* b fails: c can never start; x (afterany) can. */
	end(&d, b, 1 << 8);
	ck_assert_int_eq(domain_job(&d, b)->state, JOB_FAILED);
	wanted = d.passes_wanted;
	domain_pass(&d);
	ck_assert_int_eq(domain_job(&d, c)->state, JOB_CANCELLED);
	ck_assert_str_eq(domain_job(&d, c)->reason, JOBS_DEPEND_NEVER);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, c, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, x, 0), 1);
	/* ... and the cancel asked for another pass. */
	ck_assert_uint_gt(d.passes_wanted, wanted);
	domain_close(&d);
}
END_TEST

START_TEST(test_singleton)
{
	struct domain d;
	uint64_t s1, s2, other;

	setup(&d, 3);
	s1 = submit(&d, NULL, "singleton", "solo");
	s2 = submit(&d, NULL, "singleton", "solo");
	other = submit(&d, NULL, "singleton", "other");
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, s1, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, s2, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, other, 0), 1);
	ck_assert_str_eq(domain_job(&d, s2)->reason, "Dependency");
	domain_answer_launches(&d, NULL);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, s2, 0), 0);
	end(&d, s1, 0);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, s2, 0), 1);
	domain_close(&d);
}
END_TEST

static void
begin_spec(struct job_spec *spec, void *arg)
{
	spec->begin_ms = *(const int64_t *)arg;
}

/* --begin: PENDING with reason BeginTime until its time, then started
 * by the first pass (every tick runs one). */
START_TEST(test_begin)
{
	struct domain d;
	struct cerr err;
	int64_t at;
	uint64_t id;

	setup(&d, 1);
	at = d.now + 60000;
	id = domain_submit(&d, "alice", 1, 1, begin_spec, &at, &err);
	ck_assert_msg(id != 0, "%s", err.text);
	domain_pass(&d);
	ck_assert_int_eq(domain_job(&d, id)->state, JOB_PENDING);
	ck_assert_str_eq(domain_job(&d, id)->reason, "BeginTime");
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, id, 0), 0);
	/* Heartbeats keep the node up while time passes. */
	domain_run_for(&d, 59000, 1000);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, id, 0), 0);
	ck_assert_str_eq(domain_job(&d, id)->reason, "BeginTime");
	domain_run_for(&d, 1000, 1000);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, id, 0), 1);
	domain_close(&d);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gates");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_throttle);
	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_singleton);
	tcase_add_test(tc, test_begin);
	tcase_add_test(tc, test_begin);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
