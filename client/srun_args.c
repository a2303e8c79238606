/* srun's command line and the pure parts of its output (see srun_args.h).
 * Every option srun takes is in the table, so that an abbreviation means
 * what it means to srun (a unique prefix of srun's own names) and an
 * option Cohort cannot honour is refused by name with the reason. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/srun_args.h"

enum sr_arg {
	SR_NONE,	/* takes no value */
	SR_REQ,		/* takes one */
	SR_OPT,		/* takes one only as --opt=value (-Kvalue) */
};

enum sr_act {
	SR_REFUSE = 0,
	SR_NODES, SR_NTASKS, SR_NTASKS_PER_NODE, SR_NODELIST, SR_EXCLUDE,
	SR_CPUS, SR_GPUS_PER_TASK, SR_GPUS_PER_NODE, SR_GPUS, SR_GRES,
	SR_EXCLUSIVE, SR_OVERLAP, SR_EXPORT, SR_LABEL, SR_UNBUFFERED,
	SR_KILL, SR_NAME, SR_CHDIR, SR_OUTPUT, SR_ERROR, SR_MPI, SR_VERBOSE,
	SR_QUIET, SR_JOBID, SR_HELP, SR_USAGE, SR_VERSION, SR_INPUT,
	SR_PTY,
	SR_CTR_IMAGE, SR_CTR_MOUNTS, SR_CTR_WORKDIR, SR_CTR_WRITABLE,
	SR_CTR_READONLY, SR_CTR_ENV, SR_CTR_HOME, SR_CTR_NO_HOME, SR_CTR_NAME,
	SR_CTR_SAVE,
};

struct sr_opt {
	const char *lng;	/* srun's long name */
	char shrt;		/* its short letter, or 0 */
	enum sr_arg arg;
	enum sr_act act;
	const char *why;	/* SR_REFUSE: the reason */
};

#define OK(l, s, a, act)	{ l, s, a, act, NULL }
#define NO(l, s, a, w)		{ l, s, a, SR_REFUSE, w }

static const char in_job[] = "a step runs inside its job's allocation, "
    "which already says it: give it to sbatch";
static const char no_layout[] = "Cohort places a step's tasks in blocks "
    "over its nodes and binds them itself";
static const char no_acct[] = "Cohort keeps usage per user and queue";
static const char no_cont[] = "Cohort runs OCI bundles of its own: use "
    "--container-image";
static const char no_mail[] = "Cohort sends no mail";
static const char no_bcast[] = "Cohort copies no files to the nodes";
static const char no_prolog[] = "Cohort runs no per-step prolog or "
    "epilog";

