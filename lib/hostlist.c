/* Slurm hostlist expansion and compression (see hostlist.h). Expansion
 * validates and counts the whole expression before it allocates, so a
 * bad or oversized list costs no memory and fails as a unit. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostlist.h"

/* Digits in a range bound: enough for HOSTLIST_NUM_MAX with some zero
 * padding, small enough that the value cannot overflow. */
#define NUM_DIGITS_MAX 12

struct range {
	unsigned long lo;
	unsigned long hi;
	int width;		/* digits of lo as written: the padding */
};

struct out {
	char **names;
	size_t count;
	char buf[HOSTLIST_NAME_MAX + 1];
	size_t len;
};

static int	fail(char *, size_t, const char *, const char *, ...)
	    __attribute__((format(printf, 4, 5)));

static int
fail(char *err, size_t errlen, const char *expr, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		snprintf(err, errlen, "hostlist \"%.64s%s\": %s", expr,
		    strlen(expr) > 64 ? "..." : "", what);
	}
	errno = EINVAL;
	return -1;
}

/* Parse one number at *pp, leaving *pp after it. */
static int
parse_num(const char **pp, const char *end, unsigned long *v, int *width)
{
	const char *p = *pp;
	unsigned long n = 0;
	int digits = 0;

	while (p < end && isdigit((unsigned char)*p)) {
		if (++digits > NUM_DIGITS_MAX)
			return -1;
		n = n * 10 + (unsigned long)(*p - '0');
		p++;
	}
	if (digits == 0 || n > HOSTLIST_NUM_MAX)
		return -1;
	*pp = p;
	*v = n;
	*width = digits;
	return 0;
}

/* Parse the next element of a bracket group [*pp, end) into r and step
 * past it and its comma. */
static int
next_range(const char **pp, const char *end, struct range *r,
    const char *expr, char *err, size_t errlen)
{
	const char *p = *pp;
	int hw;

	if (parse_num(&p, end, &r->lo, &r->width) == -1)
		return fail(err, errlen, expr,
		    "expected a number (at most %lu) in brackets",
		    HOSTLIST_NUM_MAX);
	r->hi = r->lo;
	if (p < end && *p == '-') {
		p++;
		if (parse_num(&p, end, &r->hi, &hw) == -1)
			return fail(err, errlen, expr,
			    "expected a number (at most %lu) after '-'",
			    HOSTLIST_NUM_MAX);
		if (r->hi < r->lo)
			return fail(err, errlen, expr,
			    "range %lu-%lu runs backwards", r->lo, r->hi);
	}
	if (p < end) {
		if (*p != ',')
			return fail(err, errlen, expr,
			    "unexpected '%c' in brackets", *p);
		p++;
		if (p == end)
			return fail(err, errlen, expr,
			    "empty element in brackets");
	}
	*pp = p;
	return 0;
}

/* Check one item [p, end) and multiply its name count into *count,
 * failing with E2BIG once the total passes max. */
static int
count_item(const char *p, const char *end, size_t max, size_t *count,
    const char *expr, char *err, size_t errlen)
{
	size_t n = 1, g;
	const char *close, *q;
	struct range r;

	if (p == end)
		return fail(err, errlen, expr, "empty name");
	while (p < end) {
		if (*p == ']')
			return fail(err, errlen, expr, "']' without '['");
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return fail(err, errlen, expr,
			    "space or control character in a name");
		if (*p != '[') {
			p++;
			continue;
		}
		close = memchr(p, ']', (size_t)(end - p));
		if (close == NULL)
			return fail(err, errlen, expr, "missing ']'");
		q = memchr(p + 1, '[', (size_t)(close - p - 1));
		if (q != NULL)
			return fail(err, errlen, expr, "nested '['");
		if (close == p + 1)
			return fail(err, errlen, expr, "empty brackets");
		g = 0;
		for (q = p + 1; q < close;) {
			if (next_range(&q, close, &r, expr, err, errlen) == -1)
				return -1;
			g += r.hi - r.lo + 1;
			if (g > max) {
				errno = E2BIG;
				return -1;
			}
		}
		if (n > max / g) {
			errno = E2BIG;
			return -1;
		}
		n *= g;
		p = close + 1;
	}
	if (n > max - *count) {
		errno = E2BIG;
		return -1;
	}
	*count += n;
	return 0;
}

/* Find the end of the item starting at p: the next comma outside
 * brackets, or the end of the string. */
static const char *
item_end(const char *p)
{
	int depth = 0;

	for (; *p != '\0'; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (*p == ',' && depth <= 0)
			break;
	}
	return p;
}

static int
out_append(struct out *o, const char *s, size_t len)
{
	if (o->len + len > HOSTLIST_NAME_MAX)
		return -1;
	memcpy(o->buf + o->len, s, len);
	o->len += len;
	o->buf[o->len] = '\0';
	return 0;
}

