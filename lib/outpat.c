/* Output file patterns (outpat.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/outpat.h"

/* Slurm's bound on the padding width. */
#define OUTPAT_WIDTH_MAX 10

struct outbuf {
	char *p;
	size_t len, at;
	bool over;
};

static void
out_mem(struct outbuf *o, const char *s, size_t n)
{
	if (o->over || n >= o->len - o->at) {
		o->over = true;
		return;
	}
	memcpy(o->p + o->at, s, n);
	o->at += n;
	o->p[o->at] = '\0';
}

static void
out_str(struct outbuf *o, const char *s)
{
	out_mem(o, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

static void
out_num(struct outbuf *o, uint64_t v, int width)
{
	char num[32];
	int n;

	n = snprintf(num, sizeof(num), "%0*" PRIu64, width, v);
	out_mem(o, num, (size_t)n);
}

/* The whole pattern taken literally, without its backslashes. */
static void
out_literal(struct outbuf *o, const char *pat)
{
	for (; *pat != '\0'; pat++)
		if (*pat != '\\')
			out_mem(o, pat, 1);
}

int
outpat_expand(const char *pat, const struct outpat_vars *v, char *buf,
    size_t len)
{
	struct outbuf o = { buf, len, 0, false };
	const char *p, *spec;
	bool array = v->array_id != 0;
	int width;

	if (pat == NULL || pat[0] == '\0' || len == 0) {
		errno = EINVAL;
		return -1;
	}
	buf[0] = '\0';
	if (strchr(pat, '\\') != NULL) {
		out_literal(&o, pat);
		goto done;
	}
	for (p = pat; *p != '\0'; p++) {
		if (*p != '%') {
			out_mem(&o, p, 1);
			continue;
		}
		spec = p++;
		width = 0;
		if (*p >= '0' && *p <= '9') {
			width = *p++ - '0';
			if (*p >= '0' && *p <= '9')
				width = width * 10 + (*p++ - '0');
			if (width > OUTPAT_WIDTH_MAX)
				width = OUTPAT_WIDTH_MAX;
		}
		switch (*p) {
		case '%':
			out_mem(&o, "%", 1);
			break;
		case 'j':
			out_num(&o, v->job_id, width);
			break;
		case 'A':
			out_num(&o, array ? v->array_id : v->job_id, width);
			break;
		case 'a':
			out_num(&o, array ? v->array_task : OUTPAT_NO_TASK,
			    width);
			break;
		case 't':
			out_num(&o, v->rank, width);
			break;
		case 'n':
			out_num(&o, v->node_rank, width);
			break;
		case 'N':
			out_str(&o, v->node);
			break;
		case 'x':
			out_str(&o, v->name);
			break;
		case 'u':
			out_str(&o, v->user);
			break;
		case '\0':
			/* A '%' (and digits) at the end: as written. */
			out_str(&o, spec);
			p--;
			break;
		default:
			out_mem(&o, spec, (size_t)(p - spec) + 1);
			break;
		}
	}
done:
	if (o.over) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (buf[0] == '\0') {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

unsigned
outpat_varies(const char *pat)
{
	unsigned by = 0;
	const char *p;

	if (pat == NULL || strchr(pat, '\\') != NULL)
		return 0;
	for (p = pat; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		p++;
		/* As outpat_expand reads a width: two digits at most. */
		if (*p >= '0' && *p <= '9' && *++p >= '0' && *p <= '9')
			p++;
		if (*p == 't')
			by |= OUTPAT_BY_RANK;
		else if (*p == 'n' || *p == 'N')
			by |= OUTPAT_BY_NODE;
		else if (*p == '\0')
			break;
	}
	return by;
}

const char *
outpat_for(const char *output, const char *error, bool is_stderr)
{
	if (output != NULL && output[0] == '\0')
		output = NULL;
	if (error != NULL && error[0] == '\0')
		error = NULL;
	if (!is_stderr)
		return output;
	return error != NULL ? error : output;
}
