/* daemon/controller/domain/placement.c: the controller's nodes and jobs turned
 * into the scheduler core's input and its decisions back into
 * placements and pending reasons. Nodes are registered and jobs
 * submitted through the real tables (ctl_fixture.h), so what the pass
 * sees is what the controller would give it. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/placement.h"
#include "daemon/sched/sched.h"
#include "daemon/sched/topo.h"

#define NOW 1800000000000LL	/* 2027-01-15T08:00:00Z */

struct pass {
	const struct job *pending[64];
	const struct job **active;
	struct placement_input in;
	struct placement_result res;
};

/* The input of a pass now, as cluster.c builds it: allocations from the
 * active jobs, every waiting job that holds nothing. */
static void
pass_input(struct ctl *c, struct pass *p, const struct topo *topo)
{
	struct jobs_filter f = { .all = false };
	const struct job **v;
	size_t n, i;

	memset(p, 0, sizeof(*p));
	ck_assert_int_eq(jobs_active(c->js, &p->active, &p->in.nactive), 0);
	nodes_set_allocations(c->ns, p->active, p->in.nactive);
	ck_assert_int_eq(jobs_list(c->js, &f, &v, &n), 0);
	for (i = 0; i < n; i++)
		if (!jobs_is_active(v[i]) && (v[i]->state == JOB_PENDING ||
		    v[i]->state == JOB_RESTARTING))
			p->pending[p->in.npending++] = v[i];
	free(v);
	p->in.nodes = nodes_all(c->ns, &p->in.nnodes);
	p->in.active = p->active;
	p->in.pending = p->pending;
	p->in.topo = topo;
	p->in.now_ms = NOW;
	p->in.default_limit_s = 3600;
}

static void
pass_run(struct ctl *c, struct pass *p, const struct topo *topo)
{
	pass_input(c, p, topo);
	ck_assert_int_eq(placement_decide(&p->in, &p->res), 0);
}

static void
pass_free(struct pass *p)
{
	placement_result_free(&p->res);
	ck_assert_ptr_null(p->res.starts);
	ck_assert_uint_eq(p->res.nstarts, 0);
	free(p->active);
}

static const struct placement_start *
start_of(const struct pass *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->res.nstarts; i++)
		if (p->res.starts[i].job_id == id)
			return &p->res.starts[i];
	return NULL;
}

static const char *
reason_of(const struct pass *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->res.nreasons; i++)
		if (p->res.reasons[i].job_id == id)
			return p->res.reasons[i].reason;
	return NULL;
}

/* The expected start the pass gave job id with its reason; -1: none. */
static int64_t
reason_start_of(const struct pass *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->res.nreasons; i++)
		if (p->res.reasons[i].job_id == id)
			return p->res.reasons[i].start_ms;
	return -1;
}

static uint64_t
submit(struct ctl *c, unsigned nodes, unsigned gpn, uint64_t limit_s)
{
	struct job_spec spec;

	ctl_spec(&spec, nodes, nodes, gpn);
	spec.time_limit_s = limit_s;
	return ctl_submit(c, "alice", &spec, NOW - 1000);
}

/* Commit what a start decided, as the pass does. */
static void
take(struct ctl *c, const struct placement_start *s, bool running)
{
	struct cerr err;

	ck_assert_int_eq(jobs_allocate(c->js, s->job_id, s->place, s->nplace,
	    NOW, &err), 0);
	if (running)
		ck_assert_int_eq(jobs_mark_running(c->js, s->job_id, NOW,
		    &err), 0);
}

START_TEST(test_start_on_free_gpus)
{
	const struct placement_start *s;
	struct pass p;
	struct ctl c;
	uint64_t a, b;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	a = submit(&c, 1, 4, 0);
	b = submit(&c, 1, 0, 0);
	pass_run(&c, &p, NULL);
	ck_assert_uint_eq(p.res.nstarts, 2);
	ck_assert_ptr_nonnull(s = start_of(&p, a));
	ck_assert_uint_eq(s->nplace, 1);
	ck_assert_uint_eq(s->place[0].node_rank, 0);
	ck_assert_uint_eq(s->place[0].ngpus, 4);
	/* Best connected: one NUMA half, one side of the node. */
	ck_assert_uint_lt(s->place[0].gpus[3], 4);
	ck_assert_ptr_nonnull(s = start_of(&p, b));
	ck_assert_uint_eq(s->nplace, 1);
	/* The whole node: every GPU, of the other node. */
	ck_assert_uint_eq(s->place[0].ngpus, 8);
	ck_assert_str_ne(s->place[0].node, start_of(&p, a)->place[0].node);
	ck_assert_uint_eq(p.res.nreasons, 0);
	pass_free(&p);
	/* A gang of two whole nodes: ranks in order on two nodes. */
	ck_assert_int_eq(jobs_end(c.js, a, JOB_CANCELLED, "x", NOW,
	    &(struct cerr){ 0 }), 0);
	ck_assert_int_eq(jobs_end(c.js, b, JOB_CANCELLED, "x", NOW,
	    &(struct cerr){ 0 }), 0);
	b = submit(&c, 2, 0, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, b));
	ck_assert_uint_eq(s->nplace, 2);
	ck_assert_str_ne(s->place[0].node, s->place[1].node);
	ck_assert_uint_eq(s->place[1].node_rank, 1);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A gang starts whole or not at all; what waits says why. */
