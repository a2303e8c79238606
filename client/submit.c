/* cohort submit: build a job spec from flags (and a script's #COHORT
 * lines), send it, print the new job's id. */
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
#include <unistd.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/script.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

enum {
	O_NAME = 0x100, O_NODES, O_GPUS, O_TASKS, O_GPU_TYPE, O_TIME,
	O_PRIORITY, O_TOPO, O_TOPO_PREFER, O_CKPT_DIR, O_MAX_RESTARTS,
	O_CKPT_SIGNAL, O_HANG, O_ENV, O_WORKDIR, O_QUEUE, O_SERVICE,
	O_OUTPUT, O_ERROR,
	O_HELP = 'h',
};

static const struct option submit_longopts[] = {
	{ "name", required_argument, NULL, O_NAME },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "gpus-per-node", required_argument, NULL, O_GPUS },
	{ "tasks-per-node", required_argument, NULL, O_TASKS },
	{ "gpu-type", required_argument, NULL, O_GPU_TYPE },
	{ "time", required_argument, NULL, O_TIME },
	{ "priority", required_argument, NULL, O_PRIORITY },
	{ "topology", required_argument, NULL, O_TOPO },
	{ "topology-prefer", required_argument, NULL, O_TOPO_PREFER },
	{ "checkpoint-dir", required_argument, NULL, O_CKPT_DIR },
	{ "max-restarts", required_argument, NULL, O_MAX_RESTARTS },
	{ "checkpoint-signal", required_argument, NULL, O_CKPT_SIGNAL },
	{ "hang-timeout", required_argument, NULL, O_HANG },
	{ "env", required_argument, NULL, O_ENV },
	{ "workdir", required_argument, NULL, O_WORKDIR },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "service", no_argument, NULL, O_SERVICE },
	{ "output", required_argument, NULL, O_OUTPUT },
	{ "error", required_argument, NULL, O_ERROR },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char submit_usage[] =
    "usage: cohort submit [OPTIONS] -- CMD [ARGS...]\n"
    "       cohort submit [OPTIONS] SCRIPT [ARGS...]\n"
    "\n"
    "  --name NAME                job name (default: the command's or script's)\n"
    "  --nodes N | MIN:MAX        gang size in nodes; a range makes it elastic\n"
    "  --gpus-per-node G          GPUs on each node (default: all)\n"
    "  --tasks-per-node T         processes per node (default 1)\n"
    "  --gpu-type TYPE            only nodes with this GPU model\n"
    "  --time LIMIT               wall-clock limit (90s, 30m, 2h, 1-00:00:00)\n"
    "  --priority P               higher runs first\n"
    "  --topology LEVEL           all nodes under one switch of LEVEL\n"
    "  --topology-prefer LEVEL    the same, if it can be had\n"
    "  --checkpoint-dir DIR       where the job writes checkpoints\n"
    "  --max-restarts N           restarts after failures (default 3)\n"
    "  --checkpoint-signal SIG@SECS  signal and grace before a stop (USR1@60)\n"
    "  --hang-timeout DURATION    restart when the progress file stalls\n"
    "  --env KEY=VALUE            environment (repeatable)\n"
    "  --workdir DIR              working directory (default: this one)\n"
    "  --queue Q                  the queue (default: the first listing you)\n"
    "  --service                  a long-running service: no time limit,\n"
    "                             restarted on any exit with back-off\n"
    "  --output FILE, --error FILE  stdout, stderr to FILE on the node\n"
    "                             (%j %A %a %t %n %N %x %u %%)\n"
    "  --server HOST:PORT --cert FILE --key FILE --ca FILE\n"
    "\n"
    "#COHORT lines at the top of SCRIPT take the same options; the\n"
    "command line overrides them.\n";

/* Where option words come from, for error messages. */
struct submit_src {
	const char *file;	/* the script, or NULL for the command line */
	const char *text;	/* the script's text */
	size_t len;
};

