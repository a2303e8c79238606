/* daemon/sched/: the scheduling policy, pinned case by case (restarts
 * and hot spares included); check_sched_sim.c adds randomized runs that
 * drive the core forward in virtual time. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_sched.h"

static const char two_leaves[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";

static const char two_spines[] =
    "SwitchName=leaf0 Nodes=n[000-003]\n"
    "SwitchName=leaf1 Nodes=n[004-007]\n"
    "SwitchName=leaf2 Nodes=n[008-011]\n"
    "SwitchName=leaf3 Nodes=n[012-015]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n"
    "SwitchName=spine1 Switches=leaf[2-3]\n";

START_TEST(test_queue_order)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_result *res;
	static const uint64_t want[] = { 3, 2, 4, 5, 6 };
	size_t i;

	cl_init(&c, 1, NULL);
	j[0] = job(5, 1, 1);		/* prio 100, submit 5, id 5 */
	j[0].submit = 5;
	j[1] = job(2, 1, 1);		/* restarting: before its peers */
	j[1].restarting = true;
	j[1].submit = 9;
	j[2] = job(3, 1, 1);		/* highest priority */
	j[2].priority = 200;
	j[2].submit = 10;
	j[3] = job(4, 1, 1);		/* submit 5 too: the lower id first */
	j[3].submit = 5;
	j[4] = job(6, 1, 1);
	j[4].submit = 6;
	res = run(&c, NULL, 0, j, 5, 0);
	ck_assert_uint_eq(res->nstarts, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_uint_eq(res->starts[i].job, want[i]);
		ck_assert_int_eq(res->reasons[i], SCHED_REASON_NONE);
	}
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* The policy's order of two jobs: priority, restarting, submit, id. */
static int
policy_cmp(const void *a, const void *b)
{
	const struct sched_job *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->restarting != y->restarting)
		return x->restarting ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Keys over their whole range (negative priorities and submit times,
 * ids near 2^64) order as the policy says: the sort packs keys that vary
 * over few bits into one word and sorts wider ones key by key. */
