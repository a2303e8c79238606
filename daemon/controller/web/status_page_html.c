#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "lib/job.h"
#include "daemon/controller/web/status_page_int.h"

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define REPLACEMENT "\xef\xbf\xbd"

/* The length of the valid UTF-8 sequence at s (*control set when it is
 * a C1 control character), or 0. s is NUL-terminated, so reading past a
 * truncated sequence stops at the NUL, which is no continuation byte. */
static size_t
html_char_len(const unsigned char *s, bool *control)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 ||
	    cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*control = cp >= 0x80 && cp <= 0x9f;
	return n;
}

/* What to write instead of the character at s (*skip bytes), or NULL
 * when it goes as is. */
static const char *
html_replacement(const unsigned char *s, size_t *skip)
{
	bool control = false;

	*skip = 1;
	switch (s[0]) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	case '\t':
	case '\n':
		return NULL;
	}
	if (s[0] < 0x20 || s[0] == 0x7f)
		return REPLACEMENT;
	if (s[0] < 0x80)
		return NULL;
	if ((*skip = html_char_len(s, &control)) == 0) {
		*skip = 1;
		return REPLACEMENT;
	}
	return control ? REPLACEMENT : NULL;
}

int
status_page_html_escape(struct evbuffer *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;
	const char *rep;
	size_t skip;

	if (s == NULL)
		return 0;
	run = p;
	while (*p != '\0') {
		if ((rep = html_replacement(p, &skip)) == NULL) {
			p += skip;
			continue;
		}
		if ((p > run && evbuffer_add(b, run, (size_t)(p - run)) == -1) ||
		    evbuffer_add(b, rep, strlen(rep)) == -1)
			return -1;
		p += skip;
		run = p;
	}
	if (p > run && evbuffer_add(b, run, (size_t)(p - run)) == -1)
		return -1;
	return 0;
}

void
status_page_html_put(struct status_out *o, const char *markup)
{
	if (evbuffer_add(o->b, markup, strlen(markup)) == -1)
		o->failed = true;
}

void
status_page_html_printf(struct status_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (evbuffer_add_vprintf(o->b, fmt, ap) < 0)
		o->failed = true;
	va_end(ap);
}

void
status_page_html_text(struct status_out *o, const char *s)
{
	if (status_page_html_escape(o->b, s) == -1)
		o->failed = true;
}

void
status_page_html_age(struct status_out *o, int64_t ms)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	if (s >= 86400)
		status_page_html_printf(o, "%lldd %lldh", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600));
	else if (s >= 3600)
		status_page_html_printf(o, "%lldh %lldm", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	else if (s >= 60)
		status_page_html_printf(o, "%lldm %llds", (long long)(s / 60),
		    (long long)(s % 60));
	else
		status_page_html_printf(o, "%llds", (long long)s);
}

void
status_page_html_time(struct status_out *o, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm) == 0) {
		status_page_html_put(o, "-");
		return;
	}
	status_page_html_put(o, buf);
}

void
status_page_html_job(struct status_out *o, const struct job *j)
{
	if (j->array_id != 0)
		status_page_html_printf(o, "%llu_%u",
		    (unsigned long long)j->array_id, j->array_task);
	else
		status_page_html_printf(o, "%llu", (unsigned long long)j->id);
}

unsigned
status_page_html_colour(uint64_t job_id)
{
	return (unsigned)(job_id % STATUS_PAGE_COLOURS);
}
