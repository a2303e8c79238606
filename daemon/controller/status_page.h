/* The read-only HTML status page served at /: nodes by switch with a
 * cell per GPU, the queue with pending reasons, queues, recent events,
 * the controller's health. Server-rendered, no JavaScript. */
#ifndef COHORT_CONTROLLER_STATUS_PAGE_H
#define COHORT_CONTROLLER_STATUS_PAGE_H

struct evbuffer;
struct http_sources;

/* Append the page to b. 0, or -1 (ENOMEM). */
int status_page_render(const struct http_sources *src, struct evbuffer *b);

#endif