START_TEST(test_queue_order_wide)
{
	static const int32_t prio[] = { INT32_MIN, -5, 0, 7, INT32_MAX };
	static const int64_t submit[] = { INT64_MIN + 1, -3, 0, 5,
	    INT64_MAX / 2 };
	struct cl c;
	struct sched_job j[40], want[40];
	struct sched_result *res;
	size_t i;

	cl_init(&c, 8, NULL);
	for (i = 0; i < 40; i++) {
		j[i] = job(UINT64_MAX - i * 7919 % 40 * 1000003, 1, 1);
		j[i].priority = prio[i * 7 % 5];
		j[i].submit = submit[i * 3 % 5];
		j[i].restarting = i % 6 == 1;
		want[i] = j[i];
	}
	qsort(want, 40, sizeof(want[0]), policy_cmp);
	res = run(&c, NULL, 0, j, 40, 0);
	ck_assert_uint_eq(res->nstarts, 40);
	for (i = 0; i < 40; i++)
		ck_assert_uint_eq(res->starts[i].job, want[i].id);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* One pass with a queue-order configuration; the order is read from the
 * starts (a pass decides in queue order) when every job fits. */
static struct sched_result *
run_cfg(const struct cl *c, const struct sched_running *r, size_t nr,
    const struct sched_job *jobs, size_t nj, int64_t now,
    const struct sched_config *cfg)
{
	struct sched_input in;
	struct sched_result *res;

	memset(&in, 0, sizeof(in));
	in.now = now;
	in.topo = c->topo;
	in.nodes = c->nodes;
	in.nnodes = c->n;
	in.running = r;
	in.nrunning = nr;
	in.pending = jobs;
	in.npending = nj;
	in.config = *cfg;
	if (in.config.default_limit == 0)
		in.config.default_limit = 300;
	res = sched_run(&in);
	ck_assert_ptr_nonnull(res);
	return res;
}

static void
assert_order(const struct sched_result *res, const uint64_t *want, size_t n)
{
	size_t i;

	ck_assert_uint_eq(res->nstarts, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(res->starts[i].job == want[i],
		    "start %zu: job %llu, want %llu", i,
		    (unsigned long long)res->starts[i].job,
		    (unsigned long long)want[i]);
}

START_TEST(test_estimate_order)
{
	struct cl c;
	struct sched_job j[4];
	struct sched_config cfg;
	struct sched_result *res;
	static const uint64_t short_first[] = { 2, 4, 3, 1 };
	static const uint64_t fifo[] = { 1, 2, 3, 4 };

	/* Equal priority, all fit: shortest estimate first. Job 3 has no
	 * limit: the default (300). Job 4's limit is long but its hint (the
	 * oracle's true run time) is short: the hint orders it. */
	cl_init(&c, 1, NULL);
	j[0] = job(1, 1, 1);
	j[0].time_limit = 1000;
	j[1] = job(2, 1, 1);
	j[1].time_limit = 100;
	j[2] = job(3, 1, 1);
	j[2].time_limit = 0;
	j[3] = job(4, 1, 1);
	j[3].time_limit = 5000;
	j[3].order_hint = 200;
	memset(&cfg, 0, sizeof(cfg));
	cfg.order = SCHED_ORDER_ESTIMATE;
	res = run_cfg(&c, NULL, 0, j, 4, 10, &cfg);
	assert_order(res, short_first, 4);
	sched_result_free(res);
	/* The core's default is still FIFO. */
	cfg.order = SCHED_ORDER_FIFO;
	res = run_cfg(&c, NULL, 0, j, 4, 10, &cfg);
	assert_order(res, fifo, 4);
	sched_result_free(res);
	/* Equal keys: submit time, then id. */
	j[0].time_limit = j[1].time_limit = 100;
	j[0].submit = j[1].submit = 7;
	j[2].time_limit = 100;
	j[2].submit = 3;
	j[3].order_hint = 100;
	j[3].submit = 7;
	cfg.order = SCHED_ORDER_ESTIMATE;
	res = run_cfg(&c, NULL, 0, j, 4, 10, &cfg);
	{
		static const uint64_t want[] = { 3, 1, 2, 4 };

		assert_order(res, want, 4);
	}
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_estimate_aging)
{
	struct cl c;
	struct sched_job j[3];
	struct sched_config cfg;
	struct sched_result *res;
	static const uint64_t sjf[] = { 2, 3, 1 };
	static const uint64_t aged[] = { 1, 2, 3 };

	/* An old long job (limit 5000, waited 10000 s) and two newer short
	 * ones (limit 100 and 200, waited 10 and 5 s). */
	cl_init(&c, 1, NULL);
	j[0] = job(1, 1, 1);
	j[0].time_limit = 5000;
	j[0].submit = 0;
	j[1] = job(2, 1, 1);
	j[1].time_limit = 100;
	j[1].submit = 9990;
	j[2] = job(3, 1, 1);
	j[2].time_limit = 200;
	j[2].submit = 9995;
	memset(&cfg, 0, sizeof(cfg));
	cfg.order = SCHED_ORDER_ESTIMATE;
	/* No aging: pure shortest first, the old job last. */
	res = run_cfg(&c, NULL, 0, j, 3, 10000, &cfg);
	assert_order(res, sjf, 3);
	sched_result_free(res);
	/* Aging 1 (a second of estimate per second waited): keys 5000 -
	 * 10000, 100 - 10, 200 - 5: the old job passes both. */
	cfg.aging = SCHED_AGING_UNIT;
	res = run_cfg(&c, NULL, 0, j, 3, 10000, &cfg);
	assert_order(res, aged, 3);
	sched_result_free(res);
	/* Aging 0.25: 5000 - 2500 = 2500, still after both. */
	cfg.aging = SCHED_AGING_UNIT / 4;
	res = run_cfg(&c, NULL, 0, j, 3, 10000, &cfg);
	assert_order(res, sjf, 3);
	sched_result_free(res);
	/* The order does not move with time: the same queue an hour later
	 * keeps its order (every key drops by the same amount). */
	cfg.aging = SCHED_AGING_UNIT;
	res = run_cfg(&c, NULL, 0, j, 3, 10000 + 3600, &cfg);
	assert_order(res, aged, 3);
	sched_result_free(res);
	/* Huge limits and waits saturate instead of wrapping: job 1's key
	 * is INT64_MAX - INT64_MAX = 0; job 2, submitted after now, waited
	 * nothing (100,000); job 3 (200,000 - 5 s * 2^32 - 1) goes first. */
	j[0].time_limit = INT64_MAX;
	j[0].submit = INT64_MIN;
	j[1].submit = 20000;
	cfg.aging = UINT32_MAX;
	res = run_cfg(&c, NULL, 0, j, 3, 10000, &cfg);
	{
		static const uint64_t want[] = { 3, 1, 2 };

		assert_order(res, want, 3);
	}
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_estimate_priority_restart)
{
	struct cl c;
	struct sched_job j[4];
	struct sched_config cfg;
	struct sched_result *res;
	static const uint64_t want[] = { 3, 4, 2, 1 };

	/* Priority wins over any estimate, then restarting jobs, then the
	 * estimate: job 3 (priority 200, the longest limit), job 4
	 * (restarting, long), job 2 (short), job 1 (long, oldest). */
	cl_init(&c, 1, NULL);
	j[0] = job(1, 1, 1);
	j[0].time_limit = 1000;
	j[1] = job(2, 1, 1);
	j[1].time_limit = 10;
	j[2] = job(3, 1, 1);
	j[2].time_limit = 100000;
	j[2].priority = 200;
	j[3] = job(4, 1, 1);
	j[3].time_limit = 50000;
	j[3].restarting = true;
	memset(&cfg, 0, sizeof(cfg));
	cfg.order = SCHED_ORDER_ESTIMATE;
	cfg.aging = SCHED_DEFAULT_AGING;
	res = run_cfg(&c, NULL, 0, j, 4, 10, &cfg);
	assert_order(res, want, 4);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_estimate_reservation)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_running r = { 90, 100 };
	struct sched_config cfg;
	struct sched_result *res;

	/* Two nodes, one busy until 100. A short 2-node job and a long
	 * 1-node one: in estimate order the short gang is first, so it gets
	 * the reservation, and the long job (limit 500, past 100) may not
	 * take the free node. In FIFO order the long job, first, starts. */
	cl_init(&c, 2, NULL);
	busy(&c, 0, 0xff, 90);
	j[0] = job(1, 1, 0);
	j[0].time_limit = 500;
	j[1] = job(2, 2, 0);
	j[1].time_limit = 50;
	memset(&cfg, 0, sizeof(cfg));
	cfg.order = SCHED_ORDER_ESTIMATE;
	res = run_cfg(&c, &r, 1, j, 2, 0, &cfg);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 2);
	ck_assert_int_eq(res->resv.start, 100);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_PRIORITY);
	sched_result_free(res);
	cfg.order = SCHED_ORDER_FIFO;
	res = run_cfg(&c, &r, 1, j, 2, 0, &cfg);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Drive two nodes forward in time: a 2-node gang (limit 1000) submitted
 * at 0, and a 1-node job (limit 100, running exactly that) arriving every
 * 50 s, which keeps both nodes busy. Returns when the gang started, or
 * -1 when it had not by `horizon`. */
