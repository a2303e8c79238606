/* cohort queues: the queue tree (daemon/controller/domain/queues.h) with each
 * queue's nominal quota, the GPUs its jobs use, borrow and lend, the
 * GPUs its waiting jobs ask for, and its fair-share factor. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/frame.h"

enum { O_JSON = 0x100, O_HELP = 'h' };

static const struct option queues_longopts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char queues_usage[] =
    "usage: cohort queues [--json]\n"
    "  the queue tree, a child indented under its parent:\n"
    "  NOMINAL  its GPU quota (none: unlimited)\n"
    "  USED     GPUs held by running jobs of the queue and those below\n"
    "  BORROWED used beyond nominal (reclaimable by preemption)\n"
    "  LENT     of its unused nominal, used by other queues\n"
    "  PENDING  GPUs asked by waiting jobs (a whole-node job counts the\n"
    "           largest node's GPUs per node)\n"
    "  FACTOR   fair share: 1 unused, 0.5 at its share, toward 0 above\n";

static const char *const queues_head[9] = { "QUEUE", "NOMINAL", "USED",
    "BORROWED", "LENT", "PENDING", "JOBS", "WEIGHT", "FACTOR" };

static json_t *
queues_row_json(const Cohort__V1__QueueRow *r)
{
	return json_pack("{s:s, s:o, s:i, s:o, s:I, s:I, s:I, s:I, s:I, s:I,"
	    " s:I, s:I, s:f}",
	    "name", r->name,
	    "parent", r->parent != NULL ? json_string(r->parent) : json_null(),
	    "depth", (int)r->depth,
	    "nominal", r->nominal_unlimited ? json_null() :
	    json_integer((json_int_t)r->nominal),
	    "used", (json_int_t)r->used,
	    "borrowed", (json_int_t)r->borrowed,
	    "lent", (json_int_t)r->lent,
	    "from_above", (json_int_t)r->from_above,
	    "pending", (json_int_t)r->pending,
	    "running_jobs", (json_int_t)r->running_jobs,
	    "pending_jobs", (json_int_t)r->pending_jobs,
	    "weight", (json_int_t)r->weight,
	    "factor", r->factor);
}

static int
queues_row_table(struct output_table *t, const Cohort__V1__QueueRow *r)
{
	char name[2 * 32 + 72], nominal[16], used[16], bor[16], lent[16];
	char pend[16], jobs[40], weight[16], factor[16];
	const char *cells[9] = { name, nominal, used, bor, lent, pend, jobs,
	    weight, factor };
	unsigned depth = r->depth < 32 ? r->depth : 32;

	snprintf(name, sizeof(name), "%*s%s", (int)(2 * depth), "", r->name);
	if (r->nominal_unlimited)
		snprintf(nominal, sizeof(nominal), "none");
	else
		snprintf(nominal, sizeof(nominal), "%u", r->nominal);
	snprintf(used, sizeof(used), "%u", r->used);
	snprintf(bor, sizeof(bor), "%u", r->borrowed);
	snprintf(lent, sizeof(lent), "%u", r->lent);
	snprintf(pend, sizeof(pend), "%u", r->pending);
	snprintf(jobs, sizeof(jobs), "%u run, %u wait", r->running_jobs,
	    r->pending_jobs);
	snprintf(weight, sizeof(weight), "%u", r->weight);
	snprintf(factor, sizeof(factor), "%.3f", r->factor);
	return output_table_add(t, cells);
}

int
cmd_queues(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__QueuesRequest qr = COHORT__V1__QUEUES_REQUEST__INIT;
	const Cohort__V1__QueuesReply *r;
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	struct output_table *t = NULL;
	json_t *arr = NULL, *o;
	bool json = false;
	size_t i;
	int ch, rc;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", queues_longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("queues", ch, argv);
		if (ch == O_HELP) {
			fputs(queues_usage, stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&cf, ch, optarg))
			continue;
		json = true;	/* O_JSON, the only other option */
	}
	if (optind < argc) {
		output_error("queues: unexpected argument '%s' (see cohort "
		    "queues --help)", argv[optind]);
		return EXIT_USAGE;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_QUEUES;
	req.queues = &qr;
	if ((rc = output_request("queues", opts, &cf, &req,
	    COHORT__V1__ENVELOPE__BODY_QUEUES_REPLY, &rep)) != EXIT_OK)
		return rc;
	r = rep->queues_reply;
	if (json ? (arr = json_array()) == NULL :
	    (t = output_table_new(9, queues_head)) == NULL)
		goto nomem;
	for (i = 0; i < r->n_queues; i++) {
		if (json) {
			if ((o = queues_row_json(r->queues[i])) == NULL ||
			    json_array_append_new(arr, o) == -1)
				goto nomem;
		} else if (queues_row_table(t, r->queues[i]) == -1)
			goto nomem;
	}
	rc = output_listing(json, "queues", arr, t);
	output_table_free(t);
	frame_free(rep);
	return rc;
nomem:
	output_error("queues: out of memory");
	json_decref(arr);
	output_table_free(t);
	frame_free(rep);
	return EXIT_FAILED;
}
