/* cohort submit: build a job spec from flags (and a script's #COHORT and
 * #SBATCH lines), add the submitter's environment (--export), send it,
 * print the new job's id. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/export.h"
#include "client/output.h"
#include "client/pernode.h"
#include "client/script.h"
#include "client/script_sbatch.h"
#include "client/submit.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/hostlist.h"
#include "lib/job.h"
#include "lib/wire.h"

/* The short letters are sbatch's. */
enum {
	O_NAME = 'J', O_NODES = 'N', O_TIME = 't', O_OUTPUT = 'o',
	O_ERROR = 'e', O_ARRAY = 'a', O_DEPEND = 'd', O_NODELIST = 'w',
	O_EXCLUDE = 'x', O_CHDIR = 'D', O_CONSTRAINT = 'C', O_CPUS = 'c',
	O_BEGIN = 'b', O_ACCOUNT = 'A',
	O_GPUS = 0x100, O_TASKS, O_GPU_TYPE,
	O_PRIORITY, O_TOPO, O_TOPO_PREFER, O_CKPT_DIR, O_MAX_RESTARTS,
	O_CKPT_SIGNAL, O_HANG, O_ENV, O_WORKDIR, O_QUEUE, O_SERVICE,
	O_EXCLUSIVE, O_HOLD, O_BATCH, O_EXPORT, O_GRES, O_REQUEUE,
	O_NO_REQUEUE,
	O_SIGNAL, O_GPU_MEMORY, O_MEM,
	O_SEGMENT, O_IDEM_KEY, O_QOS, O_MAIL_TYPE, O_MAIL_USER,
	O_ON_STRAGGLER,
	O_CTR_IMAGE, O_CTR_MOUNTS, O_CTR_WORKDIR, O_CTR_WRITABLE,
	O_CTR_READONLY, O_CTR_ENV, O_CTR_HOME, O_CTR_NO_HOME, O_CTR_NAME,
	O_CTR_SAVE,
	O_GPUS_PER_TASK, O_NTASKS_PER_GPU, O_CPUS_PER_GPU, O_MEM_PER_GPU,
	O_NTASKS = 'n', O_GPUS_TOTAL = 'G', O_PARTITION = 'p',
	O_HELP = 'h',
};

#define SUBMIT_SHORTOPTS "+:hJ:N:t:o:e:a:d:w:x:D:C:c:n:G:p:b:A:"

