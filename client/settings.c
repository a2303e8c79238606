/* Where the CLI finds its controller and credentials (see settings.h). */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/settings.h"

enum { S_SERVER, S_CERT, S_KEY, S_CA, S_COUNT };

/* What each setting is called in each of its three places, and what to
 * call it when it is missing. */
static const struct {
	const char *key;
	const char *env;
	const char *flag;
	const char *what;
} settings_names[S_COUNT] = {
	{ "server", "COHORT_SERVER", "--server", "no controller address" },
	{ "cert", "COHORT_CERT", "--cert", "no client certificate" },
	{ "key", "COHORT_KEY", "--key", "no client key" },
	{ "ca", "COHORT_CA", "--ca", "no CA certificate" },
};

struct settings_file {
	FILE *fp;
	const char *path;
	char *dir;		/* relative paths in the file start here */
	char **slots;		/* S_COUNT values being filled */
	int line;		/* of the line inih is handling */
	int bad_line;		/* first line the handler refused, or 0 */
	unsigned seen;		/* keys already given, as 1 << S_* */
	char why[256];
};

static char **
settings_slot(struct settings *s, int i)
{
	char **slots[S_COUNT] = { &s->server, &s->cert, &s->key, &s->ca };

	return slots[i];
}

/* inih reads through this so that the handler knows its line number:
 * Debian's inih is built without INI_HANDLER_LINENO. */
static char *
settings_reader(char *str, int num, void *stream)
{
	struct settings_file *f = stream;
	char *line;

	if ((line = fgets(str, num, f->fp)) != NULL)
		f->line++;
	return line;
}

/* A path in the file is relative to the file, as in a kubeconfig, so a
 * config directory can be moved as a whole. */
static char *
settings_path(const struct settings_file *f, int i, const char *value)
{
	char *out;

	if (i == S_SERVER || value[0] == '/' || f->dir == NULL)
		return strdup(value);
	if (asprintf(&out, "%s/%s", f->dir, value) == -1)
		return NULL;
	return out;
}

static int
settings_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct settings_file *f = user;
	int i;

	if (f->bad_line != 0)
		return 1;	/* report only the first problem */
	if (strcmp(section, "client") != 0) {
		snprintf(f->why, sizeof(f->why), "unknown section [%s]",
		    section);
		goto bad;
	}
	for (i = 0; i < S_COUNT; i++)
		if (strcmp(name, settings_names[i].key) == 0)
			break;
	if (i == S_COUNT) {
		snprintf(f->why, sizeof(f->why), "unknown key '%s'", name);
		goto bad;
	}
	if (f->seen & (1u << i)) {
		snprintf(f->why, sizeof(f->why), "'%s' given twice", name);
		goto bad;
	}
	f->seen |= 1u << i;
	if (value[0] == '\0') {
		snprintf(f->why, sizeof(f->why), "empty value for '%s'", name);
		goto bad;
	}
	free(f->slots[i]);
	if ((f->slots[i] = settings_path(f, i, value)) == NULL) {
		snprintf(f->why, sizeof(f->why), "out of memory");
		goto bad;
	}
	return 1;
bad:
	f->bad_line = f->line;
	return 0;
}

/* The default file: $XDG_CONFIG_HOME/cohort/client.conf, else
 * ~/.config/cohort/client.conf. NULL when neither can be named. */
static char *
settings_default_path(void)
{
	const char *base = getenv("XDG_CONFIG_HOME"), *home;
	char *path;

	if (base != NULL && base[0] == '/') {
		if (asprintf(&path, "%s/cohort/client.conf", base) == -1)
			return NULL;
		return path;
	}
	if ((home = getenv("HOME")) == NULL || home[0] == '\0')
		return NULL;
	if (asprintf(&path, "%s/.config/cohort/client.conf", home) == -1)
		return NULL;
	return path;
}

/* Read path into the slots that are still empty. A missing file is fine
 * (a user may set everything through flags or the environment). */
static int
settings_read(const char *path, struct settings *s, struct cerr *err)
{
	struct settings_file f;
	char *values[S_COUNT] = { NULL }, *slash;
	int i, rc;

	memset(&f, 0, sizeof(f));
	if ((f.fp = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		return cerr_set(err, ERR_INVALID, "%s: %s", path,
		    strerror(errno));
	}
	f.path = path;
	f.slots = values;
	if ((slash = strrchr(path, '/')) != NULL &&
	    (f.dir = strndup(path, slash == path ? 1 : slash - path)) == NULL) {
		fclose(f.fp);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	rc = ini_parse_stream(settings_reader, &f, settings_handler, &f);
	fclose(f.fp);
	free(f.dir);
	if (rc != 0) {
		if (rc == f.bad_line)
			cerr_set(err, ERR_INVALID, "%s:%d: %s", path, rc, f.why);
		else if (rc > 0)
			cerr_set(err, ERR_INVALID, "%s:%d: syntax error "
			    "(expected [client] or key = value)", path, rc);
		else
			cerr_set(err, ERR_INVALID, "%s: cannot parse", path);
		for (i = 0; i < S_COUNT; i++)
			free(values[i]);
		return -1;
	}
	for (i = 0; i < S_COUNT; i++) {
		if (*settings_slot(s, i) == NULL)
			*settings_slot(s, i) = values[i];
		else
			free(values[i]);
	}
	return 0;
}

/* The file's name as a person would type it in a hint. */
static const char *
settings_hint_path(const char *path, char *buf, size_t len)
{
	const char *home = getenv("HOME");
	size_t n;

	if (home != NULL && (n = strlen(home)) > 1 &&
	    strncmp(path, home, n) == 0 && path[n] == '/') {
		snprintf(buf, len, "~%s", path + n);
		return buf;
	}
	return path;
}

int
settings_resolve(struct settings *s, const char *server, const char *cert,
    const char *key, const char *ca, const char *path, struct cerr *err)
{
	const char *flags[S_COUNT] = { server, cert, key, ca }, *env;
	char *defpath = NULL, hint[512];
	int i, missing = 0, rc = -1;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < S_COUNT; i++) {
		const char *v = flags[i];

		if (v == NULL || v[0] == '\0')
			v = (env = getenv(settings_names[i].env)) != NULL &&
			    env[0] != '\0' ? env : NULL;
		if (v == NULL)
			missing++;
		else if ((*settings_slot(s, i) = strdup(v)) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
	}
	if (missing == 0)
		return 0;	/* the file is not needed: don't read it */

	if (path == NULL)
		path = defpath = settings_default_path();
	if (path == NULL)
		path = "~/.config/cohort/client.conf";	/* only for the hint */
	else if (settings_read(path, s, err) == -1)
		goto out;
	for (i = 0; i < S_COUNT; i++) {
		if (*settings_slot(s, i) != NULL)
			continue;
		cerr_set(err, ERR_INVALID, "%s: use %s, %s or %s= in %s",
		    settings_names[i].what, settings_names[i].flag,
		    settings_names[i].env, settings_names[i].key,
		    settings_hint_path(path, hint, sizeof(hint)));
		goto out;
	}
	rc = 0;
out:
	/* On failure s keeps what was found, for a caller that resolves
	 * again later with more flags; settings_clear frees it. */
	free(defpath);
	return rc;
}

void
settings_clear(struct settings *s)
{
	if (s == NULL)
		return;
	free(s->server);
	free(s->cert);
	free(s->key);
	free(s->ca);
	memset(s, 0, sizeof(*s));
}
