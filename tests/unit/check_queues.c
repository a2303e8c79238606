/* The controller's queues (daemon/controller/domain/queues.c): the tree and its
 * errors, admission at submit, fair share with its half-life, the
 * scheduler's view and the report of `cohort queues`. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/queues.h"

#define H (3600LL * 1000)	/* the half-life of these tests: 1 h */

static char *
xs(const char *s)
{
	char *c = strdup(s);

	ck_assert_ptr_nonnull(c);
	return c;
}

/* A def with the defaults ctl_config.c gives a [queue NAME]. */
static struct queue_def
qdef(const char *name, const char *parent, uint32_t gpus)
{
	struct queue_def d = { .gpus = gpus, .borrow_limit = SCHED_UNLIMITED,
	    .lend_limit = SCHED_UNLIMITED, .weight = 1,
	    .preempt = SCHED_PREEMPT_BORROWERS };

	d.name = xs(name);
	d.parent = parent != NULL ? xs(parent) : NULL;
	return d;
}

static void
qusers(struct queue_def *d, const char *u1, const char *u2)
{
	ck_assert_int_eq(strv_append(&d->users, &d->nusers, u1), 0);
	if (u2 != NULL)
		ck_assert_int_eq(strv_append(&d->users, &d->nusers, u2), 0);
}

static void
qadmin(struct queue_def *d, const char *a)
{
	ck_assert_int_eq(strv_append(&d->admins, &d->nadmins, a), 0);
}

static void
qmodel(struct queue_def *d, const char *model, uint32_t gpus)
{
	d->models = realloc(d->models, (d->nmodels + 1) * sizeof(*d->models));
	ck_assert_ptr_nonnull(d->models);
	d->models[d->nmodels].model = xs(model);
	d->models[d->nmodels].gpus = gpus;
	d->nmodels++;
}

static void
defs_clear(struct queue_def *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		queue_def_clear(&d[i]);
}

/* queues_create(d, n) must fail with ERR_INVALID and exactly want. */
static void
create_fails(struct queue_def *d, size_t n, const char *want)
{
	struct cerr err;

	ck_assert_ptr_null(queues_create(d, n, H, &err));
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, want);
	defs_clear(d, n);
}

START_TEST(test_tree_errors)
{
	struct queue_def d[3];

	d[0] = qdef("a", NULL, 4);
	d[1] = qdef("a", NULL, 4);
	create_fails(d, 2, "queue a: defined twice");
	d[0] = qdef("a b", NULL, 4);
	create_fails(d, 1, "queue a b: a name is 1 to 64 of A-Z a-z 0-9 . _ -");
	d[0] = qdef("a", "nope", 4);
	create_fails(d, 1, "queue a: parent 'nope' is not a queue");
	d[0] = qdef("a", "a", 4);
	create_fails(d, 1, "queue a: is its own parent");
	d[0] = qdef("a", "c", 4);
	d[1] = qdef("b", "a", 4);
	d[2] = qdef("c", "b", 4);
	create_fails(d, 3, "queue a: its parents form a cycle");
	d[0] = qdef("a", NULL, 4);
	d[0].lend_limit = 5;
	create_fails(d, 1, "queue a: lend_limit 5 is above its gpus 4");
	d[0] = qdef("a", NULL, 4);
	d[0].weight = 0;
	create_fails(d, 1, "queue a: weight must be at least 1");
	d[0] = qdef("p", NULL, 6);
	d[1] = qdef("c1", "p", 4);
	d[2] = qdef("c2", "p", 3);
	create_fails(d, 3, "queue p: its children's gpus (7) are more than its "
	    "own (6)");
	d[0] = qdef("p", NULL, 8);
	d[0].max_time_s = 3600;
	d[1] = qdef("c1", "p", 4);
	create_fails(d, 2, "queue p: users, admins, max_gpus_per_job and "
	    "max_time apply to queues without sub-queues (set them on p's "
	    "children)");
	d[0] = qdef("a", NULL, 4);
	qmodel(&d[0], "H100", 2);
	qmodel(&d[0], "H100", 1);
	create_fails(d, 1, "queue a: gpus.H100 given twice");
	d[0] = qdef("a", NULL, SCHED_UNLIMITED);
	for (int i = 0; i < SCHED_FLAVORS_MAX; i++) {
		char m[8];

		snprintf(m, sizeof(m), "M%d", i);
		qmodel(&d[0], m, 1);
	}
	create_fails(d, 1, "queue a: gpus.M7: at most 7 GPU models may have "
	    "quotas");
}
END_TEST

