/* cohort wait: block until a job ends, polling GetJob, and ride out a
 * controller restart by reconnecting. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/jobref.h"
#include "client/output.h"
#include "client/status.h"
#include "lib/duration.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

/* Polling starts quick, for short jobs, and backs off to this. */
#define WAIT_FIRST_MS 200
#define WAIT_MAX_MS 2000
/* The longest a connect or request may take when there is no deadline
 * closer than that. */
#define WAIT_CONN_MS 30000

enum { O_TIMEOUT = 0x100, O_HELP = 'h' };

static const struct option wait_longopts[] = {
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char wait_usage[] =
    "usage: cohort wait JOB [--timeout SEC]\n"
    "  block until the job ends; exit 0 only if it COMPLETED, 1 if it\n"
    "  ended otherwise or is still running after SEC seconds (also 90s,\n"
    "  5m, 2h)\n";

/* What cmd_wait was asked. */
struct wait_req {
	const char *arg;	/* JOB as given */
	bool plain;		/* a bare id: 12 */
	uint64_t id;
	bool has_timeout;
	uint64_t timeout_s;
	char prefix[48];	/* "wait JOB" for messages */
	struct status_line sl;	/* what the job does, on a terminal */
};

/* SEC: a bare number is seconds here (not minutes as in --time); a
 * duration with a unit also does. */
static int
wait_parse_timeout(const char *s, uint64_t *secs)
{
	const char *p;
	char *end;

	for (p = s; *p >= '0' && *p <= '9'; p++)
		;
	if (p != s && *p == '\0') {
		*secs = strtoull(s, &end, 10);
		return *secs <= DURATION_MAX_S ? 0 : -1;
	}
	return duration_parse(s, secs);
}

/* 0, -2 for --help, or an exit code after printing why. */
static int
wait_parse(int argc, char **argv, struct output_conn_flags *conn,
    struct wait_req *w)
{
	int ch;

	memset(w, 0, sizeof(*w));
	memset(conn, 0, sizeof(*conn));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", wait_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("wait", ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(conn, ch, optarg))
			continue;
		if (wait_parse_timeout(optarg, &w->timeout_s) == -1) {
			output_error("wait: --timeout: '%s' is not a number of "
			    "seconds", optarg);
			return EXIT_USAGE;
		}
		w->has_timeout = true;
	}
	if (argc - optind != 1) {
		output_error("wait: %s (see cohort wait --help)",
		    optind < argc ? "one job at a time" : "missing JOB");
		return EXIT_USAGE;
	}
	w->arg = argv[optind];
	if (jobref_check("wait", w->arg, &w->plain) != EXIT_OK)
		return EXIT_USAGE;
	snprintf(w->prefix, sizeof(w->prefix), "wait %s", w->arg);
	return 0;
}

/* The job has ended: 0 when it COMPLETED, else 1 with why. */
static int
wait_ended(const struct wait_req *w, const struct job *j)
{
	if (j->state == JOB_COMPLETED)
		return EXIT_OK;
	if (j->reason != NULL && j->reason[0] != '\0')
		output_error("%s: job ended %s: %s", w->prefix,
		    job_state_name(j->state), j->reason);
	else if (j->has_exit)
		output_error("%s: job ended %s: exit code %d", w->prefix,
		    job_state_name(j->state), (int)j->exit_code);
	else
		output_error("%s: job ended %s", w->prefix,
		    job_state_name(j->state));
	return EXIT_FAILED;
}

/* One GetJob on c. Returns 1 when the job has ended (*rc set), 0 when it
 * has not (*state set), -1 when the controller went away (err set: try
 * again later), or 2 for any other failure (*rc set, reported). */
static int
wait_poll(struct cconn *c, struct wait_req *w, enum job_state *state,
    int *rc, struct cerr *err)
{
	char text[256];
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct job *j;
	struct cerr why;
	int ret;

	gj.job_id = w->id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	if ((rep = cconn_call(c, &req, err)) == NULL) {
		if (err->code == ERR_UNAVAILABLE)
			return -1;
		*rc = output_call_error(err);
		return 2;
	}
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    wire_err_from_pb(rep->error->code) == ERR_UNAVAILABLE) {
		/* Shutting down or overloaded: as good as gone. */
		cerr_set(err, ERR_UNAVAILABLE, "%s: %s", w->prefix,
		    rep->error->text);
		frame_free(rep);
		return -1;
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY) {
		status_clear(&w->sl);
		*rc = output_reply_error(w->prefix, rep);
		frame_free(rep);
		return 2;
	}
	cerr_clear(&why);
	if ((j = wire_job_from_pb(rep->get_job_reply->job, &why)) == NULL) {
		output_error("%s: the controller sent a job we cannot read: %s",
		    w->prefix, why.text);
		*rc = EXIT_FAILED;
		ret = 2;
	} else if (job_state_is_final(j->state)) {
		status_clear(&w->sl);
		*rc = wait_ended(w, j);
		ret = 1;
	} else {
		*state = j->state;
		status_job_text(j, output_wall_ms(), text, sizeof(text));
		status_show(&w->sl, text);
		ret = 0;
	}
	job_free(j);
	frame_free(rep);
	return ret;
}

