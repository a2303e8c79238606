/* cohort logs: a task's output, read through the controller in chunks,
 * and with --follow as it grows until the job has ended. One rank's
 * stdout by default; --stderr its stderr, --attempt K an earlier launch
 * attempt's, --all-ranks every rank's, each line prefixed by its rank
 * as srun --label does. A job that writes a stream to a file (-o/-e)
 * has none in the spool: the controller's refusal says which file on
 * which node, and that is printed (exit 1). */
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
#include "client/logs.h"
#include "client/output.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

#define LOGS_POLL_MS 500
/* A rank's line longer than this is printed in pieces (each prefixed)
 * rather than held for ever. */
#define LOGS_LINE_MAX (64 * 1024)
/* Not an exit code: no log now, ask again later (--follow). */
#define LOGS_AGAIN (-1)

enum {
	O_RANK = 0x100, O_FOLLOW, O_STDERR, O_ATTEMPT, O_ALL_RANKS,
	O_HELP = 'h',
};

static const struct option logs_longopts[] = {
	{ "rank", required_argument, NULL, O_RANK },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{ "stderr", no_argument, NULL, O_STDERR },
	{ "attempt", required_argument, NULL, O_ATTEMPT },
	{ "all-ranks", no_argument, NULL, O_ALL_RANKS },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char logs_usage[] =
    "usage: cohort logs JOB [--rank R | --all-ranks] [--stderr] "
    "[--attempt K] [--follow]\n"
    "  the output of task rank R (default 0) of the job's latest attempt;\n"
    "  --stderr       its stderr instead of its stdout\n"
    "  --attempt K    launch attempt K's (1 is the first start)\n"
    "  --all-ranks    every rank's, each line prefixed by 'RANK: '\n"
    "  --follow       keep reading until the job has ended\n"
    "A job submitted with --output/--error writes those streams to files\n"
    "on its nodes; cohort logs then says where.\n";

struct logs_cli {
	struct logs_opts o;
	bool rank_given;
	const char *arg;	/* JOB as given: 12, 12_7 */
	char prefix[80];	/* "logs JOB" for messages */
};

static int
logs_u32(const char *flag, const char *arg, const char *what, uint32_t min,
    uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v > UINT32_MAX || v < min) {
		output_error("logs: %s: '%s' is not %s", flag, arg, what);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* 0, -2 for --help, or an exit code after printing why. */
static int
logs_parse(int argc, char **argv, struct output_conn_flags *conn,
    struct logs_cli *l)
{
	struct logs_opts *o = &l->o;
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
		switch (ch) {
		case O_FOLLOW:
		case 'f':
			o->follow = true;
			break;
		case O_STDERR:
			o->is_stderr = true;
			break;
		case O_ALL_RANKS:
			o->all_ranks = true;
			break;
		case O_ATTEMPT:
			if (logs_u32("--attempt", optarg, "a launch attempt "
			    "(1, 2, ...)", 1, &o->attempt) == -1)
				return EXIT_USAGE;
			break;
		case O_RANK:
			if (logs_u32("--rank", optarg, "a task rank (0, 1, "
			    "...)", 0, &o->rank) == -1)
				return EXIT_USAGE;
			l->rank_given = true;
			break;
		}
	}
	if (l->rank_given && o->all_ranks) {
		output_error("logs: --rank and --all-ranks cannot be combined");
		return EXIT_USAGE;
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
	o->prefix = l->prefix;
	return 0;
}

/* An error reply to a logs request: the controller answered, so this is
 * a refusal (exit 1), even when it says a node cannot be reached. */
static int
logs_refused(const struct logs_opts *o, const Cohort__V1__Envelope *rep)
{
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_ERROR)
		return output_reply_error(o->prefix, rep);
	output_error("%s: %s", o->prefix, rep->error->text);
	return EXIT_FAILED;
}

/* The job's state and rank count (0 before it has started). 0, 1 when
 * the controller refused (reply in *refusal), or -1 with err. */
static int
logs_job(struct cconn *c, const struct logs_opts *o, bool *final,
    uint32_t *nranks, Cohort__V1__Envelope **refusal, struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	const Cohort__V1__Job *job;
	enum job_state st;

	*refusal = NULL;
	gj.job_id = o->id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	if ((rep = cconn_call(c, &req, err)) == NULL)
		return -1;
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY ||
	    rep->get_job_reply->job == NULL) {
		*refusal = rep;
		return 1;
	}
	job = rep->get_job_reply->job;
	*final = wire_state_from_pb(job->state, &st) == 0 &&
	    job_state_is_final(st);
	*nranks = (uint32_t)job->n_placement *
	    (job->spec != NULL ? job->spec->tasks_per_node : 1);
	frame_free(rep);
	return 0;
}

