/* sacct as Cohort answers it (cohort(1), "SLURM COMMANDS"): a row per
 * job and, unless -X, one for each of its steps (a batch job's script as
 * J.batch, then the steps its srun ran), Slurm's fields, widths and
 * justification, its -p/-P separators and its time window. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/commands.h"
#include "client/jobref.h"
#include "client/slurm_format.h"
#include "client/slurm_query.h"
#include "lib/clock.h"
#include "lib/frame.h"

/* Widths as sacct 22.05's; negative: left-justified (the ids only). */
const struct sfmt_def sacct_defs[] = {
	{ 0, "JobID", "JobID", -12, SA_JOBID },
	{ 0, "JobIDRaw", "JobIDRaw", -12, SA_JOBIDRAW },
	{ 0, "JobName", "JobName", 10, SA_JOBNAME },
	{ 0, "State", "State", 10, SA_STATE },
	{ 0, "ExitCode", "ExitCode", 8, SA_EXITCODE },
	{ 0, "Elapsed", "Elapsed", 10, SA_ELAPSED },
	{ 0, "NodeList", "NodeList", 15, SA_NODELIST },
	{ 0, "Start", "Start", 19, SA_START },
	{ 0, "End", "End", 19, SA_END },
	{ 0, "Submit", "Submit", 19, SA_SUBMIT },
	{ 0, "AllocTRES", "AllocTRES", 10, SA_ALLOCTRES },
	{ 0, "Partition", "Partition", 10, SA_PARTITION },
	{ 0, "User", "User", 9, SA_USER },
	{ 0, "NNodes", "NNodes", 8, SA_NNODES },
	{ 0, "Timelimit", "Timelimit", 10, SA_TIMELIMIT },
	{ 0, "AllocNodes", "AllocNodes", 10, SA_ALLOCNODES },
	{ 0, "Reason", "Reason", 22, SA_REASON },
	{ 0, "AllocCPUS", "AllocCPUS", 10, SA_ALLOCCPUS },
	{ 0, "Account", "Account", 10, SA_ACCOUNT },
	{ 0, "Priority", "Priority", 10, SA_PRIORITY },
};
const size_t sacct_ndefs = sizeof(sacct_defs) / sizeof(sacct_defs[0]);
#define SACCT_NDEFS sacct_ndefs

#define SACCT_BRIEF "JobID,State,ExitCode"

static const char *
sacct_cell(int id, const struct job *j, const char *rowid, int64_t now,
    char *buf, size_t len)
{
	switch (id) {
	case SA_JOBID:
		return rowid;
	case SA_JOBIDRAW:
		snprintf(buf, len, "%" PRIu64, j->id);
		return buf;
	case SA_JOBNAME:
		return j->spec.name != NULL ? j->spec.name : "";
	case SA_STATE:
		return slurm_state_name(j->state);
	case SA_EXITCODE:
		/* Cohort keeps the code a shell would give (128+N for a
		 * signal): Slurm's signal half stays 0. */
		snprintf(buf, len, "%" PRId32 ":0", j->has_exit ?
		    j->exit_code : 0);
		return buf;
	case SA_ELAPSED:
		return slurm_secs_long(slurm_job_elapsed_s(j, now), buf, len);
	case SA_NODELIST:
		return slurm_job_placed(j) ? slurm_job_nodelist(j, buf, len) :
		    "None assigned";
	case SA_START:
		/* A job that ended before it started: Slurm records its
		 * start as its end. */
		return slurm_time(j->start_ms > 0 || !job_state_is_final(
		    j->state) ? j->start_ms : j->end_ms, "Unknown", buf, len);
	case SA_END:
		return slurm_time(j->end_ms, "Unknown", buf, len);
	case SA_SUBMIT:
		return slurm_time(j->submit_ms, "Unknown", buf, len);
	case SA_ALLOCTRES:
		if (!slurm_job_placed(j))
			return "";
		/* Slurm's TRES in name order; billing is its default
		 * weight, a CPU each; no gres/gpu without GPUs. */
		if (job_gpus(j) > 0)
			snprintf(buf, len, "billing=%" PRIu64 ",cpu=%" PRIu64
			    ",gres/gpu=%" PRIu32 ",node=%zu", slurm_job_cpus(j),
			    slurm_job_cpus(j), job_gpus(j), j->nplace);
		else
			snprintf(buf, len, "billing=%" PRIu64 ",cpu=%" PRIu64
			    ",node=%zu", slurm_job_cpus(j), slurm_job_cpus(j),
			    j->nplace);
		return buf;
	case SA_PARTITION:
		return j->spec.queue != NULL ? j->spec.queue : "";
	case SA_USER:
		return j->user != NULL ? j->user : "";
	case SA_NNODES:
		snprintf(buf, len, "%" PRIu32, slurm_job_nodes(j));
		return buf;
	case SA_TIMELIMIT:
		/* Without its own limit a job waits under its partition's,
		 * which Slurm names until the job starts. */
		if (j->state == JOB_PENDING && !j->spec.service &&
		    j->spec.time_limit_s == 0)
			return "Partition_Limit";
		if (j->spec.service || j->spec.time_limit_s == 0)
			return "UNLIMITED";
		return slurm_secs_long(j->spec.time_limit_s, buf, len);
	case SA_ALLOCNODES:
		snprintf(buf, len, "%zu", slurm_job_placed(j) ? j->nplace : 0);
		return buf;
	case SA_REASON:
		return j->state == JOB_PENDING ? slurm_reason(j->reason, buf,
		    len) :
		    "None";
	case SA_ALLOCCPUS:
		/* A waiting job's are those it asks for, as Slurm's. */
		snprintf(buf, len, "%" PRIu64, slurm_job_cpus(j));
		return buf;
	case SA_ACCOUNT:
		return "";	/* Cohort has no accounts */
	case SA_PRIORITY:
		snprintf(buf, len, "%" PRId32, j->spec.priority);
		return buf;
	}
	return "";
}

