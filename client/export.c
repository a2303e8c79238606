/* --export (see export.h): the submitter's environment, filtered, merged
 * with --env. Pure: the caller passes the environment, so the unit test
 * decides what there is. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/export.h"
#include "lib/job.h"
#include "lib/text.h"

/* lib/job.c's bound on a variable name; the controller refuses longer. */
#define EXPORT_KEY_MAX 255

/* Names that never travel with ALL. Each names something of the
 * submitter's own session, or a value that the node decides:
 *
 * - DISPLAY, WAYLAND_DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS,
 *   XDG_RUNTIME_DIR, TMUX, TMUX_PANE (and SSH_* and XDG_SESSION_*
 *   below): sockets and cookies of the login session, which do not exist
 *   on a node, or worse, belong to someone else's session there.
 * - KRB5CCNAME: a ticket cache on the submitting host; on a node it
 *   names a file that is not there (or is another session's), and a
 *   Kerberos client told to use a missing cache fails instead of
 *   falling back to the node's default one.
 * - PWD, OLDPWD, SHLVL, _ and HOSTNAME: the shell's state on the
 *   submitting host; the job's shell sets its own (the working
 *   directory is --workdir).
 * - HOME, USER, LOGNAME, SHELL: the agent sets them from the account the
 *   tasks run as on the node, which need not match the submitter's local
 *   account (a laptop's /Users/alice). Slurm sends them, assuming one
 *   password database for the whole cluster; Cohort does not assume it.
 * - What the agent sets for every task (daemon/agent/env.c): the
 *   torchrun names and the GPU choice. The agent's values win anyway;
 *   leaving them out keeps a stale RANK or CUDA_VISIBLE_DEVICES of the
 *   submitting shell out of `cohort show` and away from anything that
 *   reads the stored spec.
 *
 * TERM travels, as with sbatch: it is harmless text, programs that see
 * no terminal ignore it, and an interactive run on a pty wants it. */
static const char *const export_never[] = {
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
	"XDG_RUNTIME_DIR", "TMUX", "TMUX_PANE", "KRB5CCNAME",
	"PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME",
	"HOME", "USER", "LOGNAME", "SHELL",
	"MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "WORLD_SIZE",
	"RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "CUDA_DEVICE_ORDER",
	"CUDA_VISIBLE_DEVICES",
};

/* Prefixes that never travel with ALL: COHORT_* are Cohort's (the agent
 * sets them; the controller refuses them in a spec), SSH_* the login
 * session's agent and connection, XDG_SESSION_* the session manager's,
 * SLURM_* and SLURMD_* an enclosing Slurm allocation's, which would make
 * Slurm-aware programs in the job (PyTorch Lightning, MPI) think they run
 * inside it. */
static const char *const export_never_prefix[] = {
	"COHORT_", "SSH_", "XDG_SESSION_", "SLURM_", "SLURMD_",
};

#define NITEMS(a) (sizeof(a) / sizeof((a)[0]))

static size_t
keylen(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq == NULL ? 0 : (size_t)(eq - kv);
}

/* A name the controller accepts (lib/job.c check_env): letters, digits
 * and '_', not starting with a digit, at most EXPORT_KEY_MAX. */
static bool
name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > EXPORT_KEY_MAX)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '_' || (c >= 'A' && c <= 'Z') ||
		    (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9'))
			continue;
		return false;
	}
	return true;
}

static bool
travels(const char *kv, size_t klen)
{
	size_t i, n;

	for (i = 0; i < NITEMS(export_never); i++)
		if (strlen(export_never[i]) == klen &&
		    memcmp(export_never[i], kv, klen) == 0)
			return false;
	for (i = 0; i < NITEMS(export_never_prefix); i++) {
		n = strlen(export_never_prefix[i]);
		if (klen >= n && memcmp(export_never_prefix[i], kv, n) == 0)
			return false;
	}
	return true;
}

/* The environment being built: each name once, a later entry replacing
 * an earlier one in place, so that the order says who wins. */
struct expv {
	char **v;
	size_t n;
	size_t bytes;	/* sum of strlen + 1, as lib/job.c counts */
};

