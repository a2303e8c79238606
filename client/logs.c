/* cohort logs: a task's output, read through the controller in chunks,
 * and with --follow as it grows until the job has ended. */
#include "config.h"

#include <errno.h>
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
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

#define LOGS_POLL_MS 500

enum { O_RANK = 0x100, O_FOLLOW, O_HELP = 'h' };

static const struct option logs_longopts[] = {
	{ "rank", required_argument, NULL, O_RANK },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char logs_usage[] =
    "usage: cohort logs JOB [--rank R] [--follow]\n"
    "  the output of task rank R (default 0); --follow keeps reading\n"
    "  until the job has ended\n";

struct logs_req {
	const char *arg;	/* JOB as given: 12, 12_7 */
	uint64_t id;
	uint32_t rank;
	bool follow;
	char prefix[48];	/* "logs JOB" for messages */
};

/* 0, -2 for --help, or an exit code after printing why. */
static int
logs_parse(int argc, char **argv, struct output_conn_flags *conn,
    struct logs_req *l)
{
	unsigned long v;
	char *end;
	int ch;

	memset(l, 0, sizeof(*l));
	memset(conn, 0, sizeof(*conn));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hf", logs_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("logs", ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(conn, ch, optarg))
			continue;
		if (ch == O_FOLLOW || ch == 'f') {
			l->follow = true;
			continue;
		}
		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' ||
		    errno != 0 || v > UINT32_MAX) {
			output_error("logs: --rank: '%s' is not a task rank "
			    "(0, 1, ...)", optarg);
			return EXIT_USAGE;
		}
		l->rank = (uint32_t)v;
	}
	if (argc - optind != 1) {
		output_error("logs: %s (see cohort logs --help)",
		    optind < argc ? "one job at a time" : "missing JOB");
		return EXIT_USAGE;
	}
	l->arg = argv[optind];
	if (jobref_check("logs", l->arg, NULL) != EXIT_OK)
		return EXIT_USAGE;
	snprintf(l->prefix, sizeof(l->prefix), "logs %s", l->arg);
	return 0;
}

/* An error reply to a logs request: the controller answered, so this is
 * a refusal (exit 1), even when it says a node cannot be reached. */
static int
logs_refused(const struct logs_req *l, const Cohort__V1__Envelope *rep)
{
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_ERROR)
		return output_reply_error(l->prefix, rep);
	output_error("%s: %s", l->prefix, rep->error->text);
	return EXIT_FAILED;
}

/* A job that has not started has no log yet; --follow waits for it to
 * start, unless it ended without starting. Returns 1 to keep waiting,
 * 0 when the job has ended (or is gone), -1 with err when the controller
 * went away. */
static int
logs_still_waiting(struct cconn *c, const struct logs_req *l,
    struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	enum job_state st;
	int ret = 0;

	gj.job_id = l->id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	if ((rep = cconn_call(c, &req, err)) == NULL)
		return -1;
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY &&
	    wire_state_from_pb(rep->get_job_reply->job->state, &st) == 0 &&
	    !job_state_is_final(st))
		ret = 1;
	frame_free(rep);
	return ret;
}

static int
logs_read(struct cconn *c, const struct logs_req *l)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__LogsRequest lr = COHORT__V1__LOGS_REQUEST__INIT;
	const Cohort__V1__LogsReply *r;
	struct cerr err;
	uint64_t offset = 0;
	size_t len;
	bool finished;
	int rc;

	lr.job_id = l->id;
	lr.has_rank = lr.has_offset = 1;
	lr.rank = l->rank;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LOGS;
	req.logs = &lr;
	for (;;) {
		lr.offset = offset;
		if ((rep = cconn_call(c, &req, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_LOGS_REPLY) {
			/* Not started yet: with --follow, wait for it. */
			if (l->follow && offset == 0 &&
			    rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
			    wire_err_from_pb(rep->error->code) ==
			    ERR_CONFLICT) {
				rc = logs_still_waiting(c, l, &err);
				if (rc == -1) {
					frame_free(rep);
					return output_call_error(&err);
				}
				if (rc == 1) {
					frame_free(rep);
					output_sleep_ms(LOGS_POLL_MS);
					continue;
				}
			}
			rc = logs_refused(l, rep);
			frame_free(rep);
			return rc;
		}
		r = rep->logs_reply;
		len = r->data.len;
		finished = r->finished;
		if (len > 0 && (fwrite(r->data.data, 1, len, stdout) != len ||
		    fflush(stdout) == EOF)) {
			frame_free(rep);
			output_error("%s: cannot write the output: %s",
			    l->prefix, strerror(errno));
			return EXIT_FAILED;
		}
		/* The offset only moves forward, so a confused reply cannot
		 * make us print the same bytes forever. */
		if (len > 0 && r->next_offset > offset)
			offset = r->next_offset;
		else if (len > 0)
			offset += len;
		frame_free(rep);
		if (len > 0)
			continue;
		if (finished || !l->follow)
			return EXIT_OK;
		output_sleep_ms(LOGS_POLL_MS);
	}
}

int
cmd_logs(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags conn;
	struct logs_req l;
	struct cconn *c;
	int rc;

	if ((rc = logs_parse(argc, argv, &conn, &l)) == -2) {
		fputs(logs_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if ((rc = output_connect(opts, &conn, &c)) != EXIT_OK)
		return rc;
	if ((rc = jobref_resolve_one("logs", c, l.arg, &l.id)) == EXIT_OK)
		rc = logs_read(c, &l);
	cconn_close(c);
	return rc;
}