static int64_t
gang_start(const struct sched_config *cfg, int64_t horizon)
{
	struct cl c;
	struct sched_job q[64];
	struct sched_running r[2], rr[2];	/* r: by node */
	uint64_t held[2] = { 0, 0 };
	size_t nq = 0, nr, k, i, n;
	struct sched_result *res;
	const struct sched_start *st;
	int64_t t, gang = -1;
	uint64_t next = 2;

	cl_init(&c, 2, NULL);
	q[nq] = job(1, 2, 0);
	q[nq].submit = 0;
	q[nq++].time_limit = 1000;
	for (t = 0; t <= horizon && gang < 0; t += 50) {
		for (i = 0, nr = 0; i < 2; i++) {
			if (held[i] != 0 && r[i].end <= t) {
				busy(&c, i, 0xff, 0);
				held[i] = 0;
			}
			if (held[i] != 0)
				rr[nr++] = r[i];
		}
		ck_assert_uint_lt(nq, 64);
		q[nq] = job(next++, 1, 0);
		q[nq].submit = t;
		q[nq++].time_limit = 100;
		res = run_cfg(&c, rr, nr, q, nq, t, cfg);
		for (k = 0; k < res->nstarts; k++) {
			st = &res->starts[k];
			if (st->job == 1)
				gang = t;
			for (i = 0; i < st->nnodes; i++) {
				n = st->nodes[i].node;
				ck_assert_uint_eq(held[n], 0);
				busy(&c, n, 0xff, st->job);
				held[n] = st->job;
				r[n].id = st->job;
				r[n].end = st->end;
			}
			q[st->pending].id = 0;	/* started: drop below */
		}
		sched_result_free(res);
		for (k = 0, n = 0; k < nq; k++)
			if (q[k].id != 0)
				q[n++] = q[k];
		nq = n;
	}
	cl_free(&c);
	return gang;
}

START_TEST(test_estimate_no_starvation)
{
	struct sched_config cfg;
	int64_t t;

	/* FIFO: the gang is first; it starts as the first two jobs end. */
	memset(&cfg, 0, sizeof(cfg));
	t = gang_start(&cfg, 20000);
	ck_assert_int_ge(t, 0);
	ck_assert_int_le(t, 150);
	/* Shortest first without aging: every new short job passes the
	 * gang, which never becomes first and never gets a reservation. */
	cfg.order = SCHED_ORDER_ESTIMATE;
	ck_assert_int_eq(gang_start(&cfg, 20000), -1);
	/* With aging a the gang's key (1000 - a t) passes a new job's (100)
	 * after 900 / a seconds; then it is first, gets the reservation
	 * and starts within one short job's limit. */
	cfg.aging = SCHED_AGING_UNIT / 4;
	t = gang_start(&cfg, 20000);
	ck_assert_int_ge(t, 3600);
	ck_assert_int_le(t, 3600 + 150);
	cfg.aging = SCHED_AGING_UNIT;
	t = gang_start(&cfg, 20000);
	ck_assert_int_ge(t, 900);
	ck_assert_int_le(t, 900 + 150);
}
END_TEST

