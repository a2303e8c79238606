/* daemon/controller/domain/gates.c in the controller domain (tests/domain): an
 * array's %N holds however many GPUs are free, and the task that ends
 * lets exactly one more start; a chain of afterok jobs advances one link
 * per pass, each end asking for that pass; a dependency that can never
 * hold cancels the job in the pass and asks for the pass that judges
 * what depends on it; singleton lets one of a name run though both fit.
 * What a submit may name (an existing job, the submitter's own unless
 * an admin's, aftercorr only on arrays), afternotok, afterany and '?',
 * and dependencies on arrays, task by task or whole. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/store/store.h"
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

/* A chain a -> b -> c of afterok runs one link at a time, in order,
 * though every link fits at once. */
START_TEST(test_afterok_chain_in_order)
{
	struct domain d;
	uint64_t a, b, c;

	setup(&d, 3);
	a = submit(&d, NULL, NULL, NULL);
	b = submit(&d, NULL, "afterok:1", NULL);
	c = submit(&d, NULL, "afterok:2", NULL);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, a, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, b, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, c, 0), 0);
	end(&d, a, 0);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, b, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, c, 0), 0);
	ck_assert_str_eq(domain_job(&d, c)->reason, "Dependency");
	end(&d, b, 0);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, c, 0), 1);
	end(&d, c, 0);
	ck_assert_int_eq(domain_job(&d, a)->state, JOB_COMPLETED);
	ck_assert_int_eq(domain_job(&d, b)->state, JOB_COMPLETED);
	ck_assert_int_eq(domain_job(&d, c)->state, JOB_COMPLETED);
	domain_close(&d);
}
END_TEST

/* Submit as who (any role) with dependency dep: the id, or 0 with err. */
static uint64_t
submit_as(struct domain *d, const char *name, enum role role,
    const char *dep, struct cerr *err)
{
	struct opt o = { NULL, dep, NULL };
	struct job_spec spec;
	struct peer who;
	uint64_t id = 0;

	memset(&who, 0, sizeof(who));
	snprintf(who.name, sizeof(who.name), "%s", name);
	who.role = role;
	job_spec_init(&spec);
	spec.nodes_min = spec.nodes_max = 1;
	spec.gpus_per_node = 1;
	ck_assert((spec.argv = calloc(1, sizeof(*spec.argv))) != NULL);
	ck_assert((spec.argv[0] = strdup("true")) != NULL);
	spec.argc = 1;
	set_spec(&spec, &o);
	if (jobs_submit(d->js, &who, &spec, d->now, &id, err) == -1)
		id = 0;
	domain_commit(d);
	return id;
}

/* A dependency the controller cannot honour is refused at submit,
 * naming why, and leaves no job: an unknown job, aftercorr on a job
 * that is no array, another user's job (an admin may name anyone's). */
START_TEST(test_depend_refused)
{
	struct domain d;
	struct cerr err;
	uint64_t a, z;

	setup(&d, 1);
	a = submit(&d, NULL, NULL, NULL);
	ck_assert_uint_eq(submit_as(&d, "alice", ROLE_USER, "afterok:9999",
	    &err), 0);
	ck_assert_msg(strstr(err.text, "--dependency afterok:9999: no job "
	    "9999") != NULL, "%s", err.text);
	ck_assert_uint_eq(submit_as(&d, "alice", ROLE_USER, "aftercorr:1",
	    &err), 0);
	ck_assert_msg(strstr(err.text, "aftercorr is for arrays") != NULL,
	    "%s", err.text);
	ck_assert_uint_eq(submit_as(&d, "bob", ROLE_USER, "afterok:1", &err),
	    0);
	ck_assert_msg(strstr(err.text, "job 1 belongs to alice") != NULL,
	    "%s", err.text);
	/* Nothing was made of them. */
	ck_assert_ptr_null(domain_job(&d, a + 1));
	z = submit_as(&d, "root", ROLE_ADMIN, "afterok:1", &err);
	ck_assert_msg(z == a + 1, "admin: %s", err.text);
	ck_assert_str_eq(domain_job(&d, z)->spec.dependency, "afterok:1");
	domain_close(&d);
}
END_TEST

struct dep_ev {
	size_t n;
	char detail[256];
};

static int
dep_ev_cb(const struct store_event *ev, void *arg)
{
	struct dep_ev *e = arg;

	e->n++;
	snprintf(e->detail, sizeof(e->detail), "%s",
	    ev->detail != NULL ? ev->detail : "");
	return 0;
}

/* afternotok on a job that COMPLETED can never hold: the job is
 * cancelled (DependencyNeverSatisfied, a "dependency" event naming the
 * item) and, in turn, so is a job that waited on it. The spec keeps
 * the dependency as given. */
