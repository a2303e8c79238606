/* daemon/controller/domain/nodes.c against an in-memory store (ctl_fixture.h):
 * registration and inventory, connections, heartbeats and node_timeout,
 * UP/DOWN, drains (DRAINING/DRAINED) and resume, GPU health, allocation
 * bookkeeping, delete; and that a write the database refuses leaves the
 * table as the database has it, retried by the next check. */
#include "config.h"

#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/nodes.h"

static int downs;
static char down_name[PEER_NAME_MAX + 1];

static void
down_cb(struct node *n, void *arg)
{
	downs++;
	snprintf(down_name, sizeof(down_name), "%s", n->name);
	ck_assert_int_eq(n->state, NODE_DOWN);
}

/* ---- A write the database refuses changes nothing ---- */

/* A new node whose row cannot be written is not in the table either
 * (it used to be, UP, with its connection). */
START_TEST(test_register_new_write_fails)
{
	struct inventory inv;
	struct ctl c;
	struct cerr err;
	size_t n;

	ctl_setup(&c, NULL);
	memset(&inv, 0, sizeof(inv));
	inv.ngpus = 2;
	inv.gpus[1].index = 1;
	ctl_fail_writes(&c, "nodes", "INSERT");
	ck_assert_int_eq(nodes_register(c.ns, "node01", NULL, &inv, false, 5,
	    1000, &err), -1);
	ck_assert_msg(strstr(err.text, "injected") != NULL, "%s", err.text);
	ck_assert_ptr_null(nodes_get(c.ns, "node01"));
	ck_assert_ptr_null(nodes_by_conn(c.ns, 5));
	nodes_all(c.ns, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_msg(!ctl_logged("registered"), "%s", ctl_log());
	ctl_heal(&c);
	ck_assert_int_eq(nodes_register(c.ns, "node01", NULL, &inv, false, 5,
	    1000, &err), 0);
	ck_assert_ptr_nonnull(nodes_by_conn(c.ns, 5));
	ctl_teardown(&c);
}
END_TEST

/* A known DOWN node registering again with a new inventory, refused:
 * still DOWN, its old inventory and address, no connection; and the
 * node whose connection it would have taken keeps it. */
START_TEST(test_register_known_write_fails)
{
	struct inventory inv;
	struct node *n, *other;
	struct ctl c;
	struct cerr err;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	ctl_node(&c, "node02", 4, 2, 1000);
	ctl_flush(&c);
	nodes_disconnected(c.ns, 1);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 1000 + 6000, 5000, NULL,
	    NULL), 2);
	n = nodes_get(c.ns, "node01");
	other = nodes_get(c.ns, "node02");
	ck_assert_int_eq(n->state, NODE_DOWN);
	memset(&inv, 0, sizeof(inv));
	inv.ngpus = 8;
	for (unsigned g = 0; g < 8; g++)
		inv.gpus[g].index = g;
	ctl_fail_writes(&c, "nodes", "INSERT");
	ctl_fail_writes(&c, "nodes", "UPDATE");
	ck_assert_int_eq(nodes_register(c.ns, "node01", "10.0.0.1", &inv,
	    true, 2, 8000, &err), -1);
	ck_assert_int_eq(n->state, NODE_DOWN);
	ck_assert_uint_eq(n->inv->ngpus, 4);
	ck_assert_str_eq(n->address, "node01");
	ck_assert_uint_eq(n->conn_id, 0);
	ck_assert(!n->spare);
	ck_assert_ptr_nonnull(strstr(n->reason, "no heartbeat"));
	ck_assert_uint_eq(other->conn_id, 2);
	ck_assert_ptr_eq(nodes_by_conn(c.ns, 2), other);
	ctl_heal(&c);
	ck_assert_msg(nodes_register(c.ns, "node01", "10.0.0.1", &inv,
	    true, 2, 8000, &err) == 0, "%s", err.text);
	ck_assert_int_eq(n->state, NODE_UP);
	ck_assert_str_eq(n->reason, "");
	ck_assert_int_eq(n->since_ms, 8000);
	ck_assert_uint_eq(n->inv->ngpus, 8);
	ck_assert_str_eq(n->address, "10.0.0.1");
	ck_assert(n->spare);
	/* The connection moved to node01. */
	ck_assert_ptr_eq(nodes_by_conn(c.ns, 2), n);
	ck_assert_uint_eq(other->conn_id, 0);
	ctl_teardown(&c);
}
END_TEST

