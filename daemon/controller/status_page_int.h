/* Internals shared by the status page's files: status_page.c (the page,
 * the health, the events), status_page_nodes.c (switches and GPU cells),
 * status_page_jobs.c (pending and running jobs, queues) and
 * status_page_html.c (output and escaping). */
#ifndef COHORT_CONTROLLER_STATUS_PAGE_INT_H
#define COHORT_CONTROLLER_STATUS_PAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status_page.h"

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

/* status_page_nodes.c */
void status_page_nodes(struct status_ctx *c);

/* status_page_jobs.c */
void status_page_jobs_pending(struct status_ctx *c);
void status_page_jobs_running(struct status_ctx *c);
void status_page_jobs_queues(struct status_ctx *c);

#endif
