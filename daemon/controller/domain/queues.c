/* The controller's queues (queues.h): the tree, admission at submit and
 * the scheduler core's view. Fair-share usage is queues_share.c's, what
 * `cohort queues` shows queues_report.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/queues.h"
#include "daemon/controller/domain/queues_int.h"



void
queue_def_clear(struct queue_def *d)
{
	size_t i;

	if (d == NULL)
		return;
	free(d->name);
	free(d->parent);
	for (i = 0; i < d->nmodels; i++)
		free(d->models[i].model);
	free(d->models);
	strv_free(d->users, d->nusers);
	strv_free(d->admins, d->nadmins);
	strv_free(d->accounts, d->naccounts);
	strv_free(d->qos, d->nqos);
	memset(d, 0, sizeof(*d));
}

static int
queue_def_copy(struct queue_def *dst, const struct queue_def *src)
{
	size_t i;

	*dst = *src;
	dst->name = dst->parent = NULL;
	dst->models = NULL;
	dst->nmodels = 0;
	dst->users = dst->admins = dst->accounts = dst->qos = NULL;
	dst->nusers = dst->nadmins = dst->naccounts = dst->nqos = 0;
	if ((dst->name = strdup(src->name)) == NULL ||
	    (src->parent != NULL &&
	    (dst->parent = strdup(src->parent)) == NULL))
		goto fail;
	if (src->nmodels > 0) {
		if ((dst->models = calloc(src->nmodels,
		    sizeof(*dst->models))) == NULL)
			goto fail;
		for (i = 0; i < src->nmodels; i++, dst->nmodels++) {
			dst->models[i].gpus = src->models[i].gpus;
			if ((dst->models[i].model =
			    strdup(src->models[i].model)) == NULL)
				goto fail;
		}
	}
	for (i = 0; i < src->nusers; i++)
		if (strv_append(&dst->users, &dst->nusers, src->users[i]) == -1)
			goto fail;
	for (i = 0; i < src->nadmins; i++)
		if (strv_append(&dst->admins, &dst->nadmins,
		    src->admins[i]) == -1)
			goto fail;
	if (strv_copy(&dst->accounts, &dst->naccounts, src->accounts,
	    src->naccounts) == -1 ||
	    strv_copy(&dst->qos, &dst->nqos, src->qos, src->nqos) == -1)
		goto fail;
	return 0;
fail:
	queue_def_clear(dst);
	errno = ENOMEM;
	return -1;
}

/* [A-Za-z0-9_.-], 1 .. max characters. */
static bool
queues_word_ok(const char *s, size_t max)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || strlen(s) > max)
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '.' || s[i] == '-'))
			return false;
	return true;
}

void
queues_destroy(struct queues *qs)
{
	size_t i, j;

	if (qs == NULL)
		return;
	for (i = 0; i < qs->n; i++) {
		queue_def_clear(&qs->q[i].def);
		for (j = 0; j < qs->q[i].nqusers; j++)
			free(qs->q[i].users[j].name);
		free(qs->q[i].users);
	}
	free(qs->q);
	free(qs->order);
	free(qs);
}

static int
queues_find_n(const struct qnode *q, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(q[i].def.name, name) == 0)
			return (int)i;
	return -1;
}

/* Names, parents, cycles and depths. 0 or -1 with err. */
static int
queues_check_tree(struct queues *qs, struct cerr *err)
{
	size_t i, steps;
	int p;

	for (i = 0; i < qs->n; i++) {
		const struct queue_def *d = &qs->q[i].def;

		if (!queues_word_ok(d->name, QUEUE_NAME_MAX))
			return cerr_set(err, ERR_INVALID, "queue %.80s: a name "
			    "is 1 to %d of A-Z a-z 0-9 . _ -", d->name,
			    QUEUE_NAME_MAX);
		if (queues_find_n(qs->q, i, d->name) != -1)
			return cerr_set(err, ERR_INVALID,
			    "queue %s: defined twice", d->name);
	}
	for (i = 0; i < qs->n; i++) {
		const struct queue_def *d = &qs->q[i].def;

		qs->q[i].parent = -1;
		if (d->parent == NULL)
			continue;
		if ((p = queues_find_n(qs->q, qs->n, d->parent)) == -1)
			return cerr_set(err, ERR_INVALID,
			    "queue %s: parent '%.80s' is not a queue", d->name,
			    d->parent);
		if ((size_t)p == i)
			return cerr_set(err, ERR_INVALID,
			    "queue %s: is its own parent", d->name);
		qs->q[i].parent = p;
	}
	for (i = 0; i < qs->n; i++) {
		steps = 0;
		for (p = qs->q[i].parent; p != -1; p = qs->q[p].parent)
			if (++steps > qs->n)
				return cerr_set(err, ERR_INVALID,
				    "queue %s: its parents form a cycle",
				    qs->q[i].def.name);
		qs->q[i].depth = (unsigned)steps;
		if (qs->q[i].parent != -1)
			qs->q[qs->q[i].parent].nchildren++;
	}
	return 0;
}

