/* Parsing one run of the health-check program (health_parse.h): pure,
 * no I/O, no clock, no allocation. The NHC convention: exit 0 healthy;
 * stdout lines "gpu N OK|DEGRADED|FAILED [reason]" and "node
 * OK|DEGRADED|FAILED reason…"; blank lines and "#" comments skipped. */
#include "config.h"

#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/agent/health_parse.h"
#include "lib/text.h"

/* Append to a reason, "; "-separated, cut at its size. */
static void __attribute__((format(printf, 2, 3)))
reason_add(char *reason, const char *fmt, ...)
{
	size_t len = strlen(reason);
	va_list ap;

	if (len > 0 && len + 2 < HEALTH_REASON_MAX) {
		memcpy(reason + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= HEALTH_REASON_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(reason + len, HEALTH_REASON_MAX - len, fmt, ap);
	va_end(ap);
}

static void
reason_set(char *reason, const char *s, size_t len)
{
	if (len >= HEALTH_REASON_MAX)
		len = HEALTH_REASON_MAX - 1;
	memcpy(reason, s, len);
	reason[len] = '\0';
}

/* The next blank-separated word of [*s, end): its start and length;
 * *s moves past it and the blanks after it. */
static size_t
next_word(const char **s, const char *end, const char **w)
{
	const char *p = *s;
	size_t n;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*w = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	n = (size_t)(p - *w);
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*s = p;
	return n;
}

static bool
word_is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && strncasecmp(w, s, n) == 0;
}

static bool
parse_state(const char *w, size_t n, enum health_state *h)
{
	if (word_is(w, n, "OK"))
		*h = HEALTH_OK;
	else if (word_is(w, n, "DEGRADED"))
		*h = HEALTH_DEGRADED;
	else if (word_is(w, n, "FAILED"))
		*h = HEALTH_FAILED;
	else
		return false;
	return true;
}

struct gpu_health *
health_parse_gpu(struct node_health *h, unsigned idx)
{
	unsigned i;

	for (i = 0; i < h->ngpus; i++)
		if (h->gpus[i].index == idx)
			return &h->gpus[i];
	if (h->ngpus == INV_MAX_GPUS)
		return NULL;
	memset(&h->gpus[h->ngpus], 0, sizeof(h->gpus[0]));
	h->gpus[h->ngpus].index = idx;
	h->gpus[h->ngpus].health = HEALTH_OK;
	return &h->gpus[h->ngpus++];
}

void
health_parse_worse(enum health_state *cur, char *reason, enum health_state h,
    const char *r, size_t rlen)
{
	if (h > *cur || (h == *cur && h != HEALTH_OK && reason[0] == '\0')) {
		*cur = h;
		reason_set(reason, r, rlen);
	}
}

void
health_parse_tidy(struct node_health *h)
{
	unsigned i, j;
	struct gpu_health t;

	for (i = j = 0; i < h->ngpus; i++)
		if (h->gpus[i].health != HEALTH_OK)
			h->gpus[j++] = h->gpus[i];
	h->ngpus = j;
	for (i = 1; i < h->ngpus; i++) {
		t = h->gpus[i];
		for (j = i; j > 0 && h->gpus[j - 1].index > t.index; j--)
			h->gpus[j] = h->gpus[j - 1];
		h->gpus[j] = t;
	}
}

static bool
all_digits(const char *w, size_t n)
{
	while (n-- > 0)
		if (!isdigit((unsigned char)*w++))
			return false;
	return true;
}

/* One line, trimmed and not empty. false with *why set when it does not
 * parse. */
static bool
parse_line(const char *s, const char *end, unsigned ngpus,
    struct node_health *h, char *why, size_t whylen)
{
	const char *w;
	size_t n;
	enum health_state st;
	struct gpu_health *g;
	unsigned long idx;
	char num[8];

	n = next_word(&s, end, &w);
	if (word_is(w, n, "node")) {
		n = next_word(&s, end, &w);
		if (!parse_state(w, n, &st)) {
			snprintf(why, whylen, "node: '%.*s' is not OK, "
			    "DEGRADED or FAILED", (int)(n > 32 ? 32 : n), w);
			return false;
		}
		health_parse_worse(&h->health, h->reason, st, s,
		    (size_t)(end - s));
		return true;
	}
	if (!word_is(w, n, "gpu")) {
		snprintf(why, whylen, "unparsable line '%.*s'",
		    (int)(end - w > 64 ? 64 : end - w), w);
		return false;
	}
	n = next_word(&s, end, &w);
	/* Within the word only: the output need not end in a NUL (found
	 * by tests/fuzz: strspn ran past the end of "gpu 3"). */
	if (n == 0 || n >= sizeof(num) || !all_digits(w, n)) {
		snprintf(why, whylen, "gpu: '%.*s' is not a GPU index",
		    (int)(n > 32 ? 32 : n), w);
		return false;
	}
	memcpy(num, w, n);
	num[n] = '\0';
	idx = strtoul(num, NULL, 10);
	if (idx >= ngpus) {
		snprintf(why, whylen, "gpu %lu: no such GPU (this node has "
		    "%u)", idx, ngpus);
		return false;
	}
	n = next_word(&s, end, &w);
	if (!parse_state(w, n, &st)) {
		snprintf(why, whylen, "gpu %lu: '%.*s' is not OK, DEGRADED or "
		    "FAILED", idx, (int)(n > 32 ? 32 : n), w);
		return false;
	}
	if ((g = health_parse_gpu(h, (unsigned)idx)) != NULL)
		health_parse_worse(&g->health, g->reason, st, s,
		    (size_t)(end - s));
	return true;
}

int
health_parse(const char *out, size_t len, int wait_status, unsigned ngpus,
    struct node_health *h)
{
	const char *p, *end, *nl, *s, *e;
	char why[HEALTH_REASON_MAX], first[HEALTH_REASON_MAX], lead[64];
	unsigned bad = 0, i;
	bool failed;

	if (h == NULL || (out == NULL && len > 0) || ngpus > INV_MAX_GPUS) {
		errno = EINVAL;
		return -1;
	}
	memset(h, 0, sizeof(*h));
	h->health = HEALTH_OK;
	first[0] = '\0';
	for (p = out, end = out + len; p != NULL && p < end; ) {
		nl = memchr(p, '\n', (size_t)(end - p));
		s = p;
		e = nl != NULL ? nl : end;
		p = nl != NULL ? nl + 1 : NULL;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (s == e || *s == '#')
			continue;
		if (memchr(s, '\0', (size_t)(e - s)) != NULL) {
			snprintf(why, sizeof(why), "a line with a NUL byte");
		} else if (parse_line(s, e, ngpus, h, why, sizeof(why)))
			continue;
		if (bad++ == 0)
			snprintf(first, sizeof(first), "%s", why);
	}
	health_parse_tidy(h);
	failed = h->health == HEALTH_FAILED;
	for (i = 0; i < h->ngpus; i++)
		failed = failed || h->gpus[i].health == HEALTH_FAILED;
	lead[0] = '\0';
	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0)
		snprintf(lead, sizeof(lead), "health check exited with status "
		    "%d", WEXITSTATUS(wait_status));
	else if (WIFSIGNALED(wait_status))
		snprintf(lead, sizeof(lead), "health check killed by signal "
		    "%d", WTERMSIG(wait_status));
	if (lead[0] != '\0' && !failed) {
		/* What the node line said, if anything, stays as the
		 * detail. */
		snprintf(why, sizeof(why), "%s", h->reason);
		h->health = HEALTH_FAILED;
		snprintf(h->reason, sizeof(h->reason), "%s", lead);
		if (why[0] != '\0')
			reason_add(h->reason, "%s", why);
	}
	if (bad > 0) {
		if (bad == 1)
			reason_add(h->reason, "%s", first);
		else
			reason_add(h->reason, "%s (and %u more bad lines)",
			    first, bad - 1);
	}
	/* The check's own words, cut to size: sent as protobuf strings,
	 * which must be text (lib/wirecheck.c), and shown in tables. */
	text_sanitize(h->reason);
	for (i = 0; i < h->ngpus; i++)
		text_sanitize(h->gpus[i].reason);
	return 0;
}