START_TEST(test_no_backfill)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_running r = { 90, 100 };
	struct sched_config cfg;
	struct sched_result *res;

	/* test_backfill's cluster: six nodes, 0-1 busy until 100. Job 6
	 * fits and is first: it starts. Job 7 can never run (more nodes
	 * than exist): it blocks nothing. Job 1 (5 nodes) is blocked and
	 * reserved; with backfill off, job 2 (ends before the reservation)
	 * and job 3 (outside it) wait behind it. */
	cl_init(&c, 6, NULL);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	j[0] = job(6, 1, 1);
	j[0].submit = -2;
	j[1] = job(7, 9, 0);
	j[1].submit = -1;
	j[2] = job(1, 5, 0);
	j[3] = job(2, 1, 0);
	j[3].time_limit = 50;
	j[4] = job(3, 1, 1);
	j[4].time_limit = 500;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_backfill = true;
	res = run_cfg(&c, &r, 1, j, 5, 0, &cfg);
	ck_assert_uint_eq(res->nstarts, 1);
	ck_assert_uint_eq(res->starts[0].job, 6);
	ck_assert(!res->starts[0].backfill);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_RESOURCES);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_PRIORITY);
	ck_assert_int_eq(res->reasons[4], SCHED_REASON_PRIORITY);
	ck_assert_uint_eq(res->stats.backfilled, 0);
	sched_result_free(res);
	/* The same queue with backfill: jobs 2 and 3 start. */
	cfg.no_backfill = false;
	res = run_cfg(&c, &r, 1, j, 5, 0, &cfg);
	ck_assert_ptr_nonnull(started(res, 2));
	ck_assert_ptr_nonnull(started(res, 3));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_one_leaf)
{
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_result *res;
	const struct sched_start *s;

	/* leaf0 has 2 free nodes, leaf1 4: the gang goes to leaf1 alone. */
	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(nodeset(s->nodes, 3) & 0x0f, 0);
	sched_result_free(res);
	/* leaf0 has 3 free, leaf1 4: best fit takes the fuller leaf0 and
	 * keeps leaf1 whole. */
	busy(&c, 1, 0xff, 0);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x0e);
	ck_assert_uint_eq(s->nodes[0].ngpus, GPN);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_fewest_switches)
{
	struct cl c;
	struct sched_job j = job(1, 5, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t m;

	/* Free nodes: leaf0 2, leaf1 2, leaf2 3, leaf3 3. Five nodes fit
	 * in spine1 alone (leaf2 + leaf3), never across spines. */
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0xff, 90);
	busy(&c, 5, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	m = nodeset(s->nodes, 5);
	ck_assert_uint_eq(m & 0xff, 0);
	ck_assert_uint_eq(__builtin_popcountll(m), 5);
	sched_result_free(res);
	/* Free: leaf0 1, leaf1 4, leaf2 3, leaf3 1 (all under one spine
	 * pair). A 5-node gang spans two leaves: leaf1 whole plus one node
	 * from the best-fit leaf (leaf0, in spine0), not three leaves. */
	cl_free(&c);
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 2, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	busy(&c, 13, 0xff, 90);
	busy(&c, 14, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 5), 0xf8);
	/* Rank order keeps each leaf's nodes together, in the order the
	 * leaves were taken. */
	ck_assert_uint_eq(s->nodes[0].node, 4);
	ck_assert_uint_eq(s->nodes[4].node, 3);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_topology_required)
{
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_running r = { 90, 50 };
	struct sched_result *res;
	const struct sched_start *s;

	/* Two free nodes per leaf: 3 nodes under one leaf wait. */
	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0x0f, 91);
	busy(&c, 5, 0xff, 91);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	/* It holds the reservation: leaf0 when job 90 ends at 50. Job 91
	 * has no running entry, so it never ends. */
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_uint_eq(nodeset(res->resv.nodes, 3) & ~0x0fULL, 0);
	sched_result_free(res);
	/* Preferred does not wait: it spans both leaves. */
	j.topo_mode = SCHED_TOPO_PREFERRED;
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3) & 0x33, 0);
	sched_result_free(res);
	/* Required spine is satisfied by the two leaves under spine0. */
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "spine";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	/* Never possible: 5 nodes under one leaf of 4; an unknown level. */
	j = job(2, 5, 0);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	ck_assert(!res->has_resv);
	sched_result_free(res);
	j.topo_level = "rack";
	res = run(&c, &r, 1, &j, 1, 10);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_preferred_level)
{
	struct cl c;
	struct sched_job j = job(1, 4, 0);
	struct sched_result *res;
	const struct sched_start *s;
	uint64_t m;

	/* Preferred spine with 4 nodes: no leaf holds it, spine0 does
	 * (2 + 2 free), spine1 has 3 free: the gang stays under spine0
	 * although 7 nodes are free in all. */
	cl_init(&c, 16, two_spines);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 4, 0xff, 90);
	busy(&c, 5, 0xff, 90);
	busy(&c, 8, 0xff, 90);
	busy(&c, 9, 0xff, 90);
	busy(&c, 10, 0xff, 90);
	busy(&c, 12, 0xff, 90);
	busy(&c, 13, 0xff, 90);
	j.topo_mode = SCHED_TOPO_PREFERRED;
	j.topo_level = "spine";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	m = nodeset(s->nodes, 4);
	ck_assert_uint_eq(m, 0xcc);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_nvlink_quad)
{
	struct cl c;
	struct sched_job j = job(1, 1, 4);
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 1, NULL);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0f);
	sched_result_free(res);
	/* GPU 1 taken: quad 0 cannot hold 4, quad 1 can. */
	busy(&c, 0, 0x02, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xf0);
	sched_result_free(res);
	/* Two GPUs with GPU 1 taken: the partly used quad (best fit), and
	 * in it the PCIe pair that is whole (2, 3), not 0 with 2. */
	j.gpus_per_node = 2;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0c);
	sched_result_free(res);
	/* Quads 0-1 and 4-5 taken partly: 4 free GPUs (2,3,6,7) in no one
	 * domain; the job still starts, spread over the fewest domains. */
	busy(&c, 0, 0x33, 90);
	j.gpus_per_node = 4;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xcc);
	sched_result_free(res);
	/* A single GPU goes near a NIC. */
	busy(&c, 0, 0xff, 0);
	busy(&c, 0, 0x01, 90);
	j.gpus_per_node = 1;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(gpuset(&s->nodes[0]) & 0x55, gpuset(&s->nodes[0]));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_partly_used)
{
	struct cl c;
	struct sched_job j = job(1, 1, 4);
	struct sched_result *res;
	const struct sched_start *s;

	/* Node 1 has quad 1 in use: a 4-GPU job takes its free quad and
	 * leaves nodes 0 and 2 whole. */
	cl_init(&c, 3, two_leaves);
	busy(&c, 1, 0xf0, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 1);
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0x0f);
	sched_result_free(res);
	/* One GPU: the node with the fewest free GPUs that still fits. */
	busy(&c, 2, 0x7e, 91);
	j.gpus_per_node = 1;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_gpu_type)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 4, NULL);
	c.nodes[0].gpu_model = A100;
	c.nodes[1].gpu_model = A100;
	j[0] = job(1, 2, 0);
	j[0].gpu_type = "h100";
	j[1] = job(2, 1, 0);
	j[1].gpu_type = "B200";
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 2), 0x0c);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_GPU_TYPE);
	sched_result_free(res);
	ck_assert(sched_gpu_type_match(H100, "H100"));
	ck_assert(sched_gpu_type_match(H100, "80gb hbm3"));
	ck_assert(!sched_gpu_type_match(A100, "H100"));
	ck_assert(!sched_gpu_type_match(NULL, "H100"));
	ck_assert(sched_gpu_type_match(NULL, NULL));
	cl_free(&c);
}
END_TEST

