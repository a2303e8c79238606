/* Reading the "#COHORT" option lines of a batch script (see script.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "lib/job.h"

#define SCRIPT_TAG "#COHORT"

/* A word being built, as a growing buffer. */
struct word {
	char *buf;
	size_t len;
	size_t cap;
	bool started;	/* a word exists, even if empty ('' or "") */
};

static int
word_putc(struct word *w, char ch)
{
	char *nbuf;
	size_t ncap;

	if (w->len + 1 >= w->cap) {
		ncap = w->cap ? w->cap * 2 : 32;
		if ((nbuf = realloc(w->buf, ncap)) == NULL)
			return -1;
		w->buf = nbuf;
		w->cap = ncap;
	}
	w->buf[w->len++] = ch;
	w->buf[w->len] = '\0';
	w->started = true;
	return 0;
}

/* Append a copy of s, keeping the vector NULL-terminated (strv_free
 * frees it). */
static int
vec_push(char ***argv, size_t *argc, const char *s)
{
	char **nv, *copy;

	if ((copy = strdup(s)) == NULL)
		return -1;
	if ((nv = reallocarray(*argv, *argc + 2, sizeof(*nv))) == NULL) {
		free(copy);
		return -1;
	}
	nv[(*argc)++] = copy;
	nv[*argc] = NULL;
	*argv = nv;
	return 0;
}

/* An empty vector: just the NULL end. */
static int
vec_init(char ***argv, size_t *argc)
{
	*argc = 0;
	if ((*argv = calloc(1, sizeof(**argv))) == NULL)
		return -1;
	return 0;
}

/* Move the finished word into the vector and start a new one. */
static int
word_end(struct word *w, char ***argv, size_t *argc)
{
	int rc;

	if (!w->started)
		return 0;
	rc = vec_push(argv, argc, w->len ? w->buf : "");
	w->len = 0;
	w->started = false;
	if (w->buf != NULL)
		w->buf[0] = '\0';
	return rc;
}

/* Inside double quotes a backslash escapes only these, as in sh. */
static bool
dquote_escapable(char ch)
{
	return ch == '"' || ch == '\\' || ch == '$' || ch == '`';
}

/* Split one line; on error the words collected so far are freed. */
static int
split_words(const char *p, char ***argv, size_t *argc, struct cerr *err)
{
	struct word w = { NULL, 0, 0, false };
	int rc = -1;

	if (vec_init(argv, argc) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");

	while (*p != '\0') {
		char ch = *p++;

		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
			if (word_end(&w, argv, argc) == -1)
				goto nomem;
		} else if (ch == '#' && !w.started) {
			/* A comment, as in sh: '#' starting a word. */
			break;
		} else if (ch == '\'') {
			w.started = true;
			while (*p != '\0' && *p != '\'')
				if (word_putc(&w, *p++) == -1)
					goto nomem;
			if (*p == '\0') {
				cerr_set(err, ERR_INVALID,
				    "unterminated single quote");
				goto out;
			}
			p++;
		} else if (ch == '"') {
			w.started = true;
			while (*p != '\0' && *p != '"') {
				if (*p == '\\' && dquote_escapable(p[1]))
					p++;
				if (word_putc(&w, *p++) == -1)
					goto nomem;
			}
			if (*p == '\0') {
				cerr_set(err, ERR_INVALID,
				    "unterminated double quote");
				goto out;
			}
			p++;
		} else if (ch == '\\') {
			/* No line continuation: each line stands alone. */
			if (*p == '\0' || *p == '\r' || *p == '\n') {
				cerr_set(err, ERR_INVALID,
				    "backslash at the end of the line");
				goto out;
			}
			if (word_putc(&w, *p++) == -1)
				goto nomem;
		} else if (word_putc(&w, ch) == -1)
			goto nomem;
	}
	if (word_end(&w, argv, argc) == -1)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	cerr_set(err, ERR_INTERNAL, "out of memory");
out:
	free(w.buf);
	if (rc == -1) {
		strv_free(*argv, *argc);
		*argv = NULL;
		*argc = 0;
	}
	return rc;
}

int
script_split(const char *line, char ***argv, size_t *argc, struct cerr *err)
{
	return split_words(line, argv, argc, err);
}

/* Does this line (without its newline) end the header block? Blank lines
 * and comments do not; anything else is the first line of code. */
static bool
is_code(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')
			continue;
		return line[i] != '#';
	}
	return false;
}

/* "#COHORT" followed by a blank or the end of the line; "#COHORTS" is
 * just a comment. */
static bool
is_directive(const char *line, size_t len)
{
	size_t n = strlen(SCRIPT_TAG);

	if (len < n || memcmp(line, SCRIPT_TAG, n) != 0)
		return false;
	return len == n || line[n] == ' ' || line[n] == '\t' ||
	    line[n] == '\r';
}

/* Split one directive line's options and append them to the vector. */
static int
add_directive(const char *line, size_t len, size_t lineno, char ***argv,
    size_t *argc, struct cerr *err)
{
	struct cerr why;
	char *copy, **words;
	size_t nwords, i, skip = strlen(SCRIPT_TAG);
	int rc;

	if (memchr(line, '\0', len) != NULL)
		return cerr_set(err, ERR_INVALID, "line %zu: NUL byte", lineno);
	if ((copy = strndup(line + skip, len - skip)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	cerr_clear(&why);
	rc = split_words(copy, &words, &nwords, &why);
	free(copy);
	if (rc == -1)	/* prefix the line, keeping the splitter's reason */
		return cerr_set(err, why.code, "line %zu: %s", lineno,
		    why.text);
	for (i = 0; i < nwords && rc == 0; i++)
		if (vec_push(argv, argc, words[i]) == -1)
			rc = cerr_set(err, ERR_INTERNAL, "out of memory");
	strv_free(words, nwords);
	return rc;
}

int
script_options(const char *text, size_t len, char ***argv, size_t *argc,
    struct cerr *err)
{
	const char *p = text, *end = text + len, *nl;
	size_t lineno = 0, linelen;

	if (vec_init(argv, argc) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		linelen = (nl != NULL ? nl : end) - p;
		lineno++;
		if (lineno == 1 && linelen >= 2 && p[0] == '#' && p[1] == '!')
			; /* the interpreter line */
		else if (is_code(p, linelen))
			break;
		else if (is_directive(p, linelen) &&
		    add_directive(p, linelen, lineno, argv, argc, err) == -1)
			goto fail;
		p += linelen + (nl != NULL);
	}
	return 0;
fail:
	strv_free(*argv, *argc);
	*argv = NULL;
	*argc = 0;
	return -1;
}