/* A node timed out whose DOWN cannot be written stays UP (as the
 * database says), its jobs are not moved yet, no "DOWN" line; the next
 * check, written, takes it down. */
START_TEST(test_timeout_write_fails)
{
	struct node *n;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	ctl_flush(&c);
	n = nodes_get(c.ns, "node01");
	downs = 0;
	ctl_fail_writes(&c, "nodes", "UPDATE");
	ctl_log_clear();
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 7000, 5000, down_cb, NULL),
	    0);
	ck_assert_int_eq(downs, 0);
	ck_assert_int_eq(n->state, NODE_UP);
	ck_assert_str_eq(n->reason, "");
	ck_assert(ctl_logged("node node01: cannot record DOWN"));
	ck_assert_msg(!ctl_logged("DOWN: no heartbeat"), "%s", ctl_log());
	ctl_heal(&c);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 8000, 5000, down_cb, NULL),
	    1);
	ck_assert_int_eq(downs, 1);
	ck_assert_str_eq(down_name, "node01");
	ck_assert_int_eq(n->state, NODE_DOWN);
	ck_assert_int_eq(n->since_ms, 8000);
	ck_assert_str_eq(n->reason, "no heartbeat for 7000 ms (node_timeout "
	    "5000 ms)");
	ctl_reload(&c);
	ck_assert_int_eq(nodes_get(c.ns, "node01")->state, NODE_DOWN);
	ctl_teardown(&c);
}
END_TEST

/* Heartbeats of a node declared DOWN bring it UP, once written; until
 * then it stays DOWN and the next heartbeat tries again. */
START_TEST(test_heartbeat_up_write_fails)
{
	struct node *n;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 7000, 5000, NULL, NULL),
	    1);
	ctl_flush(&c);
	ctl_fail_writes(&c, "nodes", "UPDATE");
	ctl_log_clear();
	ck_assert_ptr_nonnull(n = nodes_heartbeat(c.ns, 1, 7100));
	ck_assert_int_eq(n->state, NODE_DOWN);
	ck_assert_int_eq(n->last_heartbeat_ms, 7100);
	ck_assert_msg(!ctl_logged("UP again"), "%s", ctl_log());
	ck_assert(ctl_logged("node node01: cannot record UP: "));
	/* Retried at each heartbeat, said once a minute. */
	ctl_log_clear();
	ck_assert_ptr_eq(nodes_heartbeat(c.ns, 1, 7150), n);
	ck_assert_ptr_eq(nodes_heartbeat(c.ns, 1, 7160), n);
	ck_assert_int_eq(n->state, NODE_DOWN);
	ck_assert_str_eq(ctl_log(), "");
	ck_assert_ptr_eq(nodes_heartbeat(c.ns, 1, 67100), n);
	ck_assert(ctl_logged("cannot record UP (2 more tries not logged)"));
	ctl_heal(&c);
	ck_assert_ptr_eq(nodes_heartbeat(c.ns, 1, 67200), n);
	ck_assert_int_eq(n->state, NODE_UP);
	ck_assert_int_eq(n->since_ms, 67200);
	ck_assert_str_eq(n->reason, "");
	ck_assert(ctl_logged("node node01: UP again"));
	ctl_reload(&c);
	ck_assert_int_eq(nodes_get(c.ns, "node01")->state, NODE_UP);
	ctl_teardown(&c);
}
END_TEST