START_TEST(test_default_queue)
{
	struct peer alice = { "alice", ROLE_USER };
	struct job_spec s;
	struct cerr err;
	struct queues *qs = queues_create(NULL, 0, H, &err);
	const struct queue_def *d;

	ck_assert_ptr_nonnull(qs);
	ck_assert(!queues_configured(qs));
	ck_assert_uint_eq(queues_count(qs), 1);
	ck_assert_int_eq(queues_find(qs, "default"), 0);
	d = queues_def(qs, 0);
	ck_assert_uint_eq(d->gpus, SCHED_UNLIMITED);
	ck_assert_int_eq(d->preempt, SCHED_PREEMPT_NEVER);
	job_spec_init(&s);
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_str_eq(s.queue, "default");
	ck_assert_uint_eq(s.time_limit_s, 0);
	s.queue[0] = 'x';	/* "xefault" */
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), -1);
	ck_assert_int_eq(err.code, ERR_NOT_FOUND);
	ck_assert_str_eq(err.text, "--queue: no queue 'xefault' (queues: "
	    "default)");
	job_spec_clear(&s);
	queues_destroy(qs);
}
END_TEST

/* research (16) > { vision (8, alice bob, admin dave, max 8 GPUs, 2 h),
 * nlp (8, carol) }, open (none, everybody). */
static struct queues *
tree(void)
{
	struct queue_def d[4];
	struct cerr err;
	struct queues *qs;

	d[0] = qdef("research", NULL, 16);
	d[1] = qdef("vision", "research", 8);
	qusers(&d[1], "alice", "bob");
	qadmin(&d[1], "dave");
	d[1].max_gpus_per_job = 8;
	d[1].max_time_s = 7200;
	d[2] = qdef("nlp", "research", 8);
	qusers(&d[2], "carol", "alice");
	d[3] = qdef("open", NULL, SCHED_UNLIMITED);
	qs = queues_create(d, 4, H, &err);
	ck_assert_msg(qs != NULL, "%s", err.text);
	defs_clear(d, 4);
	return qs;
}

static void
spec_gpus(struct job_spec *s, const char *queue, uint32_t nodes,
    uint32_t gpn)
{
	job_spec_init(s);
	s->queue = queue != NULL ? xs(queue) : NULL;
	s->nodes_min = s->nodes_max = nodes;
	s->gpus_per_node = gpn;
}

static void
admit_fails(const struct queues *qs, const struct peer *who,
    struct job_spec *s, enum err_code code, const char *want)
{
	struct cerr err;
	char *before = s->queue != NULL ? xs(s->queue) : NULL;
	uint64_t time = s->time_limit_s;

	ck_assert_int_eq(queues_admit(qs, who, s, &err), -1);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(err.text, want);
	/* Nothing changed in the spec. */
	if (before == NULL)
		ck_assert_ptr_null(s->queue);
	else
		ck_assert_str_eq(s->queue, before);
	ck_assert_uint_eq(s->time_limit_s, time);
	free(before);
	job_spec_clear(s);
}