static const struct option submit_longopts[] = {
	{ "name", required_argument, NULL, O_NAME },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "gpus-per-node", required_argument, NULL, O_GPUS },
	{ "tasks-per-node", required_argument, NULL, O_TASKS },
	{ "ntasks-per-node", required_argument, NULL, O_TASKS },
	{ "ntasks", required_argument, NULL, O_NTASKS },
	{ "gpus", required_argument, NULL, O_GPUS_TOTAL },
	{ "gpus-per-task", required_argument, NULL, O_GPUS_PER_TASK },
	{ "ntasks-per-gpu", required_argument, NULL, O_NTASKS_PER_GPU },
	{ "cpus-per-gpu", required_argument, NULL, O_CPUS_PER_GPU },
	{ "mem-per-gpu", required_argument, NULL, O_MEM_PER_GPU },
	{ "gpu-type", required_argument, NULL, O_GPU_TYPE },
	{ "gres", required_argument, NULL, O_GRES },
	{ "time", required_argument, NULL, O_TIME },
	{ "priority", required_argument, NULL, O_PRIORITY },
	{ "topology", required_argument, NULL, O_TOPO },
	{ "topology-prefer", required_argument, NULL, O_TOPO_PREFER },
	{ "checkpoint-dir", required_argument, NULL, O_CKPT_DIR },
	{ "max-restarts", required_argument, NULL, O_MAX_RESTARTS },
	{ "requeue", no_argument, NULL, O_REQUEUE },
	{ "no-requeue", no_argument, NULL, O_NO_REQUEUE },
	{ "checkpoint-signal", required_argument, NULL, O_CKPT_SIGNAL },
	{ "signal", required_argument, NULL, O_SIGNAL },
	{ "hang-timeout", required_argument, NULL, O_HANG },
	{ "on-straggler", required_argument, NULL, O_ON_STRAGGLER },
	{ "env", required_argument, NULL, O_ENV },
	{ "export", required_argument, NULL, O_EXPORT },
	{ "workdir", required_argument, NULL, O_WORKDIR },
	{ "chdir", required_argument, NULL, O_CHDIR },
	{ "begin", required_argument, NULL, O_BEGIN },
	{ "account", required_argument, NULL, O_ACCOUNT },
	{ "qos", required_argument, NULL, O_QOS },
	{ "output", required_argument, NULL, O_OUTPUT },
	{ "error", required_argument, NULL, O_ERROR },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "partition", required_argument, NULL, O_PARTITION },
	{ "service", no_argument, NULL, O_SERVICE },
	{ "array", required_argument, NULL, O_ARRAY },
	{ "dependency", required_argument, NULL, O_DEPEND },
	{ "hold", no_argument, NULL, O_HOLD },
	{ "batch", no_argument, NULL, O_BATCH },
	{ "nodelist", required_argument, NULL, O_NODELIST },
	{ "exclude", required_argument, NULL, O_EXCLUDE },
	{ "constraint", required_argument, NULL, O_CONSTRAINT },
	{ "gpu-memory", required_argument, NULL, O_GPU_MEMORY },
	{ "cpus-per-task", required_argument, NULL, O_CPUS },
	{ "mem-per-node", required_argument, NULL, O_MEM },
	{ "mem", required_argument, NULL, O_MEM },
	{ "segment", required_argument, NULL, O_SEGMENT },
	{ "exclusive", no_argument, NULL, O_EXCLUSIVE },
	{ "idempotency-key", required_argument, NULL, O_IDEM_KEY },
	{ "mail-type", required_argument, NULL, O_MAIL_TYPE },
	{ "mail-user", required_argument, NULL, O_MAIL_USER },
	/* Pyxis's names (lib/container.h). */
	{ "container-image", required_argument, NULL, O_CTR_IMAGE },
	{ "container-mounts", required_argument, NULL, O_CTR_MOUNTS },
	{ "container-workdir", required_argument, NULL, O_CTR_WORKDIR },
	{ "container-writable", no_argument, NULL, O_CTR_WRITABLE },
	{ "container-readonly", no_argument, NULL, O_CTR_READONLY },
	{ "container-env", required_argument, NULL, O_CTR_ENV },
	{ "container-mount-home", no_argument, NULL, O_CTR_HOME },
	{ "no-container-mount-home", no_argument, NULL, O_CTR_NO_HOME },
	{ "container-name", required_argument, NULL, O_CTR_NAME },
	{ "container-save", required_argument, NULL, O_CTR_SAVE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char submit_usage[] =
    "usage: cohort submit [OPTIONS] -- CMD [ARGS...]\n"
    "       cohort submit [OPTIONS] SCRIPT [ARGS...]\n"
    "\n"
    "  -J, --name NAME              job name (default: the command's or script's)\n"
    "  -N, --nodes N | MIN:MAX      gang size in nodes; a range makes it elastic\n"
    "      --gpus-per-node G        GPUs on each node: a number, [TYPE:]N, or all\n"
    "                               (the default); 0 for a CPU-only job\n"
    "      --tasks-per-node T       processes per node (default 1);\n"
    "                               also --ntasks-per-node\n"
    "  -n, --ntasks N               tasks in all, as Slurm's: the same number\n"
    "                               on each node (-N 2 -n 8: 4 per node)\n"
    "  -G, --gpus [TYPE:]N          GPUs in all, the same number on each node\n"
    "      --gpus-per-task [TYPE:]N, --ntasks-per-gpu N, --cpus-per-gpu N,\n"
    "      --mem-per-gpu SIZE       as Slurm's, made per node; refused where\n"
    "                               a node's share would not be whole\n"
    "      --gpu-type TYPE          only nodes with this GPU model\n"
    "      --gres gpu[:TYPE][:N]    the same as --gpus-per-node [TYPE:]N\n"
    "  -t, --time LIMIT             wall-clock limit (90s, 30m, 2h, MM, MM:SS,\n"
    "                               HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)\n"
    "      --priority P             higher runs first\n"
    "      --topology LEVEL         all nodes under one switch of LEVEL\n"
    "                               (torus: one compact box of the torus)\n"
    "      --topology-prefer LEVEL  the same, if it can be had\n"
    "                               (LEVEL block: one NVLink block)\n"
    "      --segment N              segments of N nodes, each inside one\n"
    "                               NVLink block (-N a multiple of N)\n"
    "      --checkpoint-dir DIR     where the job writes checkpoints\n"
    "      --max-restarts N         restarts after failures (default 3)\n"
    "      --requeue, --no-requeue  restart after failures (the default), or not\n"
    "                               (--max-restarts 0)\n"
    "      --checkpoint-signal SIG@SECS\n"
    "                               signal and grace before a stop (USR1@60)\n"
    "      --signal [B:]SIG[@SECS]  the same, as sbatch writes it\n"
    "      --hang-timeout DURATION  restart when the progress file stalls\n"
    "      --on-straggler report|replace\n"
    "                               a rank slower than its peers (its\n"
    "                               $COHORT_STEP_FILE): report it (the default),\n"
    "                               or also move its node's ranks to a spare\n"
    "                               or free node at the next checkpoint\n"
    "      --export ALL|NONE|VAR[,VAR=VALUE...]\n"
    "                               the environment the job gets: ALL (the\n"
    "                               default) is this one but what names this\n"
    "                               session (SSH_*, DISPLAY...) or the node;\n"
    "                               ALL,VAR=VALUE adds; VAR,... only those\n"
    "      --env KEY=VALUE          a variable on top of --export (repeatable)\n"
    "      --workdir DIR            working directory, absolute (default: this one)\n"
    "  -D, --chdir DIR              the same; relative to this directory\n"
    "  -b, --begin TIME             not before TIME (local): now+1h, 16:00,\n"
    "                               2026-12-24T08:00, tomorrow, ... (sbatch's)\n"
    "  -o, --output PATTERN         stdout to this file on the node (%j job id,\n"
    "                               %A %a array id and task, %t rank, %n node\n"
    "                               rank, %N node, %x name, %u user, %% a %)\n"
    "  -e, --error PATTERN          stderr apart, the same way\n"
    "      --queue Q                the queue (default: the first listing you)\n"
    "  -p, --partition Q            the same\n"
    "  -A, --account NAME           the queue the site maps NAME to (sbatch's)\n"
    "      --qos NAME               the same for a QOS name\n"
    "      --service                a long-running service: no time limit,\n"
    "                               restarted on any exit with back-off\n"
    "  -a, --array SPEC             an array: 0-99, 1,3,5-9, 0-99:4, 0-99%8\n"
    "  -d, --dependency SPEC        afterok:ID[:ID...], afterany, afternotok,\n"
    "                               aftercorr, singleton; ',' and, '?' or\n"
    "      --hold                   submit held (cohort release starts it)\n"
    "      --batch                  a batch job, as sbatch's: the script or\n"
    "                               command runs once, on the first node; its\n"
    "                               srun starts steps on the allocation\n"
    "  -w, --nodelist HOSTLIST      nodes the job must include (node[01-04]);\n"
    "                               without -N, the job gets that many nodes\n"
    "  -x, --exclude HOSTLIST       nodes the job must not use\n"
    "  -C, --constraint EXPR        node features: fp64, 'fp64&ib', 'a|b',\n"
    "                               '(a|b)&c' ('&' binds tighter)\n"
    "      --gpu-memory MIN         GiB every GPU of a node has: 80, 80G,\n"
    "                               80GiB\n"
    "  -c, --cpus-per-task N        bind each task to N cores on its GPUs'\n"
    "                               NUMA node(s)\n"
    "      --mem-per-node SIZE      memory limit of the job on each node (cgroup\n"
    "                               v2): MiB, or with K, M, G or T (4G);\n"
    "                               also --mem; 0: none\n"
    "      --exclusive              whole nodes, shared with no other job\n"
    "      --idempotency-key KEY    submit at most once with KEY (1-64 of\n"
    "                               A-Z a-z 0-9 . _ : -): sent again, the\n"
    "                               submit answers the job KEY made\n"
    "      --mail-type TYPE[,TYPE...]\n"
    "                               mail when the job reaches them, as\n"
    "                               Slurm's: BEGIN, END, FAIL, REQUEUE, ALL,\n"
    "                               NONE, TIME_LIMIT[_90|_80|_50],\n"
    "                               ARRAY_TASKS (sent where the controller\n"
    "                               has a mail_program)\n"
    "      --mail-user ADDR         who gets it (default: you)\n"
    "      --container-image IMAGE  run the tasks in an image: a squashfs file\n"
    "                               /DIR/IMG.sqsh or an OCI layout oci:/DIR[:TAG]\n"
    "      --container-mounts SRC:DST[:FLAGS],...\n"
    "                               bind mounts (FLAGS: ro, rw, nosuid, nodev,\n"
    "                               noexec, rprivate, rslave...; '+' joins)\n"
    "      --container-workdir DIR  the tasks' directory in the image\n"
    "      --container-writable     a private writable root (default: read\n"
    "                               only; --container-readonly)\n"
    "      --container-env NAME,... --container-name NAME\n"
    "      --[no-]container-mount-home   your home at its path (default: no)\n"
    "      --server HOST:PORT --cert FILE --key FILE --ca FILE\n"
    "\n"
    "Long options are written out in full: no abbreviations.\n"
    "#COHORT lines at the top of SCRIPT take the same options; #SBATCH\n"
    "lines take sbatch's options with Slurm's meanings where Cohort can\n"
    "honour them, and every one refused is named with its line (cohort(1),\n"
    "SBATCH). The command line overrides them.\n";

/* Where option words come from, for error messages. */
struct submit_src {
	const char *file;	/* the script, or NULL for the command line */
	size_t line;		/* the script's line */
	const char *cmd;	/* the command line's: "submit", "sbatch" */
};

/* What one pass over a vector of option words found. */
struct submit_pass {
	int rest;		/* index of the first word after the options */
	bool dashdash;		/* the options ended with "--" */
};

/* What the options build besides the spec. Reset with the spec: a
 * script's lines and the command line are parsed afresh in script mode. */
struct submit_ctx {
	struct job_spec spec;
	bool topo, topo_prefer;
	bool nodes_given;	/* -N anywhere: --nodelist leaves it alone */
	char *export;		/* the last --export, or NULL (ALL) */
	struct pernode pn;	/* Slurm's totals, applied once all is read */
};

static void
ctx_clear(struct submit_ctx *ctx)
{
	job_spec_clear(&ctx->spec);
	free(ctx->export);
	ctx->export = NULL;
	ctx->topo = ctx->topo_prefer = ctx->nodes_given = false;
	memset(&ctx->pn, 0, sizeof(ctx->pn));
}

/* Print an option error: "submit: ..." for the command line,
 * "SCRIPT:LINE: ..." for a script's line. */
static int
submit_error(const struct submit_src *src, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
submit_error(const struct submit_src *src, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (src->file == NULL)
		output_error("%s: %s", src->cmd, msg);
	else
		output_error("%s:%zu: %s", src->file, src->line, msg);
	return EXIT_USAGE;
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* N or MIN:MAX. Only the syntax is checked here: the controller judges
 * the values (limits, MIN above MAX) for every client alike. */
static int
parse_nodes(struct job_spec *spec, const char *s, char *why, size_t wlen)
{
	const char *colon = strchr(s, ':');
	char min[32];
	uint32_t lo, hi;

	if (colon == NULL) {
		if (parse_u32(s, 0, UINT32_MAX, &lo) == -1)
			goto bad;
		hi = lo;
	} else {
		if ((size_t)(colon - s) >= sizeof(min))
			goto bad;
		snprintf(min, sizeof(min), "%.*s", (int)(colon - s), s);
		if (parse_u32(min, 0, UINT32_MAX, &lo) == -1 ||
		    parse_u32(colon + 1, 0, UINT32_MAX, &hi) == -1)
			goto bad;
	}
	spec->nodes_min = lo;
	spec->nodes_max = hi;
	return 0;
bad:
	snprintf(why, wlen, "invalid node count '%s' (N or MIN:MAX)", s);
	return -1;
}

/* --gpu-memory MIN in GiB: "80", "80G" or "80GiB" (Slurm's suffix, and
 * the unit spelled out), kept in MiB as the inventory reports memory.
 * The controller checks the upper bound. */
static int
parse_gpu_memory(const char *s, uint64_t *mb, char *why, size_t wlen)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v == 0 || (*end != '\0' && strcmp(end, "G") != 0 &&
	    strcmp(end, "GiB") != 0))
		goto bad;
	if (v > JOB_GPU_MEMORY_MB_MAX / 1024) {
		snprintf(why, wlen, "at most %llu GiB",
		    (unsigned long long)JOB_GPU_MEMORY_MB_MAX / 1024);
		return -1;
	}
	*mb = v * 1024;
	return 0;
bad:
	snprintf(why, wlen, "invalid GPU memory '%s' (GiB: 80, 80G or 80GiB)",
	    s);
	return -1;
}

/* --mem-per-node SIZE as Slurm's --mem: a whole number with an
 * optional unit K, M, G or T (either case; binary: 1G = 1024M), MiB
 * without one; K rounds up to whole MiB. 0 is no limit (Slurm's 0 is
 * all of the node's memory, which no limit comes to). */
static int
parse_mem(const char *s, uint64_t *mb, char *why, size_t wlen)
{
	unsigned long long v, mul = 1;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		goto bad;
	if (*end != '\0') {
		switch (*end) {
		case 'k': case 'K': mul = 0; break;
		case 'm': case 'M': mul = 1; break;
		case 'g': case 'G': mul = 1024; break;
		case 't': case 'T': mul = 1024 * 1024; break;
		default: goto bad;
		}
		if (end[1] != '\0')
			goto bad;
	}
	if (mul == 0)
		v = v / 1024 + (v % 1024 != 0);
	else if (v > JOB_MEM_PER_NODE_MB_MAX / mul)
		v = JOB_MEM_PER_NODE_MB_MAX + 1;
	else
		v *= mul;
	if (v > JOB_MEM_PER_NODE_MB_MAX) {
		snprintf(why, wlen, "at most %lluT",
		    (unsigned long long)JOB_MEM_PER_NODE_MB_MAX / (1024 * 1024));
		return -1;
	}
	*mb = v;
	return 0;
bad:
	snprintf(why, wlen, "invalid memory size '%s' (MiB, or a number "
	    "with K, M, G or T: 4G, 512M)", s);
	return -1;
}

static int
parse_duration(const char *s, uint64_t *out, char *why, size_t wlen)
{
	if (duration_parse(s, out) == 0)
		return 0;
	if (errno == ERANGE)
		snprintf(why, wlen, "duration '%s' is too long", s);
	else
		snprintf(why, wlen, "invalid duration '%s'", s);
	return -1;
}

/* SIG@SECS: SIG as USR1, SIGUSR1 or a number; SECS as seconds or a
 * duration. "@SECS" may be left out to keep the grace period. */
static int
parse_ckpt_signal(struct job_spec *spec, const char *s, char *why,
    size_t wlen)
{
	const char *at = strchr(s, '@'), *name;
	char sig[32];
	uint32_t num, secs = spec->ckpt_secs;
	uint64_t d;
	int i;

	snprintf(sig, sizeof(sig), "%.*s", at ? (int)(at - s) : (int)strlen(s),
	    s);
	name = strncasecmp(sig, "SIG", 3) == 0 ? sig + 3 : sig;
	if (parse_u32(sig, 1, NSIG - 1, &num) == -1) {
		for (i = 1; i < NSIG; i++)
			if (sigabbrev_np(i) != NULL &&
			    strcasecmp(sigabbrev_np(i), name) == 0)
				break;
		if (name[0] == '\0' || i == NSIG) {
			snprintf(why, wlen, "unknown signal '%s' (expected "
			    "SIG@SECS, e.g. USR1@60)", sig);
			return -1;
		}
		num = (uint32_t)i;
	}
	if (at != NULL && parse_u32(at + 1, 0, UINT32_MAX, &secs) == -1) {
		if (duration_parse(at + 1, &d) == -1 || d > UINT32_MAX) {
			snprintf(why, wlen, "invalid grace period '%s' "
			    "(seconds or a duration)", at + 1);
			return -1;
		}
		secs = (uint32_t)d;
	}
	spec->ckpt_signal = (int)num;
	spec->ckpt_secs = secs;
	return 0;
}

static int
set_str(char **dst, const char *s)
{
	char *copy;

	if ((copy = strdup(s)) == NULL)
		return -1;
	free(*dst);
	*dst = copy;
	return 0;
}

/* --gpus-per-node: all (the default), 0 (a CPU-only job: the tasks get
 * no GPU), N, or sbatch's TYPE:N. */
static int
parse_gpus(struct job_spec *spec, const char *arg, char *why, size_t wlen)
{
	const char *colon = strrchr(arg, ':');
	uint32_t u;

	if (strcmp(arg, "all") == 0) {
		spec->gpus_per_node = 0;
		spec->cpu_only = false;
		return 0;
	}
	if (parse_u32(colon != NULL ? colon + 1 : arg, 0, UINT32_MAX,
	    &u) == -1 || colon == arg) {
		snprintf(why, wlen, "invalid GPU count '%s' (a number, "
		    "TYPE:N or all)", arg);
		return -1;
	}
	if (colon != NULL) {
		char *type = strndup(arg, (size_t)(colon - arg));

		if (type == NULL)
			return -1;
		free(spec->gpu_type);
		spec->gpu_type = type;
	}
	spec->gpus_per_node = u;
	spec->cpu_only = u == 0;
	return 0;
}

/* --gres gpu[:TYPE][:N], as sbatch: "gpu" alone is one GPU. Only GPUs:
 * Cohort has no other generic resources, and dropping one would change
 * what the job gets without a word. */
static int
parse_gres(struct job_spec *spec, const char *arg, char *why, size_t wlen)
{
	char buf[160];
	const char *rest, *colon;

	if (strncmp(arg, "gpu", 3) != 0 || (arg[3] != '\0' && arg[3] != ':') ||
	    strchr(arg, ',') != NULL) {
		snprintf(why, wlen, "'%s': only GPUs are supported "
		    "(gpu:N or gpu:TYPE:N)", arg);
		return -1;
	}
	rest = arg[3] == ':' ? arg + 4 : "1";
	colon = strchr(rest, ':');
	if (colon == NULL && (rest[0] < '0' || rest[0] > '9')) {
		/* gpu:TYPE: one GPU of that type. */
		if (snprintf(buf, sizeof(buf), "%s:1", rest) >=
		    (int)sizeof(buf))
			goto bad;
		rest = buf;
	}
	if (rest[0] == '\0' || (colon != NULL && strchr(colon + 1, ':')))
		goto bad;
	if (parse_gpus(spec, rest, why, wlen) == 0)
		return 0;
bad:
	snprintf(why, wlen, "invalid '%s' (gpu:N or gpu:TYPE:N)", arg);
	return -1;
}

/* -G/--gpus and --gpus-per-task: [TYPE:]N, N at least 1 (Slurm's 0 asks
 * for nothing: say no GPUs with --gpus-per-node 0). */
static int
parse_typed_count(struct job_spec *spec, const char *arg, uint32_t *n,
    char *why, size_t wlen)
{
	const char *colon = strrchr(arg, ':');
	char *type;

	if (colon == arg || parse_u32(colon != NULL ? colon + 1 : arg, 1,
	    UINT32_MAX, n) == -1) {
		snprintf(why, wlen, "invalid GPU count '%s' ([TYPE:]N, N at "
		    "least 1)", arg);
		return -1;
	}
	if (colon == NULL)
		return 0;
	if ((type = strndup(arg, (size_t)(colon - arg))) == NULL)
		return -1;
	free(spec->gpu_type);
	spec->gpu_type = type;
	return 0;
}

/* --signal [B:]SIG[@SECS], sbatch's spelling of --checkpoint-signal.
 * "R:" (reservations) has no meaning here. */
static int
parse_signal(struct job_spec *spec, const char *arg, char *why, size_t wlen)
{
	/* A batch job's: B: its script, else its steps' tasks, as
	 * Slurm's (a job of tasks has only its tasks to signal). */
	spec->signal_scope = JOB_SIGNAL_STEPS;
	if (strncmp(arg, "B:", 2) == 0) {
		arg += 2;
		spec->signal_scope = JOB_SIGNAL_BATCH;
	} else if (strncmp(arg, "R:", 2) == 0) {
		snprintf(why, wlen, "R: (reservations) is not supported by "
		    "Cohort");
		return -1;
	}
	return parse_ckpt_signal(spec, arg, why, wlen);
}

/* -b/--begin TIME, as sbatch reads it (duration_parse_begin). */
static int
parse_begin(struct job_spec *spec, const char *arg, char *why, size_t wlen)
{
	time_t at;

	if (duration_parse_begin(arg, time(NULL), &at) == -1) {
		snprintf(why, wlen, "'%s' is not a time (now+1h, now+30m, "
		    "16:00, 2026-12-24T08:00, tomorrow, midnight, noon, "
		    "teatime)", arg);
		return -1;
	}
	spec->begin_ms = (int64_t)at * 1000;
	return 0;
}

/* -D/--chdir: a relative directory is taken from this one, as sbatch
 * takes it. (--workdir, older, must be absolute: see submit_workdir.) */
static int
set_chdir(struct job_spec *spec, const char *arg, char *why, size_t wlen)
{
	char cwd[PATH_MAX], *path;

	if (arg[0] == '/')
		return set_str(&spec->workdir, arg);
	if (arg[0] == '\0') {
		snprintf(why, wlen, "an empty directory");
		return -1;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		snprintf(why, wlen, "cannot name this directory: %s",
		    strerror(errno));
		return -1;
	}
	if (strcmp(arg, ".") == 0)
		return set_str(&spec->workdir, cwd);
	if (asprintf(&path, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "",
	    arg) == -1)
		return -1;
	free(spec->workdir);
	spec->workdir = path;
	return 0;
}

/* The --container-* options: each value checked as it comes, so that the
 * error names the option; that the others come with an image is checked
 * with the whole spec (ctr_validate). */
static int
parse_container(struct job_container *c, int opt, const char *arg,
    char *why, size_t wlen)
{
	struct ctr_image_ref ref;
	struct ctr_mount *m;
	struct job_container one;
	struct cerr cerr;
	const char *t;
	size_t n;
	int rc = 0;

	memset(&one, 0, sizeof(one));
	switch (opt) {
	case O_CTR_IMAGE:
		rc = ctr_image_parse(arg, &ref, &cerr);
		if (rc == 0 && set_str(&c->image, arg) == -1)
			return -1;
		break;
	case O_CTR_MOUNTS:
		if ((rc = ctr_mounts_parse(arg, &m, &n, &cerr)) == 0) {
			ctr_mounts_free(m, n);
			return set_str(&c->mounts, arg);
		}
		break;
	case O_CTR_WORKDIR:
	case O_CTR_ENV:
	case O_CTR_NAME:
		/* Checked alone, as with an image. */
		one.image = (char *)"/";
		*(opt == O_CTR_WORKDIR ? &one.workdir : opt == O_CTR_ENV ?
		    &one.env : &one.name) = (char *)arg;
		if ((rc = ctr_validate(&one, &cerr)) == 0)
			return set_str(opt == O_CTR_WORKDIR ? &c->workdir :
			    opt == O_CTR_ENV ? &c->env : &c->name, arg);
		break;
	case O_CTR_WRITABLE:
	case O_CTR_READONLY:
		c->writable = opt == O_CTR_WRITABLE;
		return 0;
	case O_CTR_HOME:
	case O_CTR_NO_HOME:
		c->mount_home = opt == O_CTR_HOME;
		return 0;
	case O_CTR_SAVE:
		snprintf(why, wlen, "%s", ctr_save_refused);
		return -1;
	}
	if (rc == 0)
		return 0;
	/* "--container-x 'v': why" reads "--container-x: 'v': why". */
	t = cerr.text;
	if (strncmp(t, "--container-", 12) == 0) {
		t += strcspn(t, " :");
		t += strspn(t, " :");
	}
	snprintf(why, wlen, "%s", t);
	return -1;
}

/* Apply one option's value to the spec. 0, or -1 with why filled (or
 * left empty for ENOMEM). */
static int
submit_option(struct submit_ctx *ctx, int opt, const char *arg, char *why,
    size_t wlen)
{
	struct job_spec *spec = &ctx->spec;
	struct cerr cerr;
	long long v;
	char *end;
	uint32_t u;

	switch (opt) {
	case O_NAME:
		return set_str(&spec->name, arg);
	case O_NODES:
		ctx->nodes_given = ctx->pn.nodes_given = true;
		return parse_nodes(spec, arg, why, wlen);
	case O_GPUS:
		ctx->pn.gpn_given = true;
		return parse_gpus(spec, arg, why, wlen);
	case O_GRES:
		ctx->pn.gpn_given = true;
		return parse_gres(spec, arg, why, wlen);
	case O_TASKS:
		if (parse_u32(arg, 0, UINT32_MAX, &u) == -1)
			break;
		ctx->pn.tasks_given = true;
		spec->tasks_per_node = u;
		return 0;
	/* Slurm's totals and per-GPU amounts: kept until every option is
	 * in, then made per node (pernode.h). */
	case O_NTASKS:
		if (parse_u32(arg, 1, UINT32_MAX, &ctx->pn.ntasks) == -1)
			break;
		return 0;
	case O_GPUS_TOTAL:
		return parse_typed_count(spec, arg, &ctx->pn.gpus, why, wlen);
	case O_GPUS_PER_TASK:
		return parse_typed_count(spec, arg, &ctx->pn.gpus_per_task,
		    why, wlen);
	case O_NTASKS_PER_GPU:
		if (parse_u32(arg, 1, UINT32_MAX, &ctx->pn.ntasks_per_gpu) ==
		    -1)
			break;
		return 0;
	case O_CPUS_PER_GPU:
		if (parse_u32(arg, 1, JOB_CPUS_PER_NODE_MAX,
		    &ctx->pn.cpus_per_gpu) == -1) {
			snprintf(why, wlen, "invalid CPU count '%s' (1 to %u)",
			    arg, JOB_CPUS_PER_NODE_MAX);
			return -1;
		}
		return 0;
	case O_MEM_PER_GPU:
		return parse_mem(arg, &ctx->pn.mem_per_gpu_mb, why, wlen);
	case O_GPU_TYPE:
		return set_str(&spec->gpu_type, arg);
	case O_TIME:
		/* Slurm's words for no limit, so that a script keeps its
		 * meaning; a queue's max_time still applies. */
		if (strcasecmp(arg, "UNLIMITED") == 0 ||
		    strcasecmp(arg, "INFINITE") == 0) {
			spec->time_limit_s = 0;
			return 0;
		}
		return parse_duration(arg, &spec->time_limit_s, why, wlen);
	case O_HANG:
		return parse_duration(arg, &spec->hang_timeout_s, why, wlen);
	case O_ON_STRAGGLER:
		if (strcmp(arg, "report") == 0)
			spec->on_straggler = JOB_STRAGGLER_REPORT;
		else if (strcmp(arg, "replace") == 0)
			spec->on_straggler = JOB_STRAGGLER_REPLACE;
		else {
			snprintf(why, wlen, "'%s' is not report or replace",
			    arg);
			return -1;
		}
		return 0;
	case O_PRIORITY:
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || v < INT32_MIN ||
		    v > INT32_MAX)
			break;
		spec->priority = (int32_t)v;
		return 0;
	case O_TOPO:
	case O_TOPO_PREFER:
		if (opt == O_TOPO ? ctx->topo_prefer : ctx->topo) {
			snprintf(why, wlen, "cannot be combined with %s",
			    opt == O_TOPO ? "--topology-prefer" : "--topology");
			return -1;
		}
		*(opt == O_TOPO ? &ctx->topo : &ctx->topo_prefer) = true;
		spec->topo_mode = opt == O_TOPO ? TOPO_REQUIRED : TOPO_PREFERRED;
		return set_str(&spec->topo_level, arg);
	case O_CKPT_DIR:
		return set_str(&spec->checkpoint_dir, arg);
	case O_MAX_RESTARTS:
		if (parse_u32(arg, 0, UINT32_MAX, &u) == -1)
			break;
		spec->max_restarts = u;
		return 0;
	case O_REQUEUE:
		/* The default; after a --no-requeue (a script's, say) it
		 * brings the default back. */
		if (spec->max_restarts == 0)
			spec->max_restarts = JOB_DEFAULT_MAX_RESTARTS;
		return 0;
	case O_NO_REQUEUE:
		spec->max_restarts = 0;
		return 0;
	case O_CKPT_SIGNAL:
		return parse_ckpt_signal(spec, arg, why, wlen);
	case O_SIGNAL:
		return parse_signal(spec, arg, why, wlen);
	case O_ENV:
		if (arg[0] == '=' || strchr(arg, '=') == NULL) {
			snprintf(why, wlen, "expected KEY=VALUE, got '%s'",
			    arg);
			return -1;
		}
		return strv_append(&spec->env, &spec->nenv, arg);
	case O_EXPORT:
		/* Checked, with the environment, once every option is in
		 * (export_build): the last one counts. */
		return set_str(&ctx->export, arg);
	case O_WORKDIR:
		return set_str(&spec->workdir, arg);
	case O_CHDIR:
		return set_chdir(spec, arg, why, wlen);
	case O_BEGIN:
		return parse_begin(spec, arg, why, wlen);
	case O_QUEUE:
	case O_PARTITION:
		return set_str(&spec->queue, arg);
	case O_ACCOUNT:
		return set_str(&spec->account, arg);
	case O_QOS:
		return set_str(&spec->qos, arg);
	case O_SERVICE:
		spec->service = true;
		return 0;
	/* The controller checks these (lib/job.c, lib/array.c,
	 * lib/depend.c) for every client alike. */
	case O_OUTPUT:
		return set_str(&spec->output, arg);
	case O_ERROR:
		return set_str(&spec->error, arg);
	case O_ARRAY:
		return set_str(&spec->array, arg);
	case O_DEPEND:
		return set_str(&spec->dependency, arg);
	case O_NODELIST:
		return set_str(&spec->nodelist, arg);
	case O_EXCLUDE:
		return set_str(&spec->exclude, arg);
	case O_CONSTRAINT:
		return set_str(&spec->constraint, arg);
	case O_IDEM_KEY:
		return set_str(&spec->idem_key, arg);
	case O_MAIL_TYPE:
		if (job_mail_type_parse(arg, &spec->mail_type, &cerr) == -1) {
			snprintf(why, wlen, "%s", cerr.text);
			return -1;
		}
		return 0;
	case O_MAIL_USER:
		if (job_mail_user_check(arg, &cerr) == -1) {
			snprintf(why, wlen, "%s", cerr.text +
			    (strncmp(cerr.text, "--mail-user: ", 13) == 0 ?
			    13 : 0));
			return -1;
		}
		return set_str(&spec->mail_user, arg);
	case O_GPU_MEMORY:
		return parse_gpu_memory(arg, &spec->gpu_memory_mb, why, wlen);
	case O_CTR_IMAGE:
	case O_CTR_MOUNTS:
	case O_CTR_WORKDIR:
	case O_CTR_WRITABLE:
	case O_CTR_READONLY:
	case O_CTR_ENV:
	case O_CTR_HOME:
	case O_CTR_NO_HOME:
	case O_CTR_NAME:
	case O_CTR_SAVE:
		return parse_container(&spec->ctr, opt, arg, why, wlen);
	case O_CPUS:
		if (parse_u32(arg, 1, JOB_CPUS_PER_NODE_MAX, &u) == -1) {
			snprintf(why, wlen, "invalid CPU count '%s' (1 to %u)",
			    arg, JOB_CPUS_PER_NODE_MAX);
			return -1;
		}
		ctx->pn.cpt_given = true;
		spec->cpus_per_task = u;
		return 0;
	case O_MEM:
		ctx->pn.mem_given = true;
		return parse_mem(arg, &spec->mem_per_node_mb, why, wlen);
	case O_SEGMENT:
		if (parse_u32(arg, 1, UINT32_MAX, &u) == -1)
			break;
		spec->segment = u;
		return 0;
	case O_HOLD:
		spec->hold = true;
		return 0;
	case O_BATCH:
		spec->batch = true;
		return 0;
	case O_EXCLUSIVE:
		spec->exclusive = true;
		return 0;
	}
	snprintf(why, wlen, "invalid number '%s'", arg);
	return -1;
}

