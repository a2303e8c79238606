#include "config.h"

#include <string.h>

#include "daemon/controller/ctl_figures.h"
#include "daemon/controller/driver.h"
#include "daemon/controller/web/http.h"
#include "daemon/controller/mailer.h"
#include "daemon/controller/repl/repl.h"
#include "daemon/controller/rpc/rpc.h"
#include "daemon/controller/rpc/server.h"

_Static_assert(SERVER_NREFUSALS <= HTTP_MAX_REASONS &&
    SERVER_NCLOSURES <= HTTP_MAX_REASONS, "HTTP_MAX_REASONS too small");
_Static_assert(RPC_NTYPES <= HTTP_MAX_RPC_TYPES,
    "HTTP_MAX_RPC_TYPES too small");

void
ctl_figures_read(void *arg, struct http_figures *f)
{
	const struct ctl_figures *cf = arg;
	struct driver_stats ds;
	struct server_stats ss;
	size_t k;

	driver_stats(cf->driver, &ds);
	f->last_pass_us = ds.last_pass_us;
	f->pass = ds.pass;
	server_stats(cf->server, &ss);
	f->conns = server_conn_count(cf->server);
	f->handshaking = ss.handshaking;
	f->agents = ss.agents;
	f->people = ss.people;
	f->throttled = ss.throttled;
	f->yields = ss.yields;
	f->nrefusals = SERVER_NREFUSALS;
	for (k = 0; k < SERVER_NREFUSALS; k++) {
		f->refusal_name[k] = server_refusal_name(k);
		f->refused[k] = ss.refused[k];
	}
	f->nclosures = SERVER_NCLOSURES;
	for (k = 0; k < SERVER_NCLOSURES; k++) {
		f->closure_name[k] = server_closure_name(k);
		f->closed[k] = ss.closed[k];
	}
	if (cf->rpc != NULL) {
		f->nrpc = RPC_NTYPES;
		for (k = 0; k < RPC_NTYPES; k++) {
			f->rpc_name[k] = rpc_type_name(k);
			f->rpc_latency[k] = rpc_latency(cf->rpc, k);
		}
	}
	if (cf->repl != NULL) {
		struct repl_stats rs;

		repl_stats(cf->repl, &rs);
		f->has_repl = true;
		f->repl_entries = rs.entries;
		f->repl_pages = rs.pages;
		f->repl_wait_us = rs.wait_us;
		f->repl_snapshots_deferred = rs.snapshots_deferred;
		f->repl_raft_refused = rs.raft_refused;
		f->repl_term = rs.term;
		f->repl_commit_index = rs.commit_index;
	}
	if (cf->mailer != NULL) {
		struct mailer_stats ms;

		mailer_stats(cf->mailer, &ms);
		f->mail_sent = ms.sent;
		f->mail_failed = ms.failed;
		f->mail_dropped = ms.dropped;
	}
}