/* What one pass over a vector of option words found. */
struct submit_pass {
	int rest;		/* index of the first word after the options */
	bool dashdash;		/* the options ended with "--" */
	bool topo, topo_prefer;
};

/* The line of the script that word (0-based among the #COHORT words)
 * came from: the first line whose prefix of the script yields more than
 * that many words. Only run on an error, so the repeated parse is fine. */
static size_t
submit_word_line(const struct submit_src *src, size_t word)
{
	size_t lo = 1, hi = 1, mid, n, i, *ends = NULL, nlines = 0;
	char **v;
	size_t line = 0;

	for (i = 0; i <= src->len; i++) {
		if (i < src->len && src->text[i] != '\n')
			continue;
		size_t *ne = reallocarray(ends, nlines + 1, sizeof(*ends));
		if (ne == NULL)
			goto out;
		ends = ne;
		ends[nlines++] = i;
	}
	hi = nlines;
	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (script_options(src->text, ends[mid - 1], &v, &n,
		    NULL) == -1)
			n = 0;
		else
			strv_free(v, n);
		if (n > word) {
			line = mid;
			hi = mid - 1;
		} else
			lo = mid + 1;
	}
out:
	free(ends);
	return line;
}

/* Print an option error: "submit: ..." for the command line,
 * "SCRIPT:LINE: ..." for a #COHORT line. word is the vector index. */
