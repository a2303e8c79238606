/* cohort jobs, show and cancel: the queue, one job, cancelling. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/arrays.h"
#include "client/commands.h"
#include "client/jobref.h"
#include "client/output.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

enum { O_ALL = 0x100, O_USER, O_STATE, O_JSON, O_HELP = 'h' };

static const struct option jobs_longopts[] = {
	{ "all", no_argument, NULL, O_ALL },
	{ "user", required_argument, NULL, O_USER },
	{ "state", required_argument, NULL, O_STATE },
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char jobs_usage[] =
    "usage: cohort jobs [--all] [--user USER] [--state STATE] [--json]\n"
    "  pending and running jobs; --all adds finished ones\n"
    "  STATE: PENDING, RUNNING, RESTARTING, RESIZING, COMPLETED, FAILED,\n"
    "  CANCELLED or TIMEOUT\n";
static const char show_usage[] =
    "usage: cohort show JOB [--json]\n"
    "  JOB: 12, 12_7 (an array's task); an array's id shows every task\n"
    "  one job: spec, queue, state and reason, allocation, restarts, last\n"
    "  checkpoint, last failure and restart, work lost, preemptions\n";
static const char cancel_usage[] =
    "usage: cohort cancel JOB...\n"
    "  JOB: a job id (12; an array's id: all its unfinished tasks), an\n"
    "  array's task (12_7) or tasks (12_[1-5])\n";

/* What a command's options were, besides its positional arguments. */
struct jobs_flags {
	struct output_conn_flags conn;
	bool all;
	bool json;
	const char *user;
	const char *state;
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

static int
jobs_row(struct output_table *t, const struct job *j, const char *id)
{
	char nodes[24], gpus[16], limit[32], prio[16];
	char sub[OUTPUT_TIME_LEN], *nodelist = NULL;
	const char *cells[12];
	int rc;

	/* Where it runs, for jobs that hold an allocation now (running, or
	 * pending while being launched); the last one of an ended job is
	 * in cohort show. */
	if (j->nplace > 0 && !job_state_is_final(j->state) &&
	    (nodelist = output_nodelist(j)) == NULL)
		return -1;
	fmt_nodes(&j->spec, nodes, sizeof(nodes));
	fmt_gpus(&j->spec, gpus, sizeof(gpus));
	snprintf(prio, sizeof(prio), "%d", (int)j->spec.priority);
	cells[0] = id;
	cells[1] = j->spec.name;
	cells[2] = j->user;
	cells[3] = j->spec.queue;
	cells[4] = job_state_name(j->state);
	cells[5] = nodes;
	cells[6] = gpus;
	cells[7] = j->spec.service ? "service" : fmt_limit(
	    j->spec.time_limit_s, "none", limit, sizeof(limit));
	cells[8] = prio;
	cells[9] = output_time_local(j->submit_ms, sub, sizeof(sub));
	cells[10] = nodelist;
	cells[11] = j->reason && j->reason[0] ? j->reason : NULL;
	rc = output_table_add(t, cells);
	free(nodelist);
	return rc;
}

/* The listing being built, page by page: a table or a JSON array. */
struct jobs_out {
	bool json;
	struct output_table *t;
	json_t *arr;
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
		rc = jobs_row(o->t, rows[i].job, rows[i].id);
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
		if ((j = jobs_convert("jobs", r->jobs[i])) == NULL)
			return EXIT_FAILED;
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
		if (more && last <= lj->after_id) {
			output_error("jobs: the controller's pages do not "
			    "advance (after job %" PRIu64 ")", lj->after_id);
			return EXIT_FAILED;
		}
		lj->after_id = last;
	} while (more);
	return EXIT_OK;
}

static const char *const jobs_head[12] = { "JOBID", "NAME", "USER",
    "QUEUE", "STATE", "NODES", "GPUS", "TIME_LIMIT", "PRIORITY", "SUBMITTED",
    "NODELIST", "REASON" };

int
cmd_jobs(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	struct jobs_out o;
	struct cconn *c;
	struct jobs_flags f;
	enum job_state st;
	int rc;

	rc = jobs_parse("jobs", argc, argv, M(O_ALL) | M(O_USER) | M(O_STATE) |
	    M(O_JSON), &f);
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
	if (f.state != NULL) {
		if (job_state_parse(f.state, &st) == -1) {
			output_error("jobs: --state: unknown state '%s'",
			    f.state);
			return EXIT_USAGE;
		}
		lj.has_state = 1;
		lj.state = wire_state_to_pb(st);
	}
	lj.has_all = 1;
	lj.all = f.all;
	lj.user = (char *)f.user;
	memset(&o, 0, sizeof(o));
	o.json = f.json;
	if (f.json ? (o.arr = json_array()) == NULL :
	    (o.t = output_table_new(12, jobs_head)) == NULL) {
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
	rc |= output_fields_addf(t, "Checkpoint dir", "%s", s->checkpoint_dir ?
	    s->checkpoint_dir : "-");
	rc |= output_fields_addf(t, "Checkpoint signal", "%s", output_signal(
	    s->ckpt_signal, s->ckpt_secs, b1, sizeof(b1)));
	rc |= output_fields_addf(t, "Max restarts", "%u", s->max_restarts);
	rc |= output_fields_addf(t, "Hang timeout", "%s", fmt_limit(s->hang_timeout_s,
	    "off", b2, sizeof(b2)));
	rc |= output_fields_addf(t, "Working dir", "%s", s->workdir ? s->workdir :
	    "(home directory)");
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
		    sizeof(b)), j->ckpt_path ? j->ckpt_path : "-");
	else
		rc |= output_fields_addf(t, "Last checkpoint", "-");
	rc |= output_fields_addf(t, "Last failure", "%s", output_time_local(
	    j->last_failure_ms, b, sizeof(b)));
	rc |= output_fields_addf(t, "Last restart", "%s", output_time_local(
	    j->last_restart_ms, b, sizeof(b)));
	rc |= output_fields_addf(t, "Work lost", "%s", output_duration_ms(
	    j->lost_work_ms, d, sizeof(d)));
	return rc;
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