START_TEST(test_never_bad_nodes)
{
	struct cl c;
	struct sched_job j[2];
	struct sched_result *res;
	const struct sched_start *s;

	/* Of six nodes only node 5 is healthy and free of trouble. */
	cl_init(&c, 6, NULL);
	c.nodes[0].drained = true;
	c.nodes[1].up = false;
	c.nodes[2].health = SCHED_HEALTH_FAILED;
	c.gpus[3][2].health = SCHED_HEALTH_FAILED;	/* not whole */
	c.gpus[4][7].health = SCHED_HEALTH_DEGRADED;
	j[0] = job(1, 1, 0);
	j[1] = job(2, 2, 0);
	res = run(&c, NULL, 0, j, 2, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 5);
	ck_assert_ptr_null(started(res, 2));
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_RESOURCES);
	/* Nothing running will free a node: no reservation can exist. */
	ck_assert(!res->has_resv);
	sched_result_free(res);
	/* Seven GPUs on three nodes: nodes 3 and 4 give their 7 OK GPUs,
	 * never the FAILED or DEGRADED one. */
	j[0] = job(1, 3, 7);
	res = run(&c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x38);
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xfb);
	ck_assert_uint_eq(gpuset(&s->nodes[1]), 0x7f);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_bad_constraints)
{
	struct cl c;
	struct sched_job j[4];
	struct sched_result *res;

	cl_init(&c, 2, NULL);
	j[0] = job(1, 3, 0);		/* more nodes than exist */
	j[1] = job(2, 1, 9);		/* more GPUs than a node has */
	j[2] = job(3, 0, 1);		/* zero nodes */
	j[3] = job(4, 2, 1);
	j[3].nodes_max = 1;		/* min above max */
	res = run(&c, NULL, 0, j, 4, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[1], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_BAD_CONSTRAINTS);
	ck_assert(!res->has_resv);
	ck_assert_str_eq(sched_reason_name(res->reasons[0]),
	    "BadConstraints");
	sched_result_free(res);
	errno = 0;
	ck_assert_ptr_null(sched_run(NULL));
	ck_assert_int_eq(errno, EINVAL);
	cl_free(&c);
}
END_TEST

