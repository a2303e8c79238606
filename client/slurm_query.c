/* squeue and sacct as Cohort answers them (cohort(1), "SLURM
 * COMMANDS"), and what Slurm's commands share (slurm_query.h). Tools
 * parse what these print, so the layouts are Slurm's: its default
 * formats and widths, its state names, times and error lines. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/arrays.h"
#include "client/commands.h"
#include "client/jobref.h"
#include "client/output.h"
#include "client/slurm_format.h"
#include "client/slurm_query.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/wire.h"

void
slurm_log(const char *cmd, const char *level, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: %s: ", cmd, level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
slurm_option_error(const char *cmd, int ch, char *const *argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "?";

	if (ch == ':')
		fprintf(stderr, "%s: option '%s' requires an argument\n", cmd,
		    word);
	else if (optopt != 0 && optopt < 0x100)
		fprintf(stderr, "%s: invalid option -- '%c' (not supported "
		    "by Cohort's %s)\n", cmd, optopt, cmd);
	else
		fprintf(stderr, "%s: unrecognized option '%s' (not supported "
		    "by Cohort's %s)\n", cmd, word, cmd);
	fprintf(stderr, "Try \"%s --help\" for more information\n", cmd);
	return EXIT_FAILED;
}

int
slurm_connect(const struct cconn_opts *opts, struct cconn **c)
{
	/* Slurm's commands take no connection flags: the environment's. */
	static const struct output_conn_flags none = { NULL, NULL, NULL,
	    NULL };

	return output_connect(opts, &none, c);
}

int
slurm_no_operands(const char *cmd, int argc, char *const *argv)
{
	if (optind >= argc)
		return 0;
	slurm_error(cmd, "unrecognized argument '%s'", argv[optind]);
	return EXIT_FAILED;
}

static int
slurm_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[24], *end;

	if (len == 0 || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 10);
	return errno != 0 || *end != '\0' || *out == 0 ? -1 : 0;
}

/* One id of a -j list: "12", "12_7" or "12_[1-3]". */
static int
slurm_jobsel_parse(const char *s, size_t len, struct slurm_jobsel *sel)
{
	const char *us = memchr(s, '_', len), *dash, *t;
	uint64_t lo, hi;
	size_t tlen;

	memset(sel, 0, sizeof(*sel));
	if (us == NULL)
		return slurm_u64(s, len, &sel->id);
	if (slurm_u64(s, (size_t)(us - s), &sel->id) == -1)
		return -1;
	t = us + 1;
	tlen = (size_t)(s + len - t);
	if (tlen >= 2 && t[0] == '[' && t[tlen - 1] == ']') {
		t++;
		tlen -= 2;
	}
	sel->task = true;
	/* Task 0 is a task: parse it past slurm_u64's "positive". */
	if ((dash = memchr(t, '-', tlen)) == NULL) {
		if (tlen == 1 && t[0] == '0')
			return 0;
		if (slurm_u64(t, tlen, &lo) == -1 || lo > UINT32_MAX)
			return -1;
		sel->lo = sel->hi = (uint32_t)lo;
		return 0;
	}
	lo = 0;
	if (!(dash - t == 1 && t[0] == '0') &&
	    slurm_u64(t, (size_t)(dash - t), &lo) == -1)
		return -1;
	if (slurm_u64(dash + 1, (size_t)(t + tlen - dash - 1), &hi) == -1 ||
	    hi > UINT32_MAX || hi < lo)
		return -1;
	sel->lo = (uint32_t)lo;
	sel->hi = (uint32_t)hi;
	return 0;
}

