/* Internals shared by the status page's files: status_page.c (the page,
 * the health, the events), status_page_nodes.c (switches, counts, the
 * attention list), status_page_cells.c (a node's row and its GPU cells),
 * status_page_jobs.c (pending and running jobs, queues) and
 * status_page_html.c (output and escaping). */
#ifndef COHORT_CONTROLLER_STATUS_PAGE_INT_H
#define COHORT_CONTROLLER_STATUS_PAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job.h"
#include "daemon/controller/web/status_page.h"

struct job;

/* The page being written: one sticky failure flag instead of a check
 * after every append. */
struct status_out {
	struct evbuffer *b;
	bool failed;
};

/* What every section reads: the inputs and the live jobs (id order). */
struct status_ctx {
	const struct status_page_in *in;
	struct status_out out;
	const struct job **live;
	size_t nlive;
};

/* status_page_html.c: append markup as is, formatted, or text escaped. */
void status_page_html_put(struct status_out *o, const char *markup);
void status_page_html_printf(struct status_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void status_page_html_text(struct status_out *o, const char *s);
/* A duration as "3d 4h", "2h 5m", "4m 10s" or "7s". */
void status_page_html_age(struct status_out *o, int64_t ms);
/* A wall-clock time as "2026-12-01 18:45:03Z" (UTC). */
void status_page_html_time(struct status_out *o, int64_t ms);
/* A job's label: its id, or ARRAYID_TASK for an array task. */
void status_page_html_job(struct status_out *o, const struct job *j);
/* The palette class of a job's cells: the same colour for every GPU of
 * one job, neighbouring ids in different colours. */
#define STATUS_PAGE_COLOURS 12
unsigned status_page_html_colour(uint64_t job_id);

/* What one GPU cell shows, most urgent first when several hold. */
enum status_cell {
	STATUS_CELL_DOWN,		/* its node is DOWN */
	STATUS_CELL_FAILED,		/* the GPU's health is FAILED */
	STATUS_CELL_JOB,		/* a job holds it */
	STATUS_CELL_DRAINED,		/* free, on a drained node */
	STATUS_CELL_FREE,
	STATUS_CELL_NKINDS,
};

/* The end of a job's cell ("12 name (user)\">12</i>"), escaped once per
 * run of cells of the same job: at 10,000 nodes most of the page's
 * bytes. tail_len 0: too long to keep; written cell by cell. */
struct status_memo {
	uint64_t id;
	const struct job *job;
	char tail[2 * PEER_NAME_MAX + 256];
	size_t tail_len;
};

/* status_page_cells.c: one node's row (name, state, a cell per GPU,
 * reason); what a GPU's cell shows; is the node down, drained or not
 * healthy (the attention list)? */
struct node;
void status_page_cells_row(struct status_ctx *c, const struct node *n,
    struct status_memo *m);
enum status_cell status_page_cells_kind(const struct node *n, unsigned g);
bool status_page_cells_attention(const struct node *n);

/* status_page_nodes.c */
void status_page_nodes(struct status_ctx *c);

/* status_page_jobs.c */
void status_page_jobs_pending(struct status_ctx *c);
void status_page_jobs_running(struct status_ctx *c);
void status_page_jobs_queues(struct status_ctx *c);

#endif
