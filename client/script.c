/* Reading the "#COHORT" option lines of a batch script (see script.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "lib/job.h"

static const char *const script_tags[] = {
	[SCRIPT_TAG_COHORT] = "#COHORT",
	[SCRIPT_TAG_SBATCH] = "#SBATCH",
};

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

/* The tag of a directive line: "#COHORT" or "#SBATCH" followed by a
 * blank or the end of the line ("#COHORTS" is just a comment); -1 for
 * any other line. */
static int
directive_tag(const char *line, size_t len)
{
	size_t n, t;

	for (t = 0; t < sizeof(script_tags) / sizeof(script_tags[0]); t++) {
		n = strlen(script_tags[t]);
		if (len < n || memcmp(line, script_tags[t], n) != 0)
			continue;
		if (len == n || line[n] == ' ' || line[n] == '\t' ||
		    line[n] == '\r')
			return (int)t;
	}
	return -1;
}

/* Split one directive line's words into *sl. */
static int
add_directive(const char *line, size_t len, size_t lineno, int tag,
    struct script_line *sl, struct cerr *err)
{
	struct cerr why;
	char *copy;
	size_t skip = strlen(script_tags[tag]);
	int rc;

	if (memchr(line, '\0', len) != NULL)
		return cerr_set(err, ERR_INVALID, "line %zu: NUL byte", lineno);
	if ((copy = strndup(line + skip, len - skip)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	cerr_clear(&why);
	rc = split_words(copy, &sl->argv, &sl->argc, &why);
	free(copy);
	if (rc == -1)	/* prefix the line, keeping the splitter's reason */
		return cerr_set(err, why.code, "line %zu: %s", lineno,
		    why.text);
	sl->tag = (enum script_tag)tag;
	sl->lineno = lineno;
	return 0;
}

void
script_lines_free(struct script_line *lines, size_t n)
{
	size_t i;

	if (lines == NULL)
		return;
	for (i = 0; i < n; i++)
		strv_free(lines[i].argv, lines[i].argc);
	free(lines);
}

/* The header block's directive lines whose tag is in mask (1 << tag). */
static int
scan(const char *text, size_t len, unsigned mask, struct script_line **out,
    size_t *nout, struct cerr *err)
{
	const char *p = text, *end = text + len, *nl;
	struct script_line *lines = NULL, *nv;
	size_t lineno = 0, linelen, n = 0;
	int tag;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		linelen = (nl != NULL ? nl : end) - p;
		lineno++;
		if (lineno == 1 && linelen >= 2 && p[0] == '#' && p[1] == '!')
			; /* the interpreter line */
		else if (is_code(p, linelen))
			break;
		else if ((tag = directive_tag(p, linelen)) != -1 &&
		    (mask & (1u << tag)) != 0) {
			if ((nv = reallocarray(lines, n + 1,
			    sizeof(*nv))) == NULL) {
				cerr_set(err, ERR_INTERNAL, "out of memory");
				goto fail;
			}
			lines = nv;
			if (add_directive(p, linelen, lineno, tag, &lines[n],
			    err) == -1)
				goto fail;
			n++;
		}
		p += linelen + (nl != NULL);
	}
	*out = lines;
	*nout = n;
	return 0;
fail:
	script_lines_free(lines, n);
	*out = NULL;
	*nout = 0;
	return -1;
}

int
script_lines(const char *text, size_t len, struct script_line **lines,
    size_t *n, struct cerr *err)
{
	return scan(text, len, 1u << SCRIPT_TAG_COHORT | 1u << SCRIPT_TAG_SBATCH,
	    lines, n, err);
}

int
script_options(const char *text, size_t len, char ***argv, size_t *argc,
    struct cerr *err)
{
	struct script_line *lines;
	size_t nlines, i, j;
	int rc = 0;

	if (vec_init(argv, argc) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (scan(text, len, 1u << SCRIPT_TAG_COHORT, &lines, &nlines,
	    err) == -1)
		goto fail;
	for (i = 0; i < nlines && rc == 0; i++)
		for (j = 0; j < lines[i].argc && rc == 0; j++)
			if (vec_push(argv, argc, lines[i].argv[j]) == -1)
				rc = cerr_set(err, ERR_INTERNAL,
				    "out of memory");
	script_lines_free(lines, nlines);
	if (rc == 0)
		return 0;
fail:
	strv_free(*argv, *argc);
	*argv = NULL;
	*argc = 0;
	return -1;
}