static const struct option *
submit_findopt(int opt)
{
	const struct option *o;

	for (o = submit_longopts; o->name != NULL; o++)
		if (o->val == opt)
			return o;
	return NULL;
}

/* Parse one vector of words (argv[0] is not an option) into ctx and the
 * connection flags. Returns 0 with p filled, -2 for --help, or an exit
 * code after printing the error. */
static int
submit_parse(struct submit_ctx *ctx, struct output_conn_flags *cf,
    int argc, char **argv, const struct submit_src *src,
    struct submit_pass *p)
{
	const struct option *o;
	char why[512], oname[40];
	int ch, before, li;

	memset(p, 0, sizeof(*p));
	optind = 0;	/* GNU: start over on a new vector */
	opterr = 0;
	for (;;) {
		before = optind ? optind : 1;
		li = -1;
		if ((ch = getopt_long(argc, argv, SUBMIT_SHORTOPTS,
		    submit_longopts, &li)) == -1)
			break;
		/* Long options are written out in full: getopt_long's
		 * abbreviations would let --ntasks and --gpus mean some
		 * other option whenever one is missing from the table. */
		if (li >= 0 && strcspn(argv[before] + 2, "=") !=
		    strlen(submit_longopts[li].name))
			return submit_error(src, "%.*s: unknown option (long "
			    "options are written out in full: --%s?)",
			    (int)strcspn(argv[before], "="), argv[before],
			    submit_longopts[li].name);
		if (ch == O_HELP && src->file == NULL)
			return -2;
		if (ch == '?' || ch == ':' || ch == O_HELP) {
			if (src->file == NULL)
				return output_usage_error("submit", ch, argv);
			return submit_error(src, ch == ':' ?
			    "%s: missing argument" : "unknown option '%s'",
			    argv[before]);
		}
		if (output_conn_flag(cf, ch, optarg))
			continue;
		why[0] = '\0';
		if (submit_option(ctx, ch, optarg, why, sizeof(why)) == -1) {
			/* Name the option as it was typed: -t or --time. */
			o = submit_findopt(ch);
			if (strncmp(argv[before], "--", 2) == 0 || ch >= 0x100)
				snprintf(oname, sizeof(oname), "--%s",
				    o != NULL ? o->name : "?");
			else
				snprintf(oname, sizeof(oname), "-%c", ch);
			return submit_error(src, "%s: %s", oname,
			    why[0] ? why : "out of memory");
		}
	}
	p->rest = optind;
	p->dashdash = optind > before && strcmp(argv[before], "--") == 0;
	if (src->file != NULL && optind < argc)
		return submit_error(src, "unexpected %s '%s' in a #COHORT line",
		    p->dashdash ? "command" : "argument", argv[optind]);
	return 0;
}