START_TEST(test_admit)
{
	struct peer alice = { "alice", ROLE_USER }, erin = { "erin", ROLE_USER };
	struct peer dave = { "dave", ROLE_USER }, root = { "root", ROLE_ADMIN };
	struct peer carol = { "carol", ROLE_USER };
	struct queues *qs = tree();
	struct job_spec s;
	struct cerr err;

	ck_assert(queues_configured(qs));
	/* Default: the first queue listing the user, in file order. */
	spec_gpus(&s, NULL, 1, 1);
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_str_eq(s.queue, "vision");
	ck_assert_uint_eq(s.time_limit_s, 7200);	/* max_time */
	job_spec_clear(&s);
	spec_gpus(&s, NULL, 1, 1);
	ck_assert_int_eq(queues_admit(qs, &carol, &s, &err), 0);
	ck_assert_str_eq(s.queue, "nlp");
	ck_assert_uint_eq(s.time_limit_s, 0);
	job_spec_clear(&s);
	/* Admins are in their queue; others get the first open queue. */
	spec_gpus(&s, NULL, 1, 1);
	ck_assert_int_eq(queues_admit(qs, &dave, &s, &err), 0);
	ck_assert_str_eq(s.queue, "vision");
	job_spec_clear(&s);
	spec_gpus(&s, NULL, 1, 1);
	ck_assert_int_eq(queues_admit(qs, &erin, &s, &err), 0);
	ck_assert_str_eq(s.queue, "open");
	job_spec_clear(&s);
	/* A queue one is not in; cluster admins may use any. */
	spec_gpus(&s, "vision", 1, 1);
	admit_fails(qs, &erin, &s, ERR_DENIED, "--queue: erin may not submit "
	    "to queue vision (not among its users)");
	spec_gpus(&s, "vision", 1, 1);
	ck_assert_int_eq(queues_admit(qs, &root, &s, &err), 0);
	job_spec_clear(&s);
	spec_gpus(&s, "nope", 1, 1);
	admit_fails(qs, &alice, &s, ERR_NOT_FOUND, "--queue: no queue 'nope' "
	    "(queues: vision, nlp, open)");
	spec_gpus(&s, "research", 1, 1);
	admit_fails(qs, &alice, &s, ERR_INVALID, "--queue: research has "
	    "sub-queues and takes no jobs; submit to one of: vision, nlp");
	/* Limits. */
	spec_gpus(&s, "vision", 3, 4);
	admit_fails(qs, &alice, &s, ERR_INVALID, "--queue vision: 12 GPUs is "
	    "above the queue's max_gpus_per_job of 8");
	spec_gpus(&s, "vision", 2, 4);
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	job_spec_clear(&s);
	spec_gpus(&s, "vision", 1, 0);
	admit_fails(qs, &alice, &s, ERR_INVALID, "--queue vision: the queue "
	    "allows at most 8 GPUs per job; give --gpus-per-node (a "
	    "whole-node job's GPUs are not known before it is placed)");
	/* --gpus-per-node 0 on the wire with cpu_only: no GPU at all. */
	spec_gpus(&s, "vision", 16, 0);
	s.cpu_only = true;
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	job_spec_clear(&s);
	spec_gpus(&s, "vision", 1, 1);
	s.time_limit_s = 7201;
	admit_fails(qs, &alice, &s, ERR_INVALID, "--time: 7201 s is above "
	    "queue vision's max_time of 7200 s");
	spec_gpus(&s, "vision", 1, 1);
	s.time_limit_s = 60;
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_uint_eq(s.time_limit_s, 60);
	job_spec_clear(&s);
	spec_gpus(&s, "vision", 1, 1);
	s.service = true;
	admit_fails(qs, &alice, &s, ERR_INVALID, "--service: queue vision has "
	    "a max_time of 7200 s and a service has no time limit");
	spec_gpus(&s, "nlp", 1, 1);
	s.service = true;
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_uint_eq(s.time_limit_s, 0);
	job_spec_clear(&s);
	/* Priorities: raised by the queue's admins and cluster admins. */
	spec_gpus(&s, "vision", 1, 1);
	s.priority = JOB_DEFAULT_PRIORITY + 1;
	admit_fails(qs, &alice, &s, ERR_DENIED, "--priority: users may only "
	    "lower their priority (at most 100); admins of queue vision may "
	    "raise it");
	spec_gpus(&s, "vision", 1, 1);
	s.priority = 500;
	ck_assert_int_eq(queues_admit(qs, &dave, &s, &err), 0);
	job_spec_clear(&s);
	spec_gpus(&s, "open", 1, 1);
	s.priority = 500;
	ck_assert_int_eq(queues_admit(qs, &root, &s, &err), 0);
	job_spec_clear(&s);
	/* Admins of a queue, not of its siblings. */
	ck_assert(queues_is_admin(qs, (size_t)queues_find(qs, "vision"),
	    "dave"));
	ck_assert(!queues_is_admin(qs, (size_t)queues_find(qs, "nlp"),
	    "dave"));
	ck_assert(!queues_is_admin(qs, (size_t)queues_find(qs, "vision"),
	    "alice"));
	ck_assert(!queues_is_admin(qs, 99, "dave"));
	queues_destroy(qs);
}
END_TEST

/* No queue open to everybody, and the user is in none. */
/* sbatch -A/--qos: the queue the site maps them to, agreeing with
 * --partition; a name mapped to none, or to two queues, refused. */
START_TEST(test_slurm_names)
{
	struct peer alice = { "alice", ROLE_USER };
	struct queue_def d[3];
	struct queues *qs;
	struct job_spec s;
	struct cerr err;

	d[0] = qdef("vision", NULL, 8);
	ck_assert_int_eq(strv_append(&d[0].accounts, &d[0].naccounts,
	    "proj-v"), 0);
	d[1] = qdef("nlp", NULL, 8);
	ck_assert_int_eq(strv_append(&d[1].qos, &d[1].nqos, "high"), 0);
	d[2] = qdef("open", NULL, SCHED_UNLIMITED);
	ck_assert_ptr_nonnull(qs = queues_create(d, 3, H, &err));

	spec_gpus(&s, NULL, 1, 1);
	s.account = xs("proj-v");
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_str_eq(s.queue, "vision");
	ck_assert_ptr_null(s.account);
	job_spec_clear(&s);
	spec_gpus(&s, "nlp", 1, 1);
	s.qos = xs("high");
	ck_assert_int_eq(queues_admit(qs, &alice, &s, &err), 0);
	ck_assert_str_eq(s.queue, "nlp");
	job_spec_clear(&s);

	spec_gpus(&s, NULL, 1, 1);
	s.account = xs("proj-x");
	admit_fails(qs, &alice, &s, ERR_INVALID, "--account proj-x: this "
	    "cluster maps no queue to it (cohortd.conf: [queue NAME] "
	    "accounts = proj-x); leave it out, or name the queue with "
	    "--partition");
	spec_gpus(&s, "open", 1, 1);
	s.account = xs("proj-v");
	admit_fails(qs, &alice, &s, ERR_INVALID, "--account proj-v means "
	    "queue vision, but --partition says open");
	spec_gpus(&s, NULL, 1, 1);
	s.account = xs("proj-v");
	s.qos = xs("high");
	admit_fails(qs, &alice, &s, ERR_INVALID, "--qos high means queue "
	    "nlp, but --account says vision");
	queues_destroy(qs);
	defs_clear(d, 3);

	d[0] = qdef("a", NULL, 8);
	ck_assert_int_eq(strv_append(&d[0].accounts, &d[0].naccounts, "p"),
	    0);
	d[1] = qdef("b", NULL, 8);
	ck_assert_int_eq(strv_append(&d[1].accounts, &d[1].naccounts, "p"),
	    0);
	create_fails(d, 2, "account p names two queues: a and b");
	d[0] = qdef("top", NULL, 8);
	ck_assert_int_eq(strv_append(&d[0].qos, &d[0].nqos, "q"), 0);
	d[1] = qdef("leaf", "top", 8);
	create_fails(d, 2, "queue top: accounts and qos name a queue that "
	    "takes jobs; top has sub-queues");
}
END_TEST