/* Add model to the flavors unless there. -1 when there are too many. */
static int
queues_add_flavor(struct queues *qs, const char *model)
{
	size_t k;

	for (k = 1; k < qs->nflavors; k++)
		if (strcmp(qs->flavors[k], model) == 0)
			return (int)k;
	if (qs->nflavors >= SCHED_FLAVORS_MAX)
		return -1;
	qs->flavors[qs->nflavors] = model;
	return (int)qs->nflavors++;
}

static int
queues_check_names(const char *q, const char *what, char **v, size_t n,
    struct cerr *err)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == NULL || v[i][0] == '\0' ||
		    strlen(v[i]) > PEER_NAME_MAX)
			return cerr_set(err, ERR_INVALID, "queue %s: %s: "
			    "a name is 1 to %d characters", q, what,
			    PEER_NAME_MAX);
	return 0;
}

/* Limits of one queue, and its models into the flavors. */
static int
queues_check_limits(struct queues *qs, size_t i, struct cerr *err)
{
	struct qnode *qn = &qs->q[i];
	const struct queue_def *d = &qn->def;
	size_t m, m2, f;
	int k;

	if (d->weight < 1)
		return cerr_set(err, ERR_INVALID,
		    "queue %s: weight must be at least 1", d->name);
	/* Jobs go to leaves only, and these are read from a job's own
	 * queue: on a parent they would be silently ignored. */
	if (qn->nchildren > 0 && (d->nusers > 0 || d->nadmins > 0 ||
	    d->max_gpus_per_job != 0 || d->max_time_s != 0))
		return cerr_set(err, ERR_INVALID, "queue %s: users, admins, "
		    "max_gpus_per_job and max_time apply to queues without "
		    "sub-queues (set them on %s's children)", d->name,
		    d->name);
	if (d->lend_limit != SCHED_UNLIMITED && d->gpus == SCHED_UNLIMITED)
		return cerr_set(err, ERR_INVALID,
		    "queue %s: lend_limit without gpus (it has nothing of "
		    "its own to lend)", d->name);
	if (d->lend_limit != SCHED_UNLIMITED && d->lend_limit > d->gpus)
		return cerr_set(err, ERR_INVALID,
		    "queue %s: lend_limit %u is above its gpus %u", d->name,
		    d->lend_limit, d->gpus);
	if (d->borrow_limit != SCHED_UNLIMITED && d->gpus == SCHED_UNLIMITED &&
	    qn->nchildren == 0 && d->nmodels == 0)
		return cerr_set(err, ERR_INVALID,
		    "queue %s: borrow_limit without gpus (an unlimited queue "
		    "never borrows)", d->name);
	if (d->max_gpus_per_job != 0 && d->gpus != SCHED_UNLIMITED &&
	    d->borrow_limit != SCHED_UNLIMITED &&
	    d->max_gpus_per_job > d->gpus + d->borrow_limit)
		return cerr_set(err, ERR_INVALID,
		    "queue %s: max_gpus_per_job %u can never fit in gpus %u + "
		    "borrow_limit %u", d->name, d->max_gpus_per_job, d->gpus,
		    d->borrow_limit);
	if (queues_check_names(d->name, "users", d->users, d->nusers,
	    err) == -1 || queues_check_names(d->name, "admins", d->admins,
	    d->nadmins, err) == -1)
		return -1;
	for (f = 0; f < SCHED_FLAVORS_MAX; f++)
		qn->flav_nominal[f] = SCHED_UNLIMITED;
	qn->flav_nominal[0] = d->gpus;
	for (m = 0; m < d->nmodels; m++) {
		const struct queue_model_quota *mq = &d->models[m];

		if (!queues_word_ok(mq->model, 64))
			return cerr_set(err, ERR_INVALID, "queue %s: gpus.%.64s:"
			    " a model is 1 to 64 of A-Z a-z 0-9 . _ -", d->name,
			    mq->model != NULL ? mq->model : "");
		for (m2 = 0; m2 < m; m2++)
			if (strcmp(d->models[m2].model, mq->model) == 0)
				return cerr_set(err, ERR_INVALID,
				    "queue %s: gpus.%s given twice", d->name,
				    mq->model);
		if (d->gpus != SCHED_UNLIMITED && mq->gpus > d->gpus)
			return cerr_set(err, ERR_INVALID,
			    "queue %s: gpus.%s = %u is above its gpus %u",
			    d->name, mq->model, mq->gpus, d->gpus);
		if ((k = queues_add_flavor(qs, mq->model)) == -1)
			return cerr_set(err, ERR_INVALID,
			    "queue %s: gpus.%s: at most %d GPU models may have "
			    "quotas", d->name, mq->model, SCHED_FLAVORS_MAX - 1);
		qn->flav_nominal[k] = mq->gpus;
	}
	return 0;
}