int
slurm_joblist_parse(const char *s, struct slurm_joblist *l, struct cerr *err)
{
	struct slurm_jobsel *v;
	const char *p = s, *comma, *br;
	size_t len;

	memset(l, 0, sizeof(*l));
	l->min_id = UINT64_MAX;
	do {
		/* A comma inside "12_[1,3]" is not a separator. */
		comma = strchr(p, ',');
		br = strchr(p, '[');
		if (br != NULL && comma != NULL && br < comma &&
		    strchr(br, ']') != NULL) {
			slurm_joblist_clear(l);
			return cerr_set(err, ERR_INVALID, "Invalid job id: %s "
			    "(a task list in brackets takes one range)", s);
		}
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if ((v = reallocarray(l->v, l->n + 1, sizeof(*v))) == NULL) {
			slurm_joblist_clear(l);
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		l->v = v;
		if (slurm_jobsel_parse(p, len, &v[l->n]) == -1) {
			slurm_joblist_clear(l);
			return cerr_set(err, ERR_INVALID, "Invalid job id: "
			    "%.*s", (int)len, p);
		}
		if (v[l->n].id < l->min_id)
			l->min_id = v[l->n].id;
		if (v[l->n].id > l->max_id)
			l->max_id = v[l->n].id;
		l->n++;
		p = comma != NULL ? comma + 1 : NULL;
	} while (p != NULL);
	return 0;
}

bool
slurm_joblist_match(const struct slurm_joblist *l, const struct job *j)
{
	const struct slurm_jobsel *s;
	size_t i;

	for (i = 0; i < l->n; i++) {
		s = &l->v[i];
		if (s->task) {
			if (j->array_id == s->id && j->array_task >= s->lo &&
			    j->array_task <= s->hi)
				return true;
		} else if (j->id == s->id || j->array_id == s->id)
			return true;
	}
	return false;
}

void
slurm_joblist_clear(struct slurm_joblist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

bool
slurm_word_in(const char *list, const char *word)
{
	size_t len;
	const char *p = list, *comma;

	if (word == NULL)
		return false;
	len = strlen(word);
	do {
		comma = strchr(p, ',');
		if ((comma != NULL ? (size_t)(comma - p) : strlen(p)) == len &&
		    strncmp(p, word, len) == 0)
			return true;
		p = comma != NULL ? comma + 1 : NULL;
	} while (p != NULL);
	return false;
}

int
slurm_jobfilter_jobs(struct slurm_jobfilter *f, const char *s,
    struct cerr *err)
{
	slurm_joblist_clear(&f->jobs);
	f->has_jobs = slurm_joblist_parse(s, &f->jobs, err) == 0;
	return f->has_jobs ? 0 : -1;
}

void
slurm_jobfilter_request(const struct slurm_jobfilter *f,
    Cohort__V1__ListJobsRequest *lj)
{
	if (f->users != NULL && strchr(f->users, ',') == NULL)
		lj->user = (char *)f->users;
	if (f->has_jobs)
		lj->after_id = f->jobs.min_id - 1;
}

bool
slurm_jobfilter_match(const struct slurm_jobfilter *f, unsigned states,
    const struct job *j)
{
	if (states != 0 && !(states & 1u << j->state))
		return false;
	if (f->has_jobs && !slurm_joblist_match(&f->jobs, j))
		return false;
	if (f->users != NULL && !slurm_word_in(f->users, j->user))
		return false;
	if (f->partitions != NULL && !slurm_word_in(f->partitions,
	    j->spec.queue))
		return false;
	return f->names == NULL || slurm_word_in(f->names, j->spec.name);
}

void
slurm_jobfilter_clear(struct slurm_jobfilter *f)
{
	slurm_joblist_clear(&f->jobs);
	f->has_jobs = false;
}

bool
slurm_job_of(const struct job *j, const char *user)
{
	return j->user != NULL && strcmp(j->user, user) == 0;
}

void
slurm_jobs_free(struct job **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		job_free(v[i]);
	free(v);
}

size_t
slurm_jobs_filter(struct job **v, size_t n,
    bool (*keep)(const void *, const struct job *), const void *arg)
{
	size_t i, k;

	for (i = 0, k = 0; i < n; i++) {
		if (keep(arg, v[i]))
			v[k++] = v[i];
		else
			job_free(v[i]);
	}
	return k;
}

int
slurm_call(const char *cmd, struct cconn *c, Cohort__V1__Envelope *req,
    Cohort__V1__Envelope__BodyCase want, Cohort__V1__Envelope **rep)
{
	struct cerr err;
	int rc;

	cerr_clear(&err);
	if ((*rep = cconn_call(c, req, &err)) == NULL)
		return output_call_error(&err);
	if ((*rep)->body_case != want) {
		rc = output_reply_error(cmd, *rep);
		frame_free(*rep);
		*rep = NULL;
		return rc;
	}
	return EXIT_OK;
}

int
slurm_jobs_fetch(const char *cmd, struct cconn *c,
    Cohort__V1__ListJobsRequest *lj, uint64_t up_to, struct job ***v,
    size_t *n)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	const Cohort__V1__ListJobsReply *r;
	struct job *j, **nv;
	struct cerr err;
	uint64_t last = lj->after_id;
	bool more;
	size_t i;
	int rc = EXIT_OK;

	*v = NULL;
	*n = 0;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS;
	req.list_jobs = lj;
	lj->has_after_id = 1;
	do {
		if ((rc = slurm_call(cmd, c, &req,
		    COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY, &rep)) != EXIT_OK)
			break;
		r = rep->list_jobs_reply;
		for (i = 0; i < r->n_jobs && rc == EXIT_OK; i++) {
			/* Never a job twice, whatever a page holds. */
			if (r->jobs[i]->id <= last ||
			    (up_to > 0 && r->jobs[i]->id > up_to))
				continue;
			cerr_clear(&err);
			if ((j = wire_job_from_pb(r->jobs[i], &err)) == NULL) {
				slurm_error(cmd, "the controller sent a job we "
				    "cannot read: %s", err.text);
				rc = EXIT_FAILED;
			} else if ((nv = reallocarray(*v, *n + 1,
			    sizeof(*nv))) == NULL) {
				job_free(j);
				slurm_error(cmd, "out of memory");
				rc = EXIT_FAILED;
			} else {
				*v = nv;
				nv[(*n)++] = j;
				last = j->id;
			}
		}
		more = r->has_has_more && r->has_more;
		/* An empty page with more to come moves the cursor. */
		if (more && r->has_next_after && r->next_after > last)
			last = r->next_after;
		frame_free(rep);
		if (more && last <= lj->after_id) {
			slurm_error(cmd, "the controller's pages do not advance");
			rc = EXIT_FAILED;
		}
		if (up_to > 0 && last >= up_to)
			more = false;
		lj->after_id = last;
	} while (rc == EXIT_OK && more);
	if (rc != EXIT_OK) {
		slurm_jobs_free(*v, *n);
		*v = NULL;
		*n = 0;
	}
	return rc;
}

/* ---- Job cells shared by squeue and sacct ---- */

int
slurm_fields_check(const char *cmd, const struct sfmt *fmt)
{
	if (sfmt_nfields(fmt) <= SLURM_FIELDS_MAX)
		return EXIT_OK;
	slurm_error(cmd, "at most %d fields in a format", SLURM_FIELDS_MAX);
	return EXIT_FAILED;
}

const char *const *
slurm_job_row(const struct sfmt *fmt, slurm_job_cell_fn *cell,
    const struct job *j, const char *rowid, int64_t now)
{
	static char bufs[SLURM_FIELDS_MAX][SLURM_CELL];
	static const char *cells[SLURM_FIELDS_MAX];
	size_t k, f;

	for (k = 0, f = 0; k < fmt->n; k++) {
		if (fmt->v[k].def == NULL)
			continue;
		cells[f] = cell(fmt->v[k].def->id, j, rowid, now, bufs[f],
		    sizeof(bufs[f]));
		f++;
	}
	return cells;
}

/* The job holds (or, ended, held) an allocation. */
bool
slurm_job_placed(const struct job *j)
{
	return j->nplace > 0 && j->start_ms > 0;
}

uint64_t
slurm_job_elapsed_s(const struct job *j, int64_t now)
{
	int64_t to;

	if (j->start_ms <= 0)
		return 0;
	if (job_state_is_final(j->state))
		to = j->end_ms;
	else if (j->state == JOB_RUNNING || j->state == JOB_RESIZING)
		to = now;
	else
		return 0;
	return to > j->start_ms ? (uint64_t)(to - j->start_ms) / 1000 : 0;
}

uint32_t
slurm_job_nodes(const struct job *j)
{
	return slurm_job_placed(j) ? (uint32_t)j->nplace : j->spec.nodes_min;
}

/* Slurm counts a CPU per task unless --cpus-per-task says more. */
uint64_t
slurm_job_cpus(const struct job *j)
{
	uint64_t per = j->spec.cpus_per_task > 0 ? j->spec.cpus_per_task : 1;

	return per * j->spec.tasks_per_node * slurm_job_nodes(j);
}

/* GPUs per node: the asked count, or for a whole-node job what its
 * first node gave it; 0 when unknown yet. */
static uint32_t
slurm_job_gpus_per_node(const struct job *j)
{
	if (j->spec.cpu_only)
		return 0;
	if (j->spec.gpus_per_node > 0)
		return j->spec.gpus_per_node;
	return j->nplace > 0 ? j->place[0].ngpus : 0;
}

const char *
slurm_job_nodelist(const struct job *j, char *buf, size_t len)
{
	char *list;

	buf[0] = '\0';
	if (j->nplace > 0 && (list = output_nodelist(j)) != NULL) {
		snprintf(buf, len, "%s", list);
		free(list);
	}
	return buf;
}

/* ---- squeue ---- */

enum {
	SQ_ID, SQ_NAME, SQ_STATE, SQ_ST, SQ_TIME, SQ_LIMIT, SQ_NODES,
	SQ_REASONLIST, SQ_NODELIST, SQ_USER, SQ_PARTITION, SQ_CPUS, SQ_TRES,
	SQ_SUBMIT, SQ_START, SQ_END, SQ_PRIORITY, SQ_REASON, SQ_JOBID_RAW,
};

const struct sfmt_def squeue_defs[] = {
	/* -o %i is the array form (12_3); -O JobID the job's own id. */
	{ 'i', NULL, "JOBID", 0, SQ_ID },
	{ 0, "JobID", "JOBID", 0, SQ_JOBID_RAW },
	{ 'j', "Name", "NAME", 0, SQ_NAME },
	{ 'T', "State", "STATE", 0, SQ_STATE },
	{ 't', "StateCompact", "ST", 0, SQ_ST },
	{ 'M', "TimeUsed", "TIME", 0, SQ_TIME },
	{ 'l', "TimeLimit", "TIME_LIMIT", 0, SQ_LIMIT },
	{ 'D', "NumNodes", "NODES", 0, SQ_NODES },
	{ 'R', "ReasonList", "NODELIST(REASON)", 0, SQ_REASONLIST },
	{ 'N', "NodeList", "NODELIST", 0, SQ_NODELIST },
	{ 'u', "UserName", "USER", 0, SQ_USER },
	{ 'P', "Partition", "PARTITION", 0, SQ_PARTITION },
	{ 'C', "NumCPUs", "CPUS", 0, SQ_CPUS },
	{ 'b', "tres-per-node", "TRES_PER_NODE", 0, SQ_TRES },
	{ 'V', "SubmitTime", "SUBMIT_TIME", 0, SQ_SUBMIT },
	{ 'S', "StartTime", "START_TIME", 0, SQ_START },
	{ 'e', "EndTime", "END_TIME", 0, SQ_END },
	{ 'Q', "Priority", "PRIORITY", 0, SQ_PRIORITY },
	{ 'r', "Reason", "REASON", 0, SQ_REASON },
};
const size_t squeue_ndefs = sizeof(squeue_defs) / sizeof(squeue_defs[0]);
#define SQUEUE_NDEFS squeue_ndefs

/* The states of jobs that have not ended. */
#define SQUEUE_LIVE (1u << JOB_PENDING | 1u << JOB_RUNNING | \
	1u << JOB_RESTARTING | 1u << JOB_RESIZING)


