/* #SBATCH options as Cohort options (see script_sbatch.h). The values
 * are checked by the submit command's own parser, which the caller runs
 * on the result: only what differs in form between the two is handled
 * here (a node range, a list of partitions, a node file). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script_sbatch.h"

enum sb_kind {
	SB_ARG,		/* takes a value */
	SB_FLAG,	/* takes none */
};

struct sb_opt {
	const char *lng;	/* Slurm's long name */
	char shrt;		/* its short letter, or 0 */
	enum sb_kind kind;
	const char *cohort;	/* Cohort's option; NULL: refused */
	const char *why;	/* why it is refused */
};

/* Refused options have kind SB_ARG when Slurm's takes a value, so that
 * "--mem 4G" is refused for --mem rather than for its "4G". */
static const struct sb_opt sb_opts[] = {
	{ "nodes", 'N', SB_ARG, "nodes", NULL },
	{ "ntasks-per-node", 0, SB_ARG, "ntasks-per-node", NULL },
	{ "gpus-per-node", 0, SB_ARG, "gpus-per-node", NULL },
	{ "gres", 0, SB_ARG, "gres", NULL },
	{ "time", 't', SB_ARG, "time", NULL },
	{ "job-name", 'J', SB_ARG, "name", NULL },
	{ "output", 'o', SB_ARG, "output", NULL },
	{ "error", 'e', SB_ARG, "error", NULL },
	{ "array", 'a', SB_ARG, "array", NULL },
	{ "dependency", 'd', SB_ARG, "dependency", NULL },
	{ "signal", 0, SB_ARG, "signal", NULL },
	{ "export", 0, SB_ARG, "export", NULL },
	{ "requeue", 0, SB_FLAG, "requeue", NULL },
	{ "no-requeue", 0, SB_FLAG, "no-requeue", NULL },
	{ "nodelist", 'w', SB_ARG, "nodelist", NULL },
	{ "exclude", 'x', SB_ARG, "exclude", NULL },
	{ "constraint", 'C', SB_ARG, "constraint", NULL },
	{ "segment", 0, SB_ARG, "segment", NULL },
	{ "exclusive", 0, SB_FLAG, "exclusive", NULL },
	{ "chdir", 'D', SB_ARG, "chdir", NULL },
	{ "hold", 'H', SB_FLAG, "hold", NULL },
	{ "partition", 'p', SB_ARG, "queue", NULL },

	{ "mem", 0, SB_ARG, "mem-per-node", NULL },
	{ "cpus-per-task", 'c', SB_ARG, "cpus-per-task", NULL },
	{ "mem-per-cpu", 0, SB_ARG, NULL,
	    "Cohort limits memory per node: use --mem" },
	{ "mem-per-gpu", 0, SB_ARG, NULL,
	    "Cohort limits memory per node: use --mem" },
	{ "cpus-per-gpu", 0, SB_ARG, NULL,
	    "Cohort binds cores per task: use --cpus-per-task" },
	{ "ntasks", 'n', SB_ARG, NULL,
	    "give -N and --ntasks-per-node: tasks are placed per node" },
	{ "ntasks-per-gpu", 0, SB_ARG, NULL,
	    "give --gpus-per-node and --ntasks-per-node" },
	{ "gpus", 'G', SB_ARG, NULL,
	    "a total of GPUs: give -N and --gpus-per-node" },
	{ "gpus-per-task", 0, SB_ARG, NULL,
	    "give --gpus-per-node and --ntasks-per-node" },
	{ "account", 'A', SB_ARG, NULL,
	    "Cohort has no accounts: usage is kept per user and queue" },
	{ "qos", 'q', SB_ARG, NULL,
	    "Cohort has queues, not QOS: use -p/--partition for the queue" },
	{ "nice", 0, SB_ARG, NULL,
	    "Slurm's nice adjusts a different priority scale: use #COHORT "
	    "--priority (below 100)" },
	{ "mail-type", 0, SB_ARG, NULL,
	    "Cohort sends no mail: cohort wait tells when a job ends" },
	{ "mail-user", 0, SB_ARG, NULL,
	    "Cohort sends no mail: cohort wait tells when a job ends" },
	{ "begin", 'b', SB_ARG, NULL,
	    "no deferred start: use --hold and cohort release, or "
	    "--dependency" },
	{ "input", 'i', SB_ARG, NULL, "a job reads no standard input" },
	{ "reservation", 0, SB_ARG, NULL, "Cohort has no reservations" },
	{ "licenses", 'L', SB_ARG, NULL, "Cohort has no licenses" },
};

#define SB_NOPTS (sizeof(sb_opts) / sizeof(sb_opts[0]))

