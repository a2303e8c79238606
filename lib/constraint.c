/* Node feature expressions (constraint.h): a recursive-descent parser
 * that evaluates while it checks, so nothing is allocated.
 *
 *	expr := term ( '|' term )*
 *	term := atom ( '&' atom )*
 *	atom := NAME | '(' expr ')'
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/constraint.h"

/* Parentheses nest at most this deep: the parser recurses per level. */
#define DEPTH_MAX 32

struct cparse {
	const char *text;
	const char *p;
	const char *const *features;
	size_t n;
	int depth;
	int (*fn)(const char *, size_t, void *);
	void *arg;
	int stop;		/* fn's first non-zero return */
	char *err;
	size_t errlen;
	int failed;
};

static int
name_char(int c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

bool
constraint_name_ok(const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++)
		if (!name_char(name[i]) || i >= CONSTRAINT_NAME_MAX)
			return false;
	return i > 0;
}

static int
fail(struct cparse *c, const char *at, const char *fmt, const char *what)
{
	if (!c->failed && c->err != NULL && c->errlen > 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), fmt, what);
		snprintf(c->err, c->errlen, "at column %zu: %s",
		    (size_t)(at - c->text) + 1, msg);
	}
	c->failed = 1;
	return -1;
}

static void
blanks(struct cparse *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static int parse_expr(struct cparse *c, int *val);

/* A fault at the current character: name what is there. */
static int
fail_here(struct cparse *c, const char *expected)
{
	char what[64];

	switch (*c->p) {
	case '\0':
		return fail(c, c->p, "%s", expected);
	case '[':
	case ']':
		return fail(c, c->p, "%s", "Slurm's [...] matching OR is not "
		    "supported (use a|b)");
	case '*':
		return fail(c, c->p, "%s", "Slurm's feature counts (*N) are "
		    "not supported");
	case ',':
		return fail(c, c->p, "%s", "',' is not an operator (use & or "
		    "|)");
	default:
		if (isprint((unsigned char)*c->p))
			snprintf(what, sizeof(what), "%s, not '%c'", expected,
			    *c->p);
		else
			snprintf(what, sizeof(what), "%s, not byte 0x%02x",
			    expected, (unsigned char)*c->p);
		return fail(c, c->p, "%s", what);
	}
}

static int
parse_atom(struct cparse *c, int *val)
{
	const char *start;
	size_t len, i;

	blanks(c);
	if (*c->p == '(') {
		if (++c->depth > DEPTH_MAX)
			return fail(c, c->p, "%s", "parentheses nest too deep");
		c->p++;
		if (parse_expr(c, val) == -1)
			return -1;
		blanks(c);
		if (*c->p != ')')
			return *c->p == '\0' ? fail(c, c->p, "%s",
			    "missing ')'") : fail_here(c, "missing ')'");
		c->p++;
		c->depth--;
		return 0;
	}
	start = c->p;
	while (name_char(*c->p))
		c->p++;
	len = (size_t)(c->p - start);
	if (len == 0)
		return fail_here(c, "expected a feature name");
	if (len > CONSTRAINT_NAME_MAX)
		return fail(c, start, "%s", "feature name longer than 64 "
		    "characters");
	*val = 0;
	for (i = 0; i < c->n; i++)
		if (strlen(c->features[i]) == len &&
		    memcmp(c->features[i], start, len) == 0)
			*val = 1;
	if (c->fn != NULL && c->stop == 0)
		c->stop = c->fn(start, len, c->arg);
	return 0;
}

static int
parse_term(struct cparse *c, int *val)
{
	int v;

	if (parse_atom(c, val) == -1)
		return -1;
	for (;;) {
		blanks(c);
		if (*c->p != '&')
			return 0;
		c->p++;
		if (parse_atom(c, &v) == -1)
			return -1;
		*val = *val && v;
	}
}

static int
parse_expr(struct cparse *c, int *val)
{
	int v;

	if (parse_term(c, val) == -1)
		return -1;
	for (;;) {
		blanks(c);
		if (*c->p != '|')
			return 0;
		c->p++;
		if (parse_term(c, &v) == -1)
			return -1;
		*val = *val || v;
	}
}

static int
run(struct cparse *c, const char *expr)
{
	int val = 0;

	c->text = c->p = expr;
	if (strlen(expr) > CONSTRAINT_TEXT_MAX)
		return fail(c, expr, "%s", "expression longer than 1024 "
		    "characters");
	if (parse_expr(c, &val) == -1)
		return -1;
	blanks(c);
	if (*c->p != '\0')
		return *c->p == ')' ? fail(c, c->p, "%s", "unmatched ')'") :
		    fail_here(c, "expected & or |");
	return val;
}

int
constraint_parse(const char *expr, char *err, size_t errlen)
{
	struct cparse c = { .err = err, .errlen = errlen };

	if (run(&c, expr) == -1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
constraint_match(const char *expr, const char *const *features, size_t n)
{
	struct cparse c = { .features = features, .n = n };
	int v;

	if ((v = run(&c, expr)) == -1)
		errno = EINVAL;
	return v;
}

int
constraint_names(const char *expr,
    int (*fn)(const char *name, size_t len, void *arg), void *arg)
{
	struct cparse c = { .fn = fn, .arg = arg };

	(void)run(&c, expr);
	return c.stop;
}
