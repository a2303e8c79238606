#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"

/* A number of at most max at *p, moving *p past it. 0, or -1 when
 * there are no digits or it is larger than max (*p then points at the
 * first digit). */
static int
array_num(const char **p, uint32_t max, uint32_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -1;
		s++;
	}
	*p = s;
	*out = (uint32_t)v;
	return 0;
}

/* One item: "A", "A-B" or "A-B:S". */
struct array_item {
	uint32_t lo, hi, step;
};

/* Parse the item at *p (up to ',', '%' or the end). 0 or -1 (err). */
static int
array_item(const char **p, const char *whole, struct array_item *it,
    struct cerr *err)
{
	const char *s = *p;
	size_t at = (size_t)(s - whole);

	if (*s == '\0' || *s == ',' || *s == '%')
		return cerr_set(err, ERR_INVALID, "--array '%s': empty item at "
		    "character %zu (expected an index such as 0, 0-99 or "
		    "0-99:4)", whole, at + 1);
	if (array_num(&s, ARRAY_INDEX_MAX, &it->lo) == -1)
		goto bad;
	it->hi = it->lo;
	it->step = 1;
	if (*s == '-') {
		s++;
		if (array_num(&s, ARRAY_INDEX_MAX, &it->hi) == -1)
			goto bad;
		if (it->hi < it->lo)
			return cerr_set(err, ERR_INVALID, "--array '%s': range "
			    "%u-%u goes down (write the smaller index first)",
			    whole, it->lo, it->hi);
		if (*s == ':') {
			s++;
			if (array_num(&s, ARRAY_INDEX_MAX, &it->step) == -1)
				goto bad;
			if (it->step == 0)
				return cerr_set(err, ERR_INVALID, "--array "
				    "'%s': a step of 0 in %u-%u:0", whole,
				    it->lo, it->hi);
		}
	} else if (*s == ':')
		return cerr_set(err, ERR_INVALID, "--array '%s': a step needs "
		    "a range (as in 0-99:4), at character %zu", whole,
		    (size_t)(s - whole) + 1);
	if (*s != '\0' && *s != ',' && *s != '%')
		goto bad;
	*p = s;
	return 0;
bad:
	/* Digits that did not parse are too large; anything else is not
	 * an index at all. */
	if (*s >= '0' && *s <= '9')
		return cerr_set(err, ERR_INVALID, "--array '%s': index at "
		    "character %zu is above the largest allowed, %u", whole,
		    (size_t)(s - whole) + 1, ARRAY_INDEX_MAX);
	return cerr_set(err, ERR_INVALID, "--array '%s': unexpected '%c' at "
	    "character %zu (expected indices such as 1,3,5-9, 0-99:4, and "
	    "an optional %%N)", whole, *s, (size_t)(s - whole) + 1);
}

static size_t
array_item_count(const struct array_item *it)
{
	return (size_t)((it->hi - it->lo) / it->step) + 1;
}

static int
array_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Walk the items of s: count them (out->n) when fill is false, store
 * the indices in out->idx when true. At the end, the throttle. */
static int
array_walk(const char *s, struct array_spec *out, bool fill,
    struct cerr *err)
{
	struct array_item it = { 0, 0, 1 };
	const char *p = s;
	size_t n = 0, k, c;

	for (;;) {
		if (array_item(&p, s, &it, err) == -1)
			return -1;
		c = array_item_count(&it);
		if (n + c > ARRAY_TASKS_MAX)
			return cerr_set(err, ERR_INVALID, "--array '%s': more "
			    "than %u tasks", s, ARRAY_TASKS_MAX);
		for (k = 0; fill && k < c; k++)
			out->idx[n + k] = it.lo + (uint32_t)k * it.step;
		n += c;
		if (*p != ',')
			break;
		p++;
	}
	out->n = n;
	if (*p == '%') {
		p++;
		if (array_num(&p, ARRAY_TASKS_MAX, &out->throttle) == -1 ||
		    *p != '\0')
			return cerr_set(err, ERR_INVALID, "--array '%s': the "
			    "limit after %% must be a number of tasks from 1 "
			    "to %u", s, ARRAY_TASKS_MAX);
		if (out->throttle == 0)
			return cerr_set(err, ERR_INVALID, "--array '%s': a "
			    "limit of %%0 would run no task (use %%1 or more)",
			    s);
	}
	return 0;
}

