/* sbatch's options as Cohort options (see script_sbatch.h). The values
 * are checked by the submit command's own parser, which the caller runs
 * on the result: only what differs in form between the two is handled
 * here (a node range, a list of partitions, a node file). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script_sbatch.h"

enum sb_arg {
	SB_NONE,	/* takes no value */
	SB_REQ,		/* takes one */
	SB_OPT,		/* takes one only as --opt=value */
};

struct sb_opt {
	const char *lng;	/* sbatch's long name */
	char shrt;		/* its short letter, or 0 */
	enum sb_arg arg;
	enum script_sbatch_kind kind;
	const char *cohort;	/* MAP: Cohort's option; SELF: sbatch's */
	const char *why;	/* WARN, REFUSE: the reason */
};

#define MAP(l, s, a, c)		{ l, s, a, SBATCH_MAP, c, NULL }
#define SELF(l, s, a)		{ l, s, a, SBATCH_SELF, l, NULL }
#define WARN(l, s, a, w)	{ l, s, a, SBATCH_WARN, NULL, w }
#define NO(l, s, a, w)		{ l, s, a, SBATCH_REFUSE, NULL, w }

static const char no_cpu_layout[] = "Cohort places tasks by GPUs and "
    "NUMA nodes: use --cpus-per-task";
static const char no_acct[] = "Cohort has no accounting by account or key: "
    "usage is kept per user and queue";
static const char no_cluster[] = "Cohort has one cluster";
static const char no_gpu_bind[] = "Cohort binds each task to its GPUs "
    "itself";
static const char no_bb[] = "Cohort has no burst buffers";
static const char no_oci[] = "OCI bundles are not run by Cohort";

/* Every option sbatch takes, by long name. Cohort's meanings of -n, -G,
 * --gpus-per-task and the other totals and per-GPU amounts are Slurm's:
 * the submit command maps them onto the per-node spec where they are
 * exactly expressible and refuses them with the numbers where not. */