START_TEST(test_admit_nowhere)
{
	struct peer erin = { "erin", ROLE_USER };
	struct queue_def d[1];
	struct job_spec s;
	struct queues *qs;
	struct cerr err;

	d[0] = qdef("only", NULL, 4);
	qusers(&d[0], "alice", NULL);
	ck_assert_ptr_nonnull(qs = queues_create(d, 1, H, &err));
	defs_clear(d, 1);
	spec_gpus(&s, NULL, 1, 1);
	admit_fails(qs, &erin, &s, ERR_DENIED, "--queue: erin is in no queue "
	    "and no queue is open to everybody");
	queues_destroy(qs);
}
END_TEST

START_TEST(test_fair_share_decay)
{
	struct queues *qs = tree();
	size_t v = (size_t)queues_find(qs, "vision");
	size_t n = (size_t)queues_find(qs, "nlp");
	size_t r = (size_t)queues_find(qs, "research");
	size_t o = (size_t)queues_find(qs, "open");

	/* Nothing used: keys 0, factors 1. */
	ck_assert_uint_eq(queues_share(qs, v, 0), 0);
	ck_assert(queues_factor(qs, v, 0) == 1.0);
	ck_assert_int_eq(queues_charge(qs, v, "alice", 1000, 0), 0);
	ck_assert_int_eq(queues_charge(qs, n, "carol", 1000, H), 0);
	/* At H vision's 1000 has halved: 500 against nlp's 1000. Equal
	 * weights: keys 10^6 * (u / sum) / (1 / 2). */
	ck_assert_uint_eq(queues_share(qs, v, H), 666667);
	ck_assert_uint_eq(queues_share(qs, n, H), 1333333);
	/* Another half-life on: both halve, the ratio stays. */
	ck_assert_uint_eq(queues_share(qs, v, 2 * H), 666667);
	/* research holds the subtree's usage (and open none): research is
	 * the only one of its siblings that used anything. */
	ck_assert_uint_eq(queues_share(qs, r, H), 2000000);
	ck_assert_uint_eq(queues_share(qs, o, H), 0);
	ck_assert(queues_factor(qs, o, H) == 1.0);
	ck_assert(queues_factor(qs, r, H) == 0.25);
	/* At its share exactly: factor 0.5. */
	ck_assert_int_eq(queues_charge(qs, v, "bob", 500, H), 0);
	ck_assert_uint_eq(queues_share(qs, v, H), 1000000);
	ck_assert(queues_factor(qs, v, H) == 0.5);
	/* Bad charges change nothing. */
	ck_assert_int_eq(queues_charge(qs, 99, "x", 1, H), -1);
	ck_assert_int_eq(queues_charge(qs, v, "x", -1, H), -1);
	ck_assert_uint_eq(queues_share(qs, v, H), 1000000);
	queues_destroy(qs);
}
END_TEST

/* Use charged out of time order (a restart's rebuild goes by job id)
 * decays from when it was used, not from when it was charged. */
START_TEST(test_fair_share_out_of_order)
{
	struct queues *qs = tree();
	size_t v = (size_t)queues_find(qs, "vision");
	size_t n = (size_t)queues_find(qs, "nlp");

	ck_assert_int_eq(queues_charge(qs, v, "alice", 500, 2 * H), 0);
	/* 1000 used two half-lives earlier: 250 of it is left at 2H. */
	ck_assert_int_eq(queues_charge(qs, v, "alice", 1000, 0), 0);
	ck_assert_int_eq(queues_charge(qs, n, "carol", 750, 2 * H), 0);
	ck_assert_uint_eq(queues_share(qs, v, 2 * H), 1000000);
	ck_assert_uint_eq(queues_user_share(qs, v, "alice", 2 * H),
	    queues_user_share(qs, n, "carol", 2 * H));
	queues_destroy(qs);
}
END_TEST

