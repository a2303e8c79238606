/* cohort usage: GPU-hours per user, queue, outcome or day over a window,
 * like sreport's cluster utilization by account: what the runs used
 * (GPUs held x run time) and of that what was wasted (work lost since
 * the last checkpoint, and whole runs that ended FAILED), with a total. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/clock.h"
#include "lib/frame.h"
#include "lib/job.h"

enum { O_SINCE = 0x100, O_UNTIL, O_USER, O_QUEUE, O_BY, O_JSON,
    O_HELP = 'h' };

static const struct option usage_longopts[] = {
	{ "since", required_argument, NULL, O_SINCE },
	{ "until", required_argument, NULL, O_UNTIL },
	{ "user", required_argument, NULL, O_USER },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "by", required_argument, NULL, O_BY },
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char usage_usage[] =
    "usage: cohort usage [--since T] [--until T] [--user USER] [--queue Q]\n"
    "                    [--by user|queue|state|day] [--json]\n"
    "  GPU-hours of the job runs in the window (default: everything kept,\n"
    "  up to now), grouped by user (the default), queue, state (what ended\n"
    "  each run: COMPLETED, FAILED, CANCELLED, TIMEOUT, RESTARTING,\n"
    "  PREEMPTED, REQUEUED; RUNNING for runs going on) or UTC day, with a\n"
    "  total. WASTED is the work lost (since the last checkpoint) and the\n"
    "  whole of runs that ended FAILED. A run counts from its start to its\n"
    "  end, clipped to the window; runs going on count up to now.\n"
    "  T: a date-time (\"2026-12-01 15:04:05 UTC\", \"2026-12-01\") or a\n"
    "  duration ago (\"2h\", \"7d\"). Runs of jobs past job_retention are\n"
    "  gone.\n";

struct usage_by {
	const char *name;
	Cohort__V1__UsageBy pb;
	const char *head;
};

static const struct usage_by usage_bys[] = {
	{ "user", COHORT__V1__USAGE_BY__USAGE_BY_USER, "USER" },
	{ "queue", COHORT__V1__USAGE_BY__USAGE_BY_QUEUE, "QUEUE" },
	{ "state", COHORT__V1__USAGE_BY__USAGE_BY_STATE, "STATE" },
	{ "day", COHORT__V1__USAGE_BY__USAGE_BY_DAY, "DAY" },
};

static double
usage_hours(uint64_t gpu_ms)
{
	return (double)gpu_ms / 3600000.0;
}

/* A group's name: its key, or its UTC day ("2026-12-01"). */
static const char *
usage_key(const Cohort__V1__UsageRow *r, bool by_day, char *buf, size_t len)
{
	char t[OUTPUT_TIME_LEN];

	if (!by_day)
		return r->key != NULL && r->key[0] != '\0' ? r->key : "-";
	output_time_utc(r->day_ms > 0 ? r->day_ms : 1, t, sizeof(t));
	snprintf(buf, len, "%.10s", t);
	return buf;
}

static json_t *
usage_json(const Cohort__V1__UsageReply *r, const struct usage_by *by)
{
	char t1[OUTPUT_TIME_LEN], t2[OUTPUT_TIME_LEN], k[32];
	bool by_day = by->pb == COHORT__V1__USAGE_BY__USAGE_BY_DAY;
	json_t *doc, *rows, *o;
	size_t i;

	if ((rows = json_array()) == NULL)
		return NULL;
	for (i = 0; i < r->n_rows; i++) {
		o = json_pack("{s:s, s:f, s:f, s:I, s:I, s:I}", by->name,
		    usage_key(r->rows[i], by_day, k, sizeof(k)),
		    "gpu_hours", usage_hours(r->rows[i]->gpu_ms),
		    "wasted_gpu_hours", usage_hours(r->rows[i]->wasted_gpu_ms),
		    "gpu_ms", (json_int_t)r->rows[i]->gpu_ms,
		    "wasted_gpu_ms", (json_int_t)r->rows[i]->wasted_gpu_ms,
		    "runs", (json_int_t)r->rows[i]->runs);
		if (o == NULL || json_array_append_new(rows, o) == -1) {
			json_decref(rows);
			return NULL;
		}
	}
	/* since 0 (from the start) is shown as null, like a time that
	 * never happened. */
	doc = json_pack("{s:o, s:s, s:s, s:o, s:{s:f, s:f, s:I, s:I}}",
	    "since", r->since_ms > 0 ? json_string(output_time_utc(
	    r->since_ms, t1, sizeof(t1))) : json_null(),
	    "until", output_time_utc(r->until_ms, t2, sizeof(t2)),
	    "by", by->name, "rows", rows, "total",
	    "gpu_hours", usage_hours(r->gpu_ms),
	    "wasted_gpu_hours", usage_hours(r->wasted_gpu_ms),
	    "gpu_ms", (json_int_t)r->gpu_ms,
	    "wasted_gpu_ms", (json_int_t)r->wasted_gpu_ms);
	return doc;
}

static int
usage_add(struct output_table *t, const char *key, uint64_t gpu_ms,
    uint64_t wasted_ms, const char *runs)
{
	char used[32], wasted[32];
	const char *cells[4] = { key, used, wasted, runs };

	snprintf(used, sizeof(used), "%.2f", usage_hours(gpu_ms));
	snprintf(wasted, sizeof(wasted), "%.2f", usage_hours(wasted_ms));
	return output_table_add(t, cells);
}

