/* The read-only HTML status page served at /: the controller's health,
 * nodes grouped by leaf switch with a cell per GPU coloured by state
 * (free, a job's, failed, drained, down), the nodes with a suspect
 * score and its evidence, the jobs waiting with their
 * pending reasons, the running jobs, the queues with their quotas and
 * usage, and the latest events. Server-rendered HTML5 with inline CSS:
 * no JavaScript. Every string that comes from outside (names, users,
 * reasons, event details) is HTML-escaped.
 *
 * Bounded for large clusters: at most STATUS_PAGE_JOBS_MAX rows per job
 * table and STATUS_PAGE_EVENTS events; above STATUS_PAGE_OPEN_NODES nodes
 * the page carries no node row, only one summary row per switch linking
 * to /?switch=NAME, the same page with that one switch's nodes: 10,000
 * nodes stay readable and cheap to serve. Nodes under no switch come in
 * groups of STATUS_PAGE_GROUP_NODES named STATUS_PAGE_UNSWITCHED "N" (1,
 * 2, ... by name; a switch of the topology of that name wins). */
#ifndef COHORT_CONTROLLER_STATUS_PAGE_H
#define COHORT_CONTROLLER_STATUS_PAGE_H

#include <stdbool.h>
#include <stdint.h>

struct evbuffer;
struct http_sources;
struct jobs;
struct nodes;
struct queues;
struct store;
struct suspect;
struct topo;

#define STATUS_PAGE_JOBS_MAX 100	/* rows of each job table */
#define STATUS_PAGE_ATTENTION_MAX 100	/* nodes needing attention */
#define STATUS_PAGE_EVENTS 20		/* latest events shown */
#define STATUS_PAGE_OPEN_NODES 1000	/* above: switches start closed */
/* Nodes under no switch of the topology (or without a topology) are
 * shown in groups of this many, by name. */
#define STATUS_PAGE_GROUP_NODES 32
#define STATUS_PAGE_UNSWITCHED "unswitched-"

/* The controller's health as the page shows it. */
struct status_page_health {
	int64_t now_ms;			/* wall clock, for ages */
	int64_t started_ms;		/* the controller's start */
	bool has_pass;
	uint64_t last_pass_us;		/* the latest scheduling pass */
	unsigned conns, agents, people;	/* open connections */
	unsigned long commits;		/* SQLite commits so far */
};

/* What the page is made of; every pointer is borrowed. topo, queues,
 * store and suspect may be NULL (no switches, no queue table, no events,
 * no suspect scores). */
struct status_page_in {
	struct jobs *jobs;
	struct nodes *nodes;
	const struct topo *topo;
	struct queues *queues;
	struct store *store;
	const struct suspect *suspect;
	struct status_page_health health;
	size_t open_nodes;		/* 0: STATUS_PAGE_OPEN_NODES (tests
					 * set a smaller bound) */
	/* NULL or "": every switch (open when small); else the one switch
	 * (or unswitched group) whose nodes the page shows, the others as
	 * summary rows; an unknown one: "No switch NAME." on the page. */
	const char *switch_name;
};

/* Append the page for the daemon's sources to b (the HTTP handler), with
 * one switch's nodes (sw: status_page_in.switch_name; NULL: none). 0, or
 * -1 (ENOMEM; b may hold part of a page). */
int status_page_render(const struct http_sources *src, const char *sw,
    struct evbuffer *b);
/* The same from in (tests, the benchmark): no server or event loop. */
int status_page_write(const struct status_page_in *in, struct evbuffer *b);

/* Append s to b as HTML text, safe in element content and in quoted
 * attribute values: & < > " ' as character references, every byte not
 * part of valid UTF-8 and every control character but tab and newline
 * as U+FFFD. NULL appends nothing. 0, or -1 (ENOMEM). */
int status_page_html_escape(struct evbuffer *b, const char *s);

/* May s name a switch in /?switch=: as a node name, a letter or digit,
 * then letters, digits, '.', '_' and '-', at most PEER_NAME_MAX bytes.
 * Switches named otherwise show without a link. */
bool status_page_switch_ok(const char *s);

#endif