static int
wait_loop(struct wait_req *w, struct cconn_opts *o);

/* Wait for job id. */
static int
wait_job(struct wait_req *w, struct cconn_opts *o, uint64_t id)
{
	w->id = id;
	return wait_loop(w, o);
}

static int
wait_loop(struct wait_req *w, struct cconn_opts *o)
{
	int64_t now, deadline, step = WAIT_FIRST_MS;
	enum job_state state = JOB_PENDING;
	struct cconn *c = NULL;
	struct cerr err;
	bool reached = false;
	int rc = EXIT_OK, r;

	deadline = w->has_timeout ? output_mono_ms() +
	    (int64_t)w->timeout_s * 1000 : INT64_MAX;
	cerr_clear(&err);
	for (;;) {
		now = output_mono_ms();
		if (c == NULL) {
			/* No connect may outlast the deadline. */
			o->timeout_ms = deadline - now < WAIT_CONN_MS ?
			    (int)(deadline - now) : WAIT_CONN_MS;
			if (o->timeout_ms < 100)
				o->timeout_ms = 100;
			if ((c = cconn_open(o, &err)) == NULL) {
				if (err.code == ERR_INVALID) {
					output_error("%s", err.text);
					return EXIT_USAGE;
				}
				/* Without a timeout, only a controller seen
				 * once is worth waiting for. */
				if (err.code != ERR_UNAVAILABLE ||
				    (!w->has_timeout && !reached))
					goto unreachable;
			} else
				reached = true;
		}
		if (c != NULL) {
			r = wait_poll(c, w, &state, &rc, &err);
			if (r >= 1) {
				cconn_close(c);
				return rc;
			}
			if (r == -1) {
				cconn_close(c);
				c = NULL;
			}
		}
		now = output_mono_ms();
		if (now >= deadline) {
			status_clear(&w->sl);
			if (c == NULL)
				goto unreachable;
			output_error("%s: still %s after %" PRIu64 " s",
			    w->prefix, job_state_name(state), w->timeout_s);
			cconn_close(c);
			return EXIT_FAILED;
		}
		output_sleep_ms(deadline - now < step ? deadline - now : step);
		step = step * 3 / 2 < WAIT_MAX_MS ? step * 3 / 2 : WAIT_MAX_MS;
	}
unreachable:
	status_clear(&w->sl);
	output_error("%s", err.text);
	return err.code == ERR_UNAVAILABLE || err.code == ERR_VERSION ||
	    err.code == ERR_PROTOCOL ? EXIT_UNREACHABLE : EXIT_FAILED;
}

/* The jobs JOB names (jobref.h): an array's id waits for each of its
 * tasks in turn, within the one --timeout. A bare id whose controller
 * cannot be reached yet is waited for as a job (wait_loop reconnects). */
static int
wait_jobs(struct wait_req *w, struct cconn_opts *o)
{
	struct jobref_ids ids = { 0 };
	struct cconn *c;
	struct cerr err;
	int64_t start = output_mono_ms(), spent;
	size_t i;
	int rc = EXIT_OK;

	cerr_clear(&err);
	if ((c = cconn_open(o, &err)) != NULL) {
		if (jobref_resolve(c, w->arg, &ids, &err) == -1 &&
		    (!w->plain || err.code != ERR_UNAVAILABLE)) {
			cconn_close(c);
			output_error("%s: %s", w->prefix, err.text);
			return err.code == ERR_UNAVAILABLE ? EXIT_UNREACHABLE :
			    EXIT_FAILED;
		}
		cconn_close(c);
	} else if (!w->plain) {
		output_error("%s", err.text);
		return EXIT_UNREACHABLE;
	}
	if (ids.n == 0)
		return wait_job(w, o, strtoull(w->arg, NULL, 10));
	for (i = 0; i < ids.n && rc == EXIT_OK; i++) {
		spent = (output_mono_ms() - start) / 1000;
		if (w->has_timeout && i > 0)
			w->timeout_s = (uint64_t)spent < w->timeout_s ?
			    w->timeout_s - (uint64_t)spent : 0;
		start = output_mono_ms();
		rc = wait_job(w, o, ids.ids[i]);
	}
	jobref_ids_clear(&ids);
	return rc;
}

int
cmd_wait(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags conn;
	struct wait_req w;
	struct settings s;
	struct cconn_opts o;
	int rc;

	if ((rc = wait_parse(argc, argv, &conn, &w)) == -2) {
		fputs(wait_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if ((rc = output_settings(opts, &conn, &s, &o)) != EXIT_OK)
		return rc;
	status_init(&w.sl);
	rc = wait_jobs(&w, &o);
	settings_clear(&s);
	return rc;
}