/* A job that has not started (or is between attempts) has no log now;
 * --follow waits for it, unless it has ended. Returns 1 to keep
 * waiting, 0 when the job has ended (or is gone), -1 with err when the
 * controller went away. */
static int
logs_still_waiting(struct cconn *c, const struct logs_opts *o,
    struct cerr *err)
{
	Cohort__V1__Envelope *refusal;
	uint32_t nranks;
	bool final = true;
	int rc;

	if ((rc = logs_job(c, o, &final, &nranks, &refusal, err)) == -1)
		return -1;
	frame_free(refusal);
	return rc == 0 && !final;
}

/* One chunk of rank's log at offset: the reply (the caller frees it),
 * or NULL with err. */
static Cohort__V1__Envelope *
logs_chunk(struct cconn *c, const struct logs_opts *o, uint32_t rank,
    uint64_t offset, struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LogsRequest lr = COHORT__V1__LOGS_REQUEST__INIT;

	lr.job_id = o->id;
	lr.has_rank = lr.has_offset = 1;
	lr.rank = rank;
	lr.offset = offset;
	/* Unset unless asked, so that an older controller serves it. */
	lr.has_stderr_stream = lr.stderr_stream = o->is_stderr;
	lr.has_attempt = o->attempt != 0;
	lr.attempt = o->attempt;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LOGS;
	req.logs = &lr;
	return cconn_call(c, &req, err);
}