START_TEST(test_elastic)
{
	struct cl c;
	struct sched_job j = job(1, 2, 0);
	struct sched_result *res;
	const struct sched_start *s;

	cl_init(&c, 8, two_leaves);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0x01, 90);
	busy(&c, 4, 0xff, 90);
	j.nodes_max = 10;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 5);
	sched_result_free(res);
	/* Required leaf: the largest one leaf holds (3, in leaf1). */
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 3);
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0xe0);
	sched_result_free(res);
	/* Above its minimum only: 6 needed, 5 free: it waits. */
	j = job(1, 6, 0);
	j.nodes_max = 8;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_backfill)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_running r = { 90, 100 };
	struct sched_result *res;
	const struct sched_start *s;

	/* Six nodes; job 90 holds 0-1 until 100. Job 1 needs 5 whole nodes:
	 * reserved at 100. Job 2 (limit 50) ends before: it may start on a
	 * reserved node. Job 3 (limit 500) may start only on the node
	 * outside the reservation; job 4 (limit 500, 2 nodes) cannot. */
	cl_init(&c, 6, NULL);
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	j[0] = job(1, 5, 0);
	j[0].priority = 200;
	j[1] = job(2, 1, 0);
	j[1].time_limit = 50;
	j[2] = job(3, 1, 0);
	j[2].time_limit = 500;
	j[3] = job(4, 2, 0);
	j[3].time_limit = 500;
	j[4] = job(5, 1, 0);
	j[4].time_limit = 0;		/* default 300: after 100 */
	res = run(&c, &r, 1, j, 5, 0);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->resv.job, 1);
	ck_assert_int_eq(res->resv.start, 100);
	ck_assert_uint_eq(res->resv.nnodes, 5);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	ck_assert_ptr_nonnull(s = started(res, 2));
	ck_assert(s->backfill);
	ck_assert_int_eq(s->end, 50);
	ck_assert_ptr_nonnull(s = started(res, 3));
	ck_assert_uint_eq(nodeset(res->resv.nodes, 5) &
	    nodeset(s->nodes, 1), 0);
	ck_assert_ptr_null(started(res, 4));
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_PRIORITY);
	/* No limit: the default (300) ends after 100, and the only
	 * unreserved node is taken. */
	ck_assert_ptr_null(started(res, 5));
	ck_assert_int_eq(res->reasons[4], SCHED_REASON_PRIORITY);
	ck_assert_uint_eq(res->stats.backfilled, 2);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_backfill_cap)
{
	struct cl c;
	struct sched_job j[5];
	struct sched_running r = { 90, 100 };
	struct sched_input in;
	struct sched_result *res;
	size_t k;

	cl_init(&c, 4, NULL);
	busy(&c, 0, 0xff, 90);
	j[0] = job(1, 4, 0);
	for (k = 1; k < 5; k++) {
		j[k] = job(k + 1, 1, 1);
		j[k].time_limit = 10;
	}
	memset(&in, 0, sizeof(in));
	in.nodes = c.nodes;
	in.nnodes = c.n;
	in.running = &r;
	in.nrunning = 1;
	in.pending = j;
	in.npending = 5;
	in.config.bf_max_job_test = 2;
	res = sched_run(&in);
	ck_assert_ptr_nonnull(res);
	ck_assert(res->has_resv);
	ck_assert_uint_eq(res->nstarts, 2);
	ck_assert_uint_eq(res->stats.tried, 3);
	ck_assert_int_eq(res->reasons[3], SCHED_REASON_PRIORITY);
	ck_assert_int_eq(res->reasons[4], SCHED_REASON_PRIORITY);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_unlisted)
{
	static const char one_leaf[] = "SwitchName=leaf0 Nodes=n[000-001]\n";
	struct cl c;
	struct sched_job j = job(1, 3, 0);
	struct sched_result *res;
	const struct sched_start *s;

	/* n002-n004 are not in the file: together they are one domain, so
	 * a required-leaf gang of 3 lands there and nowhere across. */
	cl_init(&c, 5, one_leaf);
	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 3), 0x1c);
	sched_result_free(res);
	/* Without any topology the cluster is one domain. */
	cl_free(&c);
	cl_init(&c, 5, NULL);
	j.nodes_min = j.nodes_max = 5;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(started(res, 1));
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

/* Leaves bigger than the core's internal chunks still act as one
 * domain: a required-leaf gang may span all of a leaf's nodes. */