static int
show_print(const struct job *j, const struct show_preempts *pre)
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
	rc |= show_placement(t, j);
	rc |= show_recovery(t, j);
	rc |= show_print_preempts(t, pre);
	if (j->has_exit)
		rc |= output_fields_addf(t, "Exit code", "%d", (int)j->exit_code);
	else
		rc |= output_fields_addf(t, "Exit code", "-");
	rc |= output_fields_addf(t, "Submitted", "%s", output_time_local(j->submit_ms, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Started", "%s", output_time_local(j->start_ms, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Ended", "%s", output_time_local(j->end_ms, b,
	    sizeof(b)));
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
	if (rc == EXIT_OK && json) {
		doc = output_job_json(j);
		if (doc != NULL && json_object_set_new(doc, "preemptions",
		    show_preempts_json(&pre)) == -1) {
			json_decref(doc);
			doc = NULL;
		}
		if (arr != NULL)
			rc = doc != NULL && json_array_append_new(arr,
			    doc) == 0 ? EXIT_OK : EXIT_FAILED;
		else
			rc = output_json_print(doc) == 0 ? EXIT_OK :
			    EXIT_FAILED;
	} else if (rc == EXIT_OK && (show_print(j, &pre) == -1 ||
	    fflush(stdout) == EOF)) {
		output_error("show: cannot print the job");
		rc = EXIT_FAILED;
	}
	show_preempts_free(&pre);
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

int
cmd_show(int argc, char **argv, const struct cconn_opts *opts)
{
	struct jobref_ids ids = { 0 };
	struct jobref r;
	struct jobs_flags f;
	struct cconn *c;
	struct cerr err;
	json_t *arr = NULL;
	size_t i;
	int rc;

	if ((rc = jobs_parse("show", argc, argv, M(O_JSON), &f)) == -2) {
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
	if ((rc = output_connect(opts, &f.conn, &c)) != EXIT_OK)
		return rc;
	/* An array: each of its tasks (--json: {"jobs": [...]}). */
	if (jobref_resolve(c, argv[optind], &ids, &err) == -1)
		rc = jobs_ref_error("show", &err);
	else if (f.json && ids.n > 1 && (arr = json_array()) == NULL) {
		output_error("show: out of memory");
		rc = EXIT_FAILED;
	}
	for (i = 0; rc == EXIT_OK && i < ids.n; i++) {
		if (i > 0 && !f.json)
			putchar('\n');
		rc = show_one(c, ids.ids[i], f.json, arr);
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

/* Cancel one job (or, with array, every unfinished task of the array
 * id names) on c. EXIT_OK or an exit code after printing why. */
static int
cancel_one(struct cconn *c, uint64_t id, bool array, const char *arg)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__CancelRequest cr = COHORT__V1__CANCEL_REQUEST__INIT;
	struct cerr err;
	char prefix[80];
	int rc = EXIT_OK;

	req.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL;
	req.cancel = &cr;
	cr.job_id = id;
	cr.has_array = array;
	cr.array = array;
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY) {
		snprintf(prefix, sizeof(prefix), "cancel %s", arg);
		rc = output_reply_error(prefix, rep);
	}
	frame_free(rep);
	return rc;
}

/* Cancel each job reference on one connection (an array's id: the whole
 * array at once); a refusal does not stop the rest. */
static int
cancel_all(struct cconn *c, char *const *args, int n)
{
	struct jobref_ids ids;
	struct cerr err;
	size_t k;
	int i, r, rc = EXIT_OK;

	for (i = 0; i < n && rc != EXIT_UNREACHABLE; i++) {
		cerr_clear(&err);
		if (jobref_resolve(c, args[i], &ids, &err) == -1) {
			r = jobs_ref_error("cancel", &err);
			rc = r == EXIT_USAGE ? EXIT_FAILED : r;
			continue;
		}
		if (ids.array_id != 0)
			r = cancel_one(c, ids.array_id, true, args[i]);
		else
			for (k = 0, r = EXIT_OK; k < ids.n &&
			    r != EXIT_UNREACHABLE; k++)
				r = cancel_one(c, ids.ids[k], false, args[i]);
		if (r != EXIT_OK && rc != EXIT_UNREACHABLE)
			rc = r;
		jobref_ids_clear(&ids);
	}
	return rc;
}

int
cmd_cancel(int argc, char **argv, const struct cconn_opts *opts)
{
	struct jobs_flags f;
	struct jobref r;
	struct cconn *c;
	struct cerr err;
	int i, n, rc;

	if ((rc = jobs_parse("cancel", argc, argv, 0, &f)) == -2) {
		fputs(cancel_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if ((n = argc - optind) == 0) {
		output_error("cancel: missing JOB (see cohort cancel --help)");
		return EXIT_USAGE;
	}
	/* Every reference is checked before anything is cancelled. */
	for (i = 0; i < n; i++) {
		if (jobref_parse(argv[optind + i], &r, &err) == -1)
			return jobs_ref_error("cancel", &err);
		jobref_clear(&r);
	}
	if ((rc = output_connect(opts, &f.conn, &c)) == EXIT_OK) {
		rc = cancel_all(c, argv + optind, n);
		cconn_close(c);
	}
	return rc;
}