START_TEST(test_gang_waits_with_reason)
{
	struct pass p;
	struct ctl c;
	uint64_t big, type;
	struct job_spec spec;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	big = submit(&c, 3, 8, 0);
	ctl_spec(&spec, 1, 1, 1);
	spec.gpu_type = strdup("A100");
	type = ctl_submit(&c, "alice", &spec, NOW);
	pass_run(&c, &p, NULL);
	ck_assert_uint_eq(p.res.nstarts, 0);
	ck_assert_ptr_nonnull(reason_of(&p, big));
	ck_assert_str_eq(reason_of(&p, type), "GpuType");
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* Nodes that cannot take work: DOWN, without an agent connected (not
 * yet overdue), drained, FAILED, or with the GPUs failed or taken. */
START_TEST(test_unusable_nodes)
{
	struct node_health failed = { .health = HEALTH_FAILED };
	struct node_health gpu = { .health = HEALTH_OK, .ngpus = 1,
	    .gpus = { { .index = 3, .health = HEALTH_FAILED } } };
	const struct placement_start *s;
	struct pass p;
	struct ctl c;
	struct cerr err;
	uint64_t id;
	unsigned g;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, NOW);
	ctl_node(&c, "node02", 4, 2, NOW);
	ctl_node(&c, "node03", 4, 3, NOW);
	ctl_node(&c, "node04", 4, 4, NOW);
	ctl_node(&c, "node05", 4, 5, NOW - 60000);
	ctl_node(&c, "node06", 4, 6, NOW);
	nodes_disconnected(c.ns, 1);
	ck_assert_int_eq(nodes_drain(c.ns, nodes_get(c.ns, "node02"), "m",
	    "root", false, NOW, &err), 0);
	nodes_set_health(c.ns, nodes_get(c.ns, "node03"), &failed, NOW);
	nodes_set_health(c.ns, nodes_get(c.ns, "node04"), &gpu, NOW);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, NOW, 30000, NULL, NULL),
	    1);
	id = submit(&c, 1, 4, 0);
	/* node06 only; taken by a running job, nothing is left. */
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	ck_assert_str_eq(s->place[0].node, "node06");
	take(&c, s, true);
	pass_free(&p);
	id = submit(&c, 1, 4, 0);
	pass_run(&c, &p, NULL);
	ck_assert_uint_eq(p.res.nstarts, 0);
	ck_assert_ptr_nonnull(reason_of(&p, id));
	pass_free(&p);
	/* Three GPUs of node04 are fine: a 3-GPU job goes there. */
	id = submit(&c, 1, 3, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	ck_assert_str_eq(s->place[0].node, "node04");
	for (g = 0; g < s->place[0].ngpus; g++)
		ck_assert_uint_ne(s->place[0].gpus[g], 3);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A restart keeps the healthy nodes of its gang at their ranks and gets
 * a replacement for the rest; only it may use a hot spare. */
START_TEST(test_restart_keeps_nodes_and_spares)
{
	struct placement mine[2] = { { .node = "node02", .node_rank = 0,
	    .ngpus = 4, .gpus = { 0, 1, 2, 3 } }, { .node = "node03",
	    .node_rank = 1, .ngpus = 4, .gpus = { 0, 1, 2, 3 } } };
	struct inventory inv;
	const struct placement_start *s;
	enum job_state st;
	struct pass p;
	struct ctl c;
	struct cerr err;
	uint64_t id, other;
	unsigned g;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, NOW);
	ctl_node(&c, "node02", 4, 2, NOW);
	ctl_node(&c, "node03", 4, 3, NOW);
	/* node09: a spare, as cohort-agent --spare registers it. */
	memset(&inv, 0, sizeof(inv));
	inv.ngpus = 4;
	for (g = 0; g < 4; g++) {
		inv.gpus[g].index = g;
		snprintf(inv.gpus[g].model, sizeof(inv.gpus[g].model),
		    "NVIDIA H100 80GB HBM3");
		inv.gpus[g].nic = -1;
		inv.gpus[g].numa_node = inv.gpus[g].pcie_switch = -1;
		inv.gpus[g].nvlink_domain = -1;
	}
	ck_assert_int_eq(nodes_register(c.ns, "node09", NULL, &inv, true, 9,
	    NOW, &err), 0);
	id = submit(&c, 2, 4, 0);
	ck_assert_int_eq(jobs_allocate(c.js, id, mine, 2, NOW, &err), 0);
	ck_assert_int_eq(jobs_mark_running(c.js, id, NOW, &err), 0);
	/* node03 fails; node01 is taken meanwhile. */
	nodes_set_health(c.ns, nodes_get(c.ns, "node03"), &(struct
	    node_health){ .health = HEALTH_FAILED }, NOW);
	ck_assert_int_eq(jobs_fail_over(c.js, id, "node03 FAILED", true, NOW,
	    NOW, &st, &err), 0);
	other = submit(&c, 1, 4, 0);
	pass_run(&c, &p, NULL);
	/* The new job may not have the spare; node01 is its. The restart
	 * goes first (its priority's head): node02 kept at rank 0. */
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	ck_assert_uint_eq(s->nplace, 2);
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_uint_eq(s->place[0].node_rank, 0);
	ck_assert_str_eq(s->place[1].node, "node09");
	ck_assert_ptr_nonnull(s = start_of(&p, other));
	ck_assert_str_eq(s->place[0].node, "node01");
	pass_free(&p);
	/* Without a restart, a spare is nobody's. */
	ctl_teardown(&c);
	ctl_setup(&c, NULL);
	ck_assert_int_eq(nodes_register(c.ns, "node09", NULL, &inv, true, 9,
	    NOW, &err), 0);
	other = submit(&c, 1, 4, 0);
	pass_run(&c, &p, NULL);
	ck_assert_uint_eq(p.res.nstarts, 0);
	ck_assert_ptr_nonnull(reason_of(&p, other));
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* The first job that cannot start gets a reservation at the running
 * job's expected end (its limit, else the default), named in its
 * reason; a short job that ends before it backfills. */
START_TEST(test_reservation_and_backfill)
{
	const struct placement_start *s;
	const char *r;
	struct pass p;
	struct ctl c;
	uint64_t run, big, small, late;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	run = submit(&c, 1, 8, 0);	/* the default limit: 3600 s */
	pass_run(&c, &p, NULL);
	take(&c, start_of(&p, run), true);
	pass_free(&p);
	big = submit(&c, 2, 8, 600);
	small = submit(&c, 1, 8, 60);
	late = submit(&c, 1, 8, 7200);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_null(start_of(&p, big));
	ck_assert_ptr_nonnull(r = reason_of(&p, big));
	/* NOW + 3600 s. */
	ck_assert_str_eq(r, "Resources (reserved, starts by "
	    "2027-01-15T09:00:00Z)");
	/* The same time as the job's expected start (cohort jobs --start);
	 * the others have none. */
	ck_assert_int_eq(reason_start_of(&p, big), NOW + 3600 * 1000);
	ck_assert_int_eq(reason_start_of(&p, late), 0);
	ck_assert_ptr_nonnull(s = start_of(&p, small));
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_uint_eq(p.res.backfilled, 1);
	/* One that would delay the reservation waits. */
	ck_assert_ptr_null(start_of(&p, late));
	ck_assert_ptr_nonnull(reason_of(&p, late));
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A job still launching (start_ms 0) counts as ending a limit from now. */
START_TEST(test_launching_job_counts_from_now)
{
	struct pass p;
	struct ctl c;
	uint64_t run, big;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	run = submit(&c, 1, 8, 120);
	pass_run(&c, &p, NULL);
	take(&c, start_of(&p, run), false);
	pass_free(&p);
	big = submit(&c, 1, 8, 10);
	pass_run(&c, &p, NULL);
	ck_assert_str_eq(reason_of(&p, big), "Resources (reserved, starts by "
	    "2027-01-15T08:02:00Z)");
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* The queue policy is passed through: FIFO takes the older job, the
 * estimate order the shorter one. */
START_TEST(test_queue_order)
{
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	uint64_t old, quick;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_spec(&spec, 1, 1, 8);
	spec.time_limit_s = 36000;
	old = ctl_submit(&c, "alice", &spec, NOW - 5000);
	ctl_spec(&spec, 1, 1, 8);
	spec.time_limit_s = 60;
	quick = ctl_submit(&c, "alice", &spec, NOW - 4000);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(start_of(&p, old));
	ck_assert_ptr_null(start_of(&p, quick));
	pass_free(&p);
	pass_input(&c, &p, NULL);
	p.in.queue_order = SCHED_ORDER_ESTIMATE;
	p.in.queue_aging = 0;
	ck_assert_int_eq(placement_decide(&p.in, &p.res), 0);
	ck_assert_ptr_nonnull(start_of(&p, quick));
	ck_assert_ptr_null(start_of(&p, old));
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A topology: a required level waits for a switch that holds the gang;
 * a preferred one places anywhere. */
START_TEST(test_topology_modes)
{
	static const char text[] =
	    "SwitchName=s0 Nodes=node01,node02\n"
	    "SwitchName=s1 Nodes=node03,node04\n"
	    "SwitchName=top Switches=s0,s1\n";
	struct job_spec spec;
	struct topo *t;
	struct pass p;
	struct ctl c;
	char err[256];
	uint64_t req, pref;
	char name[16];
	unsigned i;

	ck_assert_ptr_nonnull(t = topo_parse(text, strlen(text), "topo",
	    err, sizeof(err)));
	ctl_setup(&c, NULL);
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		ctl_node(&c, name, 8, i, NOW);
	}
	ctl_spec(&spec, 3, 3, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("leaf");
	req = ctl_submit(&c, "alice", &spec, NOW);
	pass_run(&c, &p, t);
	ck_assert_ptr_null(start_of(&p, req));
	ck_assert_ptr_nonnull(reason_of(&p, req));
	pass_free(&p);
	ck_assert_int_eq(jobs_end(c.js, req, JOB_CANCELLED, "x", NOW,
	    &(struct cerr){ 0 }), 0);
	ctl_spec(&spec, 2, 2, 8);
	spec.topo_mode = TOPO_PREFERRED;
	spec.topo_level = strdup("leaf");
	pref = ctl_submit(&c, "alice", &spec, NOW);
	ctl_spec(&spec, 2, 2, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("leaf");
	req = ctl_submit(&c, "alice", &spec, NOW);
	pass_run(&c, &p, t);
	ck_assert_ptr_nonnull(start_of(&p, pref));
	ck_assert_ptr_nonnull(start_of(&p, req));
	/* Each in one leaf. */
	ck_assert_int_eq(topo_node_leaf(t, start_of(&p, req)->place[0].node),
	    topo_node_leaf(t, start_of(&p, req)->place[1].node));
	pass_free(&p);
	ctl_teardown(&c);
	topo_destroy(t);
}
END_TEST

/* Every allocation of a pass failing in turn: -1 with ENOMEM and an
 * empty result each time (nothing half-decided), until the pass has all
 * it needs and decides as it would have. */
START_TEST(test_each_allocation_fails)
{
	struct placement_result res;
	struct pass p;
	struct ctl c;
	int nth, rc;
	uint64_t a, b, r;
	enum job_state st;
	struct cerr err;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	r = ctl_job_on(&c, 2, 8, true, NOW - 5000);
	ck_assert_int_eq(jobs_fail_over(c.js, r, "x", true, NOW, NOW, &st,
	    &err), 0);
	a = submit(&c, 1, 4, 0);
	b = submit(&c, 2, 8, 0);
	pass_input(&c, &p, NULL);
	for (nth = 1; nth < 200; nth++) {
		ctl_fail_calloc(nth);
		errno = 0;
		rc = placement_decide(&p.in, &res);
		ctl_fail_calloc(0);
		if (rc == 0)
			break;
		ck_assert_int_eq(errno, ENOMEM);
		ck_assert_uint_eq(res.nstarts, 0);
		ck_assert_ptr_null(res.starts);
		ck_assert_uint_eq(res.nreasons, 0);
		ck_assert_ptr_null(res.reasons);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(nth, 5);
	ck_assert_uint_eq(res.nstarts, 1);
	ck_assert_uint_eq(res.starts[0].job_id, r);
	/* The restart goes first and takes both nodes: the others wait. */
	ck_assert_uint_eq(res.nreasons, 2);
	ck_assert(res.reasons[0].job_id == a || res.reasons[1].job_id == a);
	ck_assert(res.reasons[0].job_id == b || res.reasons[1].job_id == b);
	placement_result_free(&res);
	free(p.active);
	ctl_teardown(&c);
}
END_TEST

/* Jobs with the same --nodelist/--exclude share one filter in the pass;
 * a different one that follows gets its own. */
START_TEST(test_shared_filter)
{
	const struct placement_start *s;
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	uint64_t id[3];
	int k;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	for (k = 0; k < 3; k++) {
		ctl_spec(&spec, 1, 1, 2);
		spec.exclude = strdup(k < 2 ? "node01" : "node02");
		id[k] = ctl_submit(&c, "alice", &spec, NOW - 1000 + k);
	}
	pass_run(&c, &p, NULL);
	for (k = 0; k < 3; k++) {
		ck_assert_ptr_nonnull(s = start_of(&p, id[k]));
		ck_assert_str_eq(s->place[0].node, k < 2 ? "node02" : "node01");
	}
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* --constraint and --gpu-memory narrow the core's node filter: only
 * node02 has fp64&ib; only node03's GPUs have 80 GiB; the two together
 * fit nowhere and wait (BadConstraints is the core's word for it). Jobs
 * with the same nodelist but other constraints do not share a filter. */
START_TEST(test_constraint_filter)
{
	const struct placement_start *s;
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	uint64_t f, m, both, plain;

	ctl_setup(&c, NULL);
	ctl_node_features(&c, "node01", 8, 1, NOW, "ib", 40960);
	ctl_node_features(&c, "node02", 8, 2, NOW, "fp64,ib", 40960);
	ctl_node_features(&c, "node03", 8, 3, NOW, "", 81559);
	ctl_spec(&spec, 1, 1, 1);
	spec.constraint = strdup("fp64&ib");
	f = ctl_submit(&c, "alice", &spec, NOW - 1000);
	ctl_spec(&spec, 1, 1, 1);
	spec.gpu_memory_mb = 80 * 1024;
	m = ctl_submit(&c, "alice", &spec, NOW - 900);
	ctl_spec(&spec, 1, 1, 1);
	spec.constraint = strdup("fp64");
	spec.gpu_memory_mb = 80 * 1024;
	both = ctl_submit(&c, "alice", &spec, NOW - 800);
	ctl_spec(&spec, 1, 1, 8);
	spec.exclude = strdup("node02");
	plain = ctl_submit(&c, "alice", &spec, NOW - 700);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, f));
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_ptr_nonnull(s = start_of(&p, m));
	ck_assert_str_eq(s->place[0].node, "node03");
	ck_assert_ptr_null(start_of(&p, both));
	ck_assert_ptr_nonnull(reason_of(&p, both));
	ck_assert_ptr_nonnull(s = start_of(&p, plain));
	ck_assert_str_eq(s->place[0].node, "node01");
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A job with --constraint waits for a node that meets it rather than
 * take a free one that does not: node02 alone has fp64 (and ib); three
 * 1-GPU jobs that need it start there, however their expressions say
 * it, and the 2-GPU one waits for Resources with node01's four GPUs
 * idle. */
START_TEST(test_constraint_waits_for_its_node)
{
	const char *expr[] = { "fp64", "fp64&ib", "(nvl72|ib)&fp64" };
	const struct placement_start *s;
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	uint64_t id[3], two;
	size_t k;

	ctl_setup(&c, NULL);
	ctl_node_features(&c, "node01", 4, 1, NOW, "", 81559);
	ctl_node_features(&c, "node02", 4, 2, NOW, "fp64,ib", 81559);
	for (k = 0; k < 3; k++) {
		ctl_spec(&spec, 1, 1, 1);
		spec.constraint = strdup(expr[k]);
		id[k] = ctl_submit(&c, "alice", &spec, NOW - 1000 + (int)k);
	}
	ctl_spec(&spec, 1, 1, 2);
	spec.constraint = strdup("fp64");
	two = ctl_submit(&c, "alice", &spec, NOW - 900);
	pass_run(&c, &p, NULL);
	for (k = 0; k < 3; k++) {
		ck_assert_ptr_nonnull(s = start_of(&p, id[k]));
		ck_assert_str_eq(s->place[0].node, "node02");
	}
	ck_assert_ptr_null(start_of(&p, two));
	ck_assert_ptr_nonnull(reason_of(&p, two));
	ck_assert_msg(strncmp(reason_of(&p, two), "Resources", 9) == 0, "%s",
	    reason_of(&p, two));
	ck_assert_uint_eq(p.res.nstarts, 3);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* Features derived from the inventory (lib/features.h) meet
 * --constraint as configured ones do; a constraint too few nodes meet
 * waits with a BadConstraints reason that says so, and starts once a
 * node that has the feature registers. */
START_TEST(test_constraint_derived)
{
	const struct placement_start *s;
	struct job_spec spec;
	struct inventory inv;
	struct cerr err;
	struct pass p;
	struct ctl c;
	uint64_t h, a, three;
	unsigned g;

	ctl_setup(&c, NULL);
	ctl_node_features(&c, "node01", 8, 1, NOW, "", 0);
	ctl_node_features(&c, "node02", 8, 2, NOW, "fp64", 0);
	ctl_spec(&spec, 1, 1, 1);
	spec.constraint = strdup("h100&nvlink&fp64");
	h = ctl_submit(&c, "alice", &spec, NOW - 1000);
	ctl_spec(&spec, 1, 1, 1);
	spec.constraint = strdup("nvidia-a100-sxm4-80gb");
	a = ctl_submit(&c, "alice", &spec, NOW - 900);
	ctl_spec(&spec, 3, 3, 1);
	spec.constraint = strdup("fp64|a100");
	three = ctl_submit(&c, "alice", &spec, NOW - 800);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, h));
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_ptr_null(start_of(&p, a));
	ck_assert_str_eq(reason_of(&p, a), "BadConstraints: no node has "
	    "feature nvidia-a100-sxm4-80gb");
	ck_assert_str_eq(reason_of(&p, three), "BadConstraints: --constraint "
	    "fp64|a100: 1 node meets it, --nodes 3");
	pass_free(&p);
	/* node03 joins with A100s (no NVLink): the A100 job starts there. */
	memset(&inv, 0, sizeof(inv));
	snprintf(inv.source, sizeof(inv.source), "simulated");
	inv.ncpus = 32;
	inv.memory_mb = 1024;
	inv.ngpus = 4;
	for (g = 0; g < inv.ngpus; g++) {
		inv.gpus[g].index = g;
		snprintf(inv.gpus[g].model, sizeof(inv.gpus[g].model),
		    "NVIDIA A100-SXM4-80GB");
		inv.gpus[g].numa_node = 0;
		inv.gpus[g].pcie_switch = -1;
		inv.gpus[g].nvlink_domain = -1;
		inv.gpus[g].nic = -1;
	}
	ck_assert_msg(nodes_register(c.ns, "node03", NULL, &inv, false, 3,
	    NOW, &err) == 0, "nodes_register: %s", err.text);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, a));
	ck_assert_str_eq(s->place[0].node, "node03");
	ck_assert_str_eq(reason_of(&p, three), "BadConstraints: --constraint "
	    "fp64|a100: 2 nodes meet it, --nodes 3");
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* --cpus-per-task x --tasks-per-node and --mem-per-node against each
 * node's CPUs and memory: node01 has 16 CPUs and 64 GiB, node02 the
 * fixture's 32 and 256 GiB. */
START_TEST(test_cpus_mem_filter)
{
	const struct placement_start *s;
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	struct node *n;
	uint64_t big, mem, small, none;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	ck_assert_ptr_nonnull(n = nodes_get(c.ns, "node01"));
	n->inv->ncpus = 16;
	n->inv->memory_mb = 64 * 1024;
	ctl_spec(&spec, 1, 1, 4);
	spec.tasks_per_node = 2;
	spec.cpus_per_task = 12;	/* 24 CPUs: node02 only */
	big = ctl_submit(&c, "alice", &spec, NOW - 1000);
	ctl_spec(&spec, 1, 1, 4);
	spec.mem_per_node_mb = 100 * 1024;	/* node02 only */
	mem = ctl_submit(&c, "alice", &spec, NOW - 900);
	ctl_spec(&spec, 1, 1, 1);
	spec.cpus_per_task = 16;
	spec.mem_per_node_mb = 64 * 1024;	/* node01 is just enough */
	small = ctl_submit(&c, "alice", &spec, NOW - 800);
	ctl_spec(&spec, 1, 1, 1);
	spec.cpus_per_task = 33;	/* no node */
	none = ctl_submit(&c, "alice", &spec, NOW - 700);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, big));
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_ptr_nonnull(s = start_of(&p, mem));
	ck_assert_str_eq(s->place[0].node, "node02");
	ck_assert_ptr_nonnull(s = start_of(&p, small));
	ck_assert_str_eq(s->place[0].node, "node01");
	ck_assert_ptr_null(start_of(&p, none));
	ck_assert_ptr_nonnull(reason_of(&p, none));
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* --nodelist / --exclude become the core's node filter; a CPU-only job
 * holds a node but no GPU (on a node whose GPUs are all taken), and the
 * node then counts it, so an exclusive job keeps off that node. */
START_TEST(test_nodes_cpu_exclusive)
{
	const struct placement_start *s;
	struct job_spec spec;
	struct pass p;
	struct ctl c;
	uint64_t a, b, full, cpu, ex;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, NOW);
	ctl_node(&c, "node02", 8, 2, NOW);
	ctl_node(&c, "node03", 8, 3, NOW);
	ctl_spec(&spec, 1, 1, 8);
	spec.nodelist = strdup("node[02-03]");
	spec.exclude = strdup("node03");
	a = ctl_submit(&c, "alice", &spec, NOW - 1000);
	ctl_spec(&spec, 1, 1, 8);
	spec.exclude = strdup("node01,node02");
	b = ctl_submit(&c, "alice", &spec, NOW - 900);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, a));
	ck_assert_str_eq(s->place[0].node, "node02");
	take(&c, s, true);
	ck_assert_ptr_nonnull(s = start_of(&p, b));
	ck_assert_str_eq(s->place[0].node, "node03");
	take(&c, s, true);
	pass_free(&p);
	full = submit(&c, 1, 8, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, full));
	ck_assert_str_eq(s->place[0].node, "node01");
	take(&c, s, true);
	pass_free(&p);
	/* Every GPU taken: a CPU-only job still runs, with no GPU. */
	ctl_spec(&spec, 1, 1, 0);
	spec.cpu_only = true;
	spec.nodelist = strdup("node01");
	cpu = ctl_submit(&c, "alice", &spec, NOW);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, cpu));
	ck_assert_str_eq(s->place[0].node, "node01");
	ck_assert_uint_eq(s->place[0].ngpus, 0);
	take(&c, s, true);
	pass_free(&p);
	/* node01's GPU job ends; its CPU-only job keeps the exclusive
	 * job off it. */
	ck_assert_int_eq(jobs_end(c.js, full, JOB_CANCELLED, "x", NOW,
	    &(struct cerr){ 0 }), 0);
	ctl_spec(&spec, 1, 1, 0);
	spec.exclusive = true;
	ex = ctl_submit(&c, "alice", &spec, NOW);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_null(start_of(&p, ex));
	ck_assert_int_eq(strncmp(reason_of(&p, ex), "Resources", 9), 0);
	pass_free(&p);
	ck_assert_int_eq(jobs_end(c.js, cpu, JOB_CANCELLED, "x", NOW,
	    &(struct cerr){ 0 }), 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, ex));
	ck_assert_str_eq(s->place[0].node, "node01");
	ck_assert_uint_eq(s->place[0].ngpus, 8);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* ---- Rails ---- */