static int
submit_error(const struct submit_src *src, int word, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (src->file == NULL)
		output_error("submit: %s", msg);
	else
		output_error("%s:%zu: %s", src->file,
		    submit_word_line(src, word > 0 ? (size_t)word - 1 : 0),
		    msg);
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

/* Apply one option's value to spec. 0, or -1 with why filled. */
static int
submit_option(struct job_spec *spec, struct submit_pass *p, int opt,
    const char *arg, char *why, size_t wlen)
{
	long long v;
	char *end;
	uint32_t u;

	switch (opt) {
	case O_NAME:
		return set_str(&spec->name, arg);
	case O_NODES:
		return parse_nodes(spec, arg, why, wlen);
	case O_GPUS:
		if (strcmp(arg, "all") == 0)
			u = 0;
		else if (parse_u32(arg, 0, UINT32_MAX, &u) == -1)
			break;
		spec->gpus_per_node = u;
		return 0;
	case O_TASKS:
		if (parse_u32(arg, 0, UINT32_MAX, &u) == -1)
			break;
		spec->tasks_per_node = u;
		return 0;
	case O_GPU_TYPE:
		return set_str(&spec->gpu_type, arg);
	case O_TIME:
		return parse_duration(arg, &spec->time_limit_s, why, wlen);
	case O_HANG:
		return parse_duration(arg, &spec->hang_timeout_s, why, wlen);
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
		if (opt == O_TOPO ? p->topo_prefer : p->topo) {
			snprintf(why, wlen, "cannot be combined with %s",
			    opt == O_TOPO ? "--topology-prefer" : "--topology");
			return -1;
		}
		*(opt == O_TOPO ? &p->topo : &p->topo_prefer) = true;
		spec->topo_mode = opt == O_TOPO ? TOPO_REQUIRED : TOPO_PREFERRED;
		return set_str(&spec->topo_level, arg);
	case O_CKPT_DIR:
		return set_str(&spec->checkpoint_dir, arg);
	case O_MAX_RESTARTS:
		if (parse_u32(arg, 0, UINT32_MAX, &u) == -1)
			break;
		spec->max_restarts = u;
		return 0;
	case O_CKPT_SIGNAL:
		return parse_ckpt_signal(spec, arg, why, wlen);
	case O_ENV:
		if (arg[0] == '=' || strchr(arg, '=') == NULL) {
			snprintf(why, wlen, "expected KEY=VALUE, got '%s'",
			    arg);
			return -1;
		}
		return strv_append(&spec->env, &spec->nenv, arg);
	case O_WORKDIR:
		return set_str(&spec->workdir, arg);
	case O_QUEUE:
		return set_str(&spec->queue, arg);
	case O_SERVICE:
		spec->service = true;
		return 0;
	case O_OUTPUT:
		return set_str(&spec->output, arg);
	case O_ERROR:
		return set_str(&spec->error, arg);
	}
	snprintf(why, wlen, "invalid number '%s'", arg);
	return -1;
}

static const char *
submit_optname(int opt)
{
	const struct option *o;

	for (o = submit_longopts; o->name != NULL; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/* Parse one vector of words (argv[0] is not an option) into spec and the
 * connection flags. Returns 0 with p filled, -2 for --help, or an exit
 * code after printing the error. */
static int
submit_parse(struct job_spec *spec, struct output_conn_flags *cf,
    int argc, char **argv, const struct submit_src *src,
    struct submit_pass *p)
{
	char why[512];
	int ch, before;

	memset(p, 0, sizeof(*p));
	optind = 0;	/* GNU: start over on a new vector */
	opterr = 0;
	for (;;) {
		before = optind ? optind : 1;
		if ((ch = getopt_long(argc, argv, "+:h", submit_longopts,
		    NULL)) == -1)
			break;
		if (ch == O_HELP && src->file == NULL)
			return -2;
		if (ch == '?' || ch == ':' || ch == O_HELP) {
			if (src->file == NULL)
				return output_usage_error("submit", ch, argv);
			return submit_error(src, before, ch == ':' ?
			    "%s: missing argument" : "unknown option '%s'",
			    argv[before]);
		}
		if (output_conn_flag(cf, ch, optarg))
			continue;
		why[0] = '\0';
		if (submit_option(spec, p, ch, optarg, why, sizeof(why)) == -1)
			return submit_error(src, before, "--%s: %s",
			    submit_optname(ch), why[0] ? why : "out of memory");
	}
	p->rest = optind;
	p->dashdash = optind > before && strcmp(argv[before], "--") == 0;
	if (src->file != NULL && optind < argc)
		return submit_error(src, optind, "unexpected %s '%s' in a "
		    "#COHORT line", p->dashdash ? "command" : "argument",
		    argv[optind]);
	return 0;
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

/* Read the script, refusing what the controller would refuse anyway. */
static int
submit_read(const char *path, struct job_spec *spec)
{
	size_t max = JOB_SCRIPT_DEFAULT_MAX, len = 0;
	char *buf;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		output_error("submit: %s: %s%s", path, strerror(errno),
		    errno == ENOENT ? " (to run a command, put it after --)" :
		    "");
		return -1;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		close(fd);
		output_error("submit: out of memory");
		return -1;
	}
	while (len <= max && (n = read(fd, buf + len, max + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			output_error("submit: %s: %s", path, strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	if (len > max) {
		output_error("submit: %s: larger than %zu MiB", path,
		    max / (1024 * 1024));
		goto fail;
	}
	close(fd);
	const char *slash = strrchr(path, '/');
	spec->script = buf;
	spec->script_len = len;
	return set_str(&spec->script_name, slash ? slash + 1 : path);
fail:
	close(fd);
	free(buf);
	return -1;
}

/* The script's #COHORT words behind a dummy argv[0] (getopt never looks
 * at it). 0, or an exit code after printing why. */
static int
submit_words(const struct submit_src *src, char ***vec, size_t *nvec)
{
	struct cerr err;
	char **words;
	size_t nwords, i;

	cerr_clear(&err);
	if (script_options(src->text, src->len, &words, &nwords, &err) == -1) {
		/* err says "line N: why"; make it "SCRIPT:N: why". */
		if (strncmp(err.text, "line ", 5) == 0)
			output_error("%s:%s", src->file, err.text + 5);
		else
			output_error("%s: %s", src->file, err.text);
		return EXIT_USAGE;
	}
	*vec = NULL;
	*nvec = 0;
	if (strv_append(vec, nvec, "submit") == -1)
		goto nomem;
	for (i = 0; i < nwords; i++)
		if (strv_append(vec, nvec, words[i]) == -1)
			goto nomem;
	strv_free(words, nwords);
	return 0;
nomem:
	strv_free(words, nwords);
	output_error("submit: out of memory");
	return EXIT_FAILED;
}

/* Script mode: the script's #COHORT options first, then the command
 * line's again so that they win. The words stay in *vec for the caller
 * to free: connection flags may point into them. 0 or an exit code. */
static int
submit_script(struct job_spec *spec, struct output_conn_flags *cf, int argc,
    char **argv, const struct submit_pass *cl, char ***vec, size_t *nvec)
{
	struct submit_src src = { argv[cl->rest], NULL, 0 };
	struct submit_src cmdline = { NULL, NULL, 0 };
	struct submit_pass p;
	int i, rc;

	job_spec_clear(spec);
	if (submit_read(src.file, spec) == -1)
		return EXIT_USAGE;
	src.text = spec->script;
	src.len = spec->script_len;
	if ((rc = submit_words(&src, vec, nvec)) != 0 ||
	    (rc = submit_parse(spec, cf, (int)*nvec, *vec, &src, &p)) != 0 ||
	    (rc = submit_parse(spec, cf, cl->rest, argv, &cmdline, &p)) != 0)
		return rc;
	for (i = cl->rest + 1; i < argc; i++)
		if (strv_append(&spec->argv, &spec->argc, argv[i]) == -1) {
			output_error("submit: out of memory");
			return EXIT_FAILED;
		}
	return 0;
}

/* Send the spec; print the new job's id. */
static int
submit_send(const struct job_spec *spec, const struct cconn_opts *opts,
    const struct output_conn_flags *cf)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__SubmitRequest sub = COHORT__V1__SUBMIT_REQUEST__INIT;
	Cohort__V1__JobSpec pb = COHORT__V1__JOB_SPEC__INIT;
	struct cconn *c;
	struct cerr err;
	int rc;

	if ((rc = output_connect(opts, cf, &c)) != EXIT_OK)
		return rc;
	wire_spec_to_pb(spec, &pb);
	sub.spec = &pb;
	req.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT;
	req.submit = &sub;
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		rc = output_call_error(&err);
	else if (rep->body_case == COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY) {
		printf("%" PRIu64 "\n", rep->submit_reply->job_id);
		rc = fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
	} else
		rc = output_reply_error("submit", rep);
	frame_free(rep);
	cconn_close(c);
	return rc;
}

int
cmd_submit(int argc, char **argv, const struct cconn_opts *opts)
{
	struct submit_src cmdline = { NULL, NULL, 0 };
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	struct submit_pass p;
	struct job_spec spec;
	struct cerr err;
	char **words = NULL;
	size_t nwords = 0;
	int i, rc;

	job_spec_init(&spec);
	if ((rc = submit_parse(&spec, &cf, argc, argv, &cmdline, &p)) == -2) {
		fputs(submit_usage, stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (rc != 0)
		goto out;
	if (p.rest >= argc) {
		rc = submit_error(&cmdline, 0, "missing command (use -- CMD "
		    "[ARGS...] or a script; see cohort submit --help)");
		goto out;
	}
	if (p.dashdash) {
		for (i = p.rest; i < argc; i++)
			if (strv_append(&spec.argv, &spec.argc, argv[i]) == -1)
				goto nomem;
	} else if ((rc = submit_script(&spec, &cf, argc, argv, &p, &words,
	    &nwords)) != 0)
		goto out;
	if (submit_workdir(&spec) == -1) {
		output_error("submit: cannot name the working directory: %s",
		    strerror(errno));
		rc = EXIT_FAILED;
		goto out;
	}
	/* Control characters in a name, invalid UTF-8: refused here, with
	 * the option's name, before anything is sent. */
	cerr_clear(&err);
	if (job_spec_check_text(&spec, &err) == -1) {
		output_error("submit: %s", err.text);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = submit_send(&spec, opts, &cf);
	goto out;
nomem:
	output_error("submit: out of memory");
	rc = EXIT_FAILED;
out:
	job_spec_clear(&spec);
	strv_free(words, nwords);
	return rc;
}
