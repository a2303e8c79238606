/* cohort hold, release, requeue and update (Slurm's scontrol
 * hold/release/requeue/update): acting on jobs that exist. The controller
 * judges every request (who may, which state); the CLI checks the syntax,
 * sends one request for all the jobs named, and says which failed. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/control.h"
#include "client/jobref.h"
#include "client/output.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

static int
control_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

static int
control_push(uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
	uint64_t *v;
	size_t ncap;

	if (*n == *cap) {
		ncap = *cap ? *cap * 2 : 64;
		if ((v = reallocarray(*ids, ncap, sizeof(*v))) == NULL)
			return -1;
		*ids = v;
		*cap = ncap;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

/* One argument: an id or a range A-B. This is where array references
 * (12_7, 12 for a whole array) are to be resolved through the
 * controller once client/jobref.h exists: jobref_resolve(c, arg, &v, &k,
 * &err) for an argument that is not a range. */
static int
control_job_arg(struct cconn *c, const char *cmd, const char *arg,
    uint64_t **ids, size_t *n, size_t *cap)
{
	const char *dash = strchr(arg, '-');
	struct jobref_ids refs;
	struct cerr err;
	char lo_s[32];
	uint64_t lo, hi, id, *v;
	size_t i, nv;
	int rc = 0;

	/* An array reference (12_7, 12_[1-5]) or a plain id, which may
	 * name a whole array: checked without a connection, resolved
	 * with one (a whole array: its tasks that have not ended). */
	if (strchr(arg, '_') != NULL || (dash == NULL &&
	    control_u64(arg, &lo) == 0 && lo != 0)) {
		if (c == NULL)
			return jobref_check(cmd, arg, NULL) == EXIT_OK ? 0 : -1;
		cerr_clear(&err);
		if (jobref_resolve(c, arg, &refs, &err) == -1) {
			output_error("%s: %s", cmd, err.text);
			return -1;
		}
		v = refs.array_id != 0 ? refs.live : refs.ids;
		nv = refs.array_id != 0 ? refs.nlive : refs.n;
		for (i = 0; i < nv && rc == 0; i++)
			if ((rc = control_push(ids, n, cap, v[i])) == -1)
				output_error("%s: out of memory", cmd);
		jobref_ids_clear(&refs);
		return rc;
	}
	if (dash == NULL) {
		if (control_u64(arg, &lo) == -1 || lo == 0)
			goto bad;
		hi = lo;
	} else {
		if ((size_t)(dash - arg) >= sizeof(lo_s))
			goto bad;
		snprintf(lo_s, sizeof(lo_s), "%.*s", (int)(dash - arg), arg);
		if (control_u64(lo_s, &lo) == -1 || lo == 0 ||
		    control_u64(dash + 1, &hi) == -1 || hi < lo) {
			output_error("%s: invalid job range '%s' (FIRST-LAST, "
			    "FIRST <= LAST)", cmd, arg);
			return -1;
		}
		if (hi - lo >= CONTROL_RANGE_MAX) {
			output_error("%s: range '%s' spans more than %d jobs",
			    cmd, arg, CONTROL_RANGE_MAX);
			return -1;
		}
	}
	for (id = lo;; id++) {
		if (control_push(ids, n, cap, id) == -1) {
			output_error("%s: out of memory", cmd);
			return -1;
		}
		if (id == hi)
			break;
	}
	return 0;
bad:
	output_error("%s: invalid job id '%s' (a positive integer, or a "
	    "range FIRST-LAST)", cmd, arg);
	return -1;
}