/* Every option srun takes, by long name (Slurm 22.05 and pyxis). */
static const struct sr_opt sr_opts[] = {
	NO("accel-bind", 0, SR_REQ, no_layout),
	NO("account", 'A', SR_REQ, no_acct),
	NO("acctg-freq", 0, SR_REQ, "Cohort samples no per-task accounting "
	    "data"),
	NO("batch", 0, SR_REQ, in_job),
	NO("bb", 0, SR_REQ, "Cohort has no burst buffers"),
	NO("bbf", 0, SR_REQ, "Cohort has no burst buffers"),
	NO("bcast", 0, SR_OPT, no_bcast),
	NO("bcast-exclude", 0, SR_REQ, no_bcast),
	NO("begin", 'b', SR_REQ, in_job),
	OK("chdir", 'D', SR_REQ, SR_CHDIR),
	NO("cluster-constraint", 0, SR_REQ, "Cohort has one cluster"),
	NO("clusters", 'M', SR_REQ, "Cohort has one cluster"),
	NO("comment", 0, SR_REQ, "Cohort keeps no comment with a step"),
	NO("compress", 0, SR_OPT, no_bcast),
	NO("constraint", 'C', SR_REQ, in_job),
	NO("container", 0, SR_REQ, no_cont),
	OK("container-env", 0, SR_REQ, SR_CTR_ENV),
	OK("container-image", 0, SR_REQ, SR_CTR_IMAGE),
	OK("container-mount-home", 0, SR_NONE, SR_CTR_HOME),
	OK("container-mounts", 0, SR_REQ, SR_CTR_MOUNTS),
	OK("container-name", 0, SR_REQ, SR_CTR_NAME),
	OK("container-readonly", 0, SR_NONE, SR_CTR_READONLY),
	NO("container-remap-root", 0, SR_NONE, "a container runs as the "
	    "job's user, never as root"),
	OK("container-save", 0, SR_REQ, SR_CTR_SAVE),
	OK("container-workdir", 0, SR_REQ, SR_CTR_WORKDIR),
	OK("container-writable", 0, SR_NONE, SR_CTR_WRITABLE),
	NO("contiguous", 0, SR_NONE, in_job),
	NO("core-spec", 'S', SR_REQ, no_layout),
	NO("cores-per-socket", 0, SR_REQ, no_layout),
	NO("cpu-bind", 0, SR_REQ, no_layout),
	NO("cpu-freq", 0, SR_REQ, "Cohort sets no CPU frequency"),
	NO("cpus-per-gpu", 0, SR_REQ, "use --cpus-per-task"),
	OK("cpus-per-task", 'c', SR_REQ, SR_CPUS),
	NO("deadline", 0, SR_REQ, in_job),
	NO("delay-boot", 0, SR_REQ, "Cohort reboots no nodes"),
	NO("dependency", 'd', SR_REQ, "a step starts when srun runs"),
	NO("disable-status", 'X', SR_NONE, "the first Ctrl-C reports, a "
	    "second within a second cancels"),
	NO("distribution", 'm', SR_REQ, no_layout),
	NO("epilog", 0, SR_REQ, no_prolog),
	OK("error", 'e', SR_REQ, SR_ERROR),
	NO("exact", 0, SR_NONE, "a step gets the GPUs and CPUs it asks for "
	    "already"),
	OK("exclude", 'x', SR_REQ, SR_EXCLUDE),
	OK("exclusive", 0, SR_OPT, SR_EXCLUSIVE),
	OK("export", 0, SR_REQ, SR_EXPORT),
	NO("external-launcher", 0, SR_NONE, "Cohort starts every task "
	    "itself"),
	NO("extra-node-info", 'B', SR_REQ, no_layout),
	NO("get-user-env", 0, SR_OPT, "use --export"),
	NO("gid", 0, SR_REQ, "a step runs as its job's user and group"),
	NO("gpu-bind", 0, SR_REQ, "Cohort gives each task its GPUs itself "
	    "(--gpus-per-task)"),
	NO("gpu-freq", 0, SR_REQ, "Cohort sets no GPU frequency"),
	OK("gpus", 'G', SR_REQ, SR_GPUS),
	OK("gpus-per-node", 0, SR_REQ, SR_GPUS_PER_NODE),
	NO("gpus-per-socket", 0, SR_REQ, "use --gpus-per-node"),
	OK("gpus-per-task", 0, SR_REQ, SR_GPUS_PER_TASK),
	OK("gres", 0, SR_REQ, SR_GRES),
	NO("gres-flags", 0, SR_REQ, no_layout),
	OK("help", 'h', SR_NONE, SR_HELP),
	NO("het-group", 0, SR_REQ, "Cohort has no heterogeneous jobs"),
	NO("hint", 0, SR_REQ, no_layout),
	NO("hold", 'H', SR_NONE, in_job),
	NO("immediate", 'I', SR_OPT, "srun waits for its step's resources"),
	OK("input", 'i', SR_REQ, SR_INPUT),
	OK("jobid", 0, SR_REQ, SR_JOBID),
	OK("job-name", 'J', SR_REQ, SR_NAME),
	OK("kill-on-bad-exit", 'K', SR_OPT, SR_KILL),
	OK("label", 'l', SR_NONE, SR_LABEL),
	NO("licenses", 'L', SR_REQ, "Cohort has no licenses"),
	NO("mail-type", 0, SR_REQ, no_mail),
	NO("mail-user", 0, SR_REQ, no_mail),
	NO("mcs-label", 0, SR_REQ, "Cohort has no MCS labels"),
	NO("mem", 0, SR_REQ, "a step shares its job's memory limit"),
	NO("mem-bind", 0, SR_REQ, no_layout),
	NO("mem-per-cpu", 0, SR_REQ, "a step shares its job's memory limit"),
	NO("mem-per-gpu", 0, SR_REQ, "a step shares its job's memory limit"),
	NO("mincpus", 0, SR_REQ, no_layout),
	OK("mpi", 0, SR_REQ, SR_MPI),
	NO("msg-timeout", 0, SR_REQ, "Cohort's timeouts are its own"),
	NO("multi-prog", 0, SR_NONE, "every task runs the same command: "
	    "branch on SLURM_PROCID"),
	NO("network", 0, SR_REQ, "Cohort sets up no network for a step"),
	NO("nice", 0, SR_OPT, in_job),
	NO("no-allocate", 'Z', SR_NONE, "a step runs in its job's "
	    "allocation"),
	OK("no-container-mount-home", 0, SR_NONE, SR_CTR_NO_HOME),
	NO("no-kill", 'k', SR_OPT, "a failed node ends the step"),
	NO("nodefile", 'F', SR_REQ, "give -w the hostlist itself"),
	OK("nodelist", 'w', SR_REQ, SR_NODELIST),
	OK("nodes", 'N', SR_REQ, SR_NODES),
	OK("ntasks", 'n', SR_REQ, SR_NTASKS),
	NO("ntasks-per-core", 0, SR_REQ, no_layout),
	NO("ntasks-per-gpu", 0, SR_REQ, "use --gpus-per-task"),
	OK("ntasks-per-node", 0, SR_REQ, SR_NTASKS_PER_NODE),
	NO("ntasks-per-socket", 0, SR_REQ, no_layout),
	NO("ntasks-per-tres", 0, SR_REQ, "use --gpus-per-task"),
	NO("open-mode", 0, SR_REQ, "srun writes -o and -e files anew"),
	OK("output", 'o', SR_REQ, SR_OUTPUT),
	NO("overcommit", 'O', SR_NONE, "a step gets the CPUs it asks for"),
	OK("overlap", 0, SR_NONE, SR_OVERLAP),
	NO("oversubscribe", 's', SR_NONE, "use --overlap"),
	NO("partition", 'p', SR_REQ, in_job),
	NO("power", 0, SR_REQ, "Cohort manages no power"),
	NO("preserve-env", 'E', SR_NONE, "a step's counts come from srun's "
	    "options"),
	NO("priority", 0, SR_REQ, in_job),
	NO("profile", 0, SR_REQ, "Cohort samples no per-task profile"),
	NO("prolog", 0, SR_REQ, no_prolog),
	NO("propagate", 0, SR_OPT, "Cohort sets no resource limits from "
	    "srun's"),
	OK("pty", 0, SR_NONE, SR_PTY),
	NO("qos", 'q', SR_REQ, in_job),
	OK("quiet", 'Q', SR_NONE, SR_QUIET),
	NO("quit-on-interrupt", 0, SR_NONE, "the first Ctrl-C reports, a "
	    "second within a second cancels"),
	NO("reboot", 0, SR_NONE, "Cohort reboots no nodes"),
	NO("relative", 'r', SR_REQ, "use -w to pick a step's nodes"),
	NO("reservation", 0, SR_REQ, in_job),
	NO("resv-ports", 0, SR_OPT, "Cohort reserves no ports: a step's "
	    "MASTER_PORT is its rendezvous"),
	NO("send-libs", 0, SR_OPT, no_bcast),
	NO("signal", 0, SR_REQ, "a step ends with its job: the job's "
	    "--signal warns it"),
	NO("slurmd-debug", 0, SR_REQ, "there is no slurmd"),
	NO("sockets-per-node", 0, SR_REQ, no_layout),
	NO("spread-job", 0, SR_NONE, no_layout),
	NO("switches", 0, SR_REQ, in_job),
	NO("task-epilog", 0, SR_REQ, no_prolog),
	NO("task-prolog", 0, SR_REQ, no_prolog),
	NO("test-only", 0, SR_NONE, "Cohort gives no estimate without a "
	    "step"),
	NO("thread-spec", 0, SR_REQ, no_layout),
	NO("threads", 'T', SR_REQ, "Cohort starts every task itself"),
	NO("threads-per-core", 0, SR_REQ, no_layout),
	NO("time", 't', SR_REQ, "a step ends with its job: its job's --time "
	    "bounds it"),
	NO("time-min", 0, SR_REQ, in_job),
	NO("tmp", 0, SR_REQ, in_job),
	NO("tres-per-task", 0, SR_REQ, "use --gpus-per-task and "
	    "--cpus-per-task"),
	NO("uid", 0, SR_REQ, "a step runs as its job's user"),
	OK("unbuffered", 'u', SR_NONE, SR_UNBUFFERED),
	OK("usage", 0, SR_NONE, SR_USAGE),
	OK("verbose", 'v', SR_NONE, SR_VERBOSE),
	OK("version", 'V', SR_NONE, SR_VERSION),
	NO("wait", 'W', SR_REQ, "the other tasks run on until they end, or "
	    "use -K"),
	NO("wckey", 0, SR_REQ, no_acct),
	NO("whole", 0, SR_NONE, "use --exclusive for whole nodes"),
	NO("x11", 0, SR_OPT, "Cohort forwards no X11"),
};
#define SR_NOPTS (sizeof(sr_opts) / sizeof(sr_opts[0]))