static const struct option sacct_longopts[] = {
	{ "allocations", no_argument, NULL, 'X' },
	{ "allusers", no_argument, NULL, 'a' },
	{ "brief", no_argument, NULL, 'b' },
	{ "endtime", required_argument, NULL, 'E' },
	{ "format", required_argument, NULL, 'o' },
	{ "helpformat", no_argument, NULL, 'e' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "name", required_argument, NULL, 'N' },
	{ "noheader", no_argument, NULL, 'n' },
	{ "parsable", no_argument, NULL, 'p' },
	{ "parsable2", no_argument, NULL, 'P' },
	{ "partition", required_argument, NULL, 'r' },
	{ "starttime", required_argument, NULL, 'S' },
	{ "state", required_argument, NULL, 's' },
	{ "user", required_argument, NULL, 'u' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char sacct_usage[] =
    "Usage: sacct [-X] [-a] [-b] [-n] [-p|-P] [-j JOBS] [-u USERS]\n"
    "             [-s STATES] [-S TIME] [-E TIME] [-r PARTITIONS]\n"
    "             [--name NAMES] [-o FIELDS] [-e]\n"
    "  Cohort's sacct (cohort(1), SLURM COMMANDS): one row per job (array\n"
    "  tasks as ID_TASK); Cohort has no job steps, so no .batch or .N rows\n"
    "  and -X changes nothing. TIME: YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY],\n"
    "  now[-N[seconds|minutes|hours|days|weeks]].\n";

struct sacct_args {
	bool noheader, parsable, parsable2, allusers, allocations;
	const char *format, *start, *end;
	struct slurm_jobfilter f;
	const char *me_user;	/* who we are: own jobs by default */
};

static int
sacct_parse(int argc, char **argv, struct sacct_args *a)
{
	struct cerr err;
	size_t i;
	int ch;

	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":abeE:hj:no:pPr:s:S:u:X",
	    sacct_longopts, NULL)) != -1) {
		cerr_clear(&err);
		switch (ch) {
		case 'X':
			a->allocations = true;	/* no step rows */
			break;
		case 'a':
			a->allusers = true;
			break;
		case 'b':
			a->format = SACCT_BRIEF;
			break;
		case 'e':
			for (i = 0; i < SACCT_NDEFS; i++)
				printf("%s%s", sacct_defs[i].name, i + 1 ==
				    SACCT_NDEFS ? "\n" : " ");
			return -2;
		case 'E':
			a->end = optarg;
			break;
		case 'S':
			a->start = optarg;
			break;
		case 'o':
			a->format = optarg;
			break;
		case 'j':
			if (slurm_jobfilter_jobs(&a->f, optarg, &err) == -1) {
				slurm_fatal("sacct", "Bad job/step specified: "
				    "%s", optarg);
				return EXIT_FAILED;
			}
			break;
		case 'N':
			a->f.names = optarg;
			break;
		case 'n':
			a->noheader = true;
			break;
		case 'p':
			a->parsable = true;
			break;
		case 'P':
			a->parsable2 = true;
			break;
		case 'r':
			a->f.partitions = optarg;
			break;
		case 's':
			if (slurm_states_parse(optarg, &a->f.states, &err) ==
			    -1) {
				slurm_fatal("sacct", "unrecognized job state "
				    "value '%s'", strrchr(err.text, ' ') + 1);
				return EXIT_FAILED;
			}
			break;
		case 'u':
			a->f.users = optarg;
			break;
		case 'h':
			fputs(sacct_usage, stdout);
			return -2;
		default:
			return slurm_option_error("sacct", ch, argv);
		}
	}
	return slurm_no_operands("sacct", argc, argv);
}