static int
usage_print(const Cohort__V1__UsageReply *r, const struct usage_by *by)
{
	const char *heads[4] = { by->head, "GPU_HOURS", "WASTED_GPU_HOURS",
	    "RUNS" };
	bool by_day = by->pb == COHORT__V1__USAGE_BY__USAGE_BY_DAY;
	char t1[OUTPUT_TIME_LEN], t2[OUTPUT_TIME_LEN], k[32], runs[24];
	struct output_table *t;
	size_t i;
	int rc = 0;

	if ((t = output_table_new(4, heads)) == NULL)
		return -1;
	for (i = 0; i < r->n_rows && rc == 0; i++) {
		snprintf(runs, sizeof(runs), "%llu",
		    (unsigned long long)r->rows[i]->runs);
		rc = usage_add(t, usage_key(r->rows[i], by_day, k, sizeof(k)),
		    r->rows[i]->gpu_ms, r->rows[i]->wasted_gpu_ms, runs);
	}
	if (rc == 0)
		rc = usage_add(t, "TOTAL", r->gpu_ms, r->wasted_gpu_ms, NULL);
	if (rc == 0) {
		printf("GPU-hours from %s to %s\n", r->since_ms > 0 ?
		    output_time_local(r->since_ms, t1, sizeof(t1)) :
		    "the oldest run kept", output_time_local(r->until_ms, t2,
		    sizeof(t2)));
		output_table_print(t, stdout);
	}
	output_table_free(t);
	return rc;
}

/* The options into the request. EXIT_OK, -2 for --help, or EXIT_USAGE
 * after printing why. */
static int
usage_parse(int argc, char **argv, Cohort__V1__UsageRequest *ur,
    const struct usage_by **by, bool *json, struct output_conn_flags *cf)
{
	int64_t now = clock_now_ms();
	size_t i;
	int ch;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", usage_longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("usage", ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(cf, ch, optarg))
			continue;
		switch (ch) {
		case O_SINCE:
		case O_UNTIL:
			if (output_parse_since(optarg, now, ch == O_SINCE ?
			    &ur->since_ms : &ur->until_ms) == -1) {
				output_error("usage: --%s: invalid time '%s'",
				    ch == O_SINCE ? "since" : "until", optarg);
				return EXIT_USAGE;
			}
			if (ch == O_SINCE)
				ur->has_since_ms = 1;
			else
				ur->has_until_ms = 1;
			break;
		case O_USER:
		case O_QUEUE:
			if (optarg[0] == '\0' || strlen(optarg) > (ch ==
			    O_USER ? PEER_NAME_MAX : JOB_QUEUE_MAX)) {
				output_error("usage: --%s: 1 to %d bytes",
				    ch == O_USER ? "user" : "queue", ch ==
				    O_USER ? PEER_NAME_MAX : JOB_QUEUE_MAX);
				return EXIT_USAGE;
			}
			if (ch == O_USER)
				ur->user = optarg;
			else
				ur->queue = optarg;
			break;
		case O_BY:
			for (i = 0; i < sizeof(usage_bys) /
			    sizeof(usage_bys[0]); i++)
				if (strcmp(optarg, usage_bys[i].name) == 0)
					*by = &usage_bys[i];
			if (strcmp(optarg, (*by)->name) != 0) {
				output_error("usage: --by: one of user, queue, "
				    "state, day; not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			*json = true;	/* O_JSON */
		}
	}
	if (optind < argc) {
		output_error("usage: unexpected argument '%s' (see cohort "
		    "usage --help)", argv[optind]);
		return EXIT_USAGE;
	}
	if (ur->has_since_ms && (ur->has_until_ms ? ur->until_ms : now) <=
	    ur->since_ms) {
		output_error("usage: the window ends before it starts");
		return EXIT_USAGE;
	}
	ur->has_by = 1;
	ur->by = (*by)->pb;
	return EXIT_OK;
}

int
cmd_usage(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__UsageRequest ur = COHORT__V1__USAGE_REQUEST__INIT;
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	const struct usage_by *by = &usage_bys[0];
	bool json = false;
	int rc;

	if ((rc = usage_parse(argc, argv, &ur, &by, &json, &cf)) == -2) {
		fputs(usage_usage, stdout);
		return EXIT_OK;
	}
	if (rc != EXIT_OK)
		return rc;
	req.body_case = COHORT__V1__ENVELOPE__BODY_USAGE;
	req.usage = &ur;
	if ((rc = output_request("usage", opts, &cf, &req,
	    COHORT__V1__ENVELOPE__BODY_USAGE_REPLY, &rep)) != EXIT_OK)
		return rc;
	if (json)
		rc = output_json_print(usage_json(rep->usage_reply, by)) == 0 ?
		    EXIT_OK : EXIT_FAILED;
	else
		rc = usage_print(rep->usage_reply, by) == 0 &&
		    fflush(stdout) != EOF ? EXIT_OK : EXIT_FAILED;
	if (rc != EXIT_OK)
		output_error("usage: cannot print the usage");
	frame_free(rep);
	return rc;
}
