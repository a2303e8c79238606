/* cohort jobs, show and cancel: the queue, one job, cancelling. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/arrays.h"
#include "client/commands.h"
#include "client/jobref.h"
#include "client/control.h"
#include "lib/clock.h"
#include "client/output.h"
#include "client/show_steps.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

enum { O_ALL = 0x100, O_USER, O_STATE, O_JSON, O_SINCE, O_UNTIL, O_LIMIT,
    O_FORMAT, O_START, O_NAME, O_ITERATE, O_HELP = 'h' };

static const struct option jobs_longopts[] = {
	{ "all", no_argument, NULL, O_ALL },
	{ "user", required_argument, NULL, O_USER },
	{ "state", required_argument, NULL, O_STATE },
	{ "json", no_argument, NULL, O_JSON },
	{ "since", required_argument, NULL, O_SINCE },
	{ "until", required_argument, NULL, O_UNTIL },
	{ "limit", required_argument, NULL, O_LIMIT },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "start", no_argument, NULL, O_START },
	{ "name", required_argument, NULL, O_NAME },
	{ "iterate", required_argument, NULL, O_ITERATE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char jobs_usage[] =
    "usage: cohort jobs [--all] [--user USER] [--state STATE[,STATE...]]\n"
    "                   [--name NAME] [--since T] [--until T] [--limit N]\n"
    "                   [--format COL[,COL...]] [--start] [--json]\n"
    "  pending and running jobs; --all adds finished ones\n"
    "  STATE: PENDING, RUNNING, RESTARTING, RESIZING, COMPLETED, FAILED,\n"
    "  CANCELLED or TIMEOUT (any of those listed; finished ones included)\n"
    "  --since/--until T: the jobs that existed in the window, as sacct -S/-E\n"
    "  (submitted before --until, not ended before --since; finished jobs\n"
    "  included); T is a date-time (\"2026-12-01 15:04:05 UTC\",\n"
    "  \"2026-12-01T15:04Z\", \"2026-12-01\") or a duration ago (\"2h\", \"7d\")\n"
    "  --limit N: the first N jobs that match, in id order\n"
    "  --start: pending jobs with their expected start (the reserved one)\n"
    "  COL: id name user queue state nnodes (nodes asked) gpus (per node)\n"
    "  limit priority submit start (expected, while pending) end elapsed\n"
    "  (run time so far, or of the last run) exit nodes (current or last\n"
    "  allocation, as a hostlist) nodelist (current allocation) restarts\n"
    "  gpuh (GPU-hours used) wasted (GPU-hours lost) ettr (productive\n"
    "  share of the time since the first start) reason\n";
static const char show_usage[] =
    "usage: cohort show JOB [--json] [--iterate SEC]\n"
    "  JOB: 12, 12_7 (an array's task); an array's id shows every task\n"
    "  one job: spec, queue, state and reason, allocation, restarts, last\n"
    "  checkpoint, last failure and restart, work lost, preemptions\n"
    "  --iterate SEC: show it again every SEC seconds (0.01 to 86400, as\n"
    "  squeue -i) until interrupted, one connection a round; a round that\n"
    "  fails says why and the next one tries again\n";
static const char cancel_usage[] =
    "usage: cohort cancel JOB...\n"
    "       cohort cancel [--user USER] [--state STATE[,STATE]] [--name NAME]\n"
    "  JOB: an id, a range FIRST-LAST (12-20), an array's id (all its\n"
    "  unfinished tasks), task (12_7) or tasks (12_[1-5]). With filters, the\n"
    "  live jobs matching all of them that you may cancel; a user's filters\n"
    "  mean their own jobs unless --user names another.\n";

/* What a command's options were, besides its positional arguments. */
struct jobs_flags {
	struct output_conn_flags conn;
	bool all;
	bool json;
	bool start;
	const char *user;
	const char *state;
	const char *since;
	const char *until;
	const char *limit;
	const char *format;
	const char *name;
	unsigned iterate_ms;	/* --iterate; 0: once */
};

/* Parse options allowed by mask (O_* values); positional arguments are
 * left at argv[optind..] (getopt permutes them there). Returns 0, -2 for
 * --help, or EXIT_USAGE after printing why. */
static int
jobs_parse(const char *cmd, int argc, char **argv, unsigned mask,
    struct jobs_flags *f)
{
	int ch;

	memset(f, 0, sizeof(*f));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", jobs_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error(cmd, ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(&f->conn, ch, optarg))
			continue;
		if (!(mask & (1u << (ch - O_ALL)))) {
			output_error("%s: unknown option '%s' (see cohort %s "
			    "--help)", cmd, argv[optind - 1], cmd);
			return EXIT_USAGE;
		}
		if (ch == O_ALL)
			f->all = true;
		else if (ch == O_JSON)
			f->json = true;
		else if (ch == O_USER)
			f->user = optarg;
		else if (ch == O_STATE)
			f->state = optarg;
		else if (ch == O_SINCE)
			f->since = optarg;
		else if (ch == O_UNTIL)
			f->until = optarg;
		else if (ch == O_LIMIT)
			f->limit = optarg;
		else if (ch == O_FORMAT)
			f->format = optarg;
		else if (ch == O_START)
			f->start = true;
		else if (ch == O_NAME)
			f->name = optarg;
		else if (ch == O_ITERATE && output_iterate_parse(cmd, optarg,
		    &f->iterate_ms) != EXIT_OK)
			return EXIT_USAGE;
	}
	return 0;
}

#define M(o) (1u << ((o) - O_ALL))

/* Convert a reply's protobuf jobs to our own; NULL after printing why. */
static struct job *
jobs_convert(const char *cmd, const Cohort__V1__Job *pb)
{
	struct job *job;
	struct cerr err;

	cerr_clear(&err);
	if ((job = wire_job_from_pb(pb, &err)) == NULL)
		output_error("%s: the controller sent a job we cannot read: %s",
		    cmd, err.text);
	return job;
}

static void
fmt_nodes(const struct job_spec *s, char *buf, size_t len)
{
	if (s->nodes_min == s->nodes_max)
		snprintf(buf, len, "%u", s->nodes_min);
	else
		snprintf(buf, len, "%u:%u", s->nodes_min, s->nodes_max);
}

static void
fmt_gpus(const struct job_spec *s, char *buf, size_t len)
{
	if (s->gpus_per_node == 0)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "%u", s->gpus_per_node);
}

static const char *
fmt_limit(uint64_t secs, const char *none, char *buf, size_t len)
{
	return secs == 0 ? none : duration_format(secs, buf, len);
}

/* ---- Columns of cohort jobs (--format) ---- */

/* A cell: into buf, or a string of the job's; NULL prints "-". */
typedef const char *(*jobs_cell_fn)(const struct job *, int64_t now,
    char *buf, size_t len);