/* Every allocation of a registration failing in turn leaves no node. */
START_TEST(test_register_each_allocation_fails)
{
	struct inventory inv;
	struct ctl c;
	struct cerr err;
	int nth, rc;
	size_t n;

	ctl_setup(&c, NULL);
	memset(&inv, 0, sizeof(inv));
	for (nth = 1; nth < 10; nth++) {
		ctl_fail_calloc(nth);
		ctl_fail_reallocarray(nth);
		rc = nodes_register(c.ns, "node01", NULL, &inv, false, 1, 1000,
		    &err);
		ctl_fail_calloc(0);
		ctl_fail_reallocarray(0);
		if (rc == 0)
			break;
		ck_assert_int_eq(err.code, ERR_INTERNAL);
		nodes_all(c.ns, &n);
		ck_assert_uint_eq(n, 0);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(nth, 1);
	ctl_teardown(&c);
}
END_TEST

/* ---- Registration, connections, heartbeats, timeouts ---- */

START_TEST(test_register_and_reload)
{
	struct node **all, *n;
	struct ctl c;
	size_t k;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node03", 8, 3, 1000);
	ctl_node(&c, "node01", 4, 1, 1000);
	ctl_node(&c, "node02", 2, 2, 1000);
	all = nodes_all(c.ns, &k);
	ck_assert_uint_eq(k, 3);
	ck_assert_str_eq(all[0]->name, "node01");
	ck_assert_str_eq(all[2]->name, "node03");
	n = nodes_get(c.ns, "node01");
	ck_assert_int_eq(n->state, NODE_UP);
	ck_assert_str_eq(n->address, "node01");
	ck_assert_str_eq(node_state_name(n->state), "UP");
	ck_assert_str_eq(node_state_name(NODE_DOWN), "DOWN");
	ck_assert_uint_eq(node_gpus_free(n), 4);
	ck_assert_ptr_null(nodes_get(c.ns, "node09"));
	ck_assert(ctl_logged("node node01: registered (4 GPUs, node01)"));
	/* A restarted controller: the nodes with their inventories, no
	 * connections, and a grace before any is timed out. */
	ctl_reload(&c);
	n = nodes_get(c.ns, "node03");
	ck_assert_uint_eq(n->inv->ngpus, 8);
	ck_assert_str_eq(n->inv->gpus[7].model, "NVIDIA H100 80GB HBM3");
	ck_assert_uint_eq(n->conn_id, 0);
	ck_assert_int_eq(n->state, NODE_UP);
	ck_assert_int_ge(n->last_heartbeat_ms, 10000);
	/* Derived features are not stored: derived again from the stored
	 * inventory (lib/features.h). */
	ck_assert_uint_eq(n->derived.n, 3);
	ck_assert_str_eq(n->derived.v[0], "h100");
	ck_assert_str_eq(n->derived.v[2], "nvlink");
	ck_assert_ptr_null(nodes_by_conn(c.ns, 3));
	ck_assert_ptr_null(nodes_by_conn(c.ns, 0));
	ctl_teardown(&c);
}
END_TEST

/* Many nodes and connections: every lookup by connection is right,
 * through the cache and past it (it is rebuilt as the table grows). */
START_TEST(test_by_conn)
{
	char name[32];
	struct ctl c;
	unsigned i;

	ctl_setup(&c, NULL);
	for (i = 1; i <= 100; i++) {
		snprintf(name, sizeof(name), "n%03u", i);
		ctl_node(&c, name, 1, 1000 + i, 1000);
		ck_assert_str_eq(nodes_by_conn(c.ns, 1000 + i)->name, name);
	}
	for (i = 1; i <= 100; i++) {
		snprintf(name, sizeof(name), "n%03u", i);
		ck_assert_str_eq(nodes_by_conn(c.ns, 1000 + i)->name, name);
	}
	ck_assert_ptr_null(nodes_by_conn(c.ns, 5));
	/* A connection that went away is not found any more. */
	nodes_disconnected(c.ns, 1007);
	nodes_disconnected(c.ns, 99999);
	ck_assert_ptr_null(nodes_by_conn(c.ns, 1007));
	ck_assert_uint_eq(nodes_get(c.ns, "n007")->conn_id, 0);
	ck_assert_ptr_null(nodes_heartbeat(c.ns, 1007, 2000));
	ctl_teardown(&c);
}
END_TEST

START_TEST(test_heartbeats_and_timeouts)
{
	struct node *a, *b;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	ctl_node(&c, "node02", 4, 2, 1000);
	a = nodes_get(c.ns, "node01");
	b = nodes_get(c.ns, "node02");
	ck_assert_ptr_eq(nodes_heartbeat(c.ns, 1, 5000), a);
	ck_assert_int_eq(a->last_heartbeat_ms, 5000);
	downs = 0;
	/* At exactly the timeout it is not overdue yet. */
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 6000, 5000, down_cb, NULL),
	    0);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 6001, 5000, down_cb, NULL),
	    1);
	ck_assert_str_eq(down_name, "node02");
	ck_assert_int_eq(b->state, NODE_DOWN);
	ck_assert_int_eq(a->state, NODE_UP);
	/* A DOWN node is not taken down again. */
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 20000, 5000, down_cb,
	    NULL), 1);
	ck_assert_int_eq(downs, 2);
	ck_assert_str_eq(down_name, "node01");
	ctl_flush(&c);
	ck_assert_int_eq(ctl_sql_int(&c, "SELECT count(*) FROM events WHERE "
	    "kind = 'node-down'"), 2);
	ctl_teardown(&c);
}
END_TEST

