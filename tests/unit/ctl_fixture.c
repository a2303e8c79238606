/* The controller domain suites' fixture (ctl_fixture.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "tests/unit/ctl_fixture.h"
#include "daemon/controller/domain/queues.h"
#include "daemon/controller/store/store.h"
#include "daemon/controller/store/store_int.h"
#include "daemon/controller/store/txq.h"

/* ---- Allocations that fail (ld --wrap=calloc,--wrap=reallocarray) ---- */

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);

static int calloc_fail_in, realloc_fail_in;

void
ctl_fail_calloc(int nth)
{
	calloc_fail_in = nth;
}

void
ctl_fail_reallocarray(int nth)
{
	realloc_fail_in = nth;
}

void *
__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_in > 0 && --calloc_fail_in == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *
__wrap_reallocarray(void *p, size_t n, size_t size)
{
	if (realloc_fail_in > 0 && --realloc_fail_in == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_reallocarray(p, n, size);
}

/* ---- Log lines (ld --wrap=log_info,--wrap=log_warnx) ---- */

void __real_log_info(const char *fmt, ...);
void __real_log_warnx(const char *fmt, ...);
void __wrap_log_info(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void __wrap_log_warnx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static char logbuf[64 * 1024];
static size_t loglen;

static void
log_keep(const char *fmt, va_list ap)
{
	int k;

	if (loglen >= sizeof(logbuf) - 2)
		return;
	k = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen - 1, fmt, ap);
	if (k < 0)
		return;
	loglen += (size_t)k < sizeof(logbuf) - loglen - 1 ? (size_t)k :
	    sizeof(logbuf) - loglen - 2;
	logbuf[loglen++] = '\n';
	logbuf[loglen] = '\0';
}

void
__wrap_log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_keep(fmt, ap);
	va_end(ap);
}

void
__wrap_log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_keep(fmt, ap);
	va_end(ap);
}

void
ctl_log_clear(void)
{
	loglen = 0;
	logbuf[0] = '\0';
}

const char *
ctl_log(void)
{
	return logbuf;
}

bool
ctl_logged(const char *s)
{
	return strstr(logbuf, s) != NULL;
}

/* ---- The store, its group commit, the tables ---- */

static void
ctl_on_abort(void *arg)
{
	((struct ctl *)arg)->aborts++;
}

void
ctl_setup(struct ctl *c, const struct job_limits *lim)
{
	struct job_limits def = { .script_max = 1024 * 1024 };
	struct cerr err;

	memset(c, 0, sizeof(*c));
	ctl_log_clear();
	ck_assert_ptr_nonnull(c->base = event_base_new());
	c->st = store_open(":memory:", &err);
	ck_assert_msg(c->st != NULL, "store_open: %s", err.text);
	ck_assert_ptr_nonnull(c->q = txq_create(c->base, c->st, ctl_on_abort,
	    c));
	c->js = jobs_create(c->st, c->q, lim != NULL ? lim : &def, NULL,
	    &err);
	ck_assert_msg(c->js != NULL, "jobs_create: %s", err.text);
	c->ns = nodes_create(c->st, c->q, 0, &err);
	ck_assert_msg(c->ns != NULL, "nodes_create: %s", err.text);
}

void
ctl_teardown(struct ctl *c)
{
	ctl_fail_calloc(0);
	ctl_fail_reallocarray(0);
	nodes_destroy(c->ns);
	jobs_destroy(c->js);
	txq_destroy(c->q);
	store_close(c->st);
	event_base_free(c->base);
}

void
ctl_flush(struct ctl *c)
{
	txq_flush(c->q);
}

void
ctl_reload(struct ctl *c)
{
	struct cerr err;

	ctl_flush(c);
	ck_assert_msg(jobs_reload(c->js, &err) == 0, "jobs_reload: %s",
	    err.text);
	nodes_destroy(c->ns);
	c->ns = nodes_create(c->st, c->q, 0, &err);
	ck_assert_msg(c->ns != NULL, "nodes_create: %s", err.text);
}

static void
ctl_exec(struct ctl *c, const char *sql)
{
	char *msg = NULL;

	ck_assert_msg(sqlite3_exec(c->st->db, sql, NULL, NULL, &msg) ==
	    SQLITE_OK, "%s: %s", sql, msg != NULL ? msg : "?");
}

void
ctl_fail_writes(struct ctl *c, const char *table, const char *op)
{
	char sql[256];

	ck_assert_int_lt(c->ntriggers, CTL_MAX_TRIGGERS);
	snprintf(c->triggers[c->ntriggers], sizeof(c->triggers[0]),
	    "fail_%s_%s", table, op);
	snprintf(sql, sizeof(sql), "CREATE TEMP TRIGGER %s BEFORE %s ON "
	    "main.%s BEGIN SELECT RAISE(ABORT, 'injected: %s %s refused'); "
	    "END", c->triggers[c->ntriggers], op, table, op, table);
	ctl_exec(c, sql);
	c->ntriggers++;
}