void
script_sbatch_free(struct script_sbatch_opt *opts, size_t n)
{
	size_t i;

	if (opts == NULL)
		return;
	for (i = 0; i < n; i++)
		free(opts[i].value);
	free(opts);
}

static const struct sb_opt *
sb_find_long(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < SB_NOPTS; i++)
		if (strlen(sb_opts[i].lng) == len &&
		    memcmp(sb_opts[i].lng, name, len) == 0)
			return &sb_opts[i];
	return NULL;
}

static const struct sb_opt *
sb_find_short(char c)
{
	size_t i;

	for (i = 0; i < SB_NOPTS; i++)
		if (sb_opts[i].shrt == c)
			return &sb_opts[i];
	return NULL;
}

/* What differs in form: Slurm's node range MIN-MAX is Cohort's MIN:MAX;
 * several partitions, a file of node names and --exclusive=user|mcs
 * have no Cohort meaning. 0, or -1 with err. */
static int
sb_convert(const struct sb_opt *o, const char *orig, char **value,
    struct cerr *err)
{
	char *dash;

	if (*value == NULL)
		return 0;
	if (strcmp(o->lng, "nodes") == 0 &&
	    (dash = strchr(*value, '-')) != NULL && dash != *value)
		*dash = ':';
	else if (strcmp(o->lng, "partition") == 0 &&
	    strchr(*value, ',') != NULL)
		return cerr_set(err, ERR_INVALID, "#SBATCH %s: not supported "
		    "by Cohort (a job goes to one queue: name one)", orig);
	else if ((strcmp(o->lng, "nodelist") == 0 ||
	    strcmp(o->lng, "exclude") == 0) && strchr(*value, '/') != NULL)
		return cerr_set(err, ERR_INVALID, "#SBATCH %s: not supported "
		    "by Cohort (a file of node names: write the hostlist "
		    "itself)", orig);
	return 0;
}

/* Read one option at words[*i]; advance *i past it and its value. */
static int
sb_one(char *const *words, size_t nwords, size_t *i,
    struct script_sbatch_opt *out, struct cerr *err)
{
	const char *w = words[*i], *eq = NULL, *attached = NULL;
	const struct sb_opt *o;
	char orig[40];
	size_t len;

	if (w[0] != '-' || w[1] == '\0')
		return cerr_set(err, ERR_INVALID, "#SBATCH: unexpected "
		    "argument '%.64s' (an #SBATCH line holds options only)",
		    w);
	if (w[1] == '-') {
		eq = strchr(w + 2, '=');
		len = eq != NULL ? (size_t)(eq - w - 2) : strlen(w + 2);
		snprintf(orig, sizeof(orig), "--%.*s",
		    (int)(len < 32 ? len : 32), w + 2);
		o = sb_find_long(w + 2, len);
	} else {
		snprintf(orig, sizeof(orig), "-%c", w[1]);
		o = sb_find_short(w[1]);
		if (w[2] != '\0')
			attached = w + 2;
	}
	if (o == NULL)
		return cerr_set(err, ERR_INVALID, "#SBATCH %s: not supported "
		    "by Cohort (see cohort submit --help for the #SBATCH "
		    "options that map)", orig);
	if (o->cohort == NULL)
		return cerr_set(err, ERR_INVALID,
		    "#SBATCH %s: not supported by Cohort (%s)", orig, o->why);
	(*i)++;
	out->name = o->cohort;
	out->value = NULL;
	snprintf(out->orig, sizeof(out->orig), "%s", orig);
	if (o->kind == SB_FLAG) {
		if (eq != NULL || attached != NULL)
			return cerr_set(err, ERR_INVALID, "#SBATCH %s: not "
			    "supported by Cohort with a value (only %s "
			    "alone)", orig, orig);
		return 0;
	}
	if (eq != NULL)
		out->value = strdup(eq + 1);
	else if (attached != NULL)
		out->value = strdup(attached);
	else if (*i < nwords)
		out->value = strdup(words[(*i)++]);
	else
		return cerr_set(err, ERR_INVALID,
		    "#SBATCH %s: missing argument", orig);
	if (out->value == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return sb_convert(o, orig, &out->value, err);
}

int
script_sbatch_parse(char *const *words, size_t nwords,
    struct script_sbatch_opt **opts, size_t *n, struct cerr *err)
{
	struct script_sbatch_opt *v = NULL;
	size_t i = 0, k = 0;

	*opts = NULL;
	*n = 0;
	/* At most one option per word. */
	if (nwords > 0 && (v = calloc(nwords, sizeof(*v))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	while (i < nwords) {
		if (sb_one(words, nwords, &i, &v[k], err) == -1) {
			script_sbatch_free(v, k + 1);
			return -1;
		}
		k++;
	}
	*opts = v;
	*n = k;
	return 0;
}