/* A 4-GPU node of one NVSwitch domain, a PCIe switch and a NUMA node per
 * pair; GPU g's NIC (rail) rail[g] (-1: unknown), on its switch. */
static void
rail_node(struct ctl *c, const char *name, const int *rail, uint64_t conn)
{
	struct inventory inv;
	struct cerr err;
	unsigned g;

	memset(&inv, 0, sizeof(inv));
	snprintf(inv.source, sizeof(inv.source), "simulated");
	inv.ncpus = 32;
	inv.memory_mb = 256 * 1024;
	inv.ngpus = 4;
	for (g = 0; g < 4; g++) {
		inv.gpus[g].index = g;
		snprintf(inv.gpus[g].model, sizeof(inv.gpus[g].model),
		    "NVIDIA H100 80GB HBM3");
		snprintf(inv.gpus[g].uuid, sizeof(inv.gpus[g].uuid),
		    "GPU-%s-%u", name, g);
		inv.gpus[g].numa_node = inv.gpus[g].pcie_switch = (int)g / 2;
		inv.gpus[g].nvlink_domain = 0;
		inv.gpus[g].nic = rail[g];
		inv.gpus[g].nic_near = rail[g] >= 0;
		if (rail[g] >= 0)
			snprintf(inv.gpus[g].nic_name,
			    sizeof(inv.gpus[g].nic_name), "mlx5_%d", rail[g]);
	}
	ck_assert_msg(nodes_register(c->ns, name, NULL, &inv, false, conn,
	    NOW, &err) == 0, "nodes_register: %s", err.text);
}