START_TEST(test_big_leaf)
{
	static const char big[] =
	    "SwitchName=leaf0 Nodes=n[000-129]\n"
	    "SwitchName=leaf1 Nodes=n[130-149]\n"
	    "SwitchName=spine0 Switches=leaf[0-1]\n";
	struct cl *c = malloc(sizeof(*c));
	struct sched_job j[3];
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t k;

	ck_assert_ptr_nonnull(c);
	cl_init(c, 150, big);
	j[0] = job(1, 100, 0);
	j[1] = job(2, 25, 0);
	j[2] = job(3, 21, 0);
	for (k = 0; k < 3; k++) {
		j[k].topo_mode = SCHED_TOPO_REQUIRED;
		j[k].topo_level = "leaf";
	}
	res = run(c, NULL, 0, j, 3, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	for (k = 0; k < 100; k++)
		ck_assert_uint_lt(s->nodes[k].node, 130);
	/* 30 left in leaf0, 20 in leaf1: 25 fit in leaf0 only. Then 21
	 * fit in the 25 free nodes, but under no one leaf. */
	ck_assert_ptr_nonnull(s = started(res, 2));
	for (k = 0; k < 25; k++)
		ck_assert_uint_lt(s->nodes[k].node, 130);
	ck_assert_ptr_null(started(res, 3));
	ck_assert_int_eq(res->reasons[2], SCHED_REASON_TOPOLOGY);
	sched_result_free(res);
	cl_free(c);
	/* No topology: 150 nodes are one domain. */
	cl_init(c, 150, NULL);
	j[0] = job(1, 150, 1);
	j[0].topo_mode = SCHED_TOPO_REQUIRED;
	j[0].topo_level = "leaf";
	res = run(c, NULL, 0, j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 150);
	sched_result_free(res);
	cl_free(c);
	free(c);
}
END_TEST

/* ---- Restarts: keeping the old gang, replacements, hot spares. ---- */

static const char restart_topo[] =
    "SwitchName=leaf0 Nodes=n[000-005]\n"
    "SwitchName=leaf1 Nodes=n[006-011]\n"
    "SwitchName=spine0 Switches=leaf[0-1]\n";

static struct sched_job
restart_job(uint64_t id, uint32_t nodes, const uint32_t *prev, uint32_t nprev)
{
	struct sched_job j = job(id, nodes, 0);

	j.restarting = true;
	j.prev_nodes = prev;
	j.nprev = nprev;
	return j;
}

START_TEST(test_restart_keeps_gang)
{
	static const uint32_t prev[] = { 0, 1, 2, 3 };
	struct cl c;
	struct sched_job j = restart_job(1, 4, prev, 4);
	struct sched_result *res;
	const struct sched_start *s;

	/* Node 2 of the old gang is down. leaf0 still has 0, 1, 3 and the
	 * free 4, 5; leaf1 has exactly four free nodes, so a fresh
	 * placement would move the whole gang there (best fit). */
	cl_init(&c, 12, restart_topo);
	c.nodes[2].up = false;
	busy(&c, 6, 0xff, 90);
	busy(&c, 7, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 4);
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 1);
	ck_assert_uint_eq(s->nodes[2].node, 4);	/* same leaf, best rank */
	ck_assert_uint_eq(s->nodes[3].node, 3);
	ck_assert_uint_eq(gpuset(&s->nodes[0]), 0xff);
	sched_result_free(res);
	/* A DEGRADED old node is not kept: the OK nodes of the leaf come
	 * first. */
	c.nodes[1].health = SCHED_HEALTH_DEGRADED;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 4);
	ck_assert_uint_eq(s->nodes[2].node, 5);
	ck_assert_uint_eq(s->nodes[3].node, 3);
	sched_result_free(res);
	c.nodes[1].health = SCHED_HEALTH_OK;
	/* A hot spare in that leaf is the replacement. */
	c.nodes[5].spare = true;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[2].node, 5);
	ck_assert_uint_eq(nodeset(s->nodes, 4), 0x2b);
	sched_result_free(res);
	/* Not restarting, the same job is placed afresh, in leaf1, and the
	 * spare is not among the nodes it may use. */
	j.restarting = false;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(nodeset(s->nodes, 4) & 0x20, 0);
	sched_result_free(res);
	j.restarting = true;
	/* Leaf0 full apart from the survivors: the replacement comes from
	 * the same spine (leaf1) and the survivors keep their ranks. */
	c.nodes[5].spare = false;
	busy(&c, 4, 0x01, 91);
	busy(&c, 5, 0x01, 91);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 1);
	ck_assert_uint_ge(s->nodes[2].node, 8);
	ck_assert_uint_eq(s->nodes[3].node, 3);
	sched_result_free(res);
	/* Partial nodes: 4 GPUs each; the old nodes keep serving although
	 * another job now holds half of node 1. */
	busy(&c, 1, 0xf0, 92);
	j.gpus_per_node = 4;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[1].node, 1);
	ck_assert_uint_eq(gpuset(&s->nodes[1]), 0x0f);
	ck_assert_uint_eq(s->nodes[2].node, 4);
	ck_assert_uint_eq(gpuset(&s->nodes[2]), 0xf0);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_restart_required)
{
	static const uint32_t prev[] = { 0, 1, 2, 3 };
	struct cl c;
	struct sched_job j = restart_job(1, 4, prev, 4);
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t k;

	j.topo_mode = SCHED_TOPO_REQUIRED;
	j.topo_level = "leaf";
	cl_init(&c, 12, restart_topo);
	c.nodes[2].health = SCHED_HEALTH_FAILED;
	/* Room in the survivors' leaf: keep 0, 1, 3 and take 5 (4 is
	 * busy); leaf1 being a better fit does not matter. */
	busy(&c, 4, 0xff, 90);
	busy(&c, 6, 0xff, 90);
	busy(&c, 7, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 1);
	ck_assert_uint_eq(s->nodes[2].node, 5);
	ck_assert_uint_eq(s->nodes[3].node, 3);
	sched_result_free(res);
	/* No room left in leaf0: the gang moves whole to leaf1. */
	busy(&c, 5, 0x80, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 4);
	for (k = 0; k < 4; k++)
		ck_assert_uint_ge(s->nodes[k].node, 8);
	sched_result_free(res);
	/* Survivors split across leaves (the caller's old gang spanned
	 * two): the leaf with more of them that can still hold the gang. */
	busy(&c, 5, 0xff, 0);
	busy(&c, 4, 0xff, 0);
	busy(&c, 6, 0xff, 0);
	busy(&c, 7, 0xff, 0);
	{
		static const uint32_t split[] = { 6, 0, 1, 7, 2, 3 };

		j = restart_job(2, 4, split, 6);
		j.topo_mode = SCHED_TOPO_REQUIRED;
		j.topo_level = "leaf";
		res = run(&c, NULL, 0, &j, 1, 0);
		ck_assert_ptr_nonnull(s = started(res, 2));
		/* Old ranks 1, 2, 5 (nodes 0, 1, 3) kept; rank 0 (node 6,
		 * leaf1) let go; freed ranks take one replacement from
		 * leaf0 and close up. */
		ck_assert_uint_eq(s->nnodes, 4);
		ck_assert_uint_eq(s->nodes[0].node, 4);
		ck_assert_uint_eq(s->nodes[1].node, 0);
		ck_assert_uint_eq(s->nodes[2].node, 1);
		ck_assert_uint_eq(s->nodes[3].node, 3);
		sched_result_free(res);
	}
	cl_free(&c);
}
END_TEST