/* -S and -E into the request, with Slurm's defaults: from today's
 * midnight unless -j or -s names jobs, to now. */
static int
sacct_window(const struct sacct_args *a, Cohort__V1__ListJobsRequest *lj)
{
	int64_t now = clock_now_ms(), ms;
	time_t t = (time_t)(now / 1000);
	struct tm tm;

	if (a->start != NULL) {
		if (slurm_time_parse(a->start, now, &ms) == -1) {
			slurm_error("sacct", "Invalid time specification "
			    "(-S): %s", a->start);
			return -1;
		}
		lj->has_since_ms = 1;
		lj->since_ms = ms;
	} else if (!a->f.has_jobs && a->f.states == 0 &&
	    localtime_r(&t, &tm) != NULL) {
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		lj->has_since_ms = 1;
		lj->since_ms = (int64_t)mktime(&tm) * 1000;
	}
	if (a->end != NULL) {
		if (slurm_time_parse(a->end, now, &ms) == -1 || ms <= 0) {
			slurm_error("sacct", "Invalid time specification "
			    "(-E): %s", a->end);
			return -1;
		}
		lj->has_until_ms = 1;
		lj->until_ms = ms;
		if (lj->has_since_ms && ms <= lj->since_ms) {
			slurm_error("sacct", "Start time (%s) requested is "
			    "after end time (%s).", a->start != NULL ?
			    a->start : "midnight", a->end);
			return -1;
		}
	}
	return 0;
}

static bool
sacct_wanted(const void *arg, const struct job *j)
{
	const struct sacct_args *a = arg;

	/* Own jobs only, unless -a or -u (or -j, which names them). */
	return slurm_jobfilter_match(&a->f, a->f.states, j) &&
	    (a->f.users != NULL || a->allusers || a->f.has_jobs ||
	    a->me_user == NULL || slurm_job_of(j, a->me_user));
}

/* The steps of the jobs listed, sorted by job and step for lookup. */
struct sacct_steps {
	Cohort__V1__Envelope **reps;
	size_t nreps;
	const Cohort__V1__Step **v;
	size_t n;
};

/* Ids asked for in one ListSteps. */
#define SACCT_STEPS_IDS 1024