static int
expv_put(struct expv *e, const char *kv)
{
	size_t i, klen = keylen(kv);
	char *copy, **nv;

	if ((copy = strdup(kv)) == NULL)
		return -1;
	for (i = 0; i < e->n; i++) {
		if (keylen(e->v[i]) == klen &&
		    memcmp(e->v[i], kv, klen) == 0) {
			e->bytes -= strlen(e->v[i]) + 1;
			free(e->v[i]);
			e->v[i] = copy;
			e->bytes += strlen(copy) + 1;
			return 0;
		}
	}
	if ((nv = reallocarray(e->v, e->n + 2, sizeof(*nv))) == NULL) {
		free(copy);
		return -1;
	}
	nv[e->n++] = copy;
	nv[e->n] = NULL;
	e->v = nv;
	e->bytes += strlen(copy) + 1;
	return 0;
}

static void
note_skip(struct export_note *note, const char *kv, size_t klen)
{
	size_t used;

	if (note == NULL)
		return;
	used = strlen(note->names);
	if (note->nskipped++ < 8 && used + klen + 2 < sizeof(note->names))
		snprintf(note->names + used, sizeof(note->names) - used,
		    "%s%.*s", used > 0 ? "," : "", (int)klen, kv);
}

/* The entry of envp named name[0..len), or NULL. */
static const char *
env_find(char *const *envp, const char *name, size_t len)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		if (keylen(envp[i]) == len &&
		    memcmp(envp[i], name, len) == 0)
			return envp[i];
	return NULL;
}

/* The filtered environment, sized before anything is copied: a huge
 * environment is refused with its size rather than copied first. */
static int
export_all(struct expv *e, char *const *envp, struct export_note *note,
    struct cerr *err)
{
	size_t i, klen, n = 0, bytes = 0;
	const char *kv;