static const char *
squeue_cell(int id, const struct job *j, const char *rowid, int64_t now,
    char *buf, size_t len)
{
	bool waiting = !slurm_job_placed(j) && !job_state_is_final(j->state);
	char rb[SLURM_REASON_LEN];
	uint32_t g;

	switch (id) {
	case SQ_ID:
		return rowid;
	case SQ_JOBID_RAW:
		snprintf(buf, len, "%" PRIu64, j->id);
		return buf;
	case SQ_NAME:
		return j->spec.name != NULL ? j->spec.name : "";
	case SQ_STATE:
		return slurm_state_name(j->state);
	case SQ_ST:
		return slurm_state_code(j->state);
	case SQ_TIME:
		return slurm_secs_short(slurm_job_elapsed_s(j, now), buf, len);
	case SQ_LIMIT:
		if (j->spec.service || j->spec.time_limit_s == 0)
			return "UNLIMITED";
		return slurm_secs_short(j->spec.time_limit_s, buf, len);
	case SQ_NODES:
		snprintf(buf, len, "%" PRIu32, slurm_job_nodes(j));
		return buf;
	case SQ_REASONLIST:
		/* Slurm shows why a job waits, failed or ran out of
		 * time; other jobs, their nodes. */
		if (waiting) {
			snprintf(buf, len, "(%s)", slurm_reason(j->reason, rb,
			    sizeof(rb)));
			return buf;
		}
		if (j->state == JOB_FAILED)
			return "(NonZeroExitCode)";
		if (j->state == JOB_TIMEOUT)
			return "(TimeLimit)";
		return slurm_job_nodelist(j, buf, len);
	case SQ_NODELIST:
		return waiting ? "" : slurm_job_nodelist(j, buf, len);
	case SQ_USER:
		return j->user != NULL ? j->user : "";
	case SQ_PARTITION:
		return j->spec.queue != NULL ? j->spec.queue : "";
	case SQ_CPUS:
		snprintf(buf, len, "%" PRIu64, slurm_job_cpus(j));
		return buf;
	case SQ_TRES:
		/* Slurm 22.05's form, as the job asked: "gres:gpu:2". */
		if (j->spec.cpu_only)
			return "N/A";
		if ((g = slurm_job_gpus_per_node(j)) == 0)
			return "gres:gpu";
		snprintf(buf, len, "gres:gpu:%" PRIu32, g);
		return buf;
	case SQ_SUBMIT:
		return slurm_time(j->submit_ms, "N/A", buf, len);
	case SQ_START:
		return slurm_time(waiting ? j->expected_start_ms : j->start_ms,
		    "N/A", buf, len);
	case SQ_END:
		if (j->end_ms > 0)
			return slurm_time(j->end_ms, "N/A", buf, len);
		/* Running: when its time limit ends it, as Slurm shows. */
		if (!waiting && j->spec.time_limit_s > 0 && !j->spec.service)
			return slurm_time(j->start_ms + (int64_t)
			    j->spec.time_limit_s * 1000, "N/A", buf, len);
		return waiting ? "N/A" : "NONE";
	case SQ_PRIORITY:
		snprintf(buf, len, "%" PRId32, j->spec.priority);
		return buf;
	case SQ_REASON:
		return waiting ? slurm_reason(j->reason, buf, len) : "None";
	}
	return "";
}