int
control_job_ids(struct cconn *c, const char *cmd, char *const *args, int n,
    uint64_t **ids, size_t *nids)
{
	size_t cap = 0, i, k;
	int a;

	*ids = NULL;
	*nids = 0;
	for (a = 0; a < n; a++)
		if (control_job_arg(c, cmd, args[a], ids, nids, &cap) == -1) {
			free(*ids);
			*ids = NULL;
			*nids = 0;
			return -1;
		}
	/* In id order, duplicates dropped (overlapping ranges). Without a
	 * connection, references were only checked: none may be here. */
	if (*nids > 1)
		qsort(*ids, *nids, sizeof(**ids), job_id_cmp);
	for (i = 0, k = 0; i < *nids; i++)
		if (k == 0 || (*ids)[k - 1] != (*ids)[i])
			(*ids)[k++] = (*ids)[i];
	*nids = k;
	return 0;
}

int
control_print_results(const char *cmd, Cohort__V1__JobResult *const *res,
    size_t n, bool verbose)
{
	int rc = EXIT_OK;
	size_t i;

	for (i = 0; i < n; i++) {
		if (res[i]->has_code) {
			output_error("%s %" PRIu64 ": %s", cmd, res[i]->job_id,
			    res[i]->text != NULL ? res[i]->text : "refused");
			rc = EXIT_FAILED;
		} else if (verbose)
			printf("job %" PRIu64 ": %s\n", res[i]->job_id,
			    res[i]->text != NULL ? res[i]->text : "done");
	}
	return rc;
}

enum {
	O_TIME = 0x100, O_PRIORITY, O_NAME, O_NODES, O_GPUS, O_TASKS,
	O_GPU_TYPE, O_QUEUE, O_MAX_RESTARTS, O_VERBOSE, O_HELP = 'h'
};

static const struct option control_longopts[] = {
	{ "time", required_argument, NULL, O_TIME },
	{ "priority", required_argument, NULL, O_PRIORITY },
	{ "name", required_argument, NULL, O_NAME },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "gpus-per-node", required_argument, NULL, O_GPUS },
	{ "tasks-per-node", required_argument, NULL, O_TASKS },
	{ "gpu-type", required_argument, NULL, O_GPU_TYPE },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "max-restarts", required_argument, NULL, O_MAX_RESTARTS },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char hold_usage[] =
    "usage: cohort hold JOB... [--verbose]\n"
    "  keep pending jobs from starting (JobHeldUser; an admin's hold is\n"
    "  JobHeldAdmin, which only an admin may release). JOB: an id or a\n"
    "  range FIRST-LAST. Only jobs that hold no nodes yet can be held.\n";
static const char release_usage[] =
    "usage: cohort release JOB... [--verbose]\n"
    "  let held jobs start again\n";
static const char requeue_usage[] =
    "usage: cohort requeue JOB... [--verbose]\n"
    "  checkpoint a running job (its --checkpoint-signal, up to its SECS\n"
    "  for a newer checkpoint), stop it and put it back to PENDING; it\n"
    "  resumes from its checkpoint and this counts as no restart. A job\n"
    "  that is not running is refused (nothing to requeue).\n";
static const char update_usage[] =
    "usage: cohort update JOB [--time T] [--priority P] [--name N]\n"
    "    [--nodes N|MIN:MAX] [--gpus-per-node G] [--tasks-per-node T]\n"
    "    [--gpu-type TYPE] [--queue Q] [--max-restarts N]\n"
    "  change a job. A pending job may change any of these, checked as a\n"
    "  submit would be; a running one only --time and --priority, which\n"
    "  its user may only lower (admins may also raise them).\n"
    "  --time: 90s, 30m, 2h, 1-00:00:00; --gpus-per-node 0: CPU only;\n"
    "  --gpu-type '': any type.\n";

/* Parse argv for a command taking only the connection flags and
 * --verbose. 0, -2 for --help, or EXIT_USAGE. */
static int
control_parse(const char *cmd, int argc, char **argv,
    struct output_conn_flags *conn, bool *verbose)
{
	int ch;

	memset(conn, 0, sizeof(*conn));
	*verbose = false;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hv", control_longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error(cmd, ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(conn, ch, optarg))
			continue;
		if (ch == O_VERBOSE || ch == 'v') {
			*verbose = true;
			continue;
		}
		output_error("%s: unknown option '%s' (see cohort %s --help)",
		    cmd, argv[optind - 1], cmd);
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		output_error("%s: missing JOB (see cohort %s --help)", cmd,
		    cmd);
		return EXIT_USAGE;
	}
	return 0;
}