#define JOBS_CELL_LEN 1024
#define JOBS_COLS_MAX 32

static const char *
cell_id(const struct job *j, int64_t now, char *buf, size_t len)
{
	(void)now;
	return jobref_format(j, buf, len);
}

static const char *
cell_name(const struct job *j, int64_t now, char *buf, size_t len)
{
	return j->spec.name;
}

static const char *
cell_user(const struct job *j, int64_t now, char *buf, size_t len)
{
	return j->user;
}

static const char *
cell_queue(const struct job *j, int64_t now, char *buf, size_t len)
{
	return j->spec.queue;
}

static const char *
cell_state(const struct job *j, int64_t now, char *buf, size_t len)
{
	return job_state_name(j->state);
}

static const char *
cell_nnodes(const struct job *j, int64_t now, char *buf, size_t len)
{
	fmt_nodes(&j->spec, buf, len);
	return buf;
}

static const char *
cell_gpus(const struct job *j, int64_t now, char *buf, size_t len)
{
	fmt_gpus(&j->spec, buf, len);
	return buf;
}

static const char *
cell_limit(const struct job *j, int64_t now, char *buf, size_t len)
{
	return j->spec.service ? "service" : fmt_limit(j->spec.time_limit_s,
	    "none", buf, len);
}

static const char *
cell_priority(const struct job *j, int64_t now, char *buf, size_t len)
{
	snprintf(buf, len, "%d", (int)j->spec.priority);
	return buf;
}

static const char *
cell_submit(const struct job *j, int64_t now, char *buf, size_t len)
{
	return output_time_local(j->submit_ms, buf, len);
}

/* When it started, or, while it waits, when it is expected to (squeue
 * --start): "-" when unknown. */
static const char *
cell_start(const struct job *j, int64_t now, char *buf, size_t len)
{
	if ((j->state == JOB_PENDING || j->state == JOB_RESTARTING) &&
	    j->nplace == 0)
		return j->expected_start_ms > 0 ? output_time_local(
		    j->expected_start_ms, buf, len) : NULL;
	return output_time_local(j->start_ms, buf, len);
}

static const char *
cell_end(const struct job *j, int64_t now, char *buf, size_t len)
{
	return output_time_local(j->end_ms, buf, len);
}

/* Is the job in a run now (its GPUs held, its time counting)? */
static bool
jobs_running(const struct job *j)
{
	return (j->state == JOB_RUNNING || j->state == JOB_RESIZING) &&
	    j->start_ms > 0;
}

static const char *
cell_elapsed(const struct job *j, int64_t now, char *buf, size_t len)
{
	int64_t to;

	if (j->start_ms <= 0 || (!jobs_running(j) &&
	    !job_state_is_final(j->state)))
		return NULL;
	to = jobs_running(j) ? now : j->end_ms;
	return duration_format(to > j->start_ms ? (uint64_t)(to -
	    j->start_ms) / 1000 : 0, buf, len);
}

static const char *
cell_exit(const struct job *j, int64_t now, char *buf, size_t len)
{
	if (!j->has_exit)
		return NULL;
	snprintf(buf, len, "%d", (int)j->exit_code);
	return buf;
}

static const char *
cell_hostlist(const struct job *j, char *buf, size_t len)
{
	char *list;

	if (j->nplace == 0 || (list = output_nodelist(j)) == NULL)
		return NULL;
	snprintf(buf, len, "%s", list);
	free(list);
	return buf[0] != '\0' ? buf : NULL;
}

/* The current or last allocation. */
static const char *
cell_nodes(const struct job *j, int64_t now, char *buf, size_t len)
{
	return cell_hostlist(j, buf, len);
}

/* Where it runs, for jobs that hold an allocation now (running, or
 * pending while being launched); the last one of an ended job is in
 * `nodes` and cohort show. */
static const char *
cell_nodelist(const struct job *j, int64_t now, char *buf, size_t len)
{
	return job_state_is_final(j->state) ? NULL :
	    cell_hostlist(j, buf, len);
}

static const char *
cell_restarts(const struct job *j, int64_t now, char *buf, size_t len)
{
	snprintf(buf, len, "%u", j->restarts);
	return buf;
}

static const char *
fmt_gpuh(uint64_t gpu_ms, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f", (double)gpu_ms / 3600000.0);
	return buf;
}

/* GPU-hours: the runs that ended, and the one going on up to now. */
static const char *
cell_gpuh(const struct job *j, int64_t now, char *buf, size_t len)
{
	uint64_t ms = j->gpu_ms;

	if (jobs_running(j) && now > j->start_ms)
		ms += (uint64_t)job_gpus(j) * (uint64_t)(now - j->start_ms);
	if (ms == 0 && j->start_ms <= 0)
		return NULL;
	return fmt_gpuh(ms, buf, len);
}

static const char *
cell_wasted(const struct job *j, int64_t now, char *buf, size_t len)
{
	if (j->gpu_ms == 0 && j->start_ms <= 0)
		return NULL;
	return fmt_gpuh(j->wasted_gpu_ms, buf, len);
}

/* ETTR: productive time over the wall time since the first start, as
 * the controller computed it for the reply. */
static const char *
cell_ettr(const struct job *j, int64_t now, char *buf, size_t len)
{
	if (!j->gpv.set || j->start_ms <= 0)
		return NULL;
	snprintf(buf, len, "%.3f", j->gpv.ettr);
	return buf;
}

static const char *
cell_reason(const struct job *j, int64_t now, char *buf, size_t len)
{
	return j->reason && j->reason[0] ? j->reason : NULL;
}

struct jobs_col {
	const char *key;
	const char *head;
	jobs_cell_fn cell;
};

static const struct jobs_col jobs_cols[] = {
	{ "id", "JOBID", cell_id },
	{ "name", "NAME", cell_name },
	{ "user", "USER", cell_user },
	{ "queue", "QUEUE", cell_queue },
	{ "state", "STATE", cell_state },
	{ "nnodes", "NODES", cell_nnodes },
	{ "gpus", "GPUS", cell_gpus },
	{ "limit", "TIME_LIMIT", cell_limit },
	{ "priority", "PRIORITY", cell_priority },
	{ "submit", "SUBMITTED", cell_submit },
	{ "start", "START", cell_start },
	{ "end", "END", cell_end },
	{ "elapsed", "ELAPSED", cell_elapsed },
	{ "exit", "EXIT", cell_exit },
	{ "nodes", "NODELIST", cell_nodes },
	{ "nodelist", "NODELIST", cell_nodelist },
	{ "restarts", "RESTARTS", cell_restarts },
	{ "gpuh", "GPU_HOURS", cell_gpuh },
	{ "wasted", "WASTED_GPU_HOURS", cell_wasted },
	{ "ettr", "ETTR", cell_ettr },
	{ "reason", "REASON", cell_reason },
};
#define JOBS_NCOLS (sizeof(jobs_cols) / sizeof(jobs_cols[0]))