static const struct option squeue_longopts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "array", no_argument, NULL, 'r' },
	{ "noheader", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, 'o' },
	{ "Format", required_argument, NULL, 'O' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "user", required_argument, NULL, 'u' },
	{ "me", no_argument, NULL, 'm' },
	{ "states", required_argument, NULL, 't' },
	{ "partition", required_argument, NULL, 'p' },
	{ "name", required_argument, NULL, 'n' },
	{ "long", no_argument, NULL, 'l' },
	{ "steps", optional_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'H' },
	{ NULL, 0, NULL, 0 },
};

static const char squeue_usage[] =
    "Usage: squeue [-a] [-h] [-l] [-r] [-s] [--me] [-j JOBS] [-u USERS]\n"
    "              [-t STATES] [-p PARTITIONS] [-n NAMES]\n"
    "              [-o FORMAT | -O FIELDS]\n"
    "  Cohort's squeue (cohort(1), SLURM COMMANDS): partitions are Cohort's\n"
    "  queues; -s lists running job steps (-o letters %i %j %P %u %M %N).\n"
    "  -o letters: %i %j %T %t %M %l %D %R %N %u %P %C %b %V %S %e %Q %r\n"
    "  -O fields: JobID Name State StateCompact TimeUsed TimeLimit NumNodes\n"
    "  ReasonList NodeList UserName Partition NumCPUs tres-per-node\n"
    "  SubmitTime StartTime EndTime Priority Reason\n";