/* Send one request of kind body for ids[0..n) and print its results. */
static int
control_send(struct cconn *c, const char *cmd,
    Cohort__V1__Envelope__BodyCase body, bool release, uint64_t *ids,
    size_t n, bool verbose)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__HoldRequest hr = COHORT__V1__HOLD_REQUEST__INIT;
	Cohort__V1__RequeueRequest rr = COHORT__V1__REQUEUE_REQUEST__INIT;
	struct cerr err;
	int rc;

	req.body_case = body;
	if (body == COHORT__V1__ENVELOPE__BODY_HOLD) {
		hr.n_job_ids = n;
		hr.job_ids = ids;
		hr.has_release = 1;
		hr.release = release;
		req.hold = &hr;
	} else {
		rr.n_job_ids = n;
		rr.job_ids = ids;
		req.requeue = &rr;
	}
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_HOLD_REPLY)
		rc = control_print_results(cmd, rep->hold_reply->results,
		    rep->hold_reply->n_results, verbose);
	else if (rep->body_case == COHORT__V1__ENVELOPE__BODY_REQUEUE_REPLY)
		rc = control_print_results(cmd, rep->requeue_reply->results,
		    rep->requeue_reply->n_results, verbose);
	else
		rc = output_reply_error(cmd, rep);
	frame_free(rep);
	return rc;
}

static int
control_many(int argc, char **argv, const struct cconn_opts *opts,
    const char *cmd, const char *usage, Cohort__V1__Envelope__BodyCase body,
    bool release)
{
	struct output_conn_flags conn;
	struct cconn *c;
	uint64_t *ids;
	size_t n, i, k;
	bool verbose;
	int rc, r;

	if ((rc = control_parse(cmd, argc, argv, &conn, &verbose)) == -2) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	/* Every argument is checked before anything is sent. */
	if (control_job_ids(NULL, cmd, argv + optind, argc - optind, &ids,
	    &n) == -1)
		return EXIT_USAGE;
	free(ids);
	if ((rc = output_connect(opts, &conn, &c)) != EXIT_OK)
		return rc;
	/* Array references resolve to task ids on the connection. */
	if (control_job_ids(c, cmd, argv + optind, argc - optind, &ids,
	    &n) == -1) {
		cconn_close(c);
		return EXIT_FAILED;
	}
	for (i = 0; i < n && rc != EXIT_UNREACHABLE; i += k) {
		k = n - i < CONTROL_CHUNK ? n - i : CONTROL_CHUNK;
		r = control_send(c, cmd, body, release, ids + i, k, verbose);
		if (r != EXIT_OK)
			rc = r;
	}
	cconn_close(c);
	free(ids);
	return rc;
}

int
cmd_hold(int argc, char **argv, const struct cconn_opts *opts)
{
	return control_many(argc, argv, opts, "hold", hold_usage,
	    COHORT__V1__ENVELOPE__BODY_HOLD, false);
}

int
cmd_release(int argc, char **argv, const struct cconn_opts *opts)
{
	return control_many(argc, argv, opts, "release", release_usage,
	    COHORT__V1__ENVELOPE__BODY_HOLD, true);
}

int
cmd_requeue(int argc, char **argv, const struct cconn_opts *opts)
{
	return control_many(argc, argv, opts, "requeue", requeue_usage,
	    COHORT__V1__ENVELOPE__BODY_REQUEUE, false);
}