START_TEST(test_restart_elastic)
{
	static const uint32_t prev[] = { 0, 1, 2 };
	struct cl c;
	struct sched_job j = restart_job(1, 2, prev, 3);
	struct sched_result *res;
	const struct sched_start *s;
	uint32_t k;

	/* A 2:4 gang on 0, 1, 2 lost node 1; every other node is busy: it
	 * restarts on its two survivors, in their old order. */
	j.nodes_max = 4;
	cl_init(&c, 8, two_leaves);
	c.nodes[1].up = false;
	for (k = 3; k < 8; k++)
		busy(&c, k, 0xff, 90);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 2);
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 2);
	sched_result_free(res);
	/* With room it grows back to its maximum: a replacement at the
	 * freed rank 1 (same leaf), the extra one last. */
	busy(&c, 3, 0xff, 0);
	busy(&c, 5, 0xff, 0);
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nnodes, 4);
	ck_assert_uint_eq(s->nodes[0].node, 0);
	ck_assert_uint_eq(s->nodes[1].node, 3);
	ck_assert_uint_eq(s->nodes[2].node, 2);
	ck_assert_uint_eq(s->nodes[3].node, 5);
	sched_result_free(res);
	/* Only one survivor, below the minimum, and nothing free: it
	 * waits. */
	busy(&c, 3, 0xff, 90);
	busy(&c, 5, 0xff, 90);
	c.nodes[2].drained = true;
	res = run(&c, NULL, 0, &j, 1, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

START_TEST(test_spare_only_restarts)
{
	static const uint32_t bad[] = { 99, 3, 3 };
	struct cl c;
	struct sched_job j[2];
	struct sched_running r = { 90, 50 };
	struct sched_result *res;
	const struct sched_start *s;

	/* Nodes 0-2 busy until 50, node 3 a free spare. */
	cl_init(&c, 4, NULL);
	c.nodes[3].spare = true;
	busy(&c, 0, 0xff, 90);
	busy(&c, 1, 0xff, 90);
	busy(&c, 2, 0xff, 90);
	j[0] = job(1, 1, 1);
	res = run(&c, &r, 1, j, 1, 0);
	ck_assert_uint_eq(res->nstarts, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_RESOURCES);
	ck_assert(res->has_resv);
	ck_assert_int_eq(res->resv.start, 50);
	ck_assert_uint_lt(res->resv.nodes[0].node, 3);
	sched_result_free(res);
	/* Four nodes are more than a job that is not restarting can ever
	 * get. */
	j[0] = job(1, 4, 0);
	res = run(&c, &r, 1, j, 1, 0);
	ck_assert_int_eq(res->reasons[0], SCHED_REASON_BAD_CONSTRAINTS);
	sched_result_free(res);
	/* A restarting job without a previous gang may take it; so may one
	 * whose previous list is nonsense (out of range, repeated). */
	j[0] = job(1, 1, 2);
	j[1] = job(2, 1, 2);
	j[0].restarting = true;
	j[1].restarting = true;
	j[1].prev_nodes = bad;
	j[1].nprev = 3;
	res = run(&c, &r, 1, j, 2, 0);
	ck_assert_ptr_nonnull(s = started(res, 1));
	ck_assert_uint_eq(s->nodes[0].node, 3);
	ck_assert_ptr_nonnull(s = started(res, 2));
	ck_assert_uint_eq(s->nodes[0].node, 3);
	ck_assert_uint_eq(s->nnodes, 1);
	sched_result_free(res);
	cl_free(&c);
}
END_TEST

static Suite *
sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, test_queue_order);
	tcase_add_test(tc, test_queue_order_wide);
	tcase_add_test(tc, test_estimate_order);
	tcase_add_test(tc, test_estimate_aging);
	tcase_add_test(tc, test_estimate_priority_restart);
	tcase_add_test(tc, test_estimate_reservation);
	tcase_add_test(tc, test_estimate_no_starvation);
	tcase_add_test(tc, test_no_backfill);
	tcase_add_test(tc, test_one_leaf);
	tcase_add_test(tc, test_fewest_switches);
	tcase_add_test(tc, test_topology_required);
	tcase_add_test(tc, test_preferred_level);
	tcase_add_test(tc, test_nvlink_quad);
	tcase_add_test(tc, test_partly_used);
	tcase_add_test(tc, test_gpu_type);
	tcase_add_test(tc, test_never_bad_nodes);
	tcase_add_test(tc, test_bad_constraints);
	tcase_add_test(tc, test_elastic);
	tcase_add_test(tc, test_backfill);
	tcase_add_test(tc, test_backfill_cap);
	tcase_add_test(tc, test_unlisted);
	tcase_add_test(tc, test_big_leaf);
	tcase_add_test(tc, test_restart_keeps_gang);
	tcase_add_test(tc, test_restart_required);
	tcase_add_test(tc, test_restart_elastic);
	tcase_add_test(tc, test_spare_only_restarts);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, sched_sim_tcase());
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sched_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
