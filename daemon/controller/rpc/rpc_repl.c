/* The RPC edge of replication: what a follower answers (ERROR_NOT_LEADER
 * with the leader's address), and MembersRequest (cohort admin members,
 * cohortd --join). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conf.h"
#include "lib/log.h"
#include "lib/wire.h"
#include "daemon/controller/repl/repl.h"
#include "daemon/controller/rpc/rpc_int.h"
#include "daemon/controller/rpc/server.h"
#include "daemon/controller/store/store.h"

/* A follower (or a leader still applying the old term's log) serves
 * nobody: the error names the leader when raft knows it, and the
 * connection closes, so clients go there. Sent at once: a follower has
 * no transaction for it to wait on. */
void
rpc_not_leader(struct rpc *rpc, struct conn *c, uint64_t req_id)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;
	char leader[REPL_ADDR_MAX], text[REPL_ADDR_MAX + 64];
	bool known;

	known = repl_leader_rpc(rpc->repl, leader, sizeof(leader)) != NULL;
	if (known)
		snprintf(text, sizeof(text), "this controller is a follower; "
		    "the leader is %s", leader);
	else
		snprintf(text, sizeof(text), "this controller is not the "
		    "leader and knows of none (an election is under way)");
	wire_error(&env, &e, req_id, ERR_NOT_LEADER, text);
	if (known)
		e.leader = leader;
	server_conn_send(c, &env);
	server_conn_close(c);
}

struct members_wait {
	struct rpc *rpc;
	uint64_t conn_id;
	uint64_t req_id;
	enum repl_op op;
	uint64_t id;
};