void
ctl_heal(struct ctl *c)
{
	char sql[128];

	while (c->ntriggers > 0) {
		snprintf(sql, sizeof(sql), "DROP TRIGGER temp.%s",
		    c->triggers[--c->ntriggers]);
		ctl_exec(c, sql);
	}
}

int64_t
ctl_sql_int(struct ctl *c, const char *sql)
{
	return store_sql_int(c->st, sql);
}

int64_t
store_sql_int(struct store *st, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v;

	ck_assert_int_eq(sqlite3_prepare_v2(st->db, sql, -1, &s, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* ---- Jobs and nodes ---- */

void
ctl_spec(struct job_spec *spec, unsigned nodes_min, unsigned nodes_max,
    unsigned gpus_per_node)
{
	job_spec_init(spec);
	ck_assert_int_eq(strv_append(&spec->argv, &spec->argc, "true"), 0);
	spec->nodes_min = nodes_min;
	spec->nodes_max = nodes_max;
	spec->gpus_per_node = gpus_per_node;
}

uint64_t
ctl_submit(struct ctl *c, const char *user, struct job_spec *spec,
    int64_t now)
{
	struct peer who = { .role = ROLE_USER };
	struct cerr err;
	uint64_t id = 0;

	snprintf(who.name, sizeof(who.name), "%s", user);
	ck_assert_msg(jobs_submit(c->js, &who, spec, now, &id, &err) == 0,
	    "jobs_submit: %s", err.text);
	return id;
}

uint64_t
ctl_job_on(struct ctl *c, unsigned n, unsigned gpn, bool running,
    int64_t now)
{
	struct placement place[8];
	struct job_spec spec;
	struct cerr err;
	uint64_t id;
	unsigned i, g;

	ck_assert_uint_le(n, 8);
	ctl_spec(&spec, n, n, gpn);
	id = ctl_submit(c, "alice", &spec, now);
	memset(place, 0, sizeof(place));
	for (i = 0; i < n; i++) {
		snprintf(place[i].node, sizeof(place[i].node), "node%02u",
		    i + 1);
		place[i].node_rank = i;
		place[i].ngpus = gpn;
		for (g = 0; g < gpn; g++)
			place[i].gpus[g] = g;
	}
	ck_assert_msg(jobs_allocate(c->js, id, place, n, now, &err) == 0,
	    "jobs_allocate: %s", err.text);
	if (running)
		ck_assert_msg(jobs_mark_running(c->js, id, now, &err) == 0,
		    "jobs_mark_running: %s", err.text);
	ctl_flush(c);
	return id;
}

void
ctl_node(struct ctl *c, const char *name, unsigned ngpus, uint64_t conn,
    int64_t now)
{
	ctl_node_features(c, name, ngpus, conn, now, "", 0);
}

void
ctl_node_features(struct ctl *c, const char *name, unsigned ngpus,
    uint64_t conn, int64_t now, const char *features, uint64_t gpu_mb)
{
	struct inventory inv;
	struct cerr err;
	unsigned g;

	memset(&inv, 0, sizeof(inv));
	snprintf(inv.source, sizeof(inv.source), "simulated");
	inv.ncpus = 32;
	inv.memory_mb = 256 * 1024;
	inv.ngpus = ngpus;
	for (g = 0; g < ngpus; g++) {
		inv.gpus[g].index = g;
		snprintf(inv.gpus[g].model, sizeof(inv.gpus[g].model),
		    "NVIDIA H100 80GB HBM3");
		snprintf(inv.gpus[g].uuid, sizeof(inv.gpus[g].uuid),
		    "GPU-%s-%u", name, g);
		inv.gpus[g].numa_node = g < ngpus / 2 ? 0 : 1;
		inv.gpus[g].pcie_switch = (int)g / 2;
		inv.gpus[g].nvlink_domain = 0;
		inv.gpus[g].nic = g % 2 == 0 ? (int)g / 2 : -1;
		inv.gpus[g].nic_near = inv.gpus[g].nic >= 0;
		inv.gpus[g].memory_mb = gpu_mb;
	}
	ck_assert_msg(inventory_set_features(&inv, features, err.text,
	    sizeof(err.text)) == 0, "features: %s", err.text);
	ck_assert_msg(nodes_register(c->ns, name, NULL, &inv, false, conn, now,
	    &err) == 0, "nodes_register: %s", err.text);
}

void
ctl_queue_def(struct queue_def *d, const char *name, uint32_t gpus,
    char **users, size_t nusers, char **admins, size_t nadmins)
{
	memset(d, 0, sizeof(*d));
	d->name = (char *)name;
	d->gpus = gpus;
	d->borrow_limit = d->lend_limit = SCHED_UNLIMITED;
	d->weight = 1;
	d->users = users;
	d->nusers = nusers;
	d->admins = admins;
	d->nadmins = nadmins;
}