START_TEST(test_fair_share_weights_users)
{
	struct queue_def d[2];
	struct queues *qs;
	struct cerr err;

	d[0] = qdef("heavy", NULL, 8);
	d[0].weight = 3;
	d[1] = qdef("light", NULL, 8);
	ck_assert_ptr_nonnull(qs = queues_create(d, 2, H, &err));
	defs_clear(d, 2);
	/* Equal usage: the queue with the larger weight goes first. */
	ck_assert_int_eq(queues_charge(qs, 0, "u1", 600, 0), 0);
	ck_assert_int_eq(queues_charge(qs, 1, "u2", 600, 0), 0);
	ck_assert_uint_lt(queues_share(qs, 0, 0), queues_share(qs, 1, 0));
	ck_assert_uint_eq(queues_share(qs, 0, 0), 666667);	/* .5/.75 */
	ck_assert_uint_eq(queues_share(qs, 1, 0), 2000000);	/* .5/.25 */
	/* Three times the usage of light: at its share, as light is. */
	ck_assert_int_eq(queues_charge(qs, 0, "u3", 1200, 0), 0);
	ck_assert_uint_eq(queues_share(qs, 0, 0), 1000000);
	ck_assert_uint_eq(queues_share(qs, 1, 0), 1000000);
	/* Users within a queue: u3 used twice u1's. */
	ck_assert_uint_eq(queues_user_share(qs, 0, "u1", 0), 666667);
	ck_assert_uint_eq(queues_user_share(qs, 0, "u3", 0), 1333333);
	ck_assert_uint_eq(queues_user_share(qs, 0, "nobody", 0), 0);
	/* Decay applies to users too: u1's old usage fades against a
	 * fresh charge of u3's. */
	ck_assert_int_eq(queues_charge(qs, 0, "u3", 1200, 4 * H), 0);
	ck_assert_uint_lt(queues_user_share(qs, 0, "u1", 4 * H), 100000);
	/* No half-life: no decay. */
	queues_destroy(qs);
	d[0] = qdef("a", NULL, 8);
	d[1] = qdef("b", NULL, 8);
	ck_assert_ptr_nonnull(qs = queues_create(d, 2, 0, &err));
	defs_clear(d, 2);
	ck_assert_int_eq(queues_charge(qs, 0, "u", 100, 0), 0);
	ck_assert_int_eq(queues_charge(qs, 1, "u", 100, 1000 * H), 0);
	ck_assert_uint_eq(queues_share(qs, 0, 1000 * H), 1000000);
	queues_destroy(qs);
}
END_TEST

/* SIGHUP: a tree of the same shape hands over its quotas, limits,
 * weights and users; the usage stays. Any other shape is refused. */
START_TEST(test_reconfigure)
{
	struct queue_def d[3];
	struct sched_queue out[2];
	struct queues *qs, *nq;
	struct cerr err;
	uint64_t share;

	d[0] = qdef("top", NULL, 16);
	d[1] = qdef("a", "top", 8);
	qmodel(&d[1], "H100", 4);
	ck_assert_ptr_nonnull(qs = queues_create(d, 2, H, &err));
	ck_assert_int_eq(queues_charge(qs, 1, "u", 1000, 0), 0);
	share = queues_user_share(qs, 1, "u", 0);
	d[1].gpus = 12;
	d[1].models[0].gpus = 6;
	d[1].weight = 3;
	d[1].borrow_limit = 2;
	qusers(&d[1], "alice", NULL);
	ck_assert_ptr_nonnull(nq = queues_create(d, 2, H, &err));
	ck_assert_int_eq(queues_compatible(qs, nq, &err), 0);
	queues_reconfigure(qs, nq);
	queues_destroy(nq);
	ck_assert_uint_eq(queues_def(qs, 1)->gpus, 12);
	ck_assert_uint_eq(queues_def(qs, 1)->models[0].gpus, 6);
	ck_assert_uint_eq(queues_def(qs, 1)->weight, 3);
	ck_assert_uint_eq(queues_def(qs, 1)->borrow_limit, 2);
	ck_assert_uint_eq(queues_def(qs, 1)->nusers, 1);
	ck_assert_str_eq(queues_def(qs, 1)->users[0], "alice");
	queues_sched(qs, 0, out);
	ck_assert_uint_eq(out[1].nominal[0], 12);
	ck_assert_uint_eq(out[1].nominal[1], 6);
	ck_assert_uint_eq(queues_user_share(qs, 1, "u", 0), share);
	/* A queue added, a model added, a parent changed: refused. */
	d[2] = qdef("b", "top", 4);
	ck_assert_ptr_nonnull(nq = queues_create(d, 3, H, &err));
	ck_assert_int_eq(queues_compatible(qs, nq, &err), -1);
	ck_assert_msg(strstr(err.text, "restart cohortd to apply") != NULL,
	    "%s", err.text);
	queues_destroy(nq);
	qmodel(&d[1], "A100", 2);
	ck_assert_ptr_nonnull(nq = queues_create(d, 2, H, &err));
	ck_assert_int_eq(queues_compatible(qs, nq, &err), -1);
	ck_assert_msg(strstr(err.text, "queue a: gpus.MODEL") != NULL, "%s",
	    err.text);
	queues_destroy(nq);
	free(d[1].parent);
	d[1].parent = NULL;
	d[1].nmodels = 1;
	ck_assert_ptr_nonnull(nq = queues_create(d, 2, H, &err));
	ck_assert_int_eq(queues_compatible(qs, nq, &err), -1);
	ck_assert_msg(strstr(err.text, "queue a has a new parent") != NULL,
	    "%s", err.text);
	queues_destroy(nq);
	d[1].nmodels = 2;
	defs_clear(d, 3);
	queues_destroy(qs);
}
END_TEST

