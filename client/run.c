/* cohort run: srun for a new allocation. Submit, wait for the start,
 * stream every rank's output as it is written (each line prefixed by its
 * rank when there are several, as srun --label), cancel the job on the
 * first Ctrl-C (a second one leaves at once, the job cancelled or not),
 * and exit with the job's exit code. The output comes through the
 * controller's log reads (the agents' spools), polled. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/salloc.h"
#include "client/status.h"
#include "client/submit.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

/* Polling: quick at first, for short jobs, then this. */
#define RUN_POLL_FIRST_MS 100
#define RUN_POLL_MAX_MS 1000
/* Ranks whose output is streamed; a larger gang streams these and says
 * how to read the rest. */
#define RUN_RANKS_MAX 256
#define RUN_LINE_MAX (64 * 1024)

static const char run_usage_head[] =
    "usage: cohort run [SUBMIT OPTIONS] -- CMD [ARGS...]\n"
    "       cohort run [SUBMIT OPTIONS] SCRIPT [ARGS...]\n"
    "\n"
    "       cohort run --pty [SUBMIT OPTIONS] -- CMD [ARGS...]\n"
    "\n"
    "  Submit the job, wait for it, stream every rank's output (lines\n"
    "  prefixed by rank when there are several), cancel it on Ctrl-C, and\n"
    "  exit with its exit code. With --pty: an interactive allocation of\n"
    "  that shape, and CMD on a terminal of its first node driven from\n"
    "  this one (as salloc ... srun --pty CMD). Options as for cohort\n"
    "  submit:\n"
    "\n";

static volatile sig_atomic_t run_interrupts;

static void
run_on_signal(int sig)
{
	(void)sig;
	run_interrupts++;
}

/* One stream of a rank (its stdout, or its stderr): where we are in its
 * log, and the part of a line not yet printed. */
struct run_stream {
	uint64_t offset;
	char *part;
	size_t npart;
};

struct run_rank {
	struct run_stream s[2];	/* [0] stdout, [1] stderr */
};

struct run_state {
	uint64_t id;
	struct cconn *c;
	struct status_line sl;
	struct run_rank *ranks;
	size_t nranks;
	int64_t run_start;	/* start_ms of the run being streamed */
	bool cancel_sent;
	bool label;		/* prefix lines with the rank */
};

/* Print what stream e (0 stdout, 1 stderr) of rank r has of whole
 * lines, to our stdout or stderr; keep the rest for later (or for the
 * end: run_flush). */
static int
run_emit(struct run_state *rs, unsigned r, int e, const uint8_t *data,
    size_t len, bool flush)
{
	struct run_stream *k = &rs->ranks[r].s[e];
	FILE *fp = e ? stderr : stdout;
	const uint8_t *nl;
	char *np;
	size_t n;

	if (len > 0) {
		if ((np = realloc(k->part, k->npart + len)) == NULL)
			return -1;
		k->part = np;
		memcpy(k->part + k->npart, data, len);
		k->npart += len;
	}
	status_clear(&rs->sl);
	for (;;) {
		nl = memchr(k->part, '\n', k->npart);
		/* A line longer than the buffer goes out in pieces. */
		if (nl == NULL && !(flush && k->npart > 0) &&
		    k->npart < RUN_LINE_MAX)
			break;
		n = nl != NULL ? (size_t)(nl - (uint8_t *)k->part) + 1 :
		    k->npart;
		if (rs->label)
			fprintf(fp, "%u: ", r);
		fwrite(k->part, 1, n, fp);
		if (nl == NULL)
			fputc('\n', fp);
		memmove(k->part, k->part + n, k->npart - n);
		k->npart -= n;
		if (k->npart == 0)
			break;
	}
	return fflush(fp) == EOF ? -1 : 0;
}

/* GetJob: the job, or NULL with *rc set after printing why. */
static struct job *
run_get(struct run_state *rs, int *rc)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct job *j = NULL;
	struct cerr err;

	gj.job_id = rs->id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	cerr_clear(&err);
	if ((rep = cconn_call(rs->c, &req, &err)) == NULL) {
		status_clear(&rs->sl);
		*rc = output_call_error(&err);
		return NULL;
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY) {
		status_clear(&rs->sl);
		*rc = output_reply_error("run", rep);
	} else if ((j = wire_job_from_pb(rep->get_job_reply->job,
	    &err)) == NULL) {
		status_clear(&rs->sl);
		output_error("run: the controller sent a job we cannot read: "
		    "%s", err.text);
		*rc = EXIT_FAILED;
	}
	frame_free(rep);
	return j;
}

/* Read what stream e of rank r has written since last time. 0, or -1
 * with *rc. A refusal because the job has not started (CONFLICT) is not
 * an error. */