/* A GPU it no longer has starts free when it comes back. */
START_TEST(test_register_clears_missing_gpus)
{
	struct node *n;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 8, 1, 1000);
	n = nodes_get(c.ns, "node01");
	n->gpu_job[6] = 42;
	n->gpu_job[1] = 43;
	ctl_node(&c, "node01", 4, 1, 2000);
	ck_assert_uint_eq(n->gpu_job[6], 0);
	/* Those it has are the pass's to recompute. */
	ck_assert_uint_eq(n->gpu_job[1], 43);
	ctl_teardown(&c);
}
END_TEST

/* ---- Allocations, drains, health, delete ---- */

START_TEST(test_allocations)
{
	struct placement p[2] = {
	    { .node = "node01", .node_rank = 0, .ngpus = 2, .gpus = { 0, 3 } },
	    { .node = "node02", .node_rank = 1, .ngpus = 2,
	    .gpus = { 1, 70 } } };
	struct placement q = { .node = "gone", .ngpus = 1 };
	struct job a = { .id = 7, .place = p, .nplace = 2 };
	struct job b = { .id = 8, .place = &q, .nplace = 1 };
	const struct job *jobs[] = { &a, &b };
	struct node *n1, *n2;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	ctl_node(&c, "node02", 2, 2, 1000);
	n1 = nodes_get(c.ns, "node01");
	n2 = nodes_get(c.ns, "node02");
	nodes_set_allocations(c.ns, jobs, 2);
	ck_assert_uint_eq(n1->gpu_job[0], 7);
	ck_assert_uint_eq(n1->gpu_job[3], 7);
	ck_assert_uint_eq(n1->gpu_job[1], 0);
	ck_assert_uint_eq(node_gpus_free(n1), 2);
	ck_assert_uint_eq(n2->gpu_job[1], 7);
	ck_assert_uint_eq(node_gpus_free(n2), 1);
	/* Recomputed from nothing: all free again. */
	nodes_set_allocations(c.ns, NULL, 0);
	ck_assert_uint_eq(node_gpus_free(n1), 4);
	nodes_add_allocation(c.ns, &a);
	ck_assert_uint_eq(node_gpus_free(n1), 2);
	ctl_teardown(&c);
}
END_TEST