static int queues_named_by(const struct queues *, bool, const char *);

/* accounts and qos name leaf queues, each name one queue only (so
 * that sbatch -A means one queue). */
static int
queues_check_slurm(const struct queues *qs, struct cerr *err)
{
	const struct queue_def *d;
	size_t i, j, k;
	int other;

	for (i = 0; i < qs->n; i++) {
		d = &qs->q[i].def;
		if ((d->naccounts > 0 || d->nqos > 0) &&
		    qs->q[i].nchildren != 0)
			return cerr_set(err, ERR_INVALID, "queue %s: accounts "
			    "and qos name a queue that takes jobs; %s has "
			    "sub-queues", d->name, d->name);
		for (k = 0; k < 2; k++)
			for (j = 0; j < (k ? d->nqos : d->naccounts); j++) {
				other = queues_named_by(qs, k == 1,
				    k ? d->qos[j] : d->accounts[j]);
				if (other != (int)i)
					return cerr_set(err, ERR_INVALID,
					    "%s %s names two queues: %s and "
					    "%s", k ? "qos" : "account",
					    k ? d->qos[j] : d->accounts[j],
					    qs->q[other].def.name, d->name);
			}
	}
	return 0;
}

/* Children's nominals may not exceed a parent's (in every flavor). */
static int
queues_check_sums(const struct queues *qs, struct cerr *err)
{
	uint64_t sum;
	size_t i, c, f;

	for (i = 0; i < qs->n; i++)
		for (f = 0; f < qs->nflavors; f++) {
			if (qs->q[i].flav_nominal[f] == SCHED_UNLIMITED)
				continue;
			sum = 0;
			for (c = 0; c < qs->n; c++)
				if (qs->q[c].parent == (int)i &&
				    qs->q[c].flav_nominal[f] != SCHED_UNLIMITED)
					sum += qs->q[c].flav_nominal[f];
			if (sum > qs->q[i].flav_nominal[f])
				return cerr_set(err, ERR_INVALID,
				    "queue %s: its children's gpus%s%s (%llu) "
				    "are more than its own (%u)",
				    qs->q[i].def.name, f ? "." : "",
				    f ? qs->flavors[f] : "",
				    (unsigned long long)sum,
				    qs->q[i].flav_nominal[f]);
		}
	return 0;
}

static void
queues_order_from(struct queues *qs, int parent, size_t *k)
{
	size_t i;

	for (i = 0; i < qs->n; i++)
		if (qs->q[i].parent == parent) {
			qs->order[(*k)++] = i;
			queues_order_from(qs, (int)i, k);
		}
}

struct queues *
queues_create(const struct queue_def *defs, size_t n, int64_t half_life_ms,
    struct cerr *err)
{
	struct queue_def dflt = { .name = (char *)QUEUE_DEFAULT_NAME,
	    .gpus = SCHED_UNLIMITED, .borrow_limit = SCHED_UNLIMITED,
	    .lend_limit = SCHED_UNLIMITED, .weight = 1,
	    .preempt = SCHED_PREEMPT_NEVER };
	struct queues *qs;
	size_t i, k = 0;