static int
run_read_rank(struct run_state *rs, unsigned r, int e, int *rc)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__LogsRequest lr = COHORT__V1__LOGS_REQUEST__INIT;
	struct run_stream *k = &rs->ranks[r].s[e];
	struct cerr err;
	int ret = 0;

	lr.job_id = rs->id;
	lr.has_rank = lr.has_offset = 1;
	lr.rank = r;
	lr.offset = k->offset;
	lr.has_stderr_stream = e == 1;
	lr.stderr_stream = e == 1;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LOGS;
	req.logs = &lr;
	for (;;) {
		cerr_clear(&err);
		if ((rep = cconn_call(rs->c, &req, &err)) == NULL) {
			status_clear(&rs->sl);
			*rc = output_call_error(&err);
			return -1;
		}
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_LOGS_REPLY) {
			/* Not started, or a node that cannot be reached
			 * right now: the next poll tries again. */
			frame_free(rep);
			return 0;
		}
		const Cohort__V1__LogsReply *lp = rep->logs_reply;
		size_t len = lp->data.len;
		if (len > 0 && run_emit(rs, r, e, lp->data.data, len,
		    false) == -1) {
			output_error("run: cannot write the output: %s",
			    strerror(errno));
			*rc = EXIT_FAILED;
			ret = -1;
		}
		if (len > 0)
			k->offset = lp->next_offset > k->offset ?
			    lp->next_offset : k->offset + len;
		frame_free(rep);
		if (ret == -1 || len == 0)
			return ret;
		lr.offset = k->offset;
	}
}

static void
run_flush(struct run_state *rs)
{
	size_t r;
	int e;

	for (r = 0; r < rs->nranks; r++)
		for (e = 0; e < 2; e++)
			if (rs->ranks[r].s[e].npart > 0)
				run_emit(rs, (unsigned)r, e, NULL, 0, true);
}

static void
run_ranks_free(struct run_state *rs)
{
	size_t r;

	for (r = 0; r < rs->nranks; r++) {
		free(rs->ranks[r].s[0].part);
		free(rs->ranks[r].s[1].part);
	}
	free(rs->ranks);
	rs->ranks = NULL;
	rs->nranks = 0;
}

/* A new run of the job (its first, or a restart): stream its ranks from
 * the start. 0 or -1 (ENOMEM). */
static int
run_new_run(struct run_state *rs, const struct job *j)
{
	size_t n = j->nplace * j->spec.tasks_per_node;

	run_flush(rs);
	run_ranks_free(rs);
	if (n > RUN_RANKS_MAX) {
		status_clear(&rs->sl);
		output_error("run: job %" PRIu64 " has %zu ranks; streaming "
		    "ranks 0-%d (cohort logs JOB --rank R for the others)",
		    rs->id, n, RUN_RANKS_MAX - 1);
		n = RUN_RANKS_MAX;
	}
	if (n > 0 && (rs->ranks = calloc(n, sizeof(*rs->ranks))) == NULL)
		return -1;
	rs->nranks = n;
	rs->label = n > 1;
	rs->run_start = j->start_ms;
	return 0;
}

static void
run_cancel(struct run_state *rs)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__CancelRequest cr = COHORT__V1__CANCEL_REQUEST__INIT;
	struct cerr err;

	rs->cancel_sent = true;
	status_clear(&rs->sl);
	output_error("run: cancelling job %" PRIu64 " (Ctrl-C again to leave "
	    "now)", rs->id);
	cr.job_id = rs->id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_CANCEL;
	req.cancel = &cr;
	cerr_clear(&err);
	if ((rep = cconn_call(rs->c, &req, &err)) == NULL)
		output_call_error(&err);
	else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_CANCEL_REPLY)
		output_reply_error("run: cancel", rep);
	frame_free(rep);
}

/* The job has ended: its exit code as ours. */
static int
run_exit_code(struct run_state *rs, const struct job *j)
{
	status_clear(&rs->sl);
	if (j->state == JOB_COMPLETED)
		return EXIT_OK;
	if (j->reason != NULL && j->reason[0] != '\0')
		output_error("run: job %" PRIu64 " ended %s: %s", rs->id,
		    job_state_name(j->state), j->reason);
	else
		output_error("run: job %" PRIu64 " ended %s", rs->id,
		    job_state_name(j->state));
	if (j->state == JOB_CANCELLED && rs->cancel_sent)
		return 128 + SIGINT;
	if (j->has_exit && j->exit_code > 0 && j->exit_code < 256)
		return j->exit_code;
	return EXIT_FAILED;
}