/* Job id holds gpus[0..n) of node, running. */
static uint64_t
hold(struct ctl *c, const char *node, const unsigned *gpus, unsigned n)
{
	struct placement pl = { .node_rank = 0, .ngpus = n };
	struct cerr err;
	uint64_t id;

	snprintf(pl.node, sizeof(pl.node), "%s", node);
	memcpy(pl.gpus, gpus, n * sizeof(*gpus));
	id = submit(c, 1, n, 0);
	ck_assert_int_eq(jobs_allocate(c->js, id, &pl, 1, NOW, &err), 0);
	ck_assert_int_eq(jobs_mark_running(c->js, id, NOW, &err), 0);
	return id;
}

/* Rank r of start s has GPUs a and b. */
static void
has_gpus(const struct placement_start *s, unsigned r, const char *node,
    unsigned a, unsigned b)
{
	ck_assert_uint_gt(s->nplace, r);
	ck_assert_str_eq(s->place[r].node, node);
	ck_assert_uint_eq(s->place[r].ngpus, 2);
	ck_assert_msg(s->place[r].gpus[0] == a && s->place[r].gpus[1] == b,
	    "%s has GPUs %u,%u, want %u,%u", node, s->place[r].gpus[0],
	    s->place[r].gpus[1], a, b);
}

