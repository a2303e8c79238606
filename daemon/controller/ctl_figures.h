/* The figures /metrics and the status page show of the driver, the RPC
 * server, replication and the mailer (http.h's struct http_figures):
 * the composition root copies them, so that web/ includes none of those
 * parts' headers. */
#ifndef COHORT_CONTROLLER_CTL_FIGURES_H
#define COHORT_CONTROLLER_CTL_FIGURES_H

struct driver;
struct http_figures;
struct mailer;
struct repl;
struct rpc;
struct server;

/* The parts read, all borrowed; repl and mailer may be NULL. */
struct ctl_figures {
	const struct driver *driver;
	const struct server *server;
	const struct rpc *rpc;
	struct repl *repl;
	const struct mailer *mailer;
};

/* An http_figures_fn: arg is a struct ctl_figures. */
void ctl_figures_read(void *arg, struct http_figures *f);

#endif