START_TEST(test_drain_and_resume)
{
	struct node_health ok = { .health = HEALTH_OK };
	struct node_health bad = { .health = HEALTH_FAILED,
	    .reason = "xid 79" };
	struct node *n;
	struct ctl c;
	struct cerr err;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 2, 1, 1000);
	n = nodes_get(c.ns, "node01");
	ck_assert_str_eq(node_drain_state(n), "");
	/* Resuming a node not drained is fine. */
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 1500, &err), 0);
	ck_assert_int_eq(nodes_drain(c.ns, n, "maintenance", "root", false,
	    2000, &err), 0);
	ck_assert(n->drained);
	ck_assert_str_eq(n->drain_reason, "maintenance");
	ck_assert_str_eq(n->drain_actor, "root");
	ck_assert_int_eq(n->drain_ms, 2000);
	ck_assert_str_eq(node_drain_state(n), "DRAINED");
	n->gpu_job[1] = 5;
	ck_assert_str_eq(node_drain_state(n), "DRAINING");
	n->gpu_job[1] = 0;
	/* Kept over a restart. */
	ctl_reload(&c);
	n = nodes_get(c.ns, "node01");
	ck_assert(n->drained);
	ck_assert(!n->drain_health);
	ck_assert_str_eq(n->drain_reason, "maintenance");
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 3000, &err), 0);
	ck_assert(!n->drained);
	ck_assert_str_eq(n->drain_reason, "");
	ck_assert(ctl_logged("node node01: resumed by root"));

	/* A health drain stays one when an admin drains again, and is not
	 * resumed before the node reports healthy. */
	ck_assert(nodes_set_health(c.ns, n, &bad, 4000));
	ck_assert_int_eq(nodes_drain(c.ns, n, "health FAILED", "health", true,
	    4000, &err), 0);
	ck_assert_int_eq(nodes_drain(c.ns, n, "also mine", "root", false,
	    4100, &err), 0);
	ck_assert(n->drain_health);
	ck_assert_str_eq(n->drain_reason, "also mine");
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 4200, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_ptr_nonnull(strstr(err.text, "FAILED: xid 79"));
	ck_assert(n->drained);
	ck_assert(nodes_set_health(c.ns, n, &ok, 4300));
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 4400, &err), 0);
	ck_assert(!n->drained);
	ck_assert(!n->drain_health);

	/* Refused writes: neither drain nor resume changes memory. */
	ctl_fail_writes(&c, "node_drains", "INSERT");
	ck_assert_int_eq(nodes_drain(c.ns, n, "x", "root", false, 5000, &err),
	    -1);
	ck_assert(!n->drained);
	ctl_heal(&c);
	ck_assert_int_eq(nodes_drain(c.ns, n, "x", "root", false, 5000, &err),
	    0);
	ctl_fail_writes(&c, "node_drains", "DELETE");
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 5100, &err), -1);
	ck_assert(n->drained);
	ctl_heal(&c);
	/* A drained node that is DOWN and was drained for health: not
	 * resumed while DOWN. */
	ck_assert_int_eq(nodes_drain(c.ns, n, "y", "health", true, 5200,
	    &err), 0);
	/* (Loaded, its heartbeat is due a grace after the real clock.) */
	ck_assert_int_eq(nodes_check_timeouts(c.ns, INT64_C(1) << 50, 5000,
	    NULL, NULL), 1);
	ck_assert_int_eq(nodes_resume(c.ns, n, "root", 90001, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "DOWN"));
	ctl_teardown(&c);
}
END_TEST

/* Several nodes at once (cohort drain 'node[01-03]'): judged first, so
 * one conflict changes none of them; the same reason is a no-op; --force
 * replaces the reason, actor and time, and a health drain stays one. */