/* node01's GPUs 0 and 1 are taken: a 2 x 2 gang gets GPUs 2 and 3 on
 * both nodes (rail 1 everywhere), not 0 and 1 on the idle node, which
 * its own choice would be; the same by GPU index where rails are
 * unknown; and by rail, not index, where node02 numbers its NICs the
 * other way round (its GPUs 0 and 1 are on rail 1). */
START_TEST(test_rails_aligned)
{
	static const int pairs[4] = { 0, 0, 1, 1 }, none[4] = { -1, -1, -1,
		-1 }, swapped[4] = { 1, 1, 0, 0 };
	static const unsigned low[2] = { 0, 1 };
	const struct placement_start *s;
	struct pass p;
	struct ctl c;
	uint64_t id;
	int k;

	for (k = 0; k < 3; k++) {
		ctl_setup(&c, NULL);
		rail_node(&c, "node01", k == 1 ? none : pairs, 1);
		rail_node(&c, "node02", k == 0 ? pairs : k == 1 ? none :
		    swapped, 2);
		hold(&c, "node01", low, 2);
		id = submit(&c, 2, 2, 0);
		pass_run(&c, &p, NULL);
		ck_assert_ptr_nonnull(s = start_of(&p, id));
		has_gpus(s, 0, "node01", 2, 3);
		if (k < 2)
			has_gpus(s, 1, "node02", 2, 3);
		else
			has_gpus(s, 1, "node02", 0, 1);
		pass_free(&p);
		ctl_teardown(&c);
	}
}
END_TEST