START_TEST(test_afternotok_on_completed_cascades)
{
	struct domain d;
	struct dep_ev ev = { 0 };
	struct cerr err;
	char want[64];
	uint64_t a, b, x, y;

	setup(&d, 2);
	a = submit(&d, NULL, NULL, NULL);
	snprintf(want, sizeof(want), "afterok:%llu", (unsigned long long)a);
	b = submit(&d, NULL, want, NULL);
	ck_assert_str_eq(domain_job(&d, b)->spec.dependency, want);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	end(&d, a, 0);
	ck_assert_int_eq(domain_job(&d, a)->state, JOB_COMPLETED);
	snprintf(want, sizeof(want), "afternotok:%llu", (unsigned long long)a);
	x = submit(&d, NULL, want, NULL);
	snprintf(want, sizeof(want), "afterok:%llu", (unsigned long long)x);
	y = submit(&d, NULL, want, NULL);
	domain_pass(&d);
	ck_assert_int_eq(domain_job(&d, x)->state, JOB_CANCELLED);
	ck_assert_str_eq(domain_job(&d, x)->reason, JOBS_DEPEND_NEVER);
	ck_assert_int_eq(store_events_list(d.st, 0, x, NULL, "dependency", 0,
	    0, dep_ev_cb, &ev, &err), 0);
	ck_assert_uint_eq(ev.n, 1);
	snprintf(want, sizeof(want), "afternotok:%llu", (unsigned long long)a);
	ck_assert_msg(strstr(ev.detail, want) != NULL, "event: %s",
	    ev.detail);
	domain_pass(&d);
	ck_assert_int_eq(domain_job(&d, y)->state, JOB_CANCELLED);
	ck_assert_str_eq(domain_job(&d, y)->reason, JOBS_DEPEND_NEVER);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, x, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, y, 0), 0);
	domain_close(&d);
}
END_TEST

/* On a job that FAILED: afternotok holds, and so does afterany or
 * afterok ('?' is or). */
START_TEST(test_afternotok_afterany_on_failed)
{
	struct domain d;
	char dep[64];
	uint64_t f, g, h;

	setup(&d, 2);
	f = submit(&d, NULL, NULL, NULL);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	snprintf(dep, sizeof(dep), "afternotok:%llu", (unsigned long long)f);
	g = submit(&d, NULL, dep, NULL);
	snprintf(dep, sizeof(dep), "afterany:%llu?afterok:%llu",
	    (unsigned long long)f, (unsigned long long)f);
	h = submit(&d, NULL, dep, NULL);
	domain_pass(&d);
	ck_assert_str_eq(domain_job(&d, g)->reason, "Dependency");
	ck_assert_str_eq(domain_job(&d, h)->reason, "Dependency");
	end(&d, f, 1 << 8);
	ck_assert_int_eq(domain_job(&d, f)->state, JOB_FAILED);
	domain_pass(&d);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, g, 0), 1);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, h, 0), 1);
	domain_close(&d);
}
END_TEST

/* Arrays: afterok on an array waits for every task; aftercorr pairs
 * tasks by index (the task after a failed one is cancelled, the one
 * after a completed one runs). */
START_TEST(test_array_dependencies)
{
	struct domain d;
	char dep[64];
	uint64_t arr, whole, bad, corr;
	unsigned i;

	setup(&d, 3);
	arr = submit(&d, "0-2", NULL, NULL);
	snprintf(dep, sizeof(dep), "afterok:%llu", (unsigned long long)arr);
	whole = submit(&d, NULL, dep, NULL);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_str_eq(domain_job(&d, whole)->reason, "Dependency");
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, whole, 0),
		    0);
		end(&d, arr + i, 0);
		domain_pass(&d);
	}
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, whole, 0), 1);
	domain_answer_launches(&d, NULL);
	end(&d, whole, 0);

	bad = submit(&d, "0-1", NULL, NULL);
	snprintf(dep, sizeof(dep), "aftercorr:%llu", (unsigned long long)bad);
	corr = submit(&d, "0-1", dep, NULL);
	domain_pass(&d);
	domain_answer_launches(&d, NULL);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, corr, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, corr + 1, 0), 0);
	end(&d, bad, 1 << 8);		/* task 0 fails */
	end(&d, bad + 1, 0);		/* task 1 completes */
	domain_pass(&d);
	ck_assert_int_eq(domain_job(&d, corr)->state, JOB_CANCELLED);
	ck_assert_str_eq(domain_job(&d, corr)->reason, JOBS_DEPEND_NEVER);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, corr, 0), 0);
	ck_assert_uint_eq(domain_count(&d, DOMAIN_LAUNCH, corr + 1, 0), 1);
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
	tcase_add_test(tc, test_afterok_chain_in_order);
	tcase_add_test(tc, test_depend_refused);
	tcase_add_test(tc, test_afternotok_on_completed_cascades);
	tcase_add_test(tc, test_afternotok_afterany_on_failed);
	tcase_add_test(tc, test_array_dependencies);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
