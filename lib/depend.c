#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/depend.h"

static const struct {
	const char *name;
	enum depend_type type;
} depend_types[] = {
	{ "after", DEPEND_AFTER },
	{ "afterany", DEPEND_AFTERANY },
	{ "afterok", DEPEND_AFTEROK },
	{ "afternotok", DEPEND_AFTERNOTOK },
	{ "aftercorr", DEPEND_AFTERCORR },
	{ "singleton", DEPEND_SINGLETON },
};

const char *
depend_type_name(enum depend_type t)
{
	size_t i;

	for (i = 0; i < sizeof(depend_types) / sizeof(depend_types[0]); i++)
		if (depend_types[i].type == t)
			return depend_types[i].name;
	return "?";
}

void
depend_clear(struct depend *d)
{
	free(d->items);
	memset(d, 0, sizeof(*d));
}

static int
depend_add(struct depend *d, const struct depend_item *it, const char *s,
    struct cerr *err)
{
	struct depend_item *v;

	if (d->n == DEPEND_ITEMS_MAX)
		return cerr_set(err, ERR_INVALID, "--dependency '%.64s...': "
		    "more than %d jobs", s, DEPEND_ITEMS_MAX);
	if ((v = reallocarray(d->items, d->n + 1, sizeof(*v))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	d->items = v;
	v[d->n++] = *it;
	return 0;
}

/* A job id at s (up to len bytes): "12" or "12_7". 0 or -1. */
static int
depend_id(const char *s, size_t len, struct depend_item *it)
{
	uint64_t v = 0;
	size_t i = 0;
	uint32_t t = 0;

	if (len == 0)
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0 || v == 0)
		return -1;
	it->id = v;
	it->has_task = false;
	if (i == len)
		return 0;
	if (s[i] != '_' || ++i == len)
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (t > (UINT32_MAX - 9) / 10)
			return -1;
		t = t * 10 + (uint32_t)(s[i] - '0');
	}
	if (i != len || s[i - 1] == '_')
		return -1;
	it->has_task = true;
	it->task = t;
	return 0;
}

/* One element "type:ID[:ID...]" or "singleton" of len bytes at s. */
static int
depend_element(struct depend *d, const char *whole, const char *s,
    size_t len, struct cerr *err)
{
	struct depend_item it = { 0 };
	size_t tl = 0, i, k;
	const char *p, *end = s + len;

	while (tl < len && s[tl] != ':')
		tl++;
	for (i = 0; i < sizeof(depend_types) / sizeof(depend_types[0]); i++)
		if (strlen(depend_types[i].name) == tl &&
		    strncasecmp(depend_types[i].name, s, tl) == 0)
			break;
	if (i == sizeof(depend_types) / sizeof(depend_types[0]))
		return cerr_set(err, ERR_INVALID, "--dependency '%s': unknown "
		    "type '%.*s' (expected after, afterany, afterok, "
		    "afternotok, aftercorr or singleton)", whole, (int)tl, s);
	it.type = depend_types[i].type;
	if (it.type == DEPEND_SINGLETON) {
		if (tl != len)
			return cerr_set(err, ERR_INVALID, "--dependency '%s': "
			    "singleton takes no job ids", whole);
		d->singleton = true;
		return depend_add(d, &it, whole, err);
	}
	if (tl == len || tl + 1 == len)
		return cerr_set(err, ERR_INVALID, "--dependency '%s': %s needs "
		    "a job id (%s:ID[:ID...])", whole, depend_types[i].name,
		    depend_types[i].name);
	for (p = s + tl + 1; p <= end; p += k + 1) {
		for (k = 0; p + k < end && p[k] != ':'; k++)
			;
		/* Slurm's "+time" suffixes (after:ID+MIN) are not taken. */
		if (depend_id(p, k, &it) == -1)
			return cerr_set(err, ERR_INVALID, "--dependency '%s': "
			    "'%.*s' is not a job id (expected 12 or 12_7)",
			    whole, (int)k, p);
		if (it.type == DEPEND_AFTERCORR && it.has_task)
			return cerr_set(err, ERR_INVALID, "--dependency '%s': "
			    "aftercorr names a whole array (%" PRIu64 "), not "
			    "one of its tasks", whole, it.id);
		if (depend_add(d, &it, whole, err) == -1)
			return -1;
	}
	return 0;
}