static int
sacct_step_cmp(const void *a, const void *b)
{
	const Cohort__V1__Step *x = *(const Cohort__V1__Step *const *)a;
	const Cohort__V1__Step *y = *(const Cohort__V1__Step *const *)b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

static void
sacct_steps_clear(struct sacct_steps *st)
{
	size_t i;

	for (i = 0; i < st->nreps; i++)
		frame_free(st->reps[i]);
	free(st->reps);
	free(st->v);
	memset(st, 0, sizeof(*st));
}

/* The steps of those of v[0..n) that started. */
static int
sacct_steps_fetch(struct cconn *c, struct job **v, size_t n,
    struct sacct_steps *st)
{
	const Cohort__V1__ListStepsReply *r;
	Cohort__V1__Envelope *rep, **nr;
	const Cohort__V1__Step **nv;
	uint64_t *ids;
	size_t i, k, nids = 0;
	int rc = EXIT_OK;

	memset(st, 0, sizeof(*st));
	if ((ids = calloc(SACCT_STEPS_IDS, sizeof(*ids))) == NULL)
		goto nomem;
	for (i = 0; i <= n && rc == EXIT_OK; i++) {
		if (i < n && v[i]->start_ms > 0)
			ids[nids++] = v[i]->id;
		if (nids == 0 || (nids < SACCT_STEPS_IDS && i < n))
			continue;
		rc = slurm_steps_fetch("sacct", c, ids, nids, &rep);
		nids = 0;
		if (rc != EXIT_OK || rep == NULL)
			continue;
		r = rep->list_steps_reply;
		if ((nr = reallocarray(st->reps, st->nreps + 1,
		    sizeof(*nr))) == NULL) {
			frame_free(rep);
			goto nomem;
		}
		st->reps = nr;
		st->reps[st->nreps++] = rep;
		if (r->n_steps == 0)
			continue;
		if ((nv = reallocarray(st->v, st->n + r->n_steps,
		    sizeof(*nv))) == NULL)
			goto nomem;
		st->v = nv;
		for (k = 0; k < r->n_steps; k++)
			if (r->steps[k] != NULL)
				st->v[st->n++] = r->steps[k];
	}
	free(ids);
	if (st->n > 0)
		qsort(st->v, st->n, sizeof(*st->v), sacct_step_cmp);
	return rc;
nomem:
	free(ids);
	slurm_error("sacct", "out of memory");
	return EXIT_FAILED;
}

/* Print one step's row. */
static void
sacct_step_row(const struct sacct_args *a, const struct sfmt *fmt,
    const struct slurm_step *s, const struct job *j, const char *rowid,
    int64_t now)
{
	static char bufs[SLURM_FIELDS_MAX][SLURM_CELL];
	const char *cells[SLURM_FIELDS_MAX];
	size_t k, f;

	for (k = 0, f = 0; k < fmt->n; k++) {
		if (fmt->v[k].def == NULL)
			continue;
		cells[f] = sacct_step_cell(fmt->v[k].def->id, s, j, rowid, now,
		    bufs[f], sizeof(bufs[f]));
		f++;
	}
	if (a->parsable || a->parsable2)
		sfmt_print_parsable(fmt, cells, a->parsable, stdout);
	else
		sfmt_print(fmt, cells, stdout);
}

/* Job j's step rows: J.batch for a batch job that started, then the
 * steps its srun ran, in id order. */
static void
sacct_step_rows(const struct sacct_args *a, const struct sfmt *fmt,
    const struct sacct_steps *st, const struct job *j, const char *rowid,
    int64_t now)
{
	struct slurm_step s;
	size_t lo = 0, hi = st->n, mid;

	if (j->spec.batch && j->start_ms > 0) {
		slurm_step_batch(j, &s);
		sacct_step_row(a, fmt, &s, j, rowid, now);
	}
	/* The first of j's steps. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->v[mid]->job_id < j->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < st->n && st->v[lo]->job_id == j->id; lo++)
		if (slurm_step_from_pb(st->v[lo], &s) == 0)
			sacct_step_row(a, fmt, &s, j, rowid, now);
}

static int
sacct_print(const struct sacct_args *a, const struct sfmt *fmt,
    struct job **v, size_t n, const struct sacct_steps *st)
{
	const char *const *cells;
	char id[JOBREF_LEN];
	size_t i;
	int64_t now = clock_now_ms();
	bool parsable = a->parsable || a->parsable2;

	if (slurm_fields_check("sacct", fmt) != EXIT_OK)
		return EXIT_FAILED;
	if (!a->noheader) {
		if (parsable)
			sfmt_print_parsable(fmt, NULL, a->parsable, stdout);
		else {
			sfmt_print(fmt, NULL, stdout);
			sfmt_print_dashes(fmt, stdout);
		}
	}
	for (i = 0; i < n; i++) {
		cells = slurm_job_row(fmt, sacct_cell, v[i], jobref_format(v[i],
		    id, sizeof(id)), now);
		if (parsable)
			sfmt_print_parsable(fmt, cells, a->parsable, stdout);
		else
			sfmt_print(fmt, cells, stdout);
		if (!a->allocations)
			sacct_step_rows(a, fmt, st, v[i], id, now);
	}
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

int
cmd_sacct(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	struct sacct_steps st = { NULL, 0, NULL, 0 };
	struct sacct_args a;
	struct sfmt fmt;
	struct cerr err;
	struct cconn *c;
	struct job **v = NULL;
	size_t n = 0;
	int rc;

	if ((rc = sacct_parse(argc, argv, &a)) != 0) {
		slurm_jobfilter_clear(&a.f);
		return rc == -2 ? EXIT_OK : rc;
	}
	cerr_clear(&err);
	if (sfmt_parse_sacct(a.format != NULL ? a.format : SACCT_FORMAT,
	    sacct_defs, SACCT_NDEFS, &fmt, &err) == -1) {
		slurm_error("sacct", "%s", err.text);
		slurm_jobfilter_clear(&a.f);
		return EXIT_FAILED;
	}
	lj.has_all = 1;
	lj.all = 1;
	slurm_jobfilter_request(&a.f, &lj);
	if (sacct_window(&a, &lj) == -1)
		rc = EXIT_FAILED;
	else if ((rc = slurm_connect(opts, &c)) == EXIT_OK) {
		a.me_user = cconn_identity(c);
		rc = slurm_jobs_fetch("sacct", c, &lj, 0, &v, &n);
		if (rc == EXIT_OK) {
			n = slurm_jobs_filter(v, n, sacct_wanted, &a);
			if (!a.allocations)
				rc = sacct_steps_fetch(c, v, n, &st);
		}
		if (rc == EXIT_OK)
			rc = sacct_print(&a, &fmt, v, n, &st);
		cconn_close(c);
	}
	sacct_steps_clear(&st);
	slurm_jobs_free(v, n);
	sfmt_clear(&fmt);
	slurm_jobfilter_clear(&a.f);
	return rc;
}