/* The listing's columns as squeue shows them, and as squeue --start. */
#define JOBS_FORMAT_DEFAULT "id,name,user,queue,state,nnodes,gpus,limit," \
	"priority,submit,nodelist,reason"
#define JOBS_FORMAT_START "id,name,user,queue,state,nnodes,gpus,priority," \
	"submit,start,reason"

/* Parse a --format list into cols[] (at most JOBS_COLS_MAX). The count,
 * or -1 after printing why. */
static int
jobs_format_parse(const char *list, const struct jobs_col **cols)
{
	char buf[512], *tok, *save = NULL;
	size_t i;
	int n = 0;

	if (strlen(list) >= sizeof(buf)) {
		output_error("jobs: --format: too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < JOBS_NCOLS; i++)
			if (strcasecmp(tok, jobs_cols[i].key) == 0)
				break;
		if (i == JOBS_NCOLS) {
			output_error("jobs: --format: unknown column '%s' (see "
			    "cohort jobs --help)", tok);
			return -1;
		}
		if (n == JOBS_COLS_MAX) {
			output_error("jobs: --format: at most %d columns",
			    JOBS_COLS_MAX);
			return -1;
		}
		cols[n++] = &jobs_cols[i];
	}
	if (n == 0)
		output_error("jobs: --format: no column given");
	return n > 0 ? n : -1;
}

/* One row; id, when not NULL, is the row's JOBID (an array's folded
 * pending tasks: "12_[8-99]"). */
static int
jobs_row(struct output_table *t, const struct jobs_col *const *cols,
    size_t ncols, const struct job *j, const char *id, int64_t now)
{
	static char bufs[JOBS_COLS_MAX][JOBS_CELL_LEN];
	const char *cells[JOBS_COLS_MAX];
	size_t i;

	for (i = 0; i < ncols; i++) {
		bufs[i][0] = '\0';
		cells[i] = id != NULL && cols[i]->cell == cell_id ? id :
		    cols[i]->cell(j, now, bufs[i], sizeof(bufs[i]));
	}
	return output_table_add(t, cells);
}

/* The listing being built, page by page: a table or a JSON array. */
struct jobs_out {
	bool json;
	struct output_table *t;
	json_t *arr;
	const struct jobs_col *cols[JOBS_COLS_MAX];
	size_t ncols;
	int64_t now;
	uint64_t limit;		/* rows at most; 0: all */
	uint64_t rows;
	/* The table's jobs, kept until the end: an array's pending tasks
	 * fold into one row (arrays.h). */
	struct job **v;
	size_t nv;
};

/* Keep j for the table (taking it). 0 or -1 (ENOMEM; j freed). */
static int
jobs_keep(struct jobs_out *o, struct job *j)
{
	struct job **v;

	if ((v = reallocarray(o->v, o->nv + 1, sizeof(*v))) == NULL) {
		job_free(j);
		return -1;
	}
	o->v = v;
	v[o->nv++] = j;
	return 0;
}

/* The table's rows from the jobs kept. 0 or -1 (ENOMEM). */
static int
jobs_rows(struct jobs_out *o)
{
	struct arrays_row *rows;
	size_t n, i;
	int rc = 0;

	if (arrays_fold((const struct job *const *)o->v, o->nv, &rows,
	    &n) == -1)
		return -1;
	for (i = 0; i < n && rc == 0; i++)
		rc = jobs_row(o->t, o->cols, o->ncols, rows[i].job,
		    rows[i].id, o->now);
	arrays_rows_free(rows, n);
	return rc;
}

static void
jobs_out_free(struct jobs_out *o)
{
	size_t i;

	for (i = 0; i < o->nv; i++)
		job_free(o->v[i]);
	free(o->v);
	json_decref(o->arr);
	output_table_free(o->t);
}

/* Add one page's jobs; those at or below after_id (which a correct
 * controller never sends again) are skipped, so no job shows twice.
 * *last is the highest id added. 0, or an exit code after printing why. */
static int
jobs_add_page(struct jobs_out *o, const Cohort__V1__ListJobsReply *r,
    uint64_t after_id, uint64_t *last)
{
	struct job *j;
	size_t i;
	int bad;

	for (i = 0; i < r->n_jobs; i++) {
		if (r->jobs[i]->id <= after_id || r->jobs[i]->id <= *last)
			continue;
		if (o->limit > 0 && o->rows == o->limit)
			break;
		if ((j = jobs_convert("jobs", r->jobs[i])) == NULL)
			return EXIT_FAILED;
		o->rows++;
		*last = j->id;
		if (o->json) {
			bad = json_array_append_new(o->arr,
			    output_job_json(j));
			job_free(j);
		} else
			bad = jobs_keep(o, j);
		if (bad) {
			output_error("jobs: out of memory");
			return EXIT_FAILED;
		}
	}
	return 0;
}

/* Ask for every page of the listing lj on one connection and add them
 * to o. EXIT_OK, or an exit code after printing why. */
static int
jobs_fetch(struct cconn *c, Cohort__V1__ListJobsRequest *lj,
    struct jobs_out *o)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	const Cohort__V1__ListJobsReply *r;
	struct cerr err;
	uint64_t last = 0;
	bool more;
	int rc;

	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS;
	req.list_jobs = lj;
	lj->has_after_id = 1;
	lj->after_id = 0;
	do {
		cerr_clear(&err);
		if ((rep = cconn_call(c, &req, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case !=
		    COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY) {
			rc = output_reply_error("jobs", rep);
			frame_free(rep);
			return rc;
		}
		r = rep->list_jobs_reply;
		rc = jobs_add_page(o, r, lj->after_id, &last);
		/* A controller without pages sends everything at once. */
		more = r->has_has_more && r->has_more;
		/* A page may be empty with more to come (the controller
		 * examines a bounded number of jobs per request): its cursor
		 * must then move past after_id, checked below, so every
		 * request makes progress and the loop ends. */
		if (more && r->has_next_after && r->next_after > last)
			last = r->next_after;
		frame_free(rep);
		if (rc != 0)
			return rc;
		if (o->limit > 0 && o->rows >= o->limit)
			more = false;
		if (more && last <= lj->after_id) {
			output_error("jobs: the controller's pages do not "
			    "advance (after job %" PRIu64 ")", lj->after_id);
			return EXIT_FAILED;
		}
		lj->after_id = last;
		if (o->limit > 0) {
			lj->has_limit = 1;
			lj->limit = o->limit - o->rows > UINT32_MAX ? UINT32_MAX :
			    (uint32_t)(o->limit - o->rows);
		}
	} while (more);
	return EXIT_OK;
}

/* --state: one state or a comma-separated list, into the request.
 * 0, or -1 after printing why. */
static int
jobs_states(const char *list, Cohort__V1__ListJobsRequest *lj,
    Cohort__V1__JobState *states, size_t max)
{
	char buf[256], *tok, *save = NULL;
	enum job_state st;
	size_t n = 0;

	if (strlen(list) >= sizeof(buf)) {
		output_error("jobs: --state: too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (job_state_parse(tok, &st) == -1) {
			output_error("jobs: --state: unknown state '%s'", tok);
			return -1;
		}
		if (n == max) {
			output_error("jobs: --state: too many states");
			return -1;
		}
		states[n++] = wire_state_to_pb(st);
	}
	if (n == 0) {
		output_error("jobs: --state: no state given");
		return -1;
	}
	lj->states = states;
	lj->n_states = n;
	/* One state also in the older field, which every controller
	 * knows. */
	if (n == 1) {
		lj->has_state = 1;
		lj->state = states[0];
	}
	return 0;
}

/* The history options into the request and o. 0, or -1 after printing
 * why. */
static int
jobs_history(const struct jobs_flags *f, Cohort__V1__ListJobsRequest *lj,
    struct jobs_out *o)
{
	uint64_t n;
	char *end;

	if (f->since != NULL) {
		if (output_parse_since(f->since, o->now, &lj->since_ms) == -1) {
			output_error("jobs: --since: invalid time '%s'",
			    f->since);
			return -1;
		}
		lj->has_since_ms = lj->since_ms > 0;
	}
	if (f->until != NULL) {
		if (output_parse_since(f->until, o->now, &lj->until_ms) == -1 ||
		    lj->until_ms <= 0) {
			output_error("jobs: --until: invalid time '%s'",
			    f->until);
			return -1;
		}
		lj->has_until_ms = 1;
		if (lj->has_since_ms && lj->until_ms <= lj->since_ms) {
			output_error("jobs: --until is not after --since");
			return -1;
		}
	}
	if (f->limit != NULL) {
		errno = 0;
		n = strtoull(f->limit, &end, 10);
		if (errno != 0 || end == f->limit || *end != '\0' || n == 0 ||
		    f->limit[0] == '-') {
			output_error("jobs: --limit: not a positive number: "
			    "'%s'", f->limit);
			return -1;
		}
		o->limit = n;
		lj->has_limit = 1;
		lj->limit = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	if (f->name != NULL) {
		if (f->name[0] == '\0' || strlen(f->name) > JOB_NAME_MAX) {
			output_error("jobs: --name: 1 to %d bytes",
			    JOB_NAME_MAX);
			return -1;
		}
		lj->name = (char *)f->name;
	}
	return 0;
}

int
cmd_jobs(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	Cohort__V1__JobState states[16];
	const char *heads[JOBS_COLS_MAX];
	struct jobs_out o;
	struct cconn *c;
	struct jobs_flags f;
	size_t i;
	int rc, n;

	rc = jobs_parse("jobs", argc, argv, M(O_ALL) | M(O_USER) | M(O_STATE) |
	    M(O_JSON) | M(O_SINCE) | M(O_UNTIL) | M(O_LIMIT) | M(O_FORMAT) |
	    M(O_START) | M(O_NAME), &f);
	if (rc == -2) {
		fputs(jobs_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (optind < argc) {
		output_error("jobs: unexpected argument '%s' (see cohort jobs "
		    "--help)", argv[optind]);
		return EXIT_USAGE;
	}
	memset(&o, 0, sizeof(o));
	o.now = clock_now_ms();
	if ((f.state != NULL && jobs_states(f.state, &lj, states,
	    sizeof(states) / sizeof(states[0])) == -1) ||
	    jobs_history(&f, &lj, &o) == -1)
		return EXIT_USAGE;
	/* squeue --start: the jobs that wait. */
	if (f.start && f.state == NULL) {
		states[0] = wire_state_to_pb(JOB_PENDING);
		states[1] = wire_state_to_pb(JOB_RESTARTING);
		lj.states = states;
		lj.n_states = 2;
	}
	if ((n = jobs_format_parse(f.format != NULL ? f.format : f.start ?
	    JOBS_FORMAT_START : JOBS_FORMAT_DEFAULT, o.cols)) == -1)
		return EXIT_USAGE;
	o.ncols = (size_t)n;
	for (i = 0; i < o.ncols; i++)
		heads[i] = o.cols[i]->head;
	/* A window is history: finished jobs in it are listed too. */
	lj.has_all = 1;
	lj.all = f.all || f.since != NULL || f.until != NULL;
	lj.user = (char *)f.user;
	o.json = f.json;
	if (f.json ? (o.arr = json_array()) == NULL :
	    (o.t = output_table_new(o.ncols, heads)) == NULL) {
		output_error("jobs: out of memory");
		return EXIT_FAILED;
	}
	if ((rc = output_connect(opts, &f.conn, &c)) == EXIT_OK) {
		rc = jobs_fetch(c, &lj, &o);
		cconn_close(c);
	}
	if (rc == EXIT_OK && !o.json && jobs_rows(&o) == -1) {
		output_error("jobs: out of memory");
		rc = EXIT_FAILED;
	}
	if (rc == EXIT_OK) {
		rc = output_listing(o.json, "jobs", o.arr, o.t);
		o.arr = NULL;
	}
	jobs_out_free(&o);
	return rc;
}

/* What stands for what the controller withheld from another user. */
#define JOBS_PRIVATE "(private: shown to its owner and admins)"

/* What runs: the command, or the script and its arguments, each as a
 * line a shell would split back into the same words. */
static int
show_command(struct output_table *t, const struct job *j)
{
	const struct job_spec *s = &j->spec;
	char *q;
	int rc;

	if (j->redacted) {
		if (j->spec.script_name != NULL &&
		    output_fields_addf(t, "Script", "%s",
		    j->spec.script_name) == -1)
			return -1;
		return output_fields_addf(t, j->spec.script_name != NULL ?
		    "Arguments" : "Command", "%s", JOBS_PRIVATE);
	}
	if ((q = output_shell_quote(s->argv, s->argc)) == NULL)
		return -1;
	if (s->script != NULL)
		rc = output_fields_addf(t, "Script", "%s (%zu bytes)",
		    s->script_name ? s->script_name : "-", s->script_len) |
		    output_fields_addf(t, "Arguments", "%s", q);
	else
		rc = output_fields_addf(t, "Command", "%s", q);
	free(q);
	return rc;
}

static int
show_spec(struct output_table *t, const struct job_spec *s, bool redacted)
{
	char b1[32], b2[32], *env;
	int rc;

	if ((env = output_shell_quote(s->env, s->nenv)) == NULL)
		return -1;
	fmt_nodes(s, b1, sizeof(b1));
	rc = output_fields_addf(t, "Nodes", "%s%s", b1, s->nodes_min != s->nodes_max ?
	    " (elastic)" : "");
	fmt_gpus(s, b1, sizeof(b1));
	rc |= output_fields_addf(t, "GPUs per node", "%s", b1);
	rc |= output_fields_addf(t, "Tasks per node", "%u", s->tasks_per_node);
	rc |= output_fields_addf(t, "GPU type", "%s", s->gpu_type ? s->gpu_type : "any");
	/* Shown only when asked for, so the common job reads as before. */
	if (s->constraint != NULL)
		rc |= output_fields_addf(t, "Constraint", "%s", s->constraint);
	if (s->ctr.image != NULL) {
		rc |= output_fields_addf(t, "Container image", "%s%s",
		    s->ctr.image, s->ctr.writable ? " (writable)" :
		    " (read only)");
		if (s->ctr.mounts != NULL)
			rc |= output_fields_addf(t, "Container mounts", "%s",
			    s->ctr.mounts);
		if (s->ctr.workdir != NULL)
			rc |= output_fields_addf(t, "Container workdir", "%s",
			    s->ctr.workdir);
	}
	if (s->gpu_memory_mb > 0)
		rc |= output_fields_addf(t, "GPU memory", "%llu GiB or more "
		    "on every GPU", (unsigned long long)(s->gpu_memory_mb /
		    1024));
	if (s->cpus_per_task > 0)
		rc |= output_fields_addf(t, "CPUs per task", "%u, bound next "
		    "to the task's GPUs", s->cpus_per_task);
	if (s->mem_per_node_mb > 0)
		rc |= output_fields_addf(t, "Memory per node", "%llu MiB "
		    "(the job's cgroup limit where the node enforces it)",
		    (unsigned long long)s->mem_per_node_mb);
	rc |= output_fields_addf(t, "Queue", "%s", s->queue ? s->queue : "-");
	rc |= output_fields_addf(t, "Service", "%s", s->service ?
	    "yes (no time limit, restarted on any exit)" : "no");
	rc |= output_fields_addf(t, "Time limit", "%s", fmt_limit(s->time_limit_s,
	    "none", b1, sizeof(b1)));
	rc |= output_fields_addf(t, "Priority", "%d", (int)s->priority);
	if (s->topo_mode == TOPO_ANY)
		rc |= output_fields_addf(t, "Topology", "any");
	else
		rc |= output_fields_addf(t, "Topology", "%s (%s)", s->topo_level ?
		    s->topo_level : "-", s->topo_mode == TOPO_REQUIRED ?
		    "required" : "preferred");
	if (s->segment > 0)
		rc |= output_fields_addf(t, "Segment", "%u nodes per NVLink "
		    "block", s->segment);
	rc |= output_fields_addf(t, "Checkpoint dir", "%s", redacted ?
	    JOBS_PRIVATE : s->checkpoint_dir ? s->checkpoint_dir : "-");
	rc |= output_fields_addf(t, "Checkpoint signal", "%s", output_signal(
	    s->ckpt_signal, s->ckpt_secs, b1, sizeof(b1)));
	rc |= output_fields_addf(t, "Max restarts", "%u", s->max_restarts);
	rc |= output_fields_addf(t, "Hang timeout", "%s", fmt_limit(s->hang_timeout_s,
	    "off", b2, sizeof(b2)));
	rc |= output_fields_addf(t, "On straggler", "%s",
	    s->on_straggler == JOB_STRAGGLER_REPLACE ? "replace" : "report");
	rc |= output_fields_addf(t, "Working dir", "%s", redacted ?
	    JOBS_PRIVATE : s->workdir ? s->workdir : "(home directory)");
	rc |= output_fields_addf(t, "Environment", "%s", redacted ?
	    JOBS_PRIVATE : s->nenv ? env : "-");
	free(env);
	return rc;
}

/* Where the job runs (or last ran): "node01 (rank 0): GPUs 0,1,2,3". */
static int
show_placement(struct output_table *t, const struct job *j)
{
	const struct placement *p;
	char *line;
	size_t i, g, len;
	FILE *fp;
	int rc = 0;

	if (j->nplace == 0)
		return output_fields_addf(t, "Allocation", "-");
	for (i = 0; i < j->nplace && rc == 0; i++) {
		p = &j->place[i];
		if ((fp = open_memstream(&line, &len)) == NULL)
			return -1;
		fprintf(fp, "%s (rank %u): GPUs ", p->node, p->node_rank);
		for (g = 0; g < p->ngpus; g++)
			fprintf(fp, "%s%u", g ? "," : "", p->gpus[g]);
		if (fclose(fp) != 0)
			return -1;
		rc = output_fields_add(t, i == 0 ? "Allocation" : NULL, line);
		free(line);
	}
	return rc;
}

/* Where the time since the first start went (docs/SPEC.md "Goodput"),
 * what the last checkpoint cost (what the advice is computed from), and
 * the checkpoint interval advised. */
static int
show_goodput(struct output_table *t, const struct job *j)
{
	const struct job_goodput_view *v = &j->gpv;
	char p[48], l[48], r[48], w[48], c[48], d[48], a[96], k[96];

	if (!v->set || j->start_ms <= 0)
		return output_fields_addf(t, "Goodput", "-");
	if (v->advice_s > 0)
		snprintf(a, sizeof(a), "; checkpoint every %s advised",
		    output_duration_ms((uint64_t)v->advice_s * 1000, d,
		    sizeof(d)));
	else
		a[0] = '\0';
	if (v->ckpt_cost_ms > 0)
		snprintf(k, sizeof(k), "; last checkpoint took %s",
		    output_duration_ms(v->ckpt_cost_ms, d, sizeof(d)));
	else
		k[0] = '\0';
	return output_fields_addf(t, "Goodput", "ETTR %.3f: productive %s, "
	    "lost %s, restart %s, wait %s, checkpoint %s%s%s", v->ettr,
	    output_duration_ms(v->productive_ms, p, sizeof(p)),
	    output_duration_ms(v->lost_ms, l, sizeof(l)),
	    output_duration_ms(v->restart_ms, r, sizeof(r)),
	    output_duration_ms(v->wait_ms, w, sizeof(w)),
	    output_duration_ms(v->ckpt_ms, c, sizeof(c)), k, a);
}

/* What failures did to the job: its size now (elastic jobs), restarts,
 * the checkpoint it would resume from, and what was lost. */
static int
show_recovery(struct output_table *t, const struct job *j)
{
	char b[OUTPUT_TIME_LEN], d[48];
	int rc = 0;

	if (j->spec.nodes_min != j->spec.nodes_max) {
		if (j->nplace > 0 && !job_state_is_final(j->state))
			rc |= output_fields_addf(t, "Current size", "%zu node%s",
			    j->nplace, j->nplace == 1 ? "" : "s");
		else
			rc |= output_fields_addf(t, "Current size", "-");
	}
	rc |= output_fields_addf(t, "Restarts", "%u (max %u)", j->restarts,
	    j->spec.max_restarts);
	if (j->has_ckpt)
		rc |= output_fields_addf(t, "Last checkpoint", "step %" PRIu64 " at %s: "
		    "%s", j->ckpt_step, output_time_local(j->ckpt_ms, b,
		    sizeof(b)), j->ckpt_path ? j->ckpt_path : j->redacted ?
		    JOBS_PRIVATE : "-");
	else
		rc |= output_fields_addf(t, "Last checkpoint", "-");
	rc |= output_fields_addf(t, "Last failure", "%s", output_time_local(
	    j->last_failure_ms, b, sizeof(b)));
	rc |= output_fields_addf(t, "Last restart", "%s", output_time_local(
	    j->last_restart_ms, b, sizeof(b)));
	rc |= output_fields_addf(t, "Work lost", "%s", output_duration_ms(
	    j->lost_work_ms, d, sizeof(d)));
	return rc | show_goodput(t, j);
}

/* The job's preemptions: the events of kind "preempt" about it (it was
 * the victim; the text names the preemptor and the work lost). */
struct show_preempt {
	int64_t time_ms;
	char *actor;
	char *detail;
};

struct show_preempts {
	struct show_preempt *v;
	size_t n;
};

static void
show_preempts_free(struct show_preempts *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].actor);
		free(p->v[i].detail);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int
show_preempt_add(struct show_preempts *p, const Cohort__V1__Event *ev)
{
	struct show_preempt *v;

	if ((v = reallocarray(p->v, p->n + 1, sizeof(*v))) == NULL)
		return -1;
	p->v = v;
	v[p->n].time_ms = ev->time_ms;
	v[p->n].actor = strdup(ev->actor != NULL ? ev->actor : "");
	v[p->n].detail = strdup(ev->detail != NULL ? ev->detail : "");
	p->n++;
	if (v[p->n - 1].actor == NULL || v[p->n - 1].detail == NULL)
		return -1;
	return 0;
}

/* Page through the job's events on c. EXIT_OK or an exit code. */
static int
show_fetch_preempts(struct cconn *c, uint64_t id, struct show_preempts *p)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__EventsRequest er = COHORT__V1__EVENTS_REQUEST__INIT;
	const Cohort__V1__EventsReply *r;
	struct cerr err;
	int64_t after = 0;
	size_t i;
	bool more;
	int rc = EXIT_OK;

	er.has_job_id = 1;
	er.job_id = id;
	er.kind = "preempt";	/* a controller without the filter sends all */
	req.body_case = COHORT__V1__ENVELOPE__BODY_EVENTS;
	req.events = &er;
	do {
		er.has_after_id = after > 0;
		er.after_id = after;
		if ((rep = cconn_call(c, &req, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_EVENTS_REPLY) {
			rc = output_reply_error("show: events", rep);
			frame_free(rep);
			return rc;
		}
		r = rep->events_reply;
		for (i = 0; i < r->n_events && rc == EXIT_OK; i++) {
			if (strcmp(r->events[i]->kind, "preempt") == 0 &&
			    show_preempt_add(p, r->events[i]) == -1) {
				output_error("show: out of memory");
				rc = EXIT_FAILED;
			}
			after = r->events[i]->id;
		}
		more = r->has_has_more && r->has_more && r->n_events > 0;
		frame_free(rep);
	} while (rc == EXIT_OK && more);
	return rc;
}

static int
show_print_preempts(struct output_table *t, const struct show_preempts *p)
{
	char b[OUTPUT_TIME_LEN], *line;
	size_t i;
	int rc = 0;

	if (p->n == 0)
		return output_fields_addf(t, "Preemptions", "-");
	for (i = 0; i < p->n && rc == 0; i++) {
		if (asprintf(&line, "%s: %s", output_time_local(p->v[i].time_ms,
		    b, sizeof(b)), p->v[i].detail[0] ? p->v[i].detail :
		    p->v[i].actor) == -1)
			return -1;
		rc = output_fields_add(t, i == 0 ? "Preemptions" : NULL, line);
		free(line);
	}
	return rc;
}

static json_t *
show_preempts_json(const struct show_preempts *p)
{
	char b[OUTPUT_TIME_LEN];
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < p->n && arr != NULL; i++) {
		o = json_pack("{s:s, s:s, s:s}", "time", output_time_utc(
		    p->v[i].time_ms, b, sizeof(b)), "actor", p->v[i].actor,
		    "detail", p->v[i].detail);
		if (o == NULL || json_array_append_new(arr, o) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Ranks found slower than their peers: "rank 3 on node02: 200 ms per
 * step, peers 100 ms (2.0×), at TIME; moved". */
static int
show_stragglers(struct output_table *t, const Cohort__V1__Job *pb)
{
	char b[OUTPUT_TIME_LEN];
	const Cohort__V1__Straggler *s;
	unsigned x10;
	size_t i;
	int rc = 0;

	if (pb->n_stragglers == 0)
		return output_fields_addf(t, "Stragglers", "-");
	for (i = 0; i < pb->n_stragglers; i++) {
		s = pb->stragglers[i];
		x10 = (unsigned)((uint64_t)s->median_ms * 10 /
		    (s->peers_ms > 0 ? s->peers_ms : 1));
		rc |= output_fields_addf(t, i == 0 ? "Stragglers" : NULL,
		    "rank %u on %s: %u ms per step, peers %u ms (%u.%u×), at "
		    "%s%s", s->rank, s->node, s->median_ms, s->peers_ms,
		    x10 / 10, x10 % 10, output_time_local(s->time_ms, b,
		    sizeof(b)), s->replaced ? "; moved off its node" : "");
	}
	return rc;
}

static json_t *
show_stragglers_json(const Cohort__V1__Job *pb)
{
	const Cohort__V1__Straggler *s;
	json_t *arr = json_array(), *o;
	char b[OUTPUT_TIME_LEN];
	size_t i;

	for (i = 0; arr != NULL && i < pb->n_stragglers; i++) {
		s = pb->stragglers[i];
		o = json_pack("{s:I, s:s, s:I, s:I, s:I, s:s, s:b}",
		    "rank", (json_int_t)s->rank, "node", s->node,
		    "attempt", (json_int_t)s->attempt,
		    "median_ms", (json_int_t)s->median_ms,
		    "peers_ms", (json_int_t)s->peers_ms,
		    "time", output_time_utc(s->time_ms, b, sizeof(b)),
		    "replaced", (int)s->replaced);
		if (o == NULL || json_array_append_new(arr, o) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int
show_print(const struct job *j, const struct show_preempts *pre,
    const Cohort__V1__Envelope *steps, const Cohort__V1__Job *pb)
{
	struct output_table *t;
	char b[OUTPUT_TIME_LEN];
	int rc;

	if ((t = output_fields_new()) == NULL)
		return -1;
	if (j->array_id != 0) {
		rc = output_fields_addf(t, "Job", "%s (job id %" PRIu64 ")",
		    jobref_format(j, b, sizeof(b)), j->id);
		rc |= output_fields_addf(t, "Array", "%s%s", j->spec.array ?
		    j->spec.array : "-", j->array_max > 0 ? " (throttled)" : "");
	} else
		rc = output_fields_addf(t, "Job", "%" PRIu64, j->id);
	rc |= output_fields_addf(t, "Dependency", "%s", j->spec.dependency ?
	    j->spec.dependency : "-");
	rc |= output_fields_addf(t, "Name", "%s", j->spec.name ? j->spec.name : "-");
	rc |= output_fields_addf(t, "User", "%s", j->user ? j->user : "-");
	rc |= output_fields_addf(t, "State", "%s", job_state_name(j->state));
	rc |= output_fields_addf(t, "Reason", "%s", j->reason && j->reason[0] ?
	    j->reason : "-");
	rc |= show_command(t, j);
	rc |= show_spec(t, &j->spec, j->redacted);
	if (ctr_digest_valid(pb->image_digest))
		rc |= output_fields_addf(t, "Image digest", "%s",
		    pb->image_digest);
	rc |= show_placement(t, j);
	rc |= show_recovery(t, j);
	rc |= show_stragglers(t, pb);
	rc |= show_print_preempts(t, pre);
	if (j->spec.batch)
		rc |= show_steps_fields(t, steps);
	if (j->has_exit)
		rc |= output_fields_addf(t, "Exit code", "%d", (int)j->exit_code);
	else
		rc |= output_fields_addf(t, "Exit code", "-");
	rc |= output_fields_addf(t, "Submitted", "%s", output_time_local(j->submit_ms, b,
	    sizeof(b)));
	if (j->expected_start_ms > 0 && (j->state == JOB_PENDING ||
	    j->state == JOB_RESTARTING) && j->nplace == 0)
		rc |= output_fields_addf(t, "Expected start", "%s",
		    output_time_local(j->expected_start_ms, b, sizeof(b)));
	rc |= output_fields_addf(t, "Started", "%s", output_time_local(j->start_ms, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Ended", "%s", output_time_local(j->end_ms, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Elapsed", "%s", cell_elapsed(j,
	    clock_now_ms(), b, sizeof(b)) != NULL ? b : "-");
	rc |= output_fields_addf(t, "GPU time", "%.2f GPU-hours, %.2f wasted "
	    "(lost work, failed runs)", (double)j->gpu_ms / 3600000.0,
	    (double)j->wasted_gpu_ms / 3600000.0);
	if (rc == 0)
		output_table_print(t, stdout);
	output_table_free(t);
	return rc == 0 ? 0 : -1;
}

/* Show job id, got on c: printed, or added to arr when not NULL.
 * EXIT_OK or an exit code after printing why. */
static int
show_one(struct cconn *c, uint64_t id, bool json, json_t *arr)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__Envelope *steps = NULL;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct show_preempts pre = { 0 };
	struct cerr err;
	struct job *j = NULL;
	json_t *doc;
	int rc;

	gj.job_id = id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	/* The job, then its preemptions from its events. */
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY)
		rc = output_reply_error("show", rep);
	else if ((j = jobs_convert("show", rep->get_job_reply->job)) == NULL)
		rc = EXIT_FAILED;
	else
		rc = show_fetch_preempts(c, gj.job_id, &pre);
	/* A batch job's steps (srun inside it). */
	if (rc == EXIT_OK && j->spec.batch)
		rc = show_steps_fetch(c, gj.job_id, &steps);
	if (rc == EXIT_OK && json) {
		doc = output_job_json(j);
		if (doc != NULL && (json_object_set_new(doc, "preemptions",
		    show_preempts_json(&pre)) == -1 ||
		    json_object_set_new(doc, "stragglers",
		    show_stragglers_json(rep->get_job_reply->job)) == -1 ||
		    json_object_set_new(doc, "image_digest",
		    ctr_digest_valid(rep->get_job_reply->job->image_digest) ?
		    json_string(rep->get_job_reply->job->image_digest) :
		    json_null()) == -1 ||
		    json_object_set_new(doc, "on_straggler",
		    json_string(j->spec.on_straggler ==
		    JOB_STRAGGLER_REPLACE ? "replace" : "report")) == -1 ||
		    (j->spec.batch &&
		    json_object_set_new(doc, "steps",
		    show_steps_json(steps)) == -1))) {
			json_decref(doc);
			doc = NULL;
		}
		if (arr != NULL)
			rc = doc != NULL && json_array_append_new(arr,
			    doc) == 0 ? EXIT_OK : EXIT_FAILED;
		else
			rc = output_json_print(doc) == 0 ? EXIT_OK :
			    EXIT_FAILED;
	} else if (rc == EXIT_OK && (show_print(j, &pre, steps,
	    rep->get_job_reply->job) == -1 ||
	    fflush(stdout) == EOF)) {
		output_error("show: cannot print the job");
		rc = EXIT_FAILED;
	}
	show_preempts_free(&pre);
	frame_free(steps);
	job_free(j);
	frame_free(rep);
	return rc;
}

/* A job reference that did not resolve: its exit code, after saying
 * why. */
static int
jobs_ref_error(const char *cmd, const struct cerr *err)
{
	if (err->code == ERR_UNAVAILABLE || err->code == ERR_PROTOCOL)
		return output_call_error(err);
	output_error("%s: %s", cmd, err->text);
	return err->code == ERR_INVALID ? EXIT_USAGE : EXIT_FAILED;
}

/* What one round of cohort show needs. */
struct show_args {
	const char *ref;
	const struct cconn_opts *opts;
	struct jobs_flags f;
};

/* Resolve the job reference and show what it names, on a connection of
 * its own. EXIT_OK or an exit code after printing why. */
static int
show_round(void *arg)
{
	struct show_args *a = arg;
	struct jobref_ids ids = { 0 };
	struct cconn *c;
	struct cerr err;
	json_t *arr = NULL;
	size_t i;
	int rc;

	if ((rc = output_connect(a->opts, &a->f.conn, &c)) != EXIT_OK)
		return rc;
	/* An array: each of its tasks (--json: {"jobs": [...]}). */
	if (jobref_resolve(c, a->ref, &ids, &err) == -1)
		rc = jobs_ref_error("show", &err);
	else if (a->f.json && ids.n > 1 && (arr = json_array()) == NULL) {
		output_error("show: out of memory");
		rc = EXIT_FAILED;
	}
	for (i = 0; rc == EXIT_OK && i < ids.n; i++) {
		if (i > 0 && !a->f.json)
			putchar('\n');
		rc = show_one(c, ids.ids[i], a->f.json, arr);
	}
	cconn_close(c);
	if (rc == EXIT_OK && arr != NULL) {
		rc = output_listing(true, "jobs", arr, NULL);
		arr = NULL;
	}
	json_decref(arr);
	jobref_ids_clear(&ids);
	return rc;
}

int
cmd_show(int argc, char **argv, const struct cconn_opts *opts)
{
	struct show_args a;
	struct jobref r;
	struct cerr err;
	int rc;

	if ((rc = jobs_parse("show", argc, argv, M(O_JSON) | M(O_ITERATE),
	    &a.f)) == -2) {
		fputs(show_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (argc - optind != 1) {
		output_error("show: %s (see cohort show --help)",
		    optind < argc ? "one job at a time" : "missing JOB");
		return EXIT_USAGE;
	}
	if (jobref_parse(argv[optind], &r, &err) == -1)
		return jobs_ref_error("show", &err);
	jobref_clear(&r);
	a.ref = argv[optind];
	a.opts = opts;
	return output_iterate(a.f.iterate_ms, show_round, &a);
}


/* cohort cancel's own options (scancel's filters). */
enum { C_USER = 0x100, C_STATE, C_NAME, C_HELP = 'h' };

static const struct option cancel_longopts[] = {
	{ "user", required_argument, NULL, C_USER },
	{ "state", required_argument, NULL, C_STATE },
	{ "name", required_argument, NULL, C_NAME },
	{ "help", no_argument, NULL, C_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

/* The filters of cohort cancel, as a request. */
struct cancel_filter {
	Cohort__V1__JobState states[16];
	size_t nstates;
	const char *user;
	const char *name;
};

/* S[,S...] into f->states. 0, or -1 after printing why. */
static int
cancel_states(struct cancel_filter *f, const char *arg)
{
	char buf[256], *tok, *save;
	enum job_state st;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		goto bad;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (job_state_parse(tok, &st) == -1) {
			output_error("cancel: --state: unknown state '%s' "
			    "(PENDING, RUNNING, RESTARTING, RESIZING)", tok);
			return -1;
		}
		if (f->nstates == sizeof(f->states) / sizeof(f->states[0]))
			goto bad;
		f->states[f->nstates++] = wire_state_to_pb(st);
	}
	if (f->nstates > 0)
		return 0;
bad:
	output_error("cancel: --state: invalid list '%s' (STATE[,STATE])", arg);
	return -1;
}

/* Send one cancel: ids (n of them) or, with n 0, the filters. Its
 * results printed; *more: the filter matched more than one request
 * handles; *done: how many were cancelled. */
static int
cancel_send(struct cconn *c, uint64_t *ids, size_t n,
    const struct cancel_filter *f, bool *more, size_t *done)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__CancelRequest cr = COHORT__V1__CANCEL_REQUEST__INIT;
	Cohort__V1__CancelReply *r;
	struct cerr err;
	size_t i;
	int rc;

	*more = false;
	*done = 0;
	cr.job_id = 0;
	cr.n_job_ids = n;
	cr.job_ids = ids;
	if (n == 0) {
		cr.user = (char *)f->user;
		cr.name = (char *)f->name;
		cr.n_states = f->nstates;
		cr.states = (Cohort__V1__JobState *)f->states;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL;
	req.cancel = &cr;
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY) {
		rc = output_reply_error("cancel", rep);
		frame_free(rep);
		return rc;
	}
	r = rep->cancel_reply;
	rc = control_print_results("cancel", r->results, r->n_results, false);
	for (i = 0; i < r->n_results; i++)
		*done += !r->results[i]->has_code;
	*more = r->has_more && r->more;
	frame_free(rep);
	return rc;
}

/* Every job named (in requests of CONTROL_CHUNK, each one commit on the
 * controller), or every match of the filters; a refusal does not stop
 * the rest. */
static int
cancel_all(struct cconn *c, uint64_t *ids, size_t n,
    const struct cancel_filter *f)
{
	size_t i, k, done;
	bool more;
	int r, rc = EXIT_OK;

	for (i = 0; i < n && rc != EXIT_UNREACHABLE; i += k) {
		k = n - i < CONTROL_CHUNK ? n - i : CONTROL_CHUNK;
		if ((r = cancel_send(c, ids + i, k, f, &more, &done)) !=
		    EXIT_OK)
			rc = r;
	}
	if (n > 0)
		return rc;
	/* A filter's matches, a request's worth at a time; a round that
	 * cancelled none would only match the same jobs again. */
	do {
		if ((r = cancel_send(c, NULL, 0, f, &more, &done)) != EXIT_OK)
			rc = r;
	} while (more && done > 0 && r != EXIT_UNREACHABLE);
	return rc;
}

int
cmd_cancel(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags conn = { NULL, NULL, NULL, NULL };
	struct cancel_filter f = { .nstates = 0 };
	struct cconn *c;
	uint64_t *ids = NULL;
	size_t n = 0;
	int ch, rc;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", cancel_longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("cancel", ch, argv);
		if (ch == C_HELP) {
			fputs(cancel_usage, stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&conn, ch, optarg))
			continue;
		if (ch == C_USER)
			f.user = optarg;
		else if (ch == C_NAME)
			f.name = optarg;
		else if (cancel_states(&f, optarg) == -1)
			return EXIT_USAGE;
	}
	if (optind == argc && f.user == NULL && f.name == NULL &&
	    f.nstates == 0) {
		output_error("cancel: missing JOB or filter (see cohort cancel "
		    "--help)");
		return EXIT_USAGE;
	}
	/* scancel narrows named jobs by the filters; here it is one or the
	 * other, so that a filter never silently skips a job named. */
	if (optind < argc && (f.user != NULL || f.name != NULL ||
	    f.nstates > 0)) {
		output_error("cancel: give jobs or filters, not both");
		return EXIT_USAGE;
	}
	/* Every argument is checked before anything is cancelled. */
	if (control_job_ids(NULL, "cancel", argv + optind, argc - optind,
	    &ids, &n) == -1)
		return EXIT_USAGE;
	free(ids);
	ids = NULL;
	if ((rc = output_connect(opts, &conn, &c)) != EXIT_OK)
		return rc;
	/* Array references resolve to task ids on the connection. */
	if (control_job_ids(c, "cancel", argv + optind, argc - optind, &ids,
	    &n) == -1)
		rc = EXIT_FAILED;
	else if (optind < argc && n == 0) {
		output_error("cancel: nothing left to cancel: every task named "
		    "has ended");
		rc = EXIT_FAILED;
	} else
		rc = cancel_all(c, ids, n, &f);
	cconn_close(c);
	free(ids);
	return rc;
}