static const struct sr_opt *
sr_find_long(const char *name, size_t len, bool *ambiguous)
{
	const struct sr_opt *found = NULL;
	size_t i;

	*ambiguous = false;
	if (len == 0)
		return NULL;
	for (i = 0; i < SR_NOPTS; i++) {
		if (strncmp(sr_opts[i].lng, name, len) != 0)
			continue;
		if (sr_opts[i].lng[len] == '\0')
			return &sr_opts[i];
		if (found != NULL)
			*ambiguous = true;
		found = &sr_opts[i];
	}
	return *ambiguous ? NULL : found;
}

static const struct sr_opt *
sr_find_short(char c)
{
	size_t i;

	for (i = 0; i < SR_NOPTS; i++)
		if (sr_opts[i].shrt == c)
			return &sr_opts[i];
	return NULL;
}

/* A count of 0..max, decimal, whole. */
static int
sr_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* A GPU count as srun writes it: N, or gpu:N for --gres. A type is
 * refused: a step takes the GPUs of its own job. */
/* A --container-* value, checked as cohort submit checks it (the
 * controller checks the whole again). */
static int
sr_container(const char *orig, enum sr_act act, const char *v,
    struct job_container *c, struct cerr *err)
{
	struct job_container one;
	struct ctr_image_ref ref;
	struct ctr_mount *m;
	size_t n;