/* sbatch's options, translated (script_sbatch.h), applied as Cohort's
 * own: a warning printed for each accepted one that changes nothing, a
 * refusal for each refused one, counted in *nrefused, so that a script
 * learns every refusal at once. tag is "#SBATCH " for a script's line.
 * sbatch's own options (SBATCH_SELF) are the caller's. 0, or an exit
 * code when out of memory. */
static int
submit_sbatch_opts(struct submit_ctx *ctx, const struct script_sbatch_opt *v,
    size_t n, const struct submit_src *src, const char *tag,
    size_t *nrefused)
{
	const struct option *o;
	char why[512];
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].kind == SBATCH_WARN) {
			if (src->file == NULL)
				fprintf(stderr, "cohort: %s: warning: %s\n",
				    src->cmd, v[i].text);
			else
				fprintf(stderr, "cohort: %s:%zu: warning: "
				    "%s%s\n", src->file, src->line, tag,
				    v[i].text);
			continue;
		}
		if (v[i].kind == SBATCH_REFUSE) {
			submit_error(src, "%s%s", tag, v[i].text);
			(*nrefused)++;
			continue;
		}
		if (v[i].kind != SBATCH_MAP)
			continue;
		for (o = submit_longopts; o->name != NULL; o++)
			if (strcmp(o->name, v[i].name) == 0)
				break;
		if (o->name == NULL) {	/* script_sbatch.c names ours only */
			submit_error(src, "%s%s: internal error: no option "
			    "--%s", tag, v[i].orig, v[i].name);
			return EXIT_FAILED;
		}
		why[0] = '\0';
		if (submit_option(ctx, o->val, v[i].value, why,
		    sizeof(why)) == -1) {
			if (why[0] == '\0') {
				output_error("out of memory");
				return EXIT_FAILED;
			}
			submit_error(src, "%s%s: %s", tag, v[i].orig, why);
			(*nrefused)++;
		}
	}
	return 0;
}