/* Emit every name of the item rest [p, end), appended to o->buf. */
static int
gen_item(struct out *o, const char *p, const char *end, const char *expr,
    char *err, size_t errlen)
{
	const char *open, *close, *q;
	size_t keep;
	struct range r;
	unsigned long v;
	char num[NUM_DIGITS_MAX + 2];
	int len;

	open = memchr(p, '[', (size_t)(end - p));
	if (open == NULL) {
		if (out_append(o, p, (size_t)(end - p)) == -1)
			goto toolong;
		if ((o->names[o->count] = strdup(o->buf)) == NULL)
			return -1;
		o->count++;
		return 0;
	}
	if (out_append(o, p, (size_t)(open - p)) == -1)
		goto toolong;
	close = memchr(open, ']', (size_t)(end - open));
	keep = o->len;
	for (q = open + 1; q < close;) {
		if (next_range(&q, close, &r, expr, err, errlen) == -1)
			return -1;
		for (v = r.lo;; v++) {
			len = snprintf(num, sizeof(num), "%0*lu", r.width, v);
			o->len = keep;
			if (out_append(o, num, (size_t)len) == -1)
				goto toolong;
			if (gen_item(o, close + 1, end, expr, err,
			    errlen) == -1)
				return -1;
			if (v == r.hi)
				break;
		}
	}
	o->len = keep;
	return 0;
toolong:
	return fail(err, errlen, expr, "a name is longer than %d characters",
	    HOSTLIST_NAME_MAX);
}