static void
members_list(struct rpc *rpc, struct conn *c, uint64_t req_id)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__MembersReply mr = COHORT__V1__MEMBERS_REPLY__INIT;
	Cohort__V1__Member *pm, **pp;
	struct repl_member *m;
	size_t i, n;

	if (repl_members(rpc->repl, &m, &n) == -1) {
		rpc_error(rpc, c, req_id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	pm = calloc(n + 1, sizeof(*pm));
	pp = calloc(n + 1, sizeof(*pp));
	if (pm == NULL || pp == NULL) {
		free(pm);
		free(pp);
		free(m);
		rpc_error(rpc, c, req_id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	for (i = 0; i < n; i++) {
		cohort__v1__member__init(&pm[i]);
		pm[i].id = m[i].id;
		pm[i].address = m[i].rpc;
		pm[i].raft_address = m[i].raft;
		pm[i].role = (char *)repl_role_name(m[i].role);
		pm[i].has_leader = true;
		pm[i].leader = m[i].leader;
		pp[i] = &pm[i];
	}
	mr.n_members = n;
	mr.members = pp;
	mr.has_term = true;
	mr.term = repl_term(rpc->repl);
	mr.has_commit_index = true;
	mr.commit_index = repl_commit_index(rpc->repl);
	env.id = req_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY;
	env.members_reply = &mr;
	rpc_send(rpc, c, &env, false);
	free(pp);
	free(pm);
	free(m);
}

static void
members_done(void *arg, const struct cerr *err)
{
	struct members_wait *w = arg;
	struct conn *c;

	if (err->code != ERR_NONE) {
		log_warnx("replication: membership change for replica %" PRIu64
		    ": %s", w->id, err->text);
		rpc_error_to(w->rpc, w->conn_id, w->req_id, err->code,
		    err->text);
	} else if ((c = server_conn(w->rpc->srv, w->conn_id)) != NULL)
		members_list(w->rpc, c, w->req_id);
	free(w);
}

static int
members_check_addr(const char *what, const char *a, struct cerr *err)
{
	char host[CONF_HOST_MAX + 1];
	uint16_t port;
	struct cerr why;

	if (a == NULL || *a == '\0')
		return cerr_set(err, ERR_INVALID, "add needs the replica's %s",
		    what);
	if (strchr(a, '/') != NULL ||
	    conf_parse_hostport(a, host, sizeof(host), &port, false,
	    &why) == -1)
		return cerr_set(err, ERR_INVALID, "%s '%s' is not HOST:PORT",
		    what, a);
	return 0;
}

void
rpc_members(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__MembersRequest *mr = req->members;
	const struct peer *p = server_conn_peer(c);
	const char *op = mr->op != NULL && *mr->op != '\0' ? mr->op : "list";
	struct members_wait *w;
	struct cerr err;

	cerr_clear(&err);
	if (rpc->repl == NULL) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "this controller is "
		    "not replicated (no [replication] section)", false);
		return;
	}
	if (strcmp(op, "list") == 0) {
		members_list(rpc, c, req->id);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		rpc_error(rpc, c, req->id, ERR_INTERNAL, "out of memory", false);
		return;
	}
	w->rpc = rpc;
	w->conn_id = server_conn_id(c);
	w->req_id = req->id;
	w->id = mr->has_member_id ? mr->member_id : 0;
	if (strcmp(op, "add") == 0)
		w->op = REPL_ADD;
	else if (strcmp(op, "remove") == 0)
		w->op = REPL_REMOVE;
	else if (strcmp(op, "transfer") == 0)
		w->op = REPL_TRANSFER;
	else {
		cerr_set(&err, ERR_INVALID, "unknown members operation '%.40s' "
		    "(list, add, remove or transfer)", op);
		goto refuse;
	}
	if (w->id == 0) {
		cerr_set(&err, ERR_INVALID, "%s needs a replica id", op);
		goto refuse;
	}
	if (w->op == REPL_ADD &&
	    (members_check_addr("address", mr->address, &err) == -1 ||
	    members_check_addr("raft_address", mr->raft_address, &err) == -1))
		goto refuse;
	log_info("replication: %s (%s) asks to %s replica %" PRIu64 "%s%s",
	    p->name, role_name(p->role), op, w->id,
	    w->op == REPL_ADD ? " at " : "",
	    w->op == REPL_ADD ? mr->address : "");
	if (repl_change(rpc->repl, w->op, w->id, mr->address, mr->raft_address,
	    members_done, w, &err) == 0)
		return;
refuse:
	rpc_error(rpc, c, req->id, err.code, err.text, false);
	free(w);
}

/* Pieces of at most this much: well inside any client's frame limit. */
#define RPC_BACKUP_PIECE (512u * 1024)

void
rpc_backup_free(struct rpc *rpc)
{
	store_image_free(rpc->backup_img);
	rpc->backup_img = NULL;
	rpc->backup_len = 0;
}

/* cohortd --backup FILE of a replica: the leader's database, serialized
 * once (a consistent image as of one commit) and fetched in pieces. */
void
rpc_backup(struct rpc *rpc, struct conn *c, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__BackupRequest *br = req->backup;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__BackupReply rep = COHORT__V1__BACKUP_REPLY__INIT;
	uint64_t id = br->has_image_id ? br->image_id : 0;
	uint64_t off = br->has_offset ? br->offset : 0;
	struct cerr err;
	size_t n;

	if (id == 0) {
		rpc_backup_free(rpc);
		if (store_image(rpc->store, &rpc->backup_img,
		    &rpc->backup_len, &err) == -1) {
			rpc_error(rpc, c, req->id, ERR_INTERNAL, err.text,
			    false);
			return;
		}
		rpc->backup_id++;
		log_info("backup: %s takes an image of the database (%zu "
		    "bytes)", server_conn_peer(c)->name, rpc->backup_len);
	} else if (id != rpc->backup_id || rpc->backup_img == NULL) {
		rpc_error(rpc, c, req->id, ERR_CONFLICT, "that backup image "
		    "is gone (another backup started); start again", false);
		return;
	}
	if (off > rpc->backup_len) {
		rpc_error(rpc, c, req->id, ERR_INVALID, "offset past the end "
		    "of the image", false);
		return;
	}
	n = rpc->backup_len - off < RPC_BACKUP_PIECE ?
	    rpc->backup_len - off : RPC_BACKUP_PIECE;
	rep.image_id = rpc->backup_id;
	rep.size = rpc->backup_len;
	rep.offset = off;
	rep.data.data = rpc->backup_img + off;
	rep.data.len = n;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_BACKUP_REPLY;
	env.backup_reply = &rep;
	rpc_send(rpc, c, &env, false);	/* packed (copied) here */
	if (off + n == rpc->backup_len)
		rpc_backup_free(rpc);
}