/* One #SBATCH line of a script run by cohort submit: sbatch's own
 * options are refused there. 0 or an exit code. */
static int
submit_sbatch(struct submit_ctx *ctx, const struct script_line *sl,
    const struct submit_src *src, bool sbatch, size_t *nrefused)
{
	struct script_sbatch_opt *opts;
	struct cerr err;
	size_t n, i;
	int rc;

	cerr_clear(&err);
	if (script_sbatch_parse(sl->argv, sl->argc, NULL, &opts, &n,
	    &err) == -1) {
		output_error("%s", err.text);
		return EXIT_FAILED;
	}
	rc = submit_sbatch_opts(ctx, opts, n, src, "#SBATCH ", nrefused);
	for (i = 0; i < n && rc == 0; i++) {
		if (opts[i].kind != SBATCH_SELF)
			continue;
		if (!sbatch || strcmp(opts[i].name, "wrap") == 0) {
			submit_error(src, "#SBATCH %s: not supported %s",
			    opts[i].orig, sbatch ? "in a script (on sbatch's "
			    "command line only)" : "by cohort submit (an "
			    "option of the sbatch command)");
			(*nrefused)++;
		}
	}
	script_sbatch_free(opts, n);
	return rc;
}

/* The job runs where the user submits it unless told otherwise, as with
 * sbatch. A relative --workdir is sent as given: the controller refuses
 * it with a message naming the option, rather than us guessing. */