int
hostlist_expand(const char *expr, size_t max, char ***names, size_t *count,
    char *err, size_t errlen)
{
	struct out o;
	const char *p, *e;
	size_t total = 0;
	int saved;

	if (expr == NULL || names == NULL || count == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (*expr == '\0')
		return fail(err, errlen, expr, "empty list");
	for (p = expr;; p = e + 1) {
		e = item_end(p);
		if (count_item(p, e, max, &total, expr, err, errlen) == -1) {
			if (errno == E2BIG && err != NULL && errlen > 0)
				snprintf(err, errlen,
				    "hostlist \"%.64s\": more than %zu names",
				    expr, max);
			return -1;
		}
		if (*e == '\0')
			break;
	}
	memset(&o, 0, sizeof(o));
	if ((o.names = calloc(total > 0 ? total : 1, sizeof(char *))) == NULL)
		return -1;
	for (p = expr;; p = e + 1) {
		e = item_end(p);
		o.len = 0;
		o.buf[0] = '\0';
		if (gen_item(&o, p, e, expr, err, errlen) == -1) {
			saved = errno;
			hostlist_free(o.names, o.count);
			errno = saved;
			return -1;
		}
		if (*e == '\0')
			break;
	}
	*names = o.names;
	*count = o.count;
	return 0;
}

void
hostlist_free(char **names, size_t count)
{
	size_t i;

	if (names == NULL)
		return;
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

static int
hostlist_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
hostlist_expand_args(char *const *exprs, size_t n, size_t max,
    char ***names, size_t *count, char *err, size_t errlen)
{
	char **all = NULL, **one, **grown;
	size_t total = 0, k, i, o;
	int saved;

	*names = NULL;
	*count = 0;
	for (i = 0; i < n; i++) {
		if (exprs[i][0] == '\0') {
			hostlist_free(all, total);
			return fail(err, errlen, exprs[i], "empty");
		}
		if (hostlist_expand(exprs[i], max - total, &one, &k, err,
		    errlen) == -1) {
			saved = errno;
			if (saved == E2BIG && err != NULL && errlen > 0)
				snprintf(err, errlen, "hostlist \"%.64s%s\": "
				    "more than %zu names%s", exprs[i],
				    strlen(exprs[i]) > 64 ? "..." : "", max,
				    n > 1 ? " with the others" : "");
			hostlist_free(all, total);
			errno = saved;
			return -1;
		}
		if (k == 0) {
			free(one);
			continue;
		}
		if ((grown = realloc(all, (total + k) * sizeof(*all))) ==
		    NULL) {
			hostlist_free(one, k);
			hostlist_free(all, total);
			errno = ENOMEM;
			return -1;
		}
		all = grown;
		memcpy(all + total, one, k * sizeof(*one));
		free(one);
		total += k;
	}
	if (total > 0)
		qsort(all, total, sizeof(*all), hostlist_strcmp);
	for (i = o = 0; i < total; i++) {
		if (o > 0 && strcmp(all[i], all[o - 1]) == 0) {
			free(all[i]);
			continue;
		}
		all[o++] = all[i];
	}
	*names = all;
	*count = o;
	return 0;
}

/* A name split for compression: prefix, then an optional number. */
struct hname {
	const char *name;
	size_t plen;		/* prefix length */
	int ndig;		/* digits after the prefix; 0: no number */
	unsigned long val;
};

static int
hname_cmp(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;
	size_t n = x->plen < y->plen ? x->plen : y->plen;
	int c;

	if ((c = memcmp(x->name, y->name, n)) != 0)
		return c;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	if ((x->ndig > 0) != (y->ndig > 0))
		return x->ndig > 0 ? 1 : -1;
	if (x->val != y->val)
		return x->val < y->val ? -1 : 1;
	if (x->ndig != y->ndig)
		return x->ndig < y->ndig ? -1 : 1;
	return 0;
}

static int
hname_split(const char *name, struct hname *h)
{
	size_t len = strlen(name), i = len;
	unsigned long v = 0;

	if (len == 0 || strpbrk(name, "[],") != NULL)
		return -1;
	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	h->name = name;
	h->plen = len;
	h->ndig = 0;
	h->val = 0;
	if (i == len || len - i > 9)
		return 0;	/* no number, or too long to be one */
	for (size_t k = i; k < len; k++)
		v = v * 10 + (unsigned long)(name[k] - '0');
	h->plen = i;
	h->ndig = (int)(len - i);
	h->val = v;
	return 0;
}

static int
natural_digits(unsigned long v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Does name b continue a range of width w that ends at name a? It does
 * when its number is one more and the range would print it as written. */
static bool
continues(const struct hname *a, const struct hname *b, int w)
{
	int nat = natural_digits(b->val);

	return b->val == a->val + 1 && b->ndig == (nat > w ? nat : w);
}

struct sbuf {
	char *s;
	size_t len, cap;
};

static int
sbuf_add(struct sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
sbuf_add(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *ns;
	size_t ncap;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(sb->s + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -1;
		if ((size_t)n < sb->cap - sb->len) {
			sb->len += (size_t)n;
			return 0;
		}
		ncap = sb->cap * 2 + (size_t)n + 1;
		if ((ns = realloc(sb->s, ncap)) == NULL)
			return -1;
		sb->s = ns;
		sb->cap = ncap;
	}
}

/* Write the group of names h[0 .. n) sharing one prefix. */
static int
emit_group(struct sbuf *sb, const struct hname *h, size_t n)
{
	size_t i, start;
	int w;
	bool single;

	if (sbuf_add(sb, "%s%.*s", sb->len > 0 ? "," : "", (int)h->plen,
	    h->name) == -1)
		return -1;
	if (h[0].ndig == 0)
		return 0;
	single = n == 1;
	if (!single && sbuf_add(sb, "[") == -1)
		return -1;
	for (i = 0; i < n; i = start) {
		start = i + 1;
		w = h[i].ndig;
		while (start < n && continues(&h[start - 1], &h[start], w))
			start++;
		if (sbuf_add(sb, "%s%0*lu", i > 0 ? "," : "", w,
		    h[i].val) == -1)
			return -1;
		if (start - i > 1 && sbuf_add(sb, "-%0*lu", w,
		    h[start - 1].val) == -1)
			return -1;
	}
	if (!single && sbuf_add(sb, "]") == -1)
		return -1;
	return 0;
}

/* hostlist_compress and hostlist_compress_ordered: sorted (duplicates
 * dropped), or in the order given, grouping only neighbours. */
static char *
compress(char *const *names, size_t count, bool sorted)
{
	struct hname *h;
	struct sbuf sb = { NULL, 0, 0 };
	size_t i, j, n;

	if (names == NULL && count > 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((h = calloc(count > 0 ? count : 1, sizeof(*h))) == NULL)
		return NULL;
	if ((sb.s = malloc(64)) == NULL)
		goto fail;
	sb.cap = 64;
	sb.s[0] = '\0';
	for (i = 0; i < count; i++) {
		if (names[i] == NULL || hname_split(names[i], &h[i]) == -1) {
			errno = EINVAL;
			goto fail;
		}
	}
	n = count;
	if (sorted) {
		qsort(h, count, sizeof(*h), hname_cmp);
		/* Drop duplicates: equal keys mean equal names. */
		for (i = 0, n = 0; i < count; i++)
			if (n == 0 || hname_cmp(&h[n - 1], &h[i]) != 0)
				h[n++] = h[i];
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && h[j].ndig > 0 && h[i].ndig > 0 &&
		    h[j].plen == h[i].plen &&
		    memcmp(h[j].name, h[i].name, h[i].plen) == 0; j++)
			;
		if (emit_group(&sb, &h[i], j - i) == -1)
			goto fail;
	}
	free(h);
	return sb.s;
fail:
	free(h);
	free(sb.s);
	return NULL;
}

char *
hostlist_compress(char *const *names, size_t count)
{
	return compress(names, count, true);
}

char *
hostlist_compress_ordered(char *const *names, size_t count)
{
	return compress(names, count, false);
}