START_TEST(test_drain_many)
{
	struct node_health bad = { .health = HEALTH_FAILED,
	    .reason = "xid 79" };
	struct node *v[3];
	struct ctl c;
	struct cerr err;
	size_t changed;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 2, 1, 1000);
	ctl_node(&c, "node02", 2, 2, 1000);
	ctl_node(&c, "node03", 2, 3, 1000);
	v[0] = nodes_get(c.ns, "node01");
	v[1] = nodes_get(c.ns, "node02");
	v[2] = nodes_get(c.ns, "node03");
	ck_assert_int_eq(nodes_drain(c.ns, v[1], "maint", "alice", false,
	    2000, &err), 0);
	/* node02 drained for another reason: nothing changes. */
	ck_assert_int_eq(nodes_drain_many(c.ns, v, 3, "other", "root", false,
	    false, 3000, &changed, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_msg(strstr(err.text, "node node02 is already drained by "
	    "alice at 1970-01-01T00:00:02Z: 'maint'") != NULL &&
	    strstr(err.text, "--force") != NULL, "%s", err.text);
	ck_assert(!v[0]->drained);
	ck_assert(!v[2]->drained);
	ck_assert_str_eq(v[1]->drain_reason, "maint");
	ck_assert_uint_eq(changed, 0);
	ctl_flush(&c);
	ctl_reload(&c);
	v[0] = nodes_get(c.ns, "node01");
	v[1] = nodes_get(c.ns, "node02");
	v[2] = nodes_get(c.ns, "node03");
	ck_assert(!v[0]->drained);
	ck_assert(!v[2]->drained);
	/* The same reason: node02 stays as it was, the others drain. */
	ck_assert_int_eq(nodes_drain_many(c.ns, v, 3, "maint", "root", false,
	    false, 4000, &changed, &err), 0);
	ck_assert_uint_eq(changed, 2);
	ck_assert_str_eq(v[1]->drain_actor, "alice");
	ck_assert_int_eq(v[1]->drain_ms, 2000);
	ck_assert_str_eq(v[0]->drain_actor, "root");
	ck_assert_int_eq(v[2]->drain_ms, 4000);
	/* A refused write leaves every node as it was. */
	ck_assert(nodes_set_health(c.ns, v[2], &bad, 4500));
	ck_assert_int_eq(nodes_drain(c.ns, v[2], "health FAILED", "health",
	    true, 4500, &err), 0);
	ctl_fail_writes(&c, "node_drains", "INSERT");
	ck_assert_int_eq(nodes_drain_many(c.ns, v, 3, "new", "root", false,
	    true, 5000, &changed, &err), -1);
	ck_assert_str_eq(v[0]->drain_reason, "maint");
	ck_assert_str_eq(v[1]->drain_reason, "maint");
	ctl_heal(&c);
	/* --force: every reason replaced, the health drain stays one. */
	ck_assert_int_eq(nodes_drain_many(c.ns, v, 3, "new", "root", false,
	    true, 6000, &changed, &err), 0);
	ck_assert_uint_eq(changed, 3);
	ck_assert_str_eq(v[1]->drain_reason, "new");
	ck_assert_str_eq(v[1]->drain_actor, "root");
	ck_assert_int_eq(v[1]->drain_ms, 6000);
	ck_assert(v[2]->drain_health);
	ck_assert(!v[0]->drain_health);
	ctl_flush(&c);
	ctl_reload(&c);
	v[0] = nodes_get(c.ns, "node01");
	v[1] = nodes_get(c.ns, "node02");
	v[2] = nodes_get(c.ns, "node03");
	ck_assert_str_eq(v[2]->drain_reason, "new");
	ck_assert(v[2]->drain_health);
	ck_assert_str_eq(v[1]->drain_actor, "root");
	/* Resume: node03's health drain cannot be cleared (not healthy
	 * since the reload: no report), so none is resumed. */
	memcpy(v[2]->health, &bad, inventory_health_size(0));
	ck_assert_int_eq(nodes_resume_many(c.ns, v, 3, "root", 7000, &changed,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_msg(strstr(err.text, "node03") != NULL, "%s", err.text);
	ck_assert(v[0]->drained);
	ck_assert(v[1]->drained);
	ck_assert_int_eq(nodes_resume_many(c.ns, v, 2, "root", 7000, &changed,
	    &err), 0);
	ck_assert_uint_eq(changed, 2);
	ck_assert(!v[0]->drained);
	ck_assert(!v[1]->drained);
	ck_assert(v[2]->drained);
	ctl_teardown(&c);
}
END_TEST

/* GPUs new work cannot get: all of a DOWN node's; on an UP one the free
 * ones of a drained node, and FAILED ones no job holds. */
START_TEST(test_gpus_unavailable)
{
	struct node_health h = { .health = HEALTH_OK, .ngpus = 1,
	    .gpus = { { .index = 2, .health = HEALTH_FAILED,
	    .reason = "xid=79" } } };
	struct node *n;
	struct ctl c;
	struct cerr err;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	n = nodes_get(c.ns, "node01");
	ck_assert_uint_eq(node_gpus_unavailable(n), 0);
	ck_assert(nodes_set_health(c.ns, n, &h, 2000));
	ck_assert_uint_eq(node_gpus_unavailable(n), 1);
	n->gpu_job[2] = 7;
	ck_assert_uint_eq(node_gpus_unavailable(n), 0);
	n->gpu_job[0] = 8;
	ck_assert_int_eq(nodes_drain(c.ns, n, "m", "root", false, 3000, &err),
	    0);
	ck_assert_uint_eq(node_gpus_unavailable(n), 2);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, INT64_C(1) << 50, 5000,
	    NULL, NULL), 1);
	ck_assert_uint_eq(node_gpus_unavailable(n), 4);
	ctl_teardown(&c);
}
END_TEST

START_TEST(test_health)
{
	struct node_health h = { .health = HEALTH_OK, .ngpus = 1,
	    .gpus = { { .index = 2, .health = HEALTH_FAILED,
	    .reason = "xid=79" } } };
	struct node_health deg = { .health = HEALTH_DEGRADED,
	    .reason = "nvlink down" };
	struct node *n;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node(&c, "node01", 4, 1, 1000);
	n = nodes_get(c.ns, "node01");
	ck_assert_int_eq(node_gpu_health(n, 2), HEALTH_OK);
	ck_assert(nodes_set_health(c.ns, n, &h, 2000));
	ck_assert_int_eq(node_gpu_health(n, 2), HEALTH_FAILED);
	ck_assert_int_eq(node_gpu_health(n, 1), HEALTH_OK);
	/* The same verdict again is no change (no event). */
	h.checked_ms = 3000;
	ck_assert(!nodes_set_health(c.ns, n, &h, 3000));
	ck_assert(nodes_set_health(c.ns, n, &deg, 4000));
	ck_assert_int_eq(n->health->health, HEALTH_DEGRADED);
	ctl_flush(&c);
	ck_assert_int_eq(ctl_sql_int(&c, "SELECT count(*) FROM events WHERE "
	    "kind = 'health'"), 2);
	ck_assert_int_eq(ctl_sql_int(&c, "SELECT count(*) FROM events WHERE "
	    "kind = 'health' AND detail = 'OK; gpu 2 FAILED xid=79'"), 1);
	/* An event that cannot be written: the verdict holds (memory only),
	 * and the failure is said. */
	ctl_fail_writes(&c, "events", "INSERT");
	ck_assert(nodes_set_health(c.ns, n, &h, 5000));
	ck_assert(ctl_logged("cannot record health"));
	ctl_teardown(&c);
}
END_TEST

/* A node keeps its inventory and health verdict sized to its GPUs and
 * entries (at 10,000 nodes the whole structs, with room for 64 GPUs,
 * were most of the controller's memory), and what it keeps reads back
 * whole: every GPU, the features, after growing and shrinking. */
START_TEST(test_sized_to_gpus)
{
	struct node_health two = { .health = HEALTH_DEGRADED,
	    .reason = "two", .ngpus = 2, .gpus = {
	    { .index = 1, .health = HEALTH_FAILED, .reason = "xid=79" },
	    { .index = 7, .health = HEALTH_DEGRADED, .reason = "ecc" } } };
	struct node_health ok = { .health = HEALTH_OK };
	struct node *n;
	struct ctl c;

	ctl_setup(&c, NULL);
	ctl_node_features(&c, "node01", 8, 1, 1000, "fp64,ib", 0);
	n = nodes_get(c.ns, "node01");
	ck_assert_uint_eq(n->inv->ngpus, 8);
	ck_assert_uint_eq(n->inv->gpus[7].index, 7);
	ck_assert_uint_eq(n->inv->nfeatures, 2);
	ck_assert_str_eq(n->inv->features[1], "ib");
	ck_assert_uint_ge(malloc_usable_size(n->inv), inventory_size(8));
	ck_assert_uint_lt(malloc_usable_size(n->inv),
	    sizeof(struct inventory) / 4);
	ck_assert_uint_lt(malloc_usable_size(n->health), 256);
	ck_assert(nodes_set_health(c.ns, n, &two, 2000));
	ck_assert_uint_lt(malloc_usable_size(n->health),
	    inventory_health_size(2) + 64);
	ck_assert_int_eq(node_gpu_health(n, 7), HEALTH_DEGRADED);
	ck_assert_str_eq(n->health->gpus[0].reason, "xid=79");
	ck_assert(nodes_set_health(c.ns, n, &ok, 3000));
	ck_assert_uint_eq(n->health->ngpus, 0);
	ck_assert_int_eq(node_gpu_health(n, 7), HEALTH_OK);
	/* Registering again with more GPUs: the copy grows with them. */
	ctl_node(&c, "node01", 16, 2, 4000);
	ck_assert_ptr_eq(nodes_get(c.ns, "node01"), n);
	ck_assert_uint_eq(n->inv->ngpus, 16);
	ck_assert_uint_eq(n->inv->gpus[15].index, 15);
	ck_assert_uint_ge(malloc_usable_size(n->inv), inventory_size(16));
	ck_assert_uint_lt(malloc_usable_size(n->inv),
	    sizeof(struct inventory) / 2);
	ctl_teardown(&c);
}
END_TEST

START_TEST(test_delete)
{
	struct node *n;
	struct ctl c;
	struct cerr err;
	char name[32];
	unsigned i;

	ctl_setup(&c, NULL);
	for (i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "node%02u", i);
		ctl_node(&c, name, 2, i, 1000);
	}
	n = nodes_get(c.ns, "node02");
	/* UP, or DOWN with its agent connected: refused. */
	ck_assert_int_eq(nodes_delete(c.ns, n, "root", 2000, &err), -1);
	ck_assert_int_eq(err.code, ERR_CONFLICT);
	ck_assert_int_eq(nodes_check_timeouts(c.ns, 90000, 5000, NULL, NULL),
	    3);
	ck_assert_int_eq(nodes_delete(c.ns, n, "root", 90000, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "still connected"));
	nodes_disconnected(c.ns, 2);
	/* Refused by the database: stays. */
	ctl_fail_writes(&c, "nodes", "DELETE");
	ck_assert_int_eq(nodes_delete(c.ns, n, "root", 90000, &err), -1);
	ctl_heal(&c);
	ctl_flush(&c);
	ck_assert_ptr_eq(nodes_get(c.ns, "node02"), n);
	/* Gone once committed, from memory and the database. */
	ck_assert_int_eq(nodes_delete(c.ns, n, "root", 90000, &err), 0);
	ck_assert_ptr_nonnull(nodes_get(c.ns, "node02"));
	ctl_flush(&c);
	ck_assert_ptr_null(nodes_get(c.ns, "node02"));
	ck_assert(ctl_logged("node node02: deleted by root"));
	ck_assert_ptr_null(nodes_by_conn(c.ns, 2));
	ck_assert_ptr_nonnull(nodes_get(c.ns, "node03"));
	/* Deleted, then registered again before the commit: it stays. */
	n = nodes_get(c.ns, "node01");
	nodes_disconnected(c.ns, 1);
	ck_assert_int_eq(nodes_delete(c.ns, n, "root", 91000, &err), 0);
	ctl_node(&c, "node01", 2, 11, 91001);
	ctl_flush(&c);
	ck_assert_ptr_nonnull(nodes_get(c.ns, "node01"));
	ck_assert(ctl_logged("but it registered again"));
	ctl_reload(&c);
	ck_assert_ptr_null(nodes_get(c.ns, "node02"));
	ck_assert_ptr_nonnull(nodes_get(c.ns, "node01"));
	ctl_teardown(&c);
}
END_TEST

static Suite *
nodes_suite(void)
{
	Suite *s = suite_create("nodes");
	TCase *tc = tcase_create("refused_writes");

	tcase_add_test(tc, test_register_new_write_fails);
	tcase_add_test(tc, test_register_known_write_fails);
	tcase_add_test(tc, test_timeout_write_fails);
	tcase_add_test(tc, test_heartbeat_up_write_fails);
	tcase_add_test(tc, test_register_each_allocation_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_add_test(tc, test_register_and_reload);
	tcase_add_test(tc, test_by_conn);
	tcase_add_test(tc, test_heartbeats_and_timeouts);
	tcase_add_test(tc, test_register_clears_missing_gpus);
	tcase_add_test(tc, test_allocations);
	tcase_add_test(tc, test_drain_and_resume);
	tcase_add_test(tc, test_drain_many);
	tcase_add_test(tc, test_gpus_unavailable);
	tcase_add_test(tc, test_health);
	tcase_add_test(tc, test_sized_to_gpus);
	tcase_add_test(tc, test_delete);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(nodes_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