static int
update_u32(const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;

	if (control_u64(s, &v) == -1 || v > UINT32_MAX) {
		output_error("update: %s: invalid number '%s'", opt, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* One update option into ur. 0, or -1 after printing why. */
static int
update_opt(Cohort__V1__UpdateRequest *ur, int ch, char *arg)
{
	const char *colon;
	char lo[32];
	long long v;
	char *end;

	switch (ch) {
	case O_TIME:
		if (duration_parse(arg, &ur->time_limit_s) == -1) {
			output_error("update: --time: invalid duration '%s'",
			    arg);
			return -1;
		}
		ur->has_time_limit_s = 1;
		return 0;
	case O_PRIORITY:
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' ||
		    v < INT32_MIN || v > INT32_MAX) {
			output_error("update: --priority: invalid number '%s'",
			    arg);
			return -1;
		}
		ur->has_priority = 1;
		ur->priority = (int32_t)v;
		return 0;
	case O_NAME:
		ur->name = arg;
		return 0;
	case O_NODES:
		if ((colon = strchr(arg, ':')) == NULL) {
			if (update_u32("--nodes", arg, &ur->nodes_min) == -1)
				return -1;
			ur->nodes_max = ur->nodes_min;
		} else {
			snprintf(lo, sizeof(lo), "%.*s", (int)(colon - arg),
			    arg);
			if ((size_t)(colon - arg) >= sizeof(lo) ||
			    update_u32("--nodes", lo, &ur->nodes_min) == -1 ||
			    update_u32("--nodes", colon + 1,
			    &ur->nodes_max) == -1)
				return -1;
		}
		ur->has_nodes_min = ur->has_nodes_max = 1;
		return 0;
	case O_GPUS:
		/* As at submit: 0 is a CPU-only job (cpu_only), any other
		 * count is not one. */
		ur->has_gpus_per_node = ur->has_cpu_only = 1;
		if (update_u32("--gpus-per-node", arg, &ur->gpus_per_node) ==
		    -1)
			return -1;
		ur->cpu_only = ur->gpus_per_node == 0;
		return 0;
	case O_TASKS:
		ur->has_tasks_per_node = 1;
		return update_u32("--tasks-per-node", arg,
		    &ur->tasks_per_node);
	case O_GPU_TYPE:
		ur->gpu_type = arg;
		return 0;
	case O_QUEUE:
		ur->queue = arg;
		return 0;
	case O_MAX_RESTARTS:
		ur->has_max_restarts = 1;
		return update_u32("--max-restarts", arg, &ur->max_restarts);
	}
	return -1;
}

int
cmd_update(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep = NULL;
	Cohort__V1__UpdateRequest ur = COHORT__V1__UPDATE_REQUEST__INIT;
	struct output_conn_flags conn = { NULL, NULL, NULL, NULL };
	bool any = false;
	int ch, rc;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", control_longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("update", ch, argv);
		if (ch == O_HELP) {
			fputs(update_usage, stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&conn, ch, optarg))
			continue;
		if (ch == O_VERBOSE) {
			output_error("update: unknown option '--verbose' (see "
			    "cohort update --help)");
			return EXIT_USAGE;
		}
		if (update_opt(&ur, ch, optarg) == -1)
			return EXIT_USAGE;
		any = true;
	}
	if (argc - optind != 1) {
		output_error("update: %s (see cohort update --help)",
		    optind < argc ? "one job at a time" : "missing JOB");
		return EXIT_USAGE;
	}
	if (output_parse_job_id("update", argv[optind], &ur.job_id) == -1)
		return EXIT_USAGE;
	if (!any) {
		output_error("update: nothing to change (see cohort update "
		    "--help)");
		return EXIT_USAGE;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_UPDATE;
	req.update = &ur;
	if ((rc = output_request("update", opts, &conn, &req,
	    COHORT__V1__ENVELOPE__BODY_UPDATE_REPLY, &rep)) != EXIT_OK)
		return rc;
	if (rep->update_reply->changes != NULL &&
	    rep->update_reply->changes[0] != '\0')
		printf("job %" PRIu64 ": %s\n", ur.job_id,
		    rep->update_reply->changes);
	else
		printf("job %" PRIu64 ": unchanged\n", ur.job_id);
	frame_free(rep);
	return EXIT_OK;
}