	cerr_clear(err);
	if ((qs = calloc(1, sizeof(*qs))) == NULL)
		goto nomem;
	qs->configured = n > 0;
	qs->half_life_ms = half_life_ms;
	qs->flavors[0] = NULL;
	qs->nflavors = 1;
	if (n == 0) {
		defs = &dflt;
		n = 1;
	}
	if ((qs->q = calloc(n, sizeof(*qs->q))) == NULL ||
	    (qs->order = calloc(n, sizeof(*qs->order))) == NULL)
		goto nomem;
	for (i = 0; i < n; i++, qs->n++) {
		if (defs[i].name == NULL) {
			cerr_set(err, ERR_INVALID, "queue %zu: no name", i + 1);
			goto fail;
		}
		if (queue_def_copy(&qs->q[i].def, &defs[i]) == -1)
			goto nomem;
	}
	if (queues_check_tree(qs, err) == -1)
		goto fail;
	for (i = 0; i < n; i++)
		if (queues_check_limits(qs, i, err) == -1)
			goto fail;
	if (queues_check_sums(qs, err) == -1 ||
	    queues_check_slurm(qs, err) == -1)
		goto fail;
	queues_order_from(qs, -1, &k);
	return qs;
nomem:
	cerr_set(err, ERR_INTERNAL, "out of memory");
fail:
	queues_destroy(qs);
	errno = err != NULL && err->code == ERR_INTERNAL ? ENOMEM : EINVAL;
	return NULL;
}

int
queues_compatible(const struct queues *qs, const struct queues *from,
    struct cerr *err)
{
	const struct queue_def *a, *b;
	size_t i, m;

	if (qs->configured != from->configured || qs->n != from->n)
		return cerr_set(err, ERR_INVALID, "queues were added or "
		    "removed (%zu -> %zu): restart cohortd to apply",
		    qs->configured ? qs->n : 0, from->configured ? from->n : 0);
	for (i = 0; i < qs->n; i++) {
		a = &qs->q[i].def;
		b = &from->q[i].def;
		if (strcmp(a->name, b->name) != 0)
			return cerr_set(err, ERR_INVALID, "queue %s is now %s "
			    "(queues renamed, added, removed or reordered): "
			    "restart cohortd to apply", a->name, b->name);
		if (qs->q[i].parent != from->q[i].parent)
			return cerr_set(err, ERR_INVALID, "queue %s has a new "
			    "parent: restart cohortd to apply", a->name);
		if (a->nmodels != b->nmodels)
			return cerr_set(err, ERR_INVALID, "queue %s: gpus.MODEL "
			    "keys added or removed: restart cohortd to apply",
			    a->name);
		for (m = 0; m < a->nmodels; m++)
			if (strcmp(a->models[m].model, b->models[m].model) != 0)
				return cerr_set(err, ERR_INVALID, "queue %s: "
				    "gpus.%s is now gpus.%s: restart cohortd "
				    "to apply", a->name, a->models[m].model,
				    b->models[m].model);
	}
	return 0;
}

#define QUEUES_SWAP(t, x, y)                                                   \
	do {                                                                   \
		t tmp_ = (x);                                                  \
		(x) = (y);                                                     \
		(y) = tmp_;                                                    \
	} while (0)

void
queues_reconfigure(struct queues *qs, struct queues *from)
{
	struct queue_def *a, *b;
	size_t i, m;

	for (i = 0; i < qs->n; i++) {
		a = &qs->q[i].def;
		b = &from->q[i].def;
		a->gpus = b->gpus;
		/* The model strings stay: the flavors point at them. */
		for (m = 0; m < a->nmodels; m++)
			a->models[m].gpus = b->models[m].gpus;
		a->borrow_limit = b->borrow_limit;
		a->lend_limit = b->lend_limit;
		a->weight = b->weight;
		QUEUES_SWAP(char **, a->users, b->users);
		QUEUES_SWAP(size_t, a->nusers, b->nusers);
		QUEUES_SWAP(char **, a->admins, b->admins);
		QUEUES_SWAP(size_t, a->nadmins, b->nadmins);
		a->max_gpus_per_job = b->max_gpus_per_job;
		a->max_time_s = b->max_time_s;
		a->preempt = b->preempt;
		a->preempt_grace_s = b->preempt_grace_s;
		a->min_runtime_s = b->min_runtime_s;
		memcpy(qs->q[i].flav_nominal, from->q[i].flav_nominal,
		    sizeof(qs->q[i].flav_nominal));
	}
}

size_t
queues_count(const struct queues *qs)
{
	return qs->n;
}

int
queues_find(const struct queues *qs, const char *name)
{
	if (name == NULL)
		return -1;
	return queues_find_n(qs->q, qs->n, name);
}

const struct queue_def *
queues_def(const struct queues *qs, size_t q)
{
	return q < qs->n ? &qs->q[q].def : NULL;
}

bool
queues_configured(const struct queues *qs)
{
	return qs->configured;
}