int
array_parse(const char *s, struct array_spec *out, struct cerr *err)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (s == NULL || *s == '\0')
		return cerr_set(err, ERR_INVALID, "--array: empty (expected "
		    "indices such as 0-99, 1,3,5-9 or 0-99:4, and an optional "
		    "%%N)");
	if (array_walk(s, out, false, err) == -1)
		goto fail;
	if ((out->idx = calloc(out->n, sizeof(*out->idx))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (array_walk(s, out, true, err) == -1)
		goto fail;
	qsort(out->idx, out->n, sizeof(*out->idx), array_u32_cmp);
	for (i = 1; i < out->n; i++)
		if (out->idx[i] == out->idx[i - 1]) {
			cerr_set(err, ERR_INVALID, "--array '%s': index %u is "
			    "given twice", s, out->idx[i]);
			goto fail;
		}
	out->min = out->idx[0];
	out->max = out->idx[out->n - 1];
	out->step = out->n > 1 ? out->idx[1] - out->idx[0] : 0;
	for (i = 2; i < out->n && out->step != 0; i++)
		if (out->idx[i] - out->idx[i - 1] != out->step)
			out->step = 0;
	return 0;
fail:
	array_spec_clear(out);
	return -1;
}

void
array_spec_clear(struct array_spec *a)
{
	free(a->idx);
	memset(a, 0, sizeof(*a));
}

/* Append text to buf as far as it fits; *used counts all of it. */
static void
array_put(char *buf, size_t len, size_t *used, const char *text)
{
	size_t l = strlen(text), room;

	if (*used + 1 < len) {
		room = len - 1 - *used;
		memcpy(buf + *used, text, l < room ? l : room);
		buf[*used + (l < room ? l : room)] = '\0';
	}
	*used += l;
}

/* How far from i a run with the same gap goes: the index of its last
 * element. */
static size_t
array_run_end(const uint32_t *idx, size_t n, size_t i)
{
	uint32_t gap;
	size_t j;

	if (i + 1 >= n)
		return i;
	gap = idx[i + 1] - idx[i];
	for (j = i + 1; j + 1 < n && idx[j + 1] - idx[j] == gap; j++)
		;
	return j;
}

size_t
array_format(const uint32_t *idx, size_t n, char *buf, size_t len)
{
	char item[40];
	size_t i = 0, j, used = 0;

	if (len > 0)
		buf[0] = '\0';
	while (i < n) {
		j = array_run_end(idx, n, i);
		/* A consecutive run: "5-9". An evenly spaced one of three or
		 * more: "0-96:4", except that its last element is left to
		 * begin the next run when that one is consecutive
		 * ("1,3,5-9", not "1-5:2,6-9"). */
		if (j > i && idx[i + 1] - idx[i] > 1 && j + 1 < n &&
		    idx[j + 1] - idx[j] == 1)
			j--;
		if (j > i && idx[i + 1] - idx[i] == 1)
			snprintf(item, sizeof(item), "%u-%u", idx[i], idx[j]);
		else if (j >= i + 2)
			snprintf(item, sizeof(item), "%u-%u:%u", idx[i],
			    idx[j], idx[i + 1] - idx[i]);
		else {
			j = i;
			snprintf(item, sizeof(item), "%u", idx[i]);
		}
		if (i > 0)
			array_put(buf, len, &used, ",");
		array_put(buf, len, &used, item);
		i = j + 1;
	}
	/* Cut short: say so where the text ends. */
	if (used >= len && len >= 4)
		memcpy(buf + len - 4, "...", 4);
	return used;
}