int
depend_parse(const char *s, struct depend *d, struct cerr *err)
{
	const char *p, *q;
	size_t len;
	bool comma, ques;

	memset(d, 0, sizeof(*d));
	if (s == NULL || *s == '\0')
		return cerr_set(err, ERR_INVALID, "--dependency: empty "
		    "(expected e.g. afterok:12 or singleton)");
	if ((len = strlen(s)) > DEPEND_TEXT_MAX)
		return cerr_set(err, ERR_INVALID, "--dependency: longer than "
		    "%d bytes", DEPEND_TEXT_MAX);
	comma = strchr(s, ',') != NULL;
	ques = strchr(s, '?') != NULL;
	if (comma && ques)
		return cerr_set(err, ERR_INVALID, "--dependency '%s': join "
		    "with ',' (all) or '?' (any), not both", s);
	d->any = ques;
	for (p = s;; p = q + 1) {
		q = p + strcspn(p, ",?");
		if (q == p) {
			depend_clear(d);
			return cerr_set(err, ERR_INVALID, "--dependency '%s': "
			    "empty element at character %zu", s,
			    (size_t)(p - s) + 1);
		}
		if (depend_element(d, s, p, (size_t)(q - p), err) == -1) {
			depend_clear(d);
			return -1;
		}
		if (*q == '\0')
			break;
	}
	return 0;
}

void
depend_item_format(const struct depend_item *it, char *buf, size_t len)
{
	if (it->type == DEPEND_SINGLETON)
		snprintf(buf, len, "singleton");
	else if (it->has_task)
		snprintf(buf, len, "%s:%" PRIu64 "_%u",
		    depend_type_name(it->type), it->id, it->task);
	else
		snprintf(buf, len, "%s:%" PRIu64, depend_type_name(it->type),
		    it->id);
}

/* One item's result from what became of the jobs it names. */
static enum depend_result
depend_judge(enum depend_type t, const struct depend_status *st)
{
	switch (t) {
	case DEPEND_AFTER:
		return st->started == st->n ? DEPEND_SATISFIED : DEPEND_WAIT;
	case DEPEND_AFTERANY:
		return st->ended == st->n ? DEPEND_SATISFIED : DEPEND_WAIT;
	case DEPEND_AFTEROK:
	case DEPEND_AFTERCORR:
		if (st->ended > st->ok)
			return DEPEND_NEVER;
		return st->ok == st->n ? DEPEND_SATISFIED : DEPEND_WAIT;
	case DEPEND_AFTERNOTOK:
		/* Every job named has to end first; then at least one of
		 * them must have failed (a whole array: any task). */
		if (st->ended < st->n)
			return DEPEND_WAIT;
		return st->ok < st->n ? DEPEND_SATISFIED : DEPEND_NEVER;
	case DEPEND_SINGLETON:
		break;
	}
	return DEPEND_WAIT;
}

static enum depend_result
depend_item_eval(const struct depend_item *it, bool self_is_task,
    uint32_t self_task, const struct depend_ops *ops, void *arg)
{
	struct depend_status st = { 0 };
	bool has_task = it->has_task;
	uint32_t task = it->task;

	if (it->type == DEPEND_SINGLETON)
		return ops->singleton_free(arg) ? DEPEND_SATISFIED :
		    DEPEND_WAIT;
	if (it->type == DEPEND_AFTERCORR && self_is_task) {
		has_task = true;
		task = self_task;
	}
	/* Forgotten (or, for aftercorr, no task of that index): nothing
	 * to wait for. */
	if (ops->lookup(arg, it->id, has_task, task, &st) == -1 || st.n == 0)
		return DEPEND_SATISFIED;
	return depend_judge(it->type, &st);
}

enum depend_result
depend_eval(const struct depend *d, bool self_is_task, uint32_t self_task,
    const struct depend_ops *ops, void *arg, char *why, size_t why_len)
{
	enum depend_result r, all = DEPEND_SATISFIED;
	const struct depend_item *first = NULL;
	bool any_wait = false;
	size_t i;

	for (i = 0; i < d->n; i++) {
		r = depend_item_eval(&d->items[i], self_is_task, self_task,
		    ops, arg);
		if (d->any) {
			if (r == DEPEND_SATISFIED)
				return DEPEND_SATISFIED;
			if (r == DEPEND_WAIT)
				any_wait = true;
			if (first == NULL)
				first = &d->items[i];
			continue;
		}
		if (r == DEPEND_NEVER) {
			first = &d->items[i];
			all = DEPEND_NEVER;
			break;
		}
		if (r == DEPEND_WAIT && all == DEPEND_SATISFIED) {
			first = &d->items[i];
			all = DEPEND_WAIT;
		}
	}
	if (d->any)
		all = d->n == 0 ? DEPEND_SATISFIED : any_wait ? DEPEND_WAIT :
		    DEPEND_NEVER;
	if (why != NULL && why_len > 0) {
		why[0] = '\0';
		if (all != DEPEND_SATISFIED && first != NULL)
			depend_item_format(first, why, why_len);
	}
	return all;
}