static bool
queues_listed(char *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

bool
queues_is_admin(const struct queues *qs, size_t q, const char *user)
{
	return q < qs->n && user != NULL &&
	    queues_listed(qs->q[q].def.admins, qs->q[q].def.nadmins, user);
}

/* May user submit to q (a leaf)? Listed as user or admin, or q lists no
 * users; cluster admins may submit anywhere. */
static bool
queues_may_submit(const struct queues *qs, size_t q, const struct peer *who)
{
	const struct queue_def *d = &qs->q[q].def;

	return (who->role & ROLE_ADMIN) || d->nusers == 0 ||
	    queues_listed(d->users, d->nusers, who->name) ||
	    queues_listed(d->admins, d->nadmins, who->name);
}

/* The submitter's default queue: the first leaf listing them, else the
 * first leaf open to everybody; -1 when none. */
static int
queues_default_for(const struct queues *qs, const char *user)
{
	size_t i;

	for (i = 0; i < qs->n; i++)
		if (qs->q[i].nchildren == 0 &&
		    (queues_listed(qs->q[i].def.users, qs->q[i].def.nusers,
		    user) || queues_listed(qs->q[i].def.admins,
		    qs->q[i].def.nadmins, user)))
			return (int)i;
	for (i = 0; i < qs->n; i++)
		if (qs->q[i].nchildren == 0 && qs->q[i].def.nusers == 0)
			return (int)i;
	return -1;
}

/* The leaves' names, for an error text. */
static void
queues_leaf_names(const struct queues *qs, int parent, char *buf,
    size_t len)
{
	size_t i, used = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < qs->n && used < len; i++) {
		if (qs->q[i].nchildren != 0 ||
		    (parent != -1 && qs->q[i].parent != parent))
			continue;
		w = snprintf(buf + used, len - used, "%s%s",
		    used ? ", " : "", qs->q[i].def.name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* Limits of queue q for spec. 0 or -1 with err. */
static int
queues_admit_limits(const struct queues *qs, size_t q, const struct peer *who,
    const struct job_spec *spec, struct cerr *err)
{
	const struct queue_def *d = &qs->q[q].def;
	uint64_t gpus;

	/* A CPU-only job (cpu_only, gpus_per_node 0) asks no GPU. */
	if (d->max_gpus_per_job != 0 && !(spec->cpu_only &&
	    !spec->exclusive)) {
		if (spec->gpus_per_node == 0)
			return cerr_set(err, ERR_INVALID, "--queue %s: the "
			    "queue allows at most %u GPUs per job; give "
			    "--gpus-per-node (a whole-node job's GPUs are not "
			    "known before it is placed)", d->name,
			    d->max_gpus_per_job);
		gpus = (uint64_t)spec->nodes_max * spec->gpus_per_node;
		if (gpus > d->max_gpus_per_job)
			return cerr_set(err, ERR_INVALID, "--queue %s: %llu "
			    "GPUs is above the queue's max_gpus_per_job of %u",
			    d->name, (unsigned long long)gpus,
			    d->max_gpus_per_job);
	}
	if (d->max_time_s != 0 && spec->service)
		return cerr_set(err, ERR_INVALID, "--service: queue %s has a "
		    "max_time of %llu s and a service has no time limit",
		    d->name, (unsigned long long)d->max_time_s);
	if (d->max_time_s != 0 && spec->time_limit_s > d->max_time_s)
		return cerr_set(err, ERR_INVALID, "--time: %llu s is above "
		    "queue %s's max_time of %llu s",
		    (unsigned long long)spec->time_limit_s, d->name,
		    (unsigned long long)d->max_time_s);
	if (spec->priority > JOB_DEFAULT_PRIORITY && !(who->role & ROLE_ADMIN) &&
	    !queues_is_admin(qs, q, who->name))
		return cerr_set(err, ERR_DENIED, "--priority: users may only "
		    "lower their priority (at most %d); admins of queue %s "
		    "may raise it", JOB_DEFAULT_PRIORITY, d->name);
	return 0;
}

/* The leaf queue whose names (accounts or qos) list name, or -1. */
static int
queues_named_by(const struct queues *qs, bool qos, const char *name)
{
	const struct queue_def *d;
	size_t i;

	for (i = 0; i < qs->n; i++) {
		d = &qs->q[i].def;
		if (qs->q[i].nchildren == 0 && queues_listed(qos ? d->qos :
		    d->accounts, qos ? d->nqos : d->naccounts, name))
			return (int)i;
	}
	return -1;
}

/* sbatch -A/--account and --qos: the queue the site says they mean
 * (cohortd.conf [queue NAME] accounts, qos), which must agree with
 * each other and with --partition/--queue. 0, or -1 with err. */
static int
queues_map_slurm(const struct queues *qs, struct job_spec *spec,
    struct cerr *err)
{
	const char *opt[2] = { "--account", "--qos" };
	const char *val[2] = { spec->account, spec->qos };
	const char *want = spec->queue, *by = "--partition";
	char *copy;
	size_t k;
	int q;

	for (k = 0; k < 2; k++) {
		if (val[k] == NULL)
			continue;
		if ((q = queues_named_by(qs, k == 1, val[k])) == -1)
			return cerr_set(err, ERR_INVALID, "%s %.64s: this "
			    "cluster maps no queue to it (cohortd.conf: "
			    "[queue NAME] %s = %.64s); leave it out, or name "
			    "the queue with --partition", opt[k], val[k],
			    k == 1 ? "qos" : "accounts", val[k]);
		if (want != NULL && strcmp(want, qs->q[q].def.name) != 0)
			return cerr_set(err, ERR_INVALID, "%s %.64s means "
			    "queue %s, but %s says %.64s", opt[k], val[k],
			    qs->q[q].def.name, by, want);
		want = qs->q[q].def.name;
		by = opt[k];
	}
	/* The queue says it from here on (the names are not stored). */
	free(spec->account);
	free(spec->qos);
	spec->account = spec->qos = NULL;
	if (want == NULL || spec->queue != NULL)
		return 0;
	if ((copy = strdup(want)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	spec->queue = copy;
	return 0;
}

int
queues_admit(const struct queues *qs, const struct peer *who,
    struct job_spec *spec, struct cerr *err)
{
	char names[256], *copy;
	int q;

	cerr_clear(err);
	if (queues_map_slurm(qs, spec, err) == -1)
		return -1;
	if (spec->queue != NULL) {
		if ((q = queues_find(qs, spec->queue)) == -1) {
			queues_leaf_names(qs, -1, names, sizeof(names));
			return cerr_set(err, ERR_NOT_FOUND, "--queue: no queue "
			    "'%.64s' (queues: %s)", spec->queue, names);
		}
		if (qs->q[q].nchildren != 0) {
			queues_leaf_names(qs, q, names, sizeof(names));
			return cerr_set(err, ERR_INVALID, "--queue: %s has "
			    "sub-queues and takes no jobs; submit to one of: "
			    "%s", spec->queue, names);
		}
		if (!queues_may_submit(qs, (size_t)q, who))
			return cerr_set(err, ERR_DENIED, "--queue: %s may not "
			    "submit to queue %s (not among its users)",
			    who->name, spec->queue);
	} else if ((q = queues_default_for(qs, who->name)) == -1)
		return cerr_set(err, ERR_DENIED, "--queue: %s is in no queue "
		    "and no queue is open to everybody", who->name);
	if (queues_admit_limits(qs, (size_t)q, who, spec, err) == -1)
		return -1;
	if (spec->queue == NULL) {
		if ((copy = strdup(qs->q[q].def.name)) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		spec->queue = copy;
	}
	if (spec->time_limit_s == 0 && !spec->service)
		spec->time_limit_s = qs->q[q].def.max_time_s;
	return 0;
}

int
queues_job_queue(const struct queues *qs, const struct job *j)
{
	if (!qs->configured)
		return 0;
	return queues_find(qs, j->spec.queue != NULL ? j->spec.queue :
	    QUEUE_DEFAULT_NAME);
}

/* ---- The scheduler core's view ---- */

const char *const *
queues_flavors(const struct queues *qs, size_t *n)
{
	*n = qs->nflavors;
	return qs->flavors;
}

void
queues_sched(const struct queues *qs, int64_t now_ms, struct sched_queue *out)
{
	size_t i, f;

	for (i = 0; i < qs->n; i++) {
		const struct queue_def *d = &qs->q[i].def;

		memset(&out[i], 0, sizeof(out[i]));
		out[i].parent = qs->q[i].parent;
		for (f = 0; f < SCHED_FLAVORS_MAX; f++)
			out[i].nominal[f] = f < qs->nflavors ?
			    qs->q[i].flav_nominal[f] : SCHED_UNLIMITED;
		out[i].borrow_limit = d->borrow_limit;
		out[i].lend_limit = d->lend_limit;
		out[i].share = queues_share(qs, i, now_ms);
		out[i].preempt = d->preempt;
	}
}