START_TEST(test_flavors_sched)
{
	struct queue_def d[3];
	struct sched_queue out[3];
	const char *const *fl;
	struct queues *qs;
	struct cerr err;
	size_t nf;

	d[0] = qdef("top", NULL, 16);
	qmodel(&d[0], "H100", 8);
	d[0].preempt = SCHED_PREEMPT_NEVER;
	d[1] = qdef("a", "top", 8);
	qmodel(&d[1], "A100", 4);
	qmodel(&d[1], "H100", 2);
	d[1].borrow_limit = 4;
	d[1].lend_limit = 2;
	d[1].preempt = SCHED_PREEMPT_BOTH;
	d[2] = qdef("b", "top", SCHED_UNLIMITED);
	ck_assert_ptr_nonnull(qs = queues_create(d, 3, H, &err));
	defs_clear(d, 3);
	fl = queues_flavors(qs, &nf);
	ck_assert_uint_eq(nf, 3);
	ck_assert_ptr_null(fl[0]);
	ck_assert_str_eq(fl[1], "H100");
	ck_assert_str_eq(fl[2], "A100");
	ck_assert_int_eq(queues_charge(qs, 1, "u", 100, 0), 0);
	queues_sched(qs, 0, out);
	ck_assert_int_eq(out[0].parent, -1);
	ck_assert_int_eq(out[1].parent, 0);
	ck_assert_int_eq(out[2].parent, 0);
	ck_assert_uint_eq(out[0].nominal[0], 16);
	ck_assert_uint_eq(out[0].nominal[1], 8);
	ck_assert_uint_eq(out[0].nominal[2], SCHED_UNLIMITED);
	ck_assert_uint_eq(out[1].nominal[0], 8);
	ck_assert_uint_eq(out[1].nominal[1], 2);
	ck_assert_uint_eq(out[1].nominal[2], 4);
	ck_assert_uint_eq(out[2].nominal[0], SCHED_UNLIMITED);
	ck_assert_uint_eq(out[1].borrow_limit, 4);
	ck_assert_uint_eq(out[1].lend_limit, 2);
	ck_assert_uint_eq(out[2].lend_limit, SCHED_UNLIMITED);
	ck_assert_int_eq(out[0].preempt, SCHED_PREEMPT_NEVER);
	ck_assert_int_eq(out[1].preempt, SCHED_PREEMPT_BOTH);
	ck_assert_int_eq(out[2].preempt, SCHED_PREEMPT_BORROWERS);
	ck_assert_uint_eq(out[1].share, 2000000);
	ck_assert_uint_eq(out[2].share, 0);
	queues_destroy(qs);
	/* Without queues: one unlimited queue that never preempts. */
	ck_assert_ptr_nonnull(qs = queues_create(NULL, 0, H, &err));
	fl = queues_flavors(qs, &nf);
	ck_assert_uint_eq(nf, 1);
	queues_sched(qs, 0, out);
	ck_assert_int_eq(out[0].parent, -1);
	ck_assert_uint_eq(out[0].nominal[0], SCHED_UNLIMITED);
	ck_assert_int_eq(out[0].preempt, SCHED_PREEMPT_NEVER);
	queues_destroy(qs);
}
END_TEST