static const struct sb_opt sb_opts[] = {
	MAP("account", 'A', SB_REQ, "account"),
	WARN("acctg-freq", 0, SB_REQ, "Cohort samples no per-task "
	    "accounting data"),
	MAP("array", 'a', SB_REQ, "array"),
	NO("autocomplete", 0, SB_REQ, "no completion"),
	NO("batch", 0, SB_REQ, "Cohort has no batch host features"),
	NO("bb", 0, SB_REQ, no_bb),
	NO("bbf", 0, SB_REQ, no_bb),
	MAP("begin", 'b', SB_REQ, "begin"),
	MAP("chdir", 'D', SB_REQ, "chdir"),
	NO("cluster", 0, SB_REQ, no_cluster),
	NO("cluster-constraint", 0, SB_REQ, no_cluster),
	NO("clusters", 'M', SB_REQ, no_cluster),
	WARN("comment", 0, SB_REQ, "Cohort keeps no comment with a job"),
	NO("consolidate-segments", 0, SB_NONE, "use --segment"),
	MAP("constraint", 'C', SB_REQ, "constraint"),
	NO("container", 0, SB_REQ, no_oci),
	NO("container-id", 0, SB_REQ, no_oci),
	/* Pyxis's: the batch script and, unless a step says otherwise, its
	 * steps run in the image. */
	MAP("container-env", 0, SB_REQ, "container-env"),
	MAP("container-image", 0, SB_REQ, "container-image"),
	MAP("container-mount-home", 0, SB_NONE, "container-mount-home"),
	MAP("container-mounts", 0, SB_REQ, "container-mounts"),
	MAP("container-name", 0, SB_REQ, "container-name"),
	MAP("container-readonly", 0, SB_NONE, "container-readonly"),
	MAP("container-save", 0, SB_REQ, "container-save"),
	MAP("container-workdir", 0, SB_REQ, "container-workdir"),
	MAP("container-writable", 0, SB_NONE, "container-writable"),
	NO("context", 0, SB_REQ, "Cohort sets no SELinux context"),
	NO("contiguous", 0, SB_NONE, "use --topology to keep nodes close"),
	NO("core-spec", 'S', SB_REQ, no_cpu_layout),
	NO("cores-per-socket", 0, SB_REQ, no_cpu_layout),
	NO("cpu-freq", 0, SB_REQ, "Cohort sets no CPU frequency"),
	MAP("cpus-per-gpu", 0, SB_REQ, "cpus-per-gpu"),
	MAP("cpus-per-task", 'c', SB_REQ, "cpus-per-task"),
	NO("deadline", 0, SB_REQ, "Cohort has no deadlines: use --time"),
	WARN("delay-boot", 0, SB_REQ, "Cohort reboots no nodes"),
	MAP("dependency", 'd', SB_REQ, "dependency"),
	NO("distribution", 'm', SB_REQ, "ranks go to nodes in blocks, in "
	    "node order"),
	MAP("error", 'e', SB_REQ, "error"),
	MAP("exclude", 'x', SB_REQ, "exclude"),
	MAP("exclusive", 0, SB_OPT, "exclusive"),
	MAP("export", 0, SB_REQ, "export"),
	NO("export-file", 0, SB_REQ, "use --export"),
	NO("external", 0, SB_NONE, "Cohort runs every job itself"),
	NO("extra", 0, SB_REQ, "Cohort has no extra node data: use "
	    "--constraint"),
	NO("extra-node-info", 'B', SB_REQ, no_cpu_layout),
	NO("get-user-env", 0, SB_NONE, "use --export"),
	NO("gid", 0, SB_REQ, "a job runs as its user's own group"),
	NO("gpu-bind", 0, SB_REQ, no_gpu_bind),
	NO("gpu-freq", 0, SB_REQ, "Cohort sets no GPU frequency"),
	MAP("gpus", 'G', SB_REQ, "gpus"),
	MAP("gpus-per-node", 0, SB_REQ, "gpus-per-node"),
	NO("gpus-per-socket", 0, SB_REQ, "Cohort picks the GPUs best "
	    "connected: use --gpus-per-node"),
	MAP("gpus-per-task", 0, SB_REQ, "gpus-per-task"),
	MAP("gres", 0, SB_REQ, "gres"),
	NO("gres-flags", 0, SB_REQ, no_gpu_bind),
	SELF("help", 'h', SB_NONE),
	WARN("hint", 0, SB_REQ, "Cohort binds cores by --cpus-per-task next "
	    "to the GPUs, not by hints"),
	MAP("hold", 'H', SB_NONE, "hold"),
	WARN("ignore-pbs", 0, SB_NONE, "Cohort reads no #PBS lines"),
	NO("input", 'i', SB_REQ, "a job reads no standard input"),
	MAP("job-name", 'J', SB_REQ, "name"),
	NO("kill-on-invalid-dep", 0, SB_REQ, "Cohort decides what becomes "
	    "of a job whose dependency cannot be met"),
	NO("licenses", 'L', SB_REQ, "Cohort has no licenses"),
	MAP("mail-type", 0, SB_REQ, "mail-type"),
	MAP("mail-user", 0, SB_REQ, "mail-user"),
	NO("mcs-label", 0, SB_REQ, "Cohort has no MCS labels"),
	MAP("mem", 0, SB_REQ, "mem-per-node"),
	NO("mem-bind", 0, SB_REQ, "Cohort binds memory with the cores, "
	    "next to the GPUs"),
	NO("mem-per-cpu", 0, SB_REQ, "Cohort limits memory per node: use "
	    "--mem or --mem-per-gpu"),
	MAP("mem-per-gpu", 0, SB_REQ, "mem-per-gpu"),
	NO("mem-update", 0, SB_REQ, "Cohort does not change a running job's "
	    "memory limit"),
	NO("mincpus", 0, SB_REQ, no_cpu_layout),
	NO("network", 0, SB_REQ, "Cohort sets up no network for a job"),
	NO("nice", 0, SB_OPT, "Slurm's nice adjusts a different priority "
	    "scale: use #COHORT --priority (below 100)"),
	MAP("no-container-mount-home", 0, SB_NONE, "no-container-mount-home"),
	NO("no-kill", 'k', SB_OPT, "Cohort stops the whole gang when a node "
	    "fails, and restarts it when it may"),
	MAP("no-requeue", 0, SB_NONE, "no-requeue"),
	SELF("no-shell", 0, SB_NONE),	/* salloc's; sbatch refuses it */
	NO("nodefile", 'F', SB_REQ, "a file of node names: give -w the "
	    "hostlist itself"),
	MAP("nodelist", 'w', SB_REQ, "nodelist"),
	MAP("nodes", 'N', SB_REQ, "nodes"),
	MAP("ntasks", 'n', SB_REQ, "ntasks"),
	NO("ntasks-per-core", 0, SB_REQ, no_cpu_layout),
	MAP("ntasks-per-gpu", 0, SB_REQ, "ntasks-per-gpu"),
	MAP("ntasks-per-node", 0, SB_REQ, "ntasks-per-node"),
	NO("ntasks-per-socket", 0, SB_REQ, no_cpu_layout),
	NO("ntasks-per-tres", 0, SB_REQ, "use --ntasks-per-gpu"),
	NO("oom-kill-step", 0, SB_OPT, "Cohort ends the job when a task is "
	    "killed for memory"),
	NO("open-mode", 0, SB_REQ, "Cohort's output files are appended to "
	    "by every task"),
	MAP("output", 'o', SB_REQ, "output"),
	NO("overcommit", 'O', SB_NONE, "a task gets its cores and GPUs"),
	NO("oversubscribe", 's', SB_NONE, "Cohort shares no GPU between "
	    "jobs"),
	SELF("parsable", 0, SB_NONE),
	MAP("partition", 'p', SB_REQ, "queue"),
	NO("prefer", 0, SB_REQ, "use --constraint"),
	NO("priority", 0, SB_REQ, "Slurm's priority is another scale: use "
	    "#COHORT --priority"),
	WARN("profile", 0, SB_REQ, "Cohort collects no profiles"),
	NO("propagate", 0, SB_OPT, "a task gets the node's limits, not the "
	    "submitter's"),
	MAP("qos", 'q', SB_REQ, "qos"),
	SELF("quiet", 'Q', SB_NONE),
	NO("reboot", 0, SB_NONE, "Cohort reboots no nodes"),
	MAP("requeue", 0, SB_OPT, "requeue"),
	NO("reservation", 0, SB_REQ, "Cohort has no reservations"),
	NO("resources", 0, SB_REQ, "Cohort has no such resources"),
	NO("resv-ports", 0, SB_OPT, "Cohort reserves no ports: MASTER_PORT "
	    "is the job's"),
	NO("runtime", 0, SB_REQ, "Cohort runs no container runtime by this "
	    "option"),
	MAP("segment", 0, SB_REQ, "segment"),
	MAP("signal", 0, SB_REQ, "signal"),
	NO("sockets-per-node", 0, SB_REQ, no_cpu_layout),
	NO("spread-job", 0, SB_NONE, "Cohort packs a job's nodes under the "
	    "fewest switches"),
	NO("spread-segments", 0, SB_NONE, "use --segment"),
	NO("stepmgr", 0, SB_NONE, "Cohort has no step manager"),
	NO("switches", 0, SB_REQ, "use #COHORT --topology leaf"),
	MAP("tasks-per-node", 0, SB_REQ, "ntasks-per-node"),
	NO("test-only", 0, SB_NONE, "Cohort gives no start estimate without "
	    "a job: submit with --hold and see cohort jobs --start"),
	NO("thread-spec", 0, SB_REQ, no_cpu_layout),
	NO("threads-per-core", 0, SB_REQ, no_cpu_layout),
	MAP("time", 't', SB_REQ, "time"),
	NO("time-min", 0, SB_REQ, "a job's time limit is fixed: use --time"),
	NO("tmp", 0, SB_REQ, "Cohort does not count local disk"),
	NO("tres-bind", 0, SB_REQ, no_gpu_bind),
	NO("tres-per-task", 0, SB_REQ, "use --gpus-per-task and "
	    "--cpus-per-task"),
	NO("uid", 0, SB_REQ, "a job runs as the user who submits it"),
	SELF("usage", 0, SB_NONE),
	NO("use-min-nodes", 0, SB_NONE, "a node range starts at its largest "
	    "size that fits"),
	SELF("verbose", 'v', SB_NONE),
	SELF("version", 'V', SB_NONE),
	SELF("wait", 'W', SB_NONE),
	NO("wait-all-nodes", 0, SB_REQ, "Cohort starts a gang when it is "
	    "placed"),
	NO("wckey", 0, SB_REQ, no_acct),
	SELF("wrap", 0, SB_REQ),
};