static int
logs_write(const struct logs_opts *o, const void *data, size_t len)
{
	if (len > 0 && (fwrite(data, 1, len, stdout) != len ||
	    fflush(stdout) == EOF)) {
		output_error("%s: cannot write the output: %s", o->prefix,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* What a reply says about where the reader is: the attempt it read
 * (0 when the controller does not say). */
static uint32_t
reply_attempt(const Cohort__V1__LogsReply *r)
{
	return r->has_attempt ? r->attempt : 0;
}

/* A reply that is not data: with --follow, an error saying the job has
 * no log now (not started, or between attempts) is waited out while the
 * job lasts. Returns LOGS_AGAIN to try again later, or an exit code. */
static int
logs_not_data(struct cconn *c, const struct logs_opts *o,
    const Cohort__V1__Envelope *rep)
{
	struct cerr err;
	int rc;

	if (o->follow && rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    wire_err_from_pb(rep->error->code) == ERR_CONFLICT) {
		if ((rc = logs_still_waiting(c, o, &err)) == -1)
			return output_call_error(&err);
		if (rc == 1)
			return LOGS_AGAIN;
	}
	return logs_refused(o, rep);
}

/* One rank, as it was before --all-ranks. */
static int
logs_one(struct cconn *c, const struct logs_opts *o)
{
	const Cohort__V1__LogsReply *r;
	Cohort__V1__Envelope *rep;
	struct cerr err;
	uint64_t offset = 0;
	uint32_t seen = 0, now;
	size_t len;
	bool finished;
	int rc;

	for (;;) {
		if ((rep = logs_chunk(c, o, o->rank, offset, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_LOGS_REPLY) {
			rc = logs_not_data(c, o, rep);
			frame_free(rep);
			if (rc != LOGS_AGAIN)
				return rc;
			output_sleep_ms(LOGS_POLL_MS);
			continue;
		}
		r = rep->logs_reply;
		/* Following the latest attempt into a new one: its log from
		 * the start. */
		now = reply_attempt(r);
		if (o->attempt == 0 && seen != 0 && now != 0 && now != seen) {
			seen = now;
			offset = 0;
			frame_free(rep);
			continue;
		}
		if (now != 0)
			seen = now;
		len = r->data.len;
		finished = r->finished;
		if (logs_write(o, r->data.data, len) == -1) {
			frame_free(rep);
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
		if (finished || !o->follow)
			return EXIT_OK;
		output_sleep_ms(LOGS_POLL_MS);
	}
}

/* --all-ranks: each rank's partial last line, held until it ends. */
struct rank_buf {
	uint64_t offset;
	char *line;
	size_t len;
	bool done;
};

struct logs_all {
	const struct logs_opts *o;
	struct rank_buf *rb;
	uint32_t n;
	int width;		/* digits of the highest rank */
	bool label;
	uint32_t seen;		/* attempt being read; 0: none yet */
};

static int
all_line(struct logs_all *a, uint32_t r, const char *s, size_t len)
{
	if ((a->label && printf("%*" PRIu32 ": ", a->width, r) < 0) ||
	    fwrite(s, 1, len, stdout) != len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF) {
		output_error("%s: cannot write the output: %s", a->o->prefix,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Print rank r's complete lines of data; keep the rest. */
static int
all_feed(struct logs_all *a, uint32_t r, const char *data, size_t len)
{
	struct rank_buf *b = &a->rb[r];
	const char *nl;
	char *nb;
	size_t take;

	while (len > 0) {
		nl = memchr(data, '\n', len);
		take = nl != NULL ? (size_t)(nl - data) : len;
		if ((nb = realloc(b->line, b->len + take + 1)) == NULL) {
			output_error("%s: out of memory", a->o->prefix);
			return -1;
		}
		b->line = nb;
		memcpy(b->line + b->len, data, take);
		b->len += take;
		data += take + (nl != NULL);
		len -= take + (nl != NULL);
		if (nl != NULL || b->len >= LOGS_LINE_MAX) {
			if (all_line(a, r, b->line, b->len) == -1)
				return -1;
			b->len = 0;
		}
	}
	return 0;
}

/* A rank's last line without its newline, once no more will come. */
static int
all_flush(struct logs_all *a, uint32_t r)
{
	struct rank_buf *b = &a->rb[r];
	size_t len = b->len;

	if (len == 0)
		return 0;
	b->len = 0;
	return all_line(a, r, b->line, len);
}

static void
all_free(struct logs_all *a)
{
	uint32_t r;

	for (r = 0; r < a->n; r++)
		free(a->rb[r].line);
	free(a->rb);
	a->rb = NULL;
	a->n = 0;
}

/* Ranks of the job as it is now (after waiting for it to start, with
 * --follow): 0 with a->rb ready, 1 when it has none and will have none
 * (logs_one says why), or an exit code + 2 after printing why. */
static int
all_ranks_now(struct cconn *c, struct logs_all *a)
{
	Cohort__V1__Envelope *refusal;
	struct cerr err;
	uint32_t n, r;
	bool final;
	int rc;

	for (;;) {
		rc = logs_job(c, a->o, &final, &n, &refusal, &err);
		if (rc == -1)
			return output_call_error(&err) + 2;
		if (rc == 1) {
			rc = logs_refused(a->o, refusal);
			frame_free(refusal);
			return rc + 2;
		}
		if (n > 0)
			break;
		if (!a->o->follow || final)
			return 1;
		output_sleep_ms(LOGS_POLL_MS);
	}
	all_free(a);
	if ((a->rb = calloc(n, sizeof(*a->rb))) == NULL) {
		output_error("%s: out of memory", a->o->prefix);
		return EXIT_FAILED + 2;
	}
	a->n = n;
	for (a->width = 1, r = n - 1; r >= 10; r /= 10)
		a->width++;
	a->label = !(a->o->bare_single && n == 1);
	return 0;
}

/* One chunk of rank r: 1 when it had data, 0 when not, 2 when the
 * attempt changed (start over), or an exit code + 3. */
static int
all_chunk(struct cconn *c, struct logs_all *a, uint32_t r)
{
	const Cohort__V1__LogsReply *lr;
	struct rank_buf *b = &a->rb[r];
	Cohort__V1__Envelope *rep;
	struct cerr err;
	uint32_t now;
	size_t len;
	int rc;

	if ((rep = logs_chunk(c, a->o, r, b->offset, &err)) == NULL)
		return output_call_error(&err) + 3;
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_LOGS_REPLY) {
		rc = logs_not_data(c, a->o, rep);
		frame_free(rep);
		return rc == LOGS_AGAIN ? 0 : rc + 3;
	}
	lr = rep->logs_reply;
	now = reply_attempt(lr);
	if (a->o->attempt == 0 && a->seen != 0 && now != 0 && now != a->seen) {
		a->seen = now;
		frame_free(rep);
		return 2;
	}
	if (now != 0)
		a->seen = now;
	len = lr->data.len;
	if (all_feed(a, r, (const char *)lr->data.data, len) == -1) {
		frame_free(rep);
		return EXIT_FAILED + 3;
	}
	if (len > 0)
		b->offset = lr->next_offset > b->offset ? lr->next_offset :
		    b->offset + len;
	else if (lr->finished || !a->o->follow)
		b->done = true;
	frame_free(rep);
	return len > 0;
}

static int
logs_all_ranks(struct cconn *c, const struct logs_opts *o)
{
	struct logs_all a = { .o = o };
	struct logs_opts one;
	bool any, left;
	uint32_t r;
	int rc;

restart:
	if ((rc = all_ranks_now(c, &a)) == 1) {
		/* Not started and never will be now: say why as for one. */
		one = *o;
		one.rank = 0;
		all_free(&a);
		return logs_one(c, &one);
	}
	if (rc >= 2)
		return rc - 2;
	for (;;) {
		any = left = false;
		for (r = 0; r < a.n; r++) {
			if (a.rb[r].done)
				continue;
			/* Without --follow, rank by rank to its end; with
			 * it, a chunk of each in turn, as they arrive. */
			do {
				rc = all_chunk(c, &a, r);
				if (rc == 2) {
					for (r = 0; r < a.n; r++)
						all_flush(&a, r);
					goto restart;
				}
				if (rc >= 3) {
					for (r = 0; r < a.n; r++)
						all_flush(&a, r);
					all_free(&a);
					return rc - 3;
				}
				any |= rc == 1;
			} while (!o->follow && !a.rb[r].done);
			if (a.rb[r].done && all_flush(&a, r) == -1) {
				all_free(&a);
				return EXIT_FAILED;
			}
			left |= !a.rb[r].done;
		}
		if (!left)
			break;
		if (!any)
			output_sleep_ms(LOGS_POLL_MS);
	}
	all_free(&a);
	return EXIT_OK;
}

int
logs_print(struct cconn *c, const struct logs_opts *o)
{
	return o->all_ranks ? logs_all_ranks(c, o) : logs_one(c, o);
}

int
cmd_logs(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags conn;
	struct logs_cli l;
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
	/* An array's task (12_7) names one job. */
	if ((rc = jobref_resolve_one("logs", c, l.arg, &l.o.id)) == EXIT_OK)
		rc = logs_print(c, &l.o);
	cconn_close(c);
	return rc;
}