	if (act == SR_CTR_SAVE)
		return cerr_set(err, ERR_INVALID, "%s is %s", orig,
		    ctr_save_refused);
	if (act == SR_CTR_IMAGE) {
		if (ctr_image_parse(v, &ref, err) == -1)
			return -1;
		c->image = (char *)v;
		return 0;
	}
	if (act == SR_CTR_MOUNTS) {
		if (ctr_mounts_parse(v, &m, &n, err) == -1)
			return -1;
		ctr_mounts_free(m, n);
		c->mounts = (char *)v;
		return 0;
	}
	memset(&one, 0, sizeof(one));
	one.image = (char *)"/";
	*(act == SR_CTR_WORKDIR ? &one.workdir : act == SR_CTR_ENV ?
	    &one.env : &one.name) = (char *)v;
	if (ctr_validate(&one, err) == -1)
		return -1;
	*(act == SR_CTR_WORKDIR ? &c->workdir : act == SR_CTR_ENV ?
	    &c->env : &c->name) = (char *)v;
	return 0;
}

static int
sr_gpus(const char *orig, const char *v, uint32_t *out, struct cerr *err)
{
	if (strchr(v, ':') != NULL)
		return cerr_set(err, ERR_INVALID, "%s=%s: a GPU type is not "
		    "supported: a step gets GPUs of its job's allocation: give "
		    "a count", orig, v);
	if (sr_u32(v, 1u << 20, out) == -1)
		return cerr_set(err, ERR_INVALID, "%s: invalid GPU count '%s'",
		    orig, v);
	return 0;
}

/* Apply option o, written orig, with value v (NULL for none). */
static int
sr_apply(const struct sr_opt *o, const char *orig, const char *v,
    struct srun_args *a, struct cerr *err)
{
	uint32_t u, u2;
	const char *dash;
	char *end;