	for (i = 0; envp != NULL && (kv = envp[i]) != NULL; i++) {
		klen = keylen(kv);
		/* A name the controller would refuse is left out rather
		 * than refusing the whole job: bash exports a function as
		 * BASH_FUNC_name%%=() {...}, module systems (Lmod) do so
		 * for every login, and the task's shell need not be bash.
		 * Nothing a person set as a variable is lost this way. */
		if (!name_ok(kv, klen) || !travels(kv, klen))
			continue;
		if (!text_utf8_valid(kv)) {
			/* The environment travels as text; the controller
			 * refuses a spec with invalid UTF-8 in it. Said. */
			note_skip(note, kv, klen);
			continue;
		}
		n++;
		bytes += strlen(kv) + 1;
	}
	if (n > JOB_ENV_LIMIT || bytes > JOB_ENV_BYTES_LIMIT)
		return cerr_set(err, ERR_INVALID, "--export ALL: your "
		    "environment has %zu variables to export (%zu bytes); a "
		    "job takes at most %d variables and %d bytes: use "
		    "--export NONE (with --env) or --export VAR,... to "
		    "choose", n, bytes, JOB_ENV_LIMIT, JOB_ENV_BYTES_LIMIT);
	for (i = 0; envp != NULL && (kv = envp[i]) != NULL; i++) {
		klen = keylen(kv);
		if (name_ok(kv, klen) && travels(kv, klen) &&
		    text_utf8_valid(kv) && expv_put(e, kv) == -1)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* One item of a list: ALL, VAR or VAR=value. ALL and NONE are read
 * without regard to case, as sbatch reads them. */
static int
export_item(struct expv *e, const char *item, size_t len, char *const *envp,
    bool *all, struct cerr *err)
{
	const char *eq = memchr(item, '=', len), *kv;
	size_t klen = eq != NULL ? (size_t)(eq - item) : len;
	char *copy;
	int rc;

	if (len == 0)
		return cerr_set(err, ERR_INVALID,
		    "--export: an empty item (expected ALL, NONE or "
		    "VAR[,VAR=value...])");
	if (eq == NULL && len == 3 && strncasecmp(item, "ALL", 3) == 0) {
		*all = true;
		return 0;
	}
	if (eq == NULL && len == 4 && strncasecmp(item, "NONE", 4) == 0)
		return cerr_set(err, ERR_INVALID,
		    "--export: NONE stands alone (to add variables, use "
		    "--export VAR,... or --env)");
	if (!name_ok(item, klen))
		return cerr_set(err, ERR_INVALID,
		    "--export: '%.*s' is not a variable name (letters, "
		    "digits and '_', not starting with a digit)",
		    (int)(klen < 64 ? klen : 64), item);
	if (klen >= 7 && memcmp(item, "COHORT_", 7) == 0)
		return cerr_set(err, ERR_INVALID,
		    "--export %.*s: COHORT_* variables are set by Cohort",
		    (int)(klen < 64 ? klen : 64), item);
	if (eq != NULL) {
		if (text_utf8_prefix((const uint8_t *)eq + 1,
		    len - klen - 1) != len - klen - 1)
			return cerr_set(err, ERR_INVALID,
			    "--export %.*s: its value is not valid UTF-8",
			    (int)(klen < 64 ? klen : 64), item);
		if ((copy = strndup(item, len)) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		rc = expv_put(e, copy);
		free(copy);
	} else if ((kv = env_find(envp, item, klen)) == NULL)
		return 0;	/* not set here: nothing to send, as sbatch */
	else if (!text_utf8_valid(kv))
		return cerr_set(err, ERR_INVALID,
		    "--export %.*s: its value is not valid UTF-8",
		    (int)(klen < 64 ? klen : 64), item);
	else
		rc = expv_put(e, kv);	/* named: it travels, even DISPLAY */
	return rc == -1 ? cerr_set(err, ERR_INTERNAL, "out of memory") : 0;
}

/* "ALL,VAR=value": the explicit items win over the environment, so ALL
 * is applied first wherever it stands in the list. */
static int
export_list(struct expv *e, const char *mode, char *const *envp,
    struct export_note *note, struct cerr *err)
{
	struct expv named = { NULL, 0, 0 };
	const char *p = mode, *comma;
	bool all = false;
	size_t i;
	int rc = -1;

	for (;;) {
		comma = strchrnul(p, ',');
		if (export_item(&named, p, (size_t)(comma - p), envp, &all,
		    err) == -1)
			goto out;
		if (*comma == '\0')
			break;
		p = comma + 1;
	}
	if (all && export_all(e, envp, note, err) == -1)
		goto out;
	for (i = 0; i < named.n; i++)
		if (expv_put(e, named.v[i]) == -1) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
	rc = 0;
out:
	strv_free(named.v, named.n);
	return rc;
}

int
export_build(const char *mode, char *const *envp, char *const *extra,
    size_t nextra, char ***env, size_t *nenv, struct export_note *note,
    struct cerr *err)
{
	struct expv e = { NULL, 0, 0 };
	size_t i;
	int rc;

	*env = NULL;
	*nenv = 0;
	if (note != NULL)
		memset(note, 0, sizeof(*note));
	if (mode == NULL || strcasecmp(mode, "ALL") == 0)
		rc = export_all(&e, envp, note, err);
	else if (strcasecmp(mode, "NONE") == 0)
		rc = 0;
	else
		rc = export_list(&e, mode, envp, note, err);
	if (rc == -1)
		goto fail;
	for (i = 0; i < nextra; i++)
		if (expv_put(&e, extra[i]) == -1) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto fail;
		}
	if (e.n > JOB_ENV_LIMIT || e.bytes > JOB_ENV_BYTES_LIMIT) {
		cerr_set(err, ERR_INVALID, "--export/--env: the job's "
		    "environment has %zu variables (%zu bytes); a job takes "
		    "at most %d variables and %d bytes%s", e.n, e.bytes,
		    JOB_ENV_LIMIT, JOB_ENV_BYTES_LIMIT,
		    mode == NULL || strcasestr(mode, "ALL") != NULL ?
		    ": use --export NONE (with --env) or --export VAR,... to "
		    "choose" : "");
		goto fail;
	}
	if (e.v == NULL && (e.v = calloc(1, sizeof(*e.v))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	*env = e.v;
	*nenv = e.n;
	return 0;
fail:
	strv_free(e.v, e.n);
	return -1;
}