static int
submit_workdir(struct job_spec *spec)
{
	char cwd[PATH_MAX];

	if (spec->workdir != NULL)
		return 0;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	return set_str(&spec->workdir, cwd);
}

/* Read the script at path, or standard input (named "stdin") when path
 * is NULL, refusing what the controller would refuse anyway. 0, or -1
 * after printing why, cmd first. */
static int
submit_read_as(const char *cmd, const char *path, struct job_spec *spec)
{
	size_t max = JOB_SCRIPT_DEFAULT_MAX, len = 0;
	const char *name = path != NULL ? path : "stdin", *slash;
	char *buf;
	ssize_t n;
	int fd = 0;

	if (path != NULL && (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		output_error("%s: %s: %s%s", cmd, path, strerror(errno),
		    errno == ENOENT && strcmp(cmd, "submit") == 0 ?
		    " (to run a command, put it after --)" : "");
		return -1;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		output_error("%s: out of memory", cmd);
		goto fail;
	}
	while (len <= max && (n = read(fd, buf + len, max + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			output_error("%s: %s: %s", cmd, name, strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	if (len > max) {
		output_error("%s: %s: larger than %zu MiB", cmd, name,
		    max / (1024 * 1024));
		goto fail;
	}
	if (path != NULL)
		close(fd);
	slash = strrchr(name, '/');
	spec->script = buf;
	spec->script_len = len;
	return set_str(&spec->script_name, slash ? slash + 1 : name);
fail:
	if (path != NULL)
		close(fd);
	free(buf);
	return -1;
}

static int
submit_read(const char *path, struct job_spec *spec)
{
	return submit_read_as("submit", path, spec);
}

int
submit_read_script(const char *cmd, const char *path, struct job_spec *spec)
{
	return submit_read_as(cmd, path, spec);
}

/* One #COHORT line's words behind a dummy argv[0] (getopt never looks at
 * it). The vector is kept for the caller to free: connection flags may
 * point into it. 0 or an exit code. */
static int
submit_cohort_line(struct submit_ctx *ctx, struct output_conn_flags *cf,
    const struct script_line *sl, const struct submit_src *src,
    char ***vec, size_t *nvec)
{
	struct submit_pass p;
	size_t i, first = *nvec;

	if (strv_append(vec, nvec, "submit") == -1)
		goto nomem;
	for (i = 0; i < sl->argc; i++)
		if (strv_append(vec, nvec, sl->argv[i]) == -1)
			goto nomem;
	return submit_parse(ctx, cf, (int)(*nvec - first), *vec + first, src,
	    &p);
nomem:
	output_error("submit: out of memory");
	return EXIT_FAILED;
}

/* The #COHORT and #SBATCH lines of the script in ctx->spec, named file,
 * in the order written: a later one wins, #COHORT or #SBATCH alike.
 * Every line is read and every refusal printed, naming its line, before
 * the script is refused; sbatch says whether sbatch's own options may
 * appear. The #COHORT words stay in *vec for the caller to free. 0 or an
 * exit code. */
static int
submit_lines(struct submit_ctx *ctx, struct output_conn_flags *cf,
    const char *file, bool sbatch, char ***vec, size_t *nvec)
{
	struct submit_src src = { file, 0, "submit" };
	struct script_line *lines = NULL;
	struct cerr err;
	size_t nlines = 0, i, nrefused = 0;
	int rc = 0;

	cerr_clear(&err);
	if (script_lines(ctx->spec.script, ctx->spec.script_len, &lines,
	    &nlines, &err) == -1) {
		/* err says "line N: why"; make it "SCRIPT:N: why". */
		if (strncmp(err.text, "line ", 5) == 0)
			output_error("%s:%s", file, err.text + 5);
		else
			output_error("%s: %s", file, err.text);
		return err.code == ERR_INTERNAL ? EXIT_FAILED : EXIT_USAGE;
	}
	for (i = 0; i < nlines && rc == 0; i++) {
		src.line = lines[i].lineno;
		if (lines[i].tag == SCRIPT_TAG_SBATCH)
			rc = submit_sbatch(ctx, &lines[i], &src, sbatch,
			    &nrefused);
		else if ((rc = submit_cohort_line(ctx, cf, &lines[i], &src,
		    vec, nvec)) == EXIT_USAGE) {
			nrefused++;
			rc = 0;
		}
	}
	script_lines_free(lines, nlines);
	if (rc != 0)
		return rc;
	if (nrefused > 1)
		output_error("%s: %zu options refused (above): nothing "
		    "submitted", file, nrefused);
	return nrefused > 0 ? EXIT_USAGE : 0;
}

/* Script mode: the script's lines, then the command line's options again
 * so that they win. 0 or an exit code. */
static int
submit_script(struct submit_ctx *ctx, struct output_conn_flags *cf,
    int argc, char **argv, const struct submit_pass *cl, char ***vec,
    size_t *nvec)
{
	struct submit_src cmdline = { NULL, 0, "submit" };
	struct submit_pass p;
	size_t i;
	int rc;

	ctx_clear(ctx);
	if (submit_read(argv[cl->rest], &ctx->spec) == -1)
		return EXIT_USAGE;
	if ((rc = submit_lines(ctx, cf, argv[cl->rest], false, vec,
	    nvec)) != 0 ||
	    (rc = submit_parse(ctx, cf, cl->rest, argv, &cmdline, &p)) != 0)
		return rc;
	for (i = (size_t)cl->rest + 1; i < (size_t)argc; i++)
		if (strv_append(&ctx->spec.argv, &ctx->spec.argc,
		    argv[i]) == -1) {
			output_error("submit: out of memory");
			return EXIT_FAILED;
		}
	return 0;
}

/* --nodelist without -N: the job gets as many nodes as the list names,
 * as with sbatch. A list that does not parse is left for the controller
 * to refuse with its reason. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
submit_nodelist_size(struct submit_ctx *ctx)
{
	char **names;
	size_t n, i, distinct = 0;

	if (ctx->spec.nodelist == NULL || ctx->nodes_given ||
	    hostlist_expand(ctx->spec.nodelist, JOB_NODES_LIMIT, &names, &n,
	    NULL, 0) == -1)
		return;
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++)
		distinct += i == 0 || strcmp(names[i], names[i - 1]) != 0;
	hostlist_free(names, n);
	if (distinct > 0) {
		ctx->spec.nodes_min = ctx->spec.nodes_max = (uint32_t)distinct;
		ctx->pn.nodes_given = true;
	}
}

/* The job's environment: --export applied to ours, --env on top. */
static int
submit_env(struct submit_ctx *ctx, const char *cmd)
{
	extern char **environ;
	struct export_note note;
	struct cerr err;
	char **env;
	size_t n;

	cerr_clear(&err);
	if (export_build(ctx->export, environ, ctx->spec.env, ctx->spec.nenv,
	    &env, &n, &note, &err) == -1) {
		output_error("%s: %s", cmd, err.text);
		return err.code == ERR_INTERNAL ? EXIT_FAILED : EXIT_USAGE;
	}
	if (note.nskipped > 0)
		fprintf(stderr, "cohort: %s: note: %zu variable%s not "
		    "exported, %s not valid UTF-8: %s%s\n", cmd, note.nskipped,
		    note.nskipped == 1 ? "" : "s",
		    note.nskipped == 1 ? "its value is" : "their values are",
		    note.names, note.nskipped > 8 ? ",..." : "");
	strv_free(ctx->spec.env, ctx->spec.nenv);
	ctx->spec.env = env;
	ctx->spec.nenv = n;
	return 0;
}

/* "c-" and 32 hex digits of the kernel's randomness into buf. 0, or -1
 * with errno. */
static int
submit_random_key(char *buf, size_t len)
{
	unsigned char r[16];
	size_t i;

	if (len < 2 + 2 * sizeof(r) + 1) {
		errno = ENOBUFS;
		return -1;
	}
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	buf[0] = 'c';
	buf[1] = '-';
	for (i = 0; i < sizeof(r); i++)
		snprintf(buf + 2 + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int
submit_send(const struct job_spec *spec, const struct cconn_opts *opts,
    const struct output_conn_flags *cf, uint64_t *id)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__SubmitRequest sub = COHORT__V1__SUBMIT_REQUEST__INIT;
	Cohort__V1__JobSpec pb = COHORT__V1__JOB_SPEC__INIT;
	Cohort__V1__Container ctr;
	struct cconn *c;
	struct cerr err;
	char key[40];
	int rc;

	if ((rc = output_connect(opts, cf, &c)) != EXIT_OK)
		return rc;
	wire_spec_to_pb(spec, &pb);
	pb.container = wire_ctr_to_pb(&spec->ctr, &ctr);
	/* Without --idempotency-key, a key of this submit's own: the
	 * connection may send it again after a failover that lost the
	 * reply (client/conn.c) without making a second job. */
	if (spec->idem_key == NULL) {
		if (submit_random_key(key, sizeof(key)) == -1) {
			output_error("submit: cannot make an idempotency key: "
			    "%s", strerror(errno));
			cconn_close(c);
			return EXIT_FAILED;
		}
		pb.idempotency_key = key;
	}
	sub.spec = &pb;
	req.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT;
	req.submit = &sub;
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		rc = output_call_error(&err);
	else if (rep->body_case == COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY) {
		*id = rep->submit_reply->job_id;
		if (rep->submit_reply->existing && spec->idem_key != NULL)
			output_error("submit: job %" PRIu64 " was submitted "
			    "with --idempotency-key %s before: nothing new "
			    "submitted", *id, spec->idem_key);
		rc = EXIT_OK;
	} else
		rc = output_reply_error("submit", rep);
	frame_free(rep);
	cconn_close(c);
	return rc;
}

/* Our umask: the only way to read it is to set one, so it is put back
 * at once. The tasks start with it (as Slurm's SLURM_UMASK), so that
 * their files are no more readable than the submitter's own. */
static uint32_t
submit_umask(void)
{
	mode_t m;

	m = umask(0);
	umask(m);
	return (uint32_t)m & JOB_UMASK_MAX;
}

/* This host's name, for the job's SLURM_SUBMIT_HOST. A name the
 * controller would refuse (or none) is not sent: the job is worth more
 * than the variable. 0, or -1 (ENOMEM). */
static int
submit_host(struct job_spec *spec)
{
	char host[JOB_SUBMIT_HOST_MAX + 1];
	struct cerr err;

	if (gethostname(host, sizeof(host)) == -1)
		return 0;
	host[sizeof(host) - 1] = '\0';
	if (job_submit_host_check(host, &err) == -1)
		return 0;
	free(spec->submit_host);
	return (spec->submit_host = strdup(host)) == NULL ? -1 : 0;
}

/* What every way of submitting does once every option is in: the
 * working directory, the submitter's umask and host, the nodes a --nodelist
 * names, Slurm's totals made per node, the texts checked, the
 * environment. cmd names the command
 * in messages. 0 or an exit code after printing why. */
static int
submit_finish(struct submit_ctx *ctx, const char *cmd)
{
	struct cerr err;

	if (submit_workdir(&ctx->spec) == -1) {
		output_error("%s: cannot name the working directory: %s", cmd,
		    strerror(errno));
		return EXIT_FAILED;
	}
	ctx->spec.umask = submit_umask();
	ctx->spec.has_umask = true;
	if (submit_host(&ctx->spec) == -1) {
		output_error("%s: out of memory", cmd);
		return EXIT_FAILED;
	}
	submit_nodelist_size(ctx);
	cerr_clear(&err);
	if (pernode_apply(&ctx->pn, &ctx->spec, &err) == -1) {
		output_error("%s: %s", cmd, err.text);
		return EXIT_USAGE;
	}
	/* Control characters in a name, invalid UTF-8: refused here, with
	 * the option's name, before anything is sent; before --export
	 * joins the environment in, so that "--env (variable N)" counts
	 * the --env options (what export_build adds is valid UTF-8). */
	if (job_spec_check_text(&ctx->spec, &err) == -1) {
		output_error("%s: %s", cmd, err.text);
		return EXIT_USAGE;
	}
	return submit_env(ctx, cmd);
}

/* The spec from argv into ctx. 0, -2 for --help, or an exit code after
 * printing why. */
static int
submit_build(struct submit_ctx *ctx, int argc, char **argv,
    struct output_conn_flags *cf, char ***words, size_t *nwords)
{
	struct submit_src cmdline = { NULL, 0, "submit" };
	struct submit_pass p;
	int i, rc;

	if ((rc = submit_parse(ctx, cf, argc, argv, &cmdline, &p)) != 0)
		return rc;
	if (p.rest >= argc)
		return submit_error(&cmdline, "missing command (use -- CMD "
		    "[ARGS...] or a script; see cohort %s --help)", argv[0]);
	if (p.dashdash) {
		for (i = p.rest; i < argc; i++)
			if (strv_append(&ctx->spec.argv, &ctx->spec.argc,
			    argv[i]) == -1)
				goto nomem;
	} else if ((rc = submit_script(ctx, cf, argc, argv, &p, words,
	    nwords)) != 0)
		return rc;
	return submit_finish(ctx, "submit");
nomem:
	output_error("submit: out of memory");
	return EXIT_FAILED;
}

int
submit_prepare(int argc, char **argv, struct job_spec *spec,
    struct output_conn_flags *cf, char ***words, size_t *nwords)
{
	struct submit_ctx ctx = { .export = NULL };
	int rc;

	*words = NULL;
	*nwords = 0;
	memset(cf, 0, sizeof(*cf));
	job_spec_init(&ctx.spec);
	if ((rc = submit_build(&ctx, argc, argv, cf, words, nwords)) == 0) {
		/* The spec moves out; the rest of ctx goes. */
		job_spec_clear(spec);
		*spec = ctx.spec;
		job_spec_init(&ctx.spec);
	}
	ctx_clear(&ctx);
	return rc;
}

int
submit_prepare_sbatch(struct job_spec *spec, const char *file,
    const struct script_sbatch_opt *cl, size_t ncl, char *const *args,
    size_t nargs)
{
	struct submit_ctx ctx = { .export = NULL };
	struct submit_src cmdline = { NULL, 0, "sbatch" };
	struct output_conn_flags cf;
	char **words = NULL;
	size_t nwords = 0, nrefused = 0, i;
	int rc;

	memset(&cf, 0, sizeof(cf));
	ctx.spec = *spec;	/* the script moves in */
	job_spec_init(spec);
	/* Slurm's defaults where Cohort's differ: no GPU unless asked,
	 * and a program's failure is not run again (Slurm requeues
	 * nothing but for a node's failure; Cohort's one count of
	 * restarts cannot tell the two apart, so none unless
	 * --requeue). */
	ctx.spec.cpu_only = true;
	ctx.spec.max_restarts = 0;
	rc = submit_lines(&ctx, &cf, file, true, &words, &nwords);
	if (rc == EXIT_USAGE) {
		/* Refused: the command line's refusals are told too. */
		nrefused = 1;
		rc = 0;
	}
	if (rc == 0)
		rc = submit_sbatch_opts(&ctx, cl, ncl, &cmdline, "", &nrefused);
	if (rc == 0 && nrefused > 0)
		rc = EXIT_USAGE;
	for (i = 0; i < nargs && rc == 0; i++)
		if (strv_append(&ctx.spec.argv, &ctx.spec.argc, args[i]) == -1) {
			output_error("sbatch: out of memory");
			rc = EXIT_FAILED;
		}
	/* Slurm's default output file, in the working directory. */
	if (rc == 0 && ctx.spec.output == NULL &&
	    set_str(&ctx.spec.output, ctx.spec.array != NULL ?
	    "slurm-%A_%a.out" : "slurm-%j.out") == -1) {
		output_error("sbatch: out of memory");
		rc = EXIT_FAILED;
	}
	if (rc == 0 && (rc = submit_finish(&ctx, "sbatch")) == 0) {
		*spec = ctx.spec;
		job_spec_init(&ctx.spec);
	}
	ctx_clear(&ctx);
	strv_free(words, nwords);
	return rc;
}

const char *
submit_options_usage(void)
{
	return submit_usage;
}

int
cmd_submit(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags cf;
	struct job_spec spec;
	char **words;
	size_t nwords;
	uint64_t id;
	int rc;

	job_spec_init(&spec);
	rc = submit_prepare(argc, argv, &spec, &cf, &words, &nwords);
	if (rc == -2) {
		fputs(submit_usage, stdout);
		rc = EXIT_OK;
	} else if (rc == 0 &&
	    (rc = submit_send(&spec, opts, &cf, &id)) == EXIT_OK) {
		printf("%" PRIu64 "\n", id);
		rc = fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
	}
	job_spec_clear(&spec);
	strv_free(words, nwords);
	return rc;
}