/* When a node cannot give the reference's rails it keeps its own
 * choice, and the gang still starts; and no node takes worse-connected
 * GPUs to line up: node01 has only GPUs 0 and 3 free (two switches),
 * node02 keeps 0 and 1 (one switch) rather than take 0 and 3. */
START_TEST(test_rails_graceful)
{
	static const int byidx[4] = { 0, 1, 2, 3 };
	static const unsigned low[2] = { 0, 1 }, high[2] = { 2, 3 },
	    mid[2] = { 1, 2 };
	const struct placement_start *s;
	struct pass p;
	struct ctl c;
	uint64_t id;

	ctl_setup(&c, NULL);
	rail_node(&c, "node01", byidx, 1);
	rail_node(&c, "node02", byidx, 2);
	hold(&c, "node01", high, 2);
	hold(&c, "node02", low, 2);
	id = submit(&c, 2, 2, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	has_gpus(s, 0, "node01", 0, 1);
	has_gpus(s, 1, "node02", 2, 3);
	pass_free(&p);
	ctl_teardown(&c);

	ctl_setup(&c, NULL);
	rail_node(&c, "node01", byidx, 1);
	rail_node(&c, "node02", byidx, 2);
	hold(&c, "node01", mid, 2);
	id = submit(&c, 2, 2, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	has_gpus(s, 0, "node01", 0, 3);
	has_gpus(s, 1, "node02", 0, 1);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* The reference is what most of the gang can have: with three idle
 * nodes and one whose GPUs 2 and 3 are taken, all four get 0 and 1;
 * with three nodes whose GPUs 0 and 1 are taken, the idle one lines up
 * with them on 2 and 3, wherever it is in the gang. */
START_TEST(test_rails_majority)
{
	static const int pairs[4] = { 0, 0, 1, 1 };
	static const unsigned low[2] = { 0, 1 }, high[2] = { 2, 3 };
	static const char *const names[4] = { "node01", "node02", "node03",
		"node04" };
	const struct placement_start *s;
	struct pass p;
	struct ctl c;
	uint64_t id;
	unsigned i;

	ctl_setup(&c, NULL);
	for (i = 0; i < 4; i++)
		rail_node(&c, names[i], pairs, i + 1);
	hold(&c, "node03", high, 2);
	id = submit(&c, 4, 2, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	for (i = 0; i < 4; i++)
		has_gpus(s, i, names[i], 0, 1);
	pass_free(&p);
	ctl_teardown(&c);

	ctl_setup(&c, NULL);
	for (i = 0; i < 4; i++)
		rail_node(&c, names[i], pairs, i + 1);
	hold(&c, "node02", low, 2);
	hold(&c, "node03", low, 2);
	hold(&c, "node04", low, 2);
	id = submit(&c, 4, 2, 0);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	for (i = 0; i < 4; i++)
		has_gpus(s, i, names[i], 2, 3);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

/* A restart that keeps node01 and replaces node02 by node03 lines the
 * replacement up with the kept node: node01's GPUs 0-1 went to another
 * job meanwhile, so node01 gives 2-3, and so does node03, idle. */
START_TEST(test_rails_on_restart)
{
	static const int pairs[4] = { 0, 0, 1, 1 };
	static const unsigned low[2] = { 0, 1 };
	struct placement mine[2] = { { .node = "node01", .node_rank = 0,
	    .ngpus = 2, .gpus = { 0, 1 } }, { .node = "node02",
	    .node_rank = 1, .ngpus = 2, .gpus = { 0, 1 } } };
	const struct placement_start *s;
	enum job_state st;
	struct pass p;
	struct ctl c;
	struct cerr err;
	uint64_t id;

	ctl_setup(&c, NULL);
	rail_node(&c, "node01", pairs, 1);
	rail_node(&c, "node02", pairs, 2);
	rail_node(&c, "node03", pairs, 3);
	id = submit(&c, 2, 2, 0);
	ck_assert_int_eq(jobs_allocate(c.js, id, mine, 2, NOW, &err), 0);
	ck_assert_int_eq(jobs_mark_running(c.js, id, NOW, &err), 0);
	nodes_set_health(c.ns, nodes_get(c.ns, "node02"), &(struct
	    node_health){ .health = HEALTH_FAILED }, NOW);
	ck_assert_int_eq(jobs_fail_over(c.js, id, "node02 FAILED", true, NOW,
	    NOW, &st, &err), 0);
	hold(&c, "node01", low, 2);
	pass_run(&c, &p, NULL);
	ck_assert_ptr_nonnull(s = start_of(&p, id));
	has_gpus(s, 0, "node01", 2, 3);
	has_gpus(s, 1, "node03", 2, 3);
	pass_free(&p);
	ctl_teardown(&c);
}
END_TEST

static Suite *
placement_suite(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("decide");

	tcase_add_test(tc, test_start_on_free_gpus);
	tcase_add_test(tc, test_gang_waits_with_reason);
	tcase_add_test(tc, test_unusable_nodes);
	tcase_add_test(tc, test_restart_keeps_nodes_and_spares);
	tcase_add_test(tc, test_reservation_and_backfill);
	tcase_add_test(tc, test_launching_job_counts_from_now);
	tcase_add_test(tc, test_queue_order);
	tcase_add_test(tc, test_topology_modes);
	tcase_add_test(tc, test_each_allocation_fails);
	tcase_add_test(tc, test_nodes_cpu_exclusive);
	tcase_add_test(tc, test_constraint_filter);
	tcase_add_test(tc, test_constraint_waits_for_its_node);
	tcase_add_test(tc, test_constraint_derived);
	tcase_add_test(tc, test_cpus_mem_filter);
	tcase_add_test(tc, test_shared_filter);
	tcase_add_test(tc, test_rails_aligned);
	tcase_add_test(tc, test_rails_graceful);
	tcase_add_test(tc, test_rails_majority);
	tcase_add_test(tc, test_rails_on_restart);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(placement_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
