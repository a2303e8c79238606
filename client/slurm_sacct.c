/* sacct as Cohort answers it (cohort(1), "SLURM COMMANDS"): one row
 * per job, Slurm's fields, widths and justification, its -p/-P
 * separators and its time window. */
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

enum {
	SA_JOBID, SA_JOBIDRAW, SA_JOBNAME, SA_STATE, SA_EXITCODE, SA_ELAPSED,
	SA_NODELIST, SA_START, SA_END, SA_SUBMIT, SA_ALLOCTRES, SA_PARTITION,
	SA_USER, SA_NNODES, SA_TIMELIMIT, SA_ALLOCNODES, SA_REASON,
	SA_ALLOCCPUS, SA_ACCOUNT, SA_PRIORITY,
};

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
	bool noheader, parsable, parsable2, allusers;
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
			break;	/* no steps: every row is an allocation */
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

static int
sacct_print(const struct sacct_args *a, const struct sfmt *fmt,
    struct job **v, size_t n)
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
	}
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

int
cmd_sacct(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
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
			rc = sacct_print(&a, &fmt, v, n);
		}
		cconn_close(c);
	}
	slurm_jobs_free(v, n);
	sfmt_clear(&fmt);
	slurm_jobfilter_clear(&a.f);
	return rc;
}