struct squeue_args {
	bool noheader, array, me, steps, longer;
	const char *me_user;	/* with --me: who we are */
	const char *format, *Format;
	struct slurm_jobfilter f;	/* no states: pending and running */
};

static int
squeue_parse(int argc, char **argv, struct squeue_args *a)
{
	struct cerr err;
	int ch;

	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ahj:lmn:o:O:p:rs::t:u:",
	    squeue_longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			break;	/* every queue is shown to everyone */
		case 'r':
			a->array = true;
			break;
		case 'h':
			a->noheader = true;
			break;
		case 'l':
			a->format = SQUEUE_FORMAT_LONG;
			a->longer = true;
			break;
		case 'o':
			a->format = optarg;
			break;
		case 'O':
			a->Format = optarg;
			break;
		case 'j':
			if (slurm_jobfilter_jobs(&a->f, optarg, &err) == -1) {
				slurm_error("squeue", "%s", err.text);
				return EXIT_FAILED;
			}
			break;
		case 'u':
			a->f.users = optarg;
			break;
		case 'm':
			a->me = true;
			break;
		case 'n':
			a->f.names = optarg;
			break;
		case 'p':
			a->f.partitions = optarg;
			break;
		case 's':
			a->steps = true;
			break;
		case 't':
			cerr_clear(&err);
			if (slurm_states_parse(optarg, &a->f.states, &err) ==
			    -1) {
				slurm_error("squeue", "%s", err.text);
				slurm_error("squeue", "Valid job states include: "
				    "%s", SLURM_STATES_VALID);
				return EXIT_FAILED;
			}
			break;
		case 'H':
			fputs(squeue_usage, stdout);
			return -2;
		default:
			return slurm_option_error("squeue", ch, argv);
		}
	}
	return slurm_no_operands("squeue", argc, argv);
}