#define SB_NOPTS (sizeof(sb_opts) / sizeof(sb_opts[0]))

void
script_sbatch_free(struct script_sbatch_opt *opts, size_t n)
{
	size_t i;

	if (opts == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(opts[i].value);
		free(opts[i].text);
	}
	free(opts);
}

/* The option name[0..len) names: itself, else the one option it is a
 * prefix of, as getopt_long reads sbatch's. NULL with *ambiguous set
 * when it is a prefix of several. */
static const struct sb_opt *
sb_find_long(const char *name, size_t len, bool *ambiguous)
{
	const struct sb_opt *found = NULL;
	size_t i;

	*ambiguous = false;
	if (len == 0)
		return NULL;
	for (i = 0; i < SB_NOPTS; i++) {
		if (strncmp(sb_opts[i].lng, name, len) != 0)
			continue;
		if (sb_opts[i].lng[len] == '\0')
			return &sb_opts[i];
		if (found != NULL)
			*ambiguous = true;
		found = &sb_opts[i];
	}
	return *ambiguous ? NULL : found;
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

/* A growing list of what was read. */
struct sb_list {
	struct script_sbatch_opt *v;
	size_t n, cap;
};

static struct script_sbatch_opt *
sb_add(struct sb_list *l, enum script_sbatch_kind kind, const char *orig)
{
	struct script_sbatch_opt *nv, *o;
	size_t ncap;

	if (l->n == l->cap) {
		ncap = l->cap ? l->cap * 2 : 8;
		if ((nv = reallocarray(l->v, ncap, sizeof(*nv))) == NULL)
			return NULL;
		l->v = nv;
		l->cap = ncap;
	}
	o = &l->v[l->n++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	snprintf(o->orig, sizeof(o->orig), "%s", orig);
	return o;
}

/* Add a refusal "ORIG: not supported by Cohort (WHY)", or with the
 * whole text when why is NULL. -1 when out of memory. */
static int
sb_refuse(struct sb_list *l, const char *orig, const char *fmt,
    const char *why)
{
	struct script_sbatch_opt *o;
	int rc;

	if ((o = sb_add(l, SBATCH_REFUSE, orig)) == NULL)
		return -1;
	if (why != NULL)
		rc = asprintf(&o->text, "%s: not supported by Cohort (%s)",
		    orig, why);
	else
		rc = asprintf(&o->text, fmt, orig);
	if (rc == -1) {
		o->text = NULL;
		return -1;
	}
	return 0;
}

/* What differs in form: Slurm's node range MIN-MAX is Cohort's MIN:MAX;
 * several partitions, a file of node names, --exclusive=user|mcs|topo
 * and --requeue=expedite have no Cohort meaning. NULL, or the reason
 * o's value is refused. */
static const char *
sb_convert(const struct sb_opt *o, char *value)
{
	char *dash;

	if (o->arg == SB_OPT && value != NULL)
		return "only without a value";
	if (value == NULL)
		return NULL;
	if (strcmp(o->lng, "nodes") == 0 &&
	    (dash = strchr(value, '-')) != NULL && dash != value)
		*dash = ':';
	else if (strcmp(o->lng, "partition") == 0 &&
	    strchr(value, ',') != NULL)
		return "a job goes to one queue: name one";
	else if ((strcmp(o->lng, "nodelist") == 0 ||
	    strcmp(o->lng, "exclude") == 0) && strchr(value, '/') != NULL)
		return "a file of node names: write the hostlist itself";
	return NULL;
}

/* Record option o, written orig, with value (taken over; may be NULL). */
static int
sb_record(struct sb_list *l, const struct sb_opt *o, const char *orig,
    char *value)
{
	struct script_sbatch_opt *r;
	const char *why;

	if (o->kind == SBATCH_REFUSE) {
		free(value);
		return sb_refuse(l, orig, NULL, o->why);
	}
	if ((o->kind == SBATCH_MAP) && (why = sb_convert(o, value)) != NULL) {
		free(value);
		return sb_refuse(l, orig, NULL, why);
	}
	if ((r = sb_add(l, o->kind, orig)) == NULL) {
		free(value);
		return -1;
	}
	r->value = value;
	if (o->kind == SBATCH_WARN) {
		r->name = o->lng;
		if (asprintf(&r->text, "%s: accepted, but %s", orig,
		    o->why) == -1) {
			r->text = NULL;
			return -1;
		}
	} else
		r->name = o->cohort;
	return 0;
}

/* One word of short options at words[*i] ("-N", "-N2", "-HQ"): advance
 * *i past it and a value it takes. 1 when the rest of the words must not
 * be read, 0, -1 when out of memory. */
static int
sb_short(char *const *words, size_t nwords, size_t *i, struct sb_list *l)
{
	const char *w = words[*i], *p;
	const struct sb_opt *o;
	char orig[4];
	char *value;

	(*i)++;
	for (p = w + 1; *p != '\0'; p++) {
		snprintf(orig, sizeof(orig), "-%c", *p);
		if ((o = sb_find_short(*p)) == NULL)
			return sb_refuse(l, orig, "%s: not an sbatch option",
			    NULL) == -1 ? -1 : 1;
		value = NULL;
		if (o->arg == SB_REQ) {
			if (p[1] != '\0')
				value = strdup(p + 1);
			else if (*i < nwords)
				value = strdup(words[(*i)++]);
			else
				return sb_refuse(l, orig, "%s: missing "
				    "argument", NULL) == -1 ? -1 : 1;
			if (value == NULL)
				return -1;
			return sb_record(l, o, orig, value);
		}
		if (o->arg == SB_OPT && p[1] != '\0') {
			if ((value = strdup(p + 1)) == NULL)
				return -1;
			return sb_record(l, o, orig, value);
		}
		if (sb_record(l, o, orig, NULL) == -1)
			return -1;
	}
	return 0;
}

/* One long option at words[*i]. Same returns as sb_short. */
static int
sb_long(char *const *words, size_t nwords, size_t *i, struct sb_list *l)
{
	const char *w = words[*i] + 2, *eq;
	const struct sb_opt *o;
	char orig[40], *value = NULL;
	bool ambiguous;
	size_t len;

	(*i)++;
	eq = strchr(w, '=');
	len = eq != NULL ? (size_t)(eq - w) : strlen(w);
	snprintf(orig, sizeof(orig), "--%.*s", (int)(len < 32 ? len : 32), w);
	if ((o = sb_find_long(w, len, &ambiguous)) == NULL)
		return sb_refuse(l, orig, ambiguous ? "%s: ambiguous (a prefix "
		    "of several sbatch options: write it out)" :
		    "%s: not an sbatch option", NULL) == -1 ? -1 : 1;
	/* Named as sbatch names it, abbreviated or not. */
	snprintf(orig, sizeof(orig), "--%s", o->lng);
	if (o->arg == SB_NONE && eq != NULL)
		return sb_refuse(l, orig, "%s: takes no value", NULL);
	if (eq != NULL)
		value = strdup(eq + 1);
	else if (o->arg == SB_REQ) {
		if (*i >= nwords)
			return sb_refuse(l, orig, "%s: missing argument",
			    NULL) == -1 ? -1 : 1;
		value = strdup(words[(*i)++]);
	}
	if ((eq != NULL || o->arg == SB_REQ) && value == NULL)
		return -1;
	return sb_record(l, o, orig, value);
}

int
script_sbatch_parse(char *const *words, size_t nwords, size_t *rest,
    struct script_sbatch_opt **opts, size_t *n, struct cerr *err)
{
	struct sb_list l = { NULL, 0, 0 };
	const char *w;
	size_t i = 0;
	int rc = 0;

	*opts = NULL;
	*n = 0;
	while (i < nwords && rc == 0) {
		w = words[i];
		if (rest != NULL && strcmp(w, "--") == 0) {
			i++;
			break;
		}
		if (w[0] != '-' || w[1] == '\0') {
			if (rest != NULL)
				break;
			/* Not an option: refused, and the line goes on. */
			i++;
			rc = sb_refuse(&l, w, "'%.64s': not an option (an "
			    "#SBATCH line holds options only)", NULL);
		} else if (w[1] == '-')
			rc = sb_long(words, nwords, &i, &l);
		else
			rc = sb_short(words, nwords, &i, &l);
	}
	if (rc == -1) {
		script_sbatch_free(l.v, l.n);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	if (rest != NULL)
		*rest = rc == 1 ? nwords : i;
	*opts = l.v;
	*n = l.n;
	return 0;
}