/* Poll until the job ends. */
static int
run_loop(struct run_state *rs)
{
	int64_t step = RUN_POLL_FIRST_MS;
	char text[256];
	struct job *j;
	size_t r;
	int rc = EXIT_OK;
	bool ended;

	for (;;) {
		if (run_interrupts >= 2) {
			status_clear(&rs->sl);
			output_error("run: leaving; job %" PRIu64 " may still "
			    "be running", rs->id);
			return 128 + SIGINT;
		}
		if (run_interrupts == 1 && !rs->cancel_sent)
			run_cancel(rs);
		if ((j = run_get(rs, &rc)) == NULL)
			return rc;
		ended = job_state_is_final(j->state);
		if (j->start_ms != 0 && j->nplace > 0 &&
		    (rs->ranks == NULL || j->start_ms != rs->run_start) &&
		    run_new_run(rs, j) == -1) {
			job_free(j);
			output_error("run: out of memory");
			return EXIT_FAILED;
		}
		/* Read after the state: a job seen ended has all of its
		 * output in the logs by now. */
		for (r = 0; r < rs->nranks; r++)
			if (run_read_rank(rs, (unsigned)r, 0, &rc) == -1 ||
			    run_read_rank(rs, (unsigned)r, 1, &rc) == -1) {
				job_free(j);
				return rc;
			}
		if (ended) {
			run_flush(rs);
			rc = run_exit_code(rs, j);
			job_free(j);
			return rc;
		}
		status_job_text(j, output_wall_ms(), text, sizeof(text));
		status_show(&rs->sl, text);
		job_free(j);
		output_sleep_ms(step);
		step = step * 3 / 2 < RUN_POLL_MAX_MS ? step * 3 / 2 :
		    RUN_POLL_MAX_MS;
	}
}

/* cohort run --help. */
static int
run_help(void)
{
	fputs(run_usage_head, stdout);
	fputs(strchr(submit_options_usage(), '\n') + 1, stdout);
	return EXIT_OK;
}

/* The index of --pty among the options (before the command), or 0. */
static int
run_pty_at(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--pty") == 0)
			return i;
	return 0;
}

/* cohort run --pty CMD: an interactive allocation of the options' shape
 * (salloc's), and CMD in it as srun --pty runs it: task 0 of one step on
 * a terminal of its node, driven from this one. The allocation ends with
 * the command, whose code is ours. */
static int
run_pty(int argc, char **argv, int at, const struct cconn_opts *opts)
{
	struct output_conn_flags cf;
	struct salloc_how how;
	struct job_spec spec;
	char **words = NULL, **cmd = NULL, **args = NULL;
	size_t nwords = 0, i;
	int rc, j, n = 0;

	job_spec_init(&spec);
	if ((args = calloc((size_t)argc, sizeof(*args))) == NULL) {
		output_error("run: out of memory");
		return EXIT_FAILED;
	}
	for (j = 0; j < argc; j++)
		if (j != at)
			args[n++] = argv[j];
	rc = submit_prepare(n, args, &spec, &cf, &words, &nwords);
	if (rc == -2) {
		rc = run_help();
		goto out;
	}
	if (rc != 0)
		goto out;
	if (spec.script != NULL || spec.array != NULL || spec.hold ||
	    spec.argc == 0) {
		output_error("run: --pty runs a command on a terminal (cohort "
		    "run --pty [OPTIONS] -- CMD): %s", spec.argc == 0 ?
		    "no command given" : spec.script != NULL ? "not a script" :
		    spec.array != NULL ? "not an array" : "not held");
		rc = EXIT_USAGE;
		goto out;
	}
	/* srun --pty CMD... runs in the allocation. */
	if ((cmd = calloc(spec.argc + 3, sizeof(*cmd))) == NULL) {
		output_error("run: out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	cmd[0] = "srun";
	cmd[1] = "--pty";
	for (i = 0; i < spec.argc; i++)
		cmd[i + 2] = spec.argv[i];
	if ((rc = salloc_hold_spec(&spec, true)) != 0)
		goto out;
	memset(&how, 0, sizeof(how));
	how.argv0 = argv[0];
	rc = salloc_session(opts, &cf, &spec, cmd, &how);
out:
	free(cmd);
	free(args);
	job_spec_clear(&spec);
	strv_free(words, nwords);
	return rc;
}

int
cmd_run(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags cf;
	struct run_state rs;
	struct sigaction sa, old_int, old_term;
	struct job_spec spec;
	char **words;
	size_t nwords;
	int rc;

	if ((rc = run_pty_at(argc, argv)) > 0)
		return run_pty(argc, argv, rc, opts);
	job_spec_init(&spec);
	memset(&rs, 0, sizeof(rs));
	rc = submit_prepare(argc, argv, &spec, &cf, &words, &nwords);
	if (rc == -2) {
		rc = run_help();
		goto out;
	}
	if (rc != 0)
		goto out;
	if (spec.output != NULL || spec.error != NULL) {
		output_error("run: --output/--error: cohort run streams the "
		    "output; use cohort submit to write it to files");
		rc = EXIT_USAGE;
		goto out;
	}
	if (spec.array != NULL || spec.hold) {
		output_error("run: %s: cohort run waits for one job; use "
		    "cohort submit", spec.array != NULL ? "--array" : "--hold");
		rc = EXIT_USAGE;
		goto out;
	}
	/* A Ctrl-C between the submit and the first poll still cancels. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if ((rc = submit_send(&spec, opts, &cf, &rs.id)) != EXIT_OK)
		goto restore;
	if ((rc = output_connect(opts, &cf, &rs.c)) != EXIT_OK)
		goto restore;
	status_init(&rs.sl);
	rc = run_loop(&rs);
	cconn_close(rs.c);
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out:
	run_ranks_free(&rs);
	job_spec_clear(&spec);
	strv_free(words, nwords);
	return rc;
}
