/* cohort events: the controller's event log (every state change, drain,
 * failure and restart, with who did it and why), filtered by job, node
 * and time, and with --follow as it grows. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "client/commands.h"
#include "client/output.h"
#include "lib/frame.h"
#include "lib/hostlist.h"

#define EVENTS_POLL_MS 500
/* Events asked for per request, so that a page of long details stays
 * far from the frame size limit. The controller may cap it lower (its
 * page_size): has_more in the reply says whether more follow (a
 * controller without it: a full page means there may be more). */
#define EVENTS_PAGE 1000
/* --follow rides out a controller restart this long. */
#define EVENTS_RECONNECT_MS 60000

enum { O_JOB = 0x100, O_NODE, O_KIND, O_SINCE, O_FOLLOW, O_JSON,
	O_HELP = 'h' };

static const struct option events_longopts[] = {
	{ "job", required_argument, NULL, O_JOB },
	{ "node", required_argument, NULL, O_NODE },
	{ "kind", required_argument, NULL, O_KIND },
	{ "since", required_argument, NULL, O_SINCE },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char events_usage[] =
    "usage: cohort events [--job JOB] [--node NODES] [--kind KIND] "
    "[--since TIME]\n"
    "                     [--follow] [--json]\n"
    "  the event log, oldest first: TIME KIND JOB NODE ACTOR DETAIL\n"
    "  --node NODES  only events about these nodes (a name, a hostlist\n"
    "                such as node[01-08] or a comma list)\n"
    "  --kind KIND   only events of that kind (submit, start, preempt, ...)\n"
    "  --since TIME  only events from then on: a date-time\n"
    "                (2026-11-30T06:00:00, local time; with Z or +HH:MM\n"
    "                for UTC or an offset) or a duration meaning that\n"
    "                long ago (90s, 10m, 2h, 1-00:00:00)\n"
    "  --follow, -f  keep printing new events until interrupted (it\n"
    "                waits up to a minute for a controller that restarts)\n"
    "  --json        {\"events\": [...]}; with --follow, one JSON object\n"
    "                per event and line instead\n";

struct events_opts {
	struct output_conn_flags conn;
	uint64_t job_id;	/* 0: any */
	const char *node;	/* NULL: any */
	/* --node as expanded, sorted: the controller filters on one name
	 * (node), several are picked here. */
	char **nodes;
	size_t nnodes;
	const char *kind;	/* NULL: any */
	int64_t since_ms;	/* 0: from the start */
	bool follow;
	bool json;
};

/* How the output goes: one table at the end, or line by line. */
struct events_out {
	const struct events_opts *o;
	struct output_table *table;	/* without --follow, as a table */
	json_t *arr;			/* without --follow, --json */
	size_t width[5];		/* --follow as a table: columns so far */
	bool header_done;
};

static volatile sig_atomic_t events_interrupted;

static void
events_on_signal(int sig)
{
	(void)sig;
	events_interrupted = 1;
}

/* --node as a hostlist, into o->nodes; one name is also o->node, the
 * controller's filter. 0, or -1 after printing why. */
static int
events_nodes(struct events_opts *o)
{
	char why[256], *arg = (char *)o->node;

	hostlist_free(o->nodes, o->nnodes);
	o->nodes = NULL;
	o->nnodes = 0;
	why[0] = '\0';
	if (hostlist_expand_args(&arg, 1, HOSTLIST_NODES_MAX, &o->nodes,
	    &o->nnodes, why, sizeof(why)) == -1) {
		output_error("events: --node: %s", errno == ENOMEM ?
		    "out of memory" : why[0] ? why : "not a hostlist");
		return -1;
	}
	/* One name ("node[01]" too) is the controller's to filter on. */
	o->node = o->nnodes == 1 ? o->nodes[0] : NULL;
	return 0;
}

static int
events_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* Is e about one of the nodes --node named (any, without --node)? */
static bool
events_node_wanted(const struct events_opts *o, const Cohort__V1__Event *e)
{
	if (o->nodes == NULL)
		return true;
	return e->node != NULL && bsearch(e->node, o->nodes, o->nnodes,
	    sizeof(*o->nodes), events_name_cmp) != NULL;
}

/* 0, -2 for --help, or EXIT_USAGE after printing why. */
static int
events_parse(int argc, char **argv, struct events_opts *o)
{
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hf", events_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("events", ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(&o->conn, ch, optarg))
			continue;
		switch (ch) {
		case O_JOB:
			if (output_parse_job_id("events", optarg,
			    &o->job_id) == -1)
				return EXIT_USAGE;
			break;
		case O_NODE:
			if (optarg[0] == '\0') {
				output_error("events: --node: empty node name");
				return EXIT_USAGE;
			}
			o->node = optarg;
			if (events_nodes(o) != 0)
				return EXIT_USAGE;
			break;
		case O_KIND:
			if (optarg[0] == '\0') {
				output_error("events: --kind: empty kind");
				return EXIT_USAGE;
			}
			o->kind = optarg;
			break;
		case O_SINCE:
			if (output_parse_since(optarg, clock_now_ms(),
			    &o->since_ms) == -1) {
				output_error("events: --since: '%s' is neither "
				    "a date-time (2026-11-30T06:00:00) nor a "
				    "duration (10m)", optarg);
				return EXIT_USAGE;
			}
			break;
		case O_FOLLOW:
		case 'f':
			o->follow = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		}
	}
	if (optind < argc) {
		output_error("events: unexpected argument '%s' (see cohort "
		    "events --help)", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

/* A copy of s fit for one table cell: control characters (a newline in
 * a health check's message, an escape sequence) become spaces. NULL or
 * "" stays NULL ("-"). malloc'd; *nomem on ENOMEM. */
static char *
events_cell(const char *s, bool *nomem)
{
	char *c, *p;

	*nomem = false;
	if (s == NULL || s[0] == '\0')
		return NULL;
	if ((c = strdup(s)) == NULL) {
		*nomem = true;
		return NULL;
	}
	for (p = c; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return c;
}

static json_t *
events_json(const Cohort__V1__Event *e)
{
	char t[OUTPUT_TIME_LEN];

	return json_pack("{s:I, s:s, s:o, s:o, s:s, s:s, s:s}",
	    "id", (json_int_t)e->id,
	    "time", output_time_utc_ms(e->time_ms, t, sizeof(t)),
	    "job_id", e->has_job_id && e->job_id != 0 ?
	    json_integer((json_int_t)e->job_id) : json_null(),
	    "node", e->node != NULL && e->node[0] != '\0' ?
	    json_string(e->node) : json_null(),
	    "kind", e->kind,
	    "actor", e->actor,
	    "detail", e->detail != NULL ? e->detail : "");
}

static const char *const events_head[6] = { "TIME", "KIND", "JOB", "NODE",
    "ACTOR", "DETAIL" };

/* --follow as a table: columns as wide as the widest cell so far, so
 * that lines printed later stay aligned with the earlier ones unless a
 * cell is wider than any before it. */
static void
events_line(struct events_out *out, const char *const *cells)
{
	size_t c, w;

	for (c = 0; c < 6; c++) {
		fputs(cells[c] ? cells[c] : "-", stdout);
		if (c == 5)
			break;
		w = strlen(cells[c] ? cells[c] : "-");
		if (w > out->width[c])
			out->width[c] = w;
		printf("%*s", (int)(out->width[c] - w + 2), "");
	}
	putchar('\n');
}

/* One event into the output. 0, or -1 on ENOMEM. */
static int
events_add(struct events_out *out, const Cohort__V1__Event *e)
{
	char t[OUTPUT_TIME_LEN], job[24], *kind, *node, *actor, *detail;
	const char *cells[6];
	json_t *j;
	bool n1, n2, n3, n4;
	int rc = 0;

	if (out->o->json) {
		if ((j = events_json(e)) == NULL)
			return -1;
		if (!out->o->follow)
			return json_array_append_new(out->arr, j);
		rc = json_dumpf(j, stdout, JSON_COMPACT);
		json_decref(j);
		putchar('\n');
		return rc;
	}
	snprintf(job, sizeof(job), "%" PRIu64, e->job_id);
	kind = events_cell(e->kind, &n1);
	node = events_cell(e->node, &n2);
	actor = events_cell(e->actor, &n3);
	detail = events_cell(e->detail, &n4);
	if (n1 || n2 || n3 || n4)
		rc = -1;
	else {
		cells[0] = output_time_local_ms(e->time_ms, t, sizeof(t));
		cells[1] = kind;
		cells[2] = e->has_job_id && e->job_id != 0 ? job : NULL;
		cells[3] = node;
		cells[4] = actor;
		cells[5] = detail;
		if (out->o->follow)
			events_line(out, cells);
		else
			rc = output_table_add(out->table, cells);
	}
	free(kind);
	free(node);
	free(actor);
	free(detail);
	return rc;
}

/* Ask for the events after *after_id, page by page, and add them to the
 * output, moving *after_id past them. EXIT_OK, or an exit code after
 * printing why (-1 in *transport when the connection failed, so that
 * --follow may try again). */
static int
events_fetch(struct cconn *c, const struct events_opts *o,
    struct events_out *out, int64_t *after_id, struct cerr *err,
    bool *transport)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__EventsRequest er = COHORT__V1__EVENTS_REQUEST__INIT;
	const Cohort__V1__EventsReply *r;
	int64_t before;
	size_t i, n;
	bool more;
	int rc;

	*transport = false;
	er.has_job_id = o->job_id != 0;
	er.job_id = o->job_id;
	er.node = (char *)o->node;
	er.kind = (char *)o->kind;
	er.has_since_ms = o->since_ms > 0;
	er.since_ms = o->since_ms;
	er.has_limit = 1;
	er.limit = EVENTS_PAGE;
	er.has_after_id = 1;
	req.body_case = COHORT__V1__ENVELOPE__BODY_EVENTS;
	req.events = &er;
	do {
		er.after_id = *after_id;
		if ((rep = cconn_call(c, &req, err)) == NULL) {
			*transport = true;
			return EXIT_UNREACHABLE;
		}
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_EVENTS_REPLY) {
			rc = output_reply_error("events", rep);
			frame_free(rep);
			return rc;
		}
		r = rep->events_reply;
		n = r->n_events;
		more = r->has_has_more ? r->has_more && n > 0 :
		    n == EVENTS_PAGE;
		before = *after_id;
		for (i = 0; i < n; i++) {
			/* Ids only grow; one that does not is not printed,
			 * so a confused reply cannot loop forever. */
			if (r->events[i]->id <= *after_id)
				continue;
			if (events_node_wanted(o, r->events[i]) &&
			    events_add(out, r->events[i]) == -1) {
				frame_free(rep);
				output_error("events: out of memory");
				return EXIT_FAILED;
			}
			*after_id = r->events[i]->id;
		}
		frame_free(rep);
		if (o->follow && fflush(stdout) == EOF) {
			/* A closed pipe (| head) is no news to anyone. */
			if (errno != EPIPE)
				output_error("events: cannot write the "
				    "events: %s", strerror(errno));
			return EXIT_FAILED;
		}
		/* A page that brought nothing new ends it: no loop on a
		 * confused reply. */
	} while (more && *after_id > before && !events_interrupted);
	return EXIT_OK;
}

/* Reconnect after the connection dropped (a controller restarting takes
 * a few seconds), trying every second for up to EVENTS_RECONNECT_MS.
 * EXIT_OK with *c, EXIT_OK with *c NULL when interrupted, or an exit
 * code after printing why. */
static int
events_reconnect(struct cconn **c, const struct cconn_opts *opts,
    const struct events_opts *o)
{
	struct settings s;
	struct cconn_opts co;
	struct cerr err;
	int64_t deadline = output_mono_ms() + EVENTS_RECONNECT_MS;
	int rc;

	cconn_close(*c);
	*c = NULL;
	if ((rc = output_settings(opts, &o->conn, &s, &co)) != EXIT_OK)
		return rc;
	for (;;) {
		output_sleep_ms(1000);
		if (events_interrupted)
			break;
		cerr_clear(&err);
		if ((*c = cconn_open(&co, &err)) != NULL)
			break;
		if (err.code != ERR_UNAVAILABLE ||
		    output_mono_ms() >= deadline) {
			rc = output_call_error(&err);
			break;
		}
	}
	settings_clear(&s);
	return rc;
}

/* --follow: poll for new events until SIGINT or SIGTERM. */
static int
events_follow(struct cconn **c, const struct cconn_opts *opts,
    const struct events_opts *o, struct events_out *out)
{
	struct sigaction sa;
	struct cerr err;
	int64_t after_id = 0;
	bool transport;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = events_on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->json) {
		/* Widths that fit most events from the start: the time
		 * always, the rest as commonly seen. */
		out->width[0] = strlen("2026-11-30T06:30:12.345");
		out->width[1] = 14;
		out->width[2] = 5;
		out->width[3] = 8;
		out->width[4] = 8;
		events_line(out, events_head);
		fflush(stdout);
	}
	while (!events_interrupted) {
		cerr_clear(&err);
		rc = events_fetch(*c, o, out, &after_id, &err, &transport);
		if (events_interrupted)
			break;
		if (transport) {
			if ((rc = events_reconnect(c, opts, o)) != EXIT_OK)
				return rc;
			continue;
		}
		if (rc != EXIT_OK)
			return rc;
		output_sleep_ms(EVENTS_POLL_MS);
	}
	return EXIT_OK;
}

int
cmd_events(int argc, char **argv, const struct cconn_opts *opts)
{
	struct events_opts o;
	struct events_out out;
	struct cconn *c;
	struct cerr err;
	int64_t after_id = 0;
	bool transport;
	int rc;

	memset(&out, 0, sizeof(out));
	out.o = &o;
	if ((rc = events_parse(argc, argv, &o)) == -2) {
		fputs(events_usage, stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (rc != 0)
		goto out;
	if (!o.follow && (o.json ? (out.arr = json_array()) == NULL :
	    (out.table = output_table_new(6, events_head)) == NULL)) {
		output_error("events: out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	if ((rc = output_connect(opts, &o.conn, &c)) != EXIT_OK)
		goto out;
	if (o.follow) {
		rc = events_follow(&c, opts, &o, &out);
		cconn_close(c);
		goto out;
	}
	cerr_clear(&err);
	rc = events_fetch(c, &o, &out, &after_id, &err, &transport);
	cconn_close(c);
	if (transport)
		rc = output_call_error(&err);
	if (rc != EXIT_OK)
		goto out;
	if (o.json) {
		rc = output_json_print(json_pack("{s:O}", "events", out.arr)) ==
		    0 ? EXIT_OK : EXIT_FAILED;
	} else {
		output_table_print(out.table, stdout);
		rc = fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
	}
out:
	json_decref(out.arr);
	output_table_free(out.table);
	hostlist_free(o.nodes, o.nnodes);
	return rc;
}