	switch (o->act) {
	case SR_REFUSE:
		if (v != NULL)
			return cerr_set(err, ERR_INVALID, "%s=%s is not "
			    "supported: %s", orig, v, o->why);
		return cerr_set(err, ERR_INVALID, "%s is not supported: %s",
		    orig, o->why);
	case SR_NODES:
		/* MIN-MAX with MIN = MAX is one count. */
		dash = strchr(v, '-');
		if (dash != NULL) {
			char min[16];

			if ((size_t)(dash - v) >= sizeof(min))
				goto badnum;
			memcpy(min, v, dash - v);
			min[dash - v] = '\0';
			if (sr_u32(min, 1u << 20, &u) == -1 ||
			    sr_u32(dash + 1, 1u << 20, &u2) == -1)
				goto badnum;
			if (u != u2)
				return cerr_set(err, ERR_INVALID, "%s=%s is not "
				    "supported: a step gets exactly the nodes "
				    "it asks for: give one count", orig, v);
		} else if (sr_u32(v, 1u << 20, &u) == -1)
			goto badnum;
		if (u == 0)
			goto badnum;
		a->nodes = u;
		return 0;
	case SR_NTASKS:
	case SR_NTASKS_PER_NODE:
	case SR_CPUS:
		if (sr_u32(v, 1u << 20, &u) == -1 || u == 0)
			goto badnum;
		if (o->act == SR_NTASKS)
			a->ntasks = u;
		else if (o->act == SR_NTASKS_PER_NODE)
			a->ntasks_per_node = u;
		else
			a->cpus_per_task = u;
		return 0;
	case SR_GPUS_PER_TASK:
		return sr_gpus(orig, v, &a->gpus_per_task, err);
	case SR_GPUS_PER_NODE:
		return sr_gpus(orig, v, &a->gpus_per_node, err);
	case SR_GPUS:
		if (sr_gpus(orig, v, &a->gpus, err) == -1)
			return -1;
		a->no_gpus = a->gpus == 0;
		return 0;
	case SR_GRES:
		if (strcmp(v, "none") == 0) {
			a->no_gpus = true;
			return 0;
		}
		if (strncmp(v, "gpu:", 4) != 0 || strchr(v + 4, ':') != NULL ||
		    strchr(v, ',') != NULL)
			return cerr_set(err, ERR_INVALID, "%s=%s is not "
			    "supported: only gpu:N or none", orig, v);
		return sr_gpus(orig, v + 4, &a->gpus_per_node, err);
	case SR_EXCLUSIVE:
		if (v != NULL)
			return cerr_set(err, ERR_INVALID, "%s=%s is not "
			    "supported: only --exclusive alone (no other step "
			    "on the step's nodes)", orig, v);
		a->exclusive = true;
		return 0;
	case SR_OVERLAP:
		a->overlap = true;
		return 0;
	case SR_EXPORT:
		a->export_mode = v;
		return 0;
	case SR_LABEL:
		a->label = true;
		return 0;
	case SR_UNBUFFERED:
		a->unbuffered = true;
		return 0;
	case SR_PTY:
		a->pty = true;
		a->unbuffered = true;	/* as Slurm's: implied */
		return 0;
	case SR_KILL:
		if (v != NULL && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return cerr_set(err, ERR_INVALID, "%s: invalid value "
			    "'%s' (0 or 1)", orig, v);
		a->kill_on_bad_exit = v == NULL || strcmp(v, "1") == 0;
		return 0;
	case SR_NAME:
		a->name = v;
		return 0;
	case SR_CHDIR:
		a->chdir = v;
		return 0;
	case SR_OUTPUT:
		a->output = v;
		return 0;
	case SR_ERROR:
		a->error = v;
		return 0;
	case SR_NODELIST:
		if (strchr(v, '/') != NULL)
			return cerr_set(err, ERR_INVALID, "%s=%s is not "
			    "supported: a file of node names: give the "
			    "hostlist itself", orig, v);
		a->nodelist = v;
		return 0;
	case SR_EXCLUDE:
		a->exclude = v;
		return 0;
	case SR_CTR_IMAGE:
	case SR_CTR_MOUNTS:
	case SR_CTR_WORKDIR:
	case SR_CTR_ENV:
	case SR_CTR_NAME:
	case SR_CTR_SAVE:
		return sr_container(orig, o->act, v, &a->ctr, err);
	case SR_CTR_WRITABLE:
	case SR_CTR_READONLY:
		a->ctr.writable = o->act == SR_CTR_WRITABLE;
		return 0;
	case SR_CTR_HOME:
	case SR_CTR_NO_HOME:
		a->ctr.mount_home = o->act == SR_CTR_HOME;
		return 0;
	case SR_MPI:
		if (strcmp(v, "none") == 0)
			return 0;
		return cerr_set(err, ERR_INVALID, "%s=%s is not supported: "
		    "Cohort has no PMI server; use a launcher such as "
		    "torchrun", orig, v);
	case SR_VERBOSE:
		a->verbose++;
		return 0;
	case SR_QUIET:
		a->quiet = true;
		return 0;
	case SR_INPUT:
		/* Slurm's default is task 0; "0" says the same. */
		if (strcmp(v, "none") == 0) {
			a->no_input = true;
			return 0;
		}
		if (strcmp(v, "0") == 0) {
			a->no_input = false;
			return 0;
		}
		return cerr_set(err, ERR_INVALID, "%s=%s is not supported: "
		    "srun forwards its standard input to task 0 (the "
		    "default, or -i 0) or to none (-i none), not to %s",
		    orig, v, strcmp(v, "all") == 0 ? "every task" :
		    "other tasks or files");
	case SR_JOBID:
		errno = 0;
		a->jobid = strtoull(v, &end, 10);
		if (errno != 0 || *end != '\0' || a->jobid == 0 ||
		    v[0] < '0' || v[0] > '9')
			return cerr_set(err, ERR_INVALID, "%s: invalid job id "
			    "'%s'", orig, v);
		return 0;
	case SR_HELP:
		a->help = true;
		return 0;
	case SR_USAGE:
		a->usage = true;
		return 0;
	case SR_VERSION:
		a->version = true;
		return 0;
	}
badnum:
	return cerr_set(err, ERR_INVALID, "%s: invalid count '%s'", orig, v);
}

/* One word of short options at argv[*i]. */
static int
sr_short(int argc, char *const *argv, int *i, struct srun_args *a,
    struct cerr *err)
{
	const char *p = argv[*i] + 1, *v;
	const struct sr_opt *o;
	char orig[4];