static bool
squeue_wanted(const void *arg, const struct job *j)
{
	const struct squeue_args *a = arg;
	unsigned states = a->f.states;

	/* Without -t, Slurm lists the jobs that have not ended; with -j,
	 * the jobs named in any state. */
	if (states == 0 && !a->f.has_jobs)
		states = SQUEUE_LIVE;
	return slurm_jobfilter_match(&a->f, states, j) &&
	    (a->me_user == NULL || slurm_job_of(j, a->me_user));
}

/* Print the rows: an array's pending tasks folded unless -r. */
static int
squeue_print(const struct squeue_args *a, struct sfmt *fmt,
    struct job **v, size_t n)
{
	struct arrays_row *rows = NULL, one;
	char id[JOBREF_LEN];
	size_t nrows, i;
	int64_t now = clock_now_ms();

	if (slurm_fields_check("squeue", fmt) != EXIT_OK)
		return EXIT_FAILED;
	if (!a->array && arrays_fold((const struct job *const *)v, n, &rows,
	    &nrows) == -1) {
		slurm_error("squeue", "out of memory");
		return EXIT_FAILED;
	}
	if (a->array)
		nrows = n;
	if (!a->noheader) {
		if (a->longer)
			slurm_print_date(stdout);
		sfmt_print(fmt, NULL, stdout);
	}
	for (i = 0; i < nrows; i++) {
		if (a->array) {
			one.job = v[i];
			one.id = jobref_format(v[i], id, sizeof(id));
		} else
			one = rows[i];
		sfmt_print(fmt, slurm_job_row(fmt, squeue_cell, one.job,
		    one.id, now), stdout);
	}
	if (rows != NULL)
		arrays_rows_free(rows, nrows);
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

/* squeue -s: the running steps of the jobs squeue would list (its -j,
 * -u, --me), in Slurm's step format or -o's. */
static int
squeue_steps(struct squeue_args *a, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	Cohort__V1__Envelope *rep = NULL;
	const Cohort__V1__ListStepsReply *r;
	static char bufs[SLURM_FIELDS_MAX][SLURM_CELL];
	const char *cells[SLURM_FIELDS_MAX];
	struct slurm_step st;
	struct sfmt fmt;
	struct cerr err;
	struct cconn *c;
	struct job **v = NULL, *j;
	uint64_t *ids = NULL;
	size_t n = 0, i, k, f, lo, hi, mid;
	int64_t now = clock_now_ms();
	int rc;

	cerr_clear(&err);
	if (sfmt_parse_letters(a->format != NULL ? a->format :
	    SQUEUE_STEP_FORMAT, squeue_step_defs, squeue_step_ndefs, &fmt,
	    &err) == -1) {
		slurm_error("squeue", "%s", err.text);
		return EXIT_FAILED;
	}
	if ((rc = slurm_fields_check("squeue", &fmt)) != EXIT_OK)
		goto out_fmt;
	lj.has_all = 1;
	lj.all = 0;
	slurm_jobfilter_request(&a->f, &lj);
	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		goto out_fmt;
	if (a->me)
		a->me_user = cconn_identity(c);
	if ((rc = slurm_jobs_fetch("squeue", c, &lj, 0, &v, &n)) != EXIT_OK)
		goto out;
	n = slurm_jobs_filter(v, n, squeue_wanted, a);
	for (i = 0, k = 0; i < n; i++)
		k += v[i]->state == JOB_RUNNING;
	if (!a->noheader)
		sfmt_print(&fmt, NULL, stdout);
	if (k == 0)
		goto out;
	if ((ids = calloc(k, sizeof(*ids))) == NULL) {
		slurm_error("squeue", "out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	for (i = 0, k = 0; i < n; i++)
		if (v[i]->state == JOB_RUNNING)
			ids[k++] = v[i]->id;
	if ((rc = slurm_steps_fetch("squeue", c, ids, k, &rep)) != EXIT_OK ||
	    rep == NULL)
		goto out;
	r = rep->list_steps_reply;
	for (i = 0; i < r->n_steps; i++) {
		if (r->steps[i] == NULL || r->steps[i]->state !=
		    COHORT__V1__JOB_STATE__RUNNING ||
		    slurm_step_from_pb(r->steps[i], &st) == -1)
			continue;
		/* Its job, for the user and partition (v is in id order). */
		for (lo = 0, hi = n; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (v[mid]->id < st.job_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || v[lo]->id != st.job_id)
			continue;
		j = v[lo];
		for (k = 0, f = 0; k < fmt.n; k++) {
			if (fmt.v[k].def == NULL)
				continue;
			cells[f] = squeue_step_cell(fmt.v[k].def->id, &st,
			    j->user, j->spec.queue, now, bufs[f],
			    sizeof(bufs[f]));
			f++;
		}
		sfmt_print(&fmt, cells, stdout);
	}
out:
	if (fflush(stdout) == EOF && rc == EXIT_OK)
		rc = EXIT_FAILED;
	frame_free(rep);
	free(ids);
	slurm_jobs_free(v, n);
	cconn_close(c);
out_fmt:
	sfmt_clear(&fmt);
	return rc;
}

int
cmd_squeue(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	struct squeue_args a;
	struct sfmt fmt;
	struct cerr err;
	struct cconn *c;
	struct job **v = NULL;
	size_t n = 0;
	int rc;

	if ((rc = squeue_parse(argc, argv, &a)) != 0) {
		slurm_jobfilter_clear(&a.f);
		return rc == -2 ? EXIT_OK : rc;
	}
	if (a.steps) {
		rc = squeue_steps(&a, opts);
		slurm_jobfilter_clear(&a.f);
		return rc;
	}
	cerr_clear(&err);
	if ((a.Format != NULL ? sfmt_parse_names(a.Format, squeue_defs,
	    SQUEUE_NDEFS, &fmt, &err) : sfmt_parse_letters(a.format != NULL ?
	    a.format : SQUEUE_FORMAT, squeue_defs, SQUEUE_NDEFS, &fmt,
	    &err)) == -1) {
		slurm_error("squeue", "%s", err.text);
		slurm_jobfilter_clear(&a.f);
		return EXIT_FAILED;
	}
	/* Ended jobs are fetched only when asked for. */
	lj.has_all = 1;
	lj.all = a.f.has_jobs || (a.f.states & ~SQUEUE_LIVE) != 0;
	slurm_jobfilter_request(&a.f, &lj);
	if ((rc = slurm_connect(opts, &c)) == EXIT_OK) {
		if (a.me)
			a.me_user = cconn_identity(c);
		rc = slurm_jobs_fetch("squeue", c, &lj, 0, &v, &n);
		if (rc == EXIT_OK && a.f.has_jobs && n == 0) {
			/* As Slurm: a job named that does not exist. */
			fflush(stdout);
			fputs("slurm_load_jobs error: Invalid job id "
			    "specified\n", stderr);
			rc = EXIT_FAILED;
		}
		if (rc == EXIT_OK) {
			n = slurm_jobs_filter(v, n, squeue_wanted, &a);
			rc = squeue_print(&a, &fmt, v, n);
		}
		cconn_close(c);
	}
	slurm_jobs_free(v, n);
	sfmt_clear(&fmt);
	slurm_jobfilter_clear(&a.f);
	return rc;
}