static struct job *
job_in(const char *queue, uint32_t gpus, uint32_t nodes, uint32_t gpn)
{
	struct job *j = job_new();

	ck_assert_ptr_nonnull(j);
	j->spec.queue = queue != NULL ? xs(queue) : NULL;
	j->spec.nodes_min = j->spec.nodes_max = nodes;
	j->spec.gpus_per_node = gpn;
	if (gpus > 0) {
		j->place = calloc(1, sizeof(*j->place));
		ck_assert_ptr_nonnull(j->place);
		j->nplace = 1;
		j->place[0].ngpus = gpus;
		j->state = JOB_RUNNING;
	} else
		j->state = JOB_PENDING;
	return j;
}

static const struct queue_row *
row(const struct queue_row *rows, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	ck_abort_msg("no row %s", name);
	return NULL;
}

/* org (no gpus: the sum, 12) > { a 4, b 4, c 4 lending at most 1 },
 * solo (2). */
START_TEST(test_report_borrowing)
{
	struct queue_def d[5];
	struct queues *qs;
	struct cerr err;
	struct job *act[4], *wait[3];
	struct queue_row *rows;
	const struct queue_row *org, *a, *b, *c, *solo;
	size_t n, i;

	d[0] = qdef("org", NULL, SCHED_UNLIMITED);
	d[1] = qdef("a", "org", 4);
	d[2] = qdef("b", "org", 4);
	d[3] = qdef("c", "org", 4);
	d[3].lend_limit = 1;
	d[4] = qdef("solo", NULL, 2);
	d[4].weight = 5;
	ck_assert_ptr_nonnull(qs = queues_create(d, 5, H, &err));
	defs_clear(d, 5);
	act[0] = job_in("a", 4, 1, 4);
	act[1] = job_in("a", 3, 1, 3);		/* a: 7, borrowing 3 */
	act[2] = job_in("b", 1, 1, 1);		/* b: 1, may lend 3 */
	act[3] = job_in("gone", 8, 1, 8);	/* a queue no longer there */
	wait[0] = job_in("b", 0, 2, 2);		/* 4 GPUs */
	wait[1] = job_in("c", 0, 3, 0);		/* whole nodes: 3 x 8 */
	wait[2] = job_in("solo", 0, 1, 1);
	ck_assert_int_eq(queues_report(qs, (const struct job *const *)act, 4,
	    (const struct job *const *)wait, 3, 8, 0, &rows, &n), 0);
	ck_assert_uint_eq(n, 5);
	/* Parents before children, in file order. */
	ck_assert_str_eq(rows[0].name, "org");
	ck_assert_str_eq(rows[1].name, "a");
	ck_assert_str_eq(rows[3].name, "c");
	ck_assert_str_eq(rows[4].name, "solo");
	org = row(rows, n, "org");
	a = row(rows, n, "a");
	b = row(rows, n, "b");
	c = row(rows, n, "c");
	solo = row(rows, n, "solo");
	ck_assert_uint_eq(org->depth, 0);
	ck_assert_uint_eq(a->depth, 1);
	ck_assert_str_eq(a->parent, "org");
	ck_assert_str_eq(org->parent, "");
	ck_assert_uint_eq(org->nominal, 12);
	ck_assert_uint_eq(a->nominal, 4);
	ck_assert_uint_eq(org->used, 8);
	ck_assert_uint_eq(a->used, 7);
	ck_assert_uint_eq(a->running_jobs, 2);
	ck_assert_uint_eq(a->borrowed, 3);
	ck_assert_uint_eq(org->borrowed, 0);
	/* b may lend 3, c 1: the 3 borrowed split 3:1 (2.25, 0.75), the
	 * last one to the larger remainder. */
	ck_assert_uint_eq(b->lent, 2);
	ck_assert_uint_eq(c->lent, 1);
	ck_assert_uint_eq(a->lent, 0);
	ck_assert_uint_eq(org->from_above, 0);
	ck_assert_uint_eq(a->borrowed + b->borrowed + c->borrowed,
	    a->lent + b->lent + c->lent + org->from_above);
	/* Pending adds up at the parent; whole-node jobs count 0 GPUs. */
	ck_assert_uint_eq(b->pending, 4);
	ck_assert_uint_eq(c->pending, 24);
	ck_assert_uint_eq(c->pending_jobs, 1);
	ck_assert_uint_eq(org->pending, 28);
	ck_assert_uint_eq(org->pending_jobs, 2);
	ck_assert_uint_eq(solo->pending, 1);
	ck_assert_uint_eq(solo->weight, 5);
	ck_assert(solo->factor == 1.0);
	/* The job of a queue that is gone is in no row. */
	ck_assert_uint_eq(org->used + solo->used, 8);
	free(rows);

	/* a borrows 6: b and c lend all they may (3 + 1), the other 2
	 * come from above (here c's guarantee: shown, not hidden). */
	act[1]->place[0].ngpus = 6;
	ck_assert_int_eq(queues_report(qs, (const struct job *const *)act, 3,
	    NULL, 0, 8, 0, &rows, &n), 0);
	a = row(rows, n, "a");
	b = row(rows, n, "b");
	c = row(rows, n, "c");
	org = row(rows, n, "org");
	ck_assert_uint_eq(a->borrowed, 6);
	ck_assert_uint_eq(b->lent, 3);
	ck_assert_uint_eq(c->lent, 1);
	ck_assert_uint_eq(org->from_above, 2);
	ck_assert_uint_eq(org->used, 11);
	ck_assert_uint_eq(org->pending, 0);
	free(rows);
	for (i = 0; i < 4; i++)
		job_free(act[i]);
	for (i = 0; i < 3; i++)
		job_free(wait[i]);
	queues_destroy(qs);
}
END_TEST