	(*i)++;
	for (; *p != '\0'; p++) {
		snprintf(orig, sizeof(orig), "-%c", *p);
		if ((o = sr_find_short(*p)) == NULL)
			return cerr_set(err, ERR_INVALID, "%s: not an srun "
			    "option (see srun --help)", orig);
		if (o->arg == SR_REQ) {
			if (p[1] != '\0')
				v = p + 1;
			else if (*i < argc)
				v = argv[(*i)++];
			else
				return cerr_set(err, ERR_INVALID, "%s: missing "
				    "argument", orig);
			return sr_apply(o, orig, v, a, err);
		}
		if (o->arg == SR_OPT && p[1] != '\0')
			return sr_apply(o, orig, p + 1, a, err);
		if (sr_apply(o, orig, NULL, a, err) == -1)
			return -1;
	}
	return 0;
}

/* One long option at argv[*i]. */
static int
sr_long(int argc, char *const *argv, int *i, struct srun_args *a,
    struct cerr *err)
{
	const char *w = argv[*i] + 2, *eq, *v = NULL;
	const struct sr_opt *o;
	char orig[48];
	bool ambiguous;
	size_t len;

	(*i)++;
	eq = strchr(w, '=');
	len = eq != NULL ? (size_t)(eq - w) : strlen(w);
	if ((o = sr_find_long(w, len, &ambiguous)) == NULL)
		return cerr_set(err, ERR_INVALID, ambiguous ? "--%.*s: "
		    "ambiguous (a prefix of several srun options: write it "
		    "out)" : "--%.*s: not an srun option (see srun --help)",
		    (int)(len < 32 ? len : 32), w);
	/* Named as srun names it, abbreviated or not. */
	snprintf(orig, sizeof(orig), "--%s", o->lng);
	if (o->arg == SR_NONE && eq != NULL)
		return cerr_set(err, ERR_INVALID, "%s: takes no value", orig);
	if (eq != NULL)
		v = eq + 1;
	else if (o->arg == SR_REQ) {
		if (*i >= argc)
			return cerr_set(err, ERR_INVALID, "%s: missing "
			    "argument", orig);
		v = argv[(*i)++];
	}
	return sr_apply(o, orig, v, a, err);
}

int
srun_args_parse(int argc, char *const *argv, struct srun_args *a,
    struct cerr *err)
{
	int i = 1;

	memset(a, 0, sizeof(*a));
	while (i < argc) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			break;
		if ((argv[i][1] == '-' ? sr_long(argc, argv, &i, a, err) :
		    sr_short(argc, argv, &i, a, err)) == -1)
			return -1;
	}
	a->cmd = i;
	if (a->pty && a->no_input)
		return cerr_set(err, ERR_INVALID, "--pty and -i none: the "
		    "terminal is task 0's input");
	return 0;
}

int
srun_label_width(uint32_t ntasks)
{
	uint32_t top = ntasks > 0 ? ntasks - 1 : 0;
	int w = 1;

	while (top >= 10) {
		top /= 10;
		w++;
	}
	return w;
}

int
srun_rank_node(const uint32_t *tasks_per_node, size_t nnodes, uint32_t rank)
{
	uint64_t first = 0;
	size_t i;

	for (i = 0; i < nnodes; i++) {
		if (rank < first + tasks_per_node[i])
			return i > INT_MAX ? -1 : (int)i;
		first += tasks_per_node[i];
	}
	return -1;
}

int
srun_pattern(const char *pat, const struct srun_pat_vars *v, char *buf,
    size_t len, bool *per_task, struct cerr *err)
{
	const char *p;
	char num[48];
	size_t at = 0, n;
	int width;

	if (per_task != NULL)
		*per_task = false;
	for (p = pat; *p != '\0'; p++) {
		if (*p != '%') {
			if (at + 1 >= len)
				goto toolong;
			buf[at++] = *p;
			continue;
		}
		p++;
		width = 0;
		while (*p >= '0' && *p <= '9' && width < 100)
			width = width * 10 + (*p++ - '0');
		if (width > 20)
			width = 20;
		switch (*p) {
		case '%':
			snprintf(num, sizeof(num), "%%");
			break;
		case 't':
			snprintf(num, sizeof(num), "%0*" PRIu32, width,
			    v->task);
			break;
		case 'n':
			snprintf(num, sizeof(num), "%0*" PRIu32, width,
			    v->node_index);
			break;
		case 'j':
			snprintf(num, sizeof(num), "%0*" PRIu64, width,
			    v->job_id);
			break;
		case 's':
			snprintf(num, sizeof(num), "%0*" PRIu32, width,
			    v->step_id);
			break;
		case 'J':
			snprintf(num, sizeof(num), "%" PRIu64 ".%" PRIu32,
			    v->job_id, v->step_id);
			break;
		case 'N':
			n = strlen(v->node);
			if (at + n >= len)
				goto toolong;
			memcpy(buf + at, v->node, n);
			at += n;
			if (per_task != NULL)
				*per_task = true;
			continue;
		default:
			return cerr_set(err, ERR_INVALID, "'%s': %%%c is not "
			    "supported in a file pattern (%%t %%n %%N %%j %%s "
			    "%%J %%%%)", pat, *p ? *p : ' ');
		}
		if (per_task != NULL && (*p == 't' || *p == 'n'))
			*per_task = true;
		n = strlen(num);
		if (at + n >= len)
			goto toolong;
		memcpy(buf + at, num, n);
		at += n;
	}
	buf[at] = '\0';
	return 0;
toolong:
	return cerr_set(err, ERR_INVALID, "'%s': the file name is longer "
	    "than %zu bytes", pat, len - 1);
}

static int
sr_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
srun_cred_decode(const char *text, size_t len, uint8_t *out, size_t outlen,
    struct cerr *err)
{
	size_t i;
	int hi, lo;

	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (len == 0 || len % 2 != 0 || len / 2 > outlen)
		return cerr_set(err, ERR_INVALID, "not a credential: %zu "
		    "characters, want an even number up to %zu", len,
		    outlen * 2);
	for (i = 0; i < len; i += 2) {
		if ((hi = sr_hexval(text[i])) == -1 ||
		    (lo = sr_hexval(text[i + 1])) == -1)
			return cerr_set(err, ERR_INVALID, "not a credential: "
			    "character %zu is not a lowercase hex digit",
			    sr_hexval(text[i]) == -1 ? i + 1 : i + 2);
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(len / 2);
}

char *
srun_task_range(uint32_t from, uint32_t to, char *buf, size_t len)
{
	if (from == to)
		snprintf(buf, len, "task %" PRIu32, from);
	else
		snprintf(buf, len, "tasks %" PRIu32 "-%" PRIu32, from, to);
	return buf;
}