/* Top-level queues borrow from what no nominal holds. */
START_TEST(test_report_top)
{
	struct queue_def d[2];
	struct queues *qs;
	struct cerr err;
	struct job *act[2];
	struct queue_row *rows;
	size_t n;

	d[0] = qdef("x", NULL, 2);
	d[1] = qdef("y", NULL, 2);
	ck_assert_ptr_nonnull(qs = queues_create(d, 2, H, &err));
	defs_clear(d, 2);
	act[0] = job_in("x", 5, 1, 5);
	act[1] = job_in("y", 1, 1, 1);
	ck_assert_int_eq(queues_report(qs, (const struct job *const *)act, 2,
	    NULL, 0, 8, 0, &rows, &n), 0);
	ck_assert_uint_eq(rows[0].borrowed, 3);
	ck_assert_uint_eq(rows[1].lent, 1);
	/* The other 2 are from outside every nominal: borrowed - lent. */
	ck_assert_uint_eq(rows[0].borrowed - rows[0].lent - rows[1].lent, 2);
	free(rows);
	job_free(act[0]);
	job_free(act[1]);
	queues_destroy(qs);
}
END_TEST

/* After a restart: usage charged again from the job table. */
START_TEST(test_rebuild)
{
	struct queues *qs = tree(), *fresh = tree();
	struct job *j[4];
	size_t v = (size_t)queues_find(qs, "vision");
	size_t n = (size_t)queues_find(qs, "nlp");

	j[0] = job_in("vision", 4, 1, 4);	/* ended: 4 GPUs x H */
	j[0]->user = xs("alice");
	j[0]->start_ms = 1;
	j[0]->end_ms = 1 + H;
	j[0]->state = JOB_COMPLETED;
	j[1] = job_in("nlp", 2, 1, 2);		/* runs: 2 GPUs x 2H so far */
	j[1]->user = xs("carol");
	j[1]->start_ms = 1;
	j[2] = job_in("nlp", 0, 1, 2);		/* never ran */
	j[2]->user = xs("carol");
	j[3] = job_in("gone", 8, 1, 8);		/* a queue no longer there */
	j[3]->user = xs("carol");
	j[3]->start_ms = 1;
	ck_assert_int_eq(queues_rebuild(qs, (const struct job *const *)j, 4,
	    1 + 2 * H), 0);
	/* The same as charging by hand. */
	ck_assert_int_eq(queues_charge(fresh, v, "alice", 4.0 * H, 1 + H), 0);
	ck_assert_int_eq(queues_charge(fresh, n, "carol", 4.0 * H, 1 + 2 * H),
	    0);
	ck_assert_uint_eq(queues_share(qs, v, 1 + 2 * H),
	    queues_share(fresh, v, 1 + 2 * H));
	ck_assert_uint_eq(queues_share(qs, n, 1 + 2 * H),
	    queues_share(fresh, n, 1 + 2 * H));
	/* vision's 4H decayed one half-life: 2H against nlp's 4H. */
	ck_assert_uint_eq(queues_share(qs, v, 1 + 2 * H), 666667);
	ck_assert_uint_eq(queues_user_share(qs, n, "carol", 1 + 2 * H),
	    1000000);
	for (int i = 0; i < 4; i++)
		job_free(j[i]);
	queues_destroy(qs);
	queues_destroy(fresh);
}
END_TEST

static Suite *
queues_suite(void)
{
	Suite *s = suite_create("queues");
	TCase *tc = tcase_create("queues");

	tcase_add_test(tc, test_tree_errors);
	tcase_add_test(tc, test_default_queue);
	tcase_add_test(tc, test_admit);
	tcase_add_test(tc, test_slurm_names);
	tcase_add_test(tc, test_admit_nowhere);
	tcase_add_test(tc, test_fair_share_decay);
	tcase_add_test(tc, test_fair_share_out_of_order);
	tcase_add_test(tc, test_fair_share_weights_users);
	tcase_add_test(tc, test_flavors_sched);
	tcase_add_test(tc, test_report_borrowing);
	tcase_add_test(tc, test_report_top);
	tcase_add_test(tc, test_rebuild);
	tcase_add_test(tc, test_reconfigure);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(queues_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
