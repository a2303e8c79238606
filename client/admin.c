/* cohort drain and cohort resume: an admin takes nodes out of service
 * and puts them back, named by hostlists; cohort admin members: the
 * replicas of a replicated controller. The controller checks the role; a user asking is
 * refused there (exit 1), so that the rule lives in one place. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/addrlist.h"
#include "lib/conf.h"
#include "lib/err.h"
#include "lib/frame.h"
#include "lib/wire.h"
#include "lib/hostlist.h"
#include "lib/text.h"

enum { O_REASON = 0x100, O_NOW, O_FORCE, O_EXEMPT, O_NO_EXEMPT,
    O_HELP = 'h' };

static const struct option drain_longopts[] = {
	{ "reason", required_argument, NULL, O_REASON },
	{ "now", no_argument, NULL, O_NOW },
	{ "force", no_argument, NULL, O_FORCE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct option resume_longopts[] = {
	{ "exempt", no_argument, NULL, O_EXEMPT },
	{ "no-exempt", no_argument, NULL, O_NO_EXEMPT },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char drain_usage[] =
    "usage: cohort drain NODES... --reason TEXT [--now] [--force]\n"
    "  place no new work on the nodes: each is DRAINING while jobs run\n"
    "  on it and DRAINED once empty; who, why and when are recorded.\n"
    "  NODES: names, hostlists (node[01-08,12]) or comma lists; if any\n"
    "  is unknown, or already drained for another reason, nothing changes.\n"
    "  Draining again with the same reason changes nothing.\n"
    "  --now    checkpoint the jobs on them now (their --checkpoint-signal)\n"
    "           and restart them elsewhere from that checkpoint\n"
    "  --force  replace the reason of nodes already drained (a drain for\n"
    "           a node's health still waits for a healthy report)\n"
    "  Admins only.\n";
static const char resume_usage[] =
    "usage: cohort resume NODES... [--exempt | --no-exempt]\n"
    "  undo a drain; a drain the node's health caused is cleared only\n"
    "  once the node reports healthy. NODES as for drain: every node\n"
    "  must exist and be resumable, or nothing changes. A resume also\n"
    "  clears the nodes' suspicion (a suspect: drain for jobs failing\n"
    "  there, and the score in cohort nodes --long). Admins only.\n"
    "  --exempt     never drain these nodes as suspects again (their\n"
    "               failures are still recorded and scored)\n"
    "  --no-exempt  end that exemption\n";

/* Check the node arguments here, for a usage error before connecting
 * (the controller expands them again). 0, or EXIT_USAGE after saying
 * why. */
static int
admin_nodes_check(const char *cmd, char *const *args, size_t n)
{
	char why[256], **names;
	size_t count;

	why[0] = '\0';
	if (hostlist_expand_args(args, n, HOSTLIST_NODES_MAX, &names, &count,
	    why, sizeof(why)) == -1) {
		if (errno == ENOMEM) {
			output_error("%s: out of memory", cmd);
			return EXIT_FAILED;
		}
		output_error("%s: %s (a node, a hostlist such as "
		    "node[01-08,12], or a comma list)", cmd, why[0] ? why :
		    "not a hostlist");
		return EXIT_USAGE;
	}
	hostlist_free(names, count);
	return 0;
}

int
cmd_drain(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DrainRequest dr = COHORT__V1__DRAIN_REQUEST__INIT;
	struct output_conn_flags conn;
	const char *reason = NULL;
	struct cerr err;
	bool now = false, force = false;
	int ch, rc;

	memset(&conn, 0, sizeof(conn));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", drain_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("drain", ch, argv);
		if (ch == O_HELP) {
			fputs(drain_usage, stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&conn, ch, optarg))
			continue;
		if (ch == O_REASON)
			reason = optarg;
		else if (ch == O_NOW)
			now = true;
		else if (ch == O_FORCE)
			force = true;
	}
	if (optind == argc) {
		output_error("drain: missing NODE (see cohort drain --help)");
		return EXIT_USAGE;
	}
	if (reason == NULL || reason[0] == '\0') {
		output_error("drain: --reason TEXT is required (see cohort "
		    "drain --help)");
		return EXIT_USAGE;
	}
	if (text_check_name("drain: --reason", reason, &err) == -1) {
		output_error("%s", err.text);
		return EXIT_USAGE;
	}
	if ((rc = admin_nodes_check("drain", argv + optind,
	    (size_t)(argc - optind))) != 0)
		return rc;
	dr.n_nodes = (size_t)(argc - optind);
	dr.nodes = argv + optind;
	dr.reason = (char *)reason;
	dr.has_now = now;
	dr.now = now;
	dr.has_force = force;
	dr.force = force;
	req.body_case = COHORT__V1__ENVELOPE__BODY_DRAIN;
	req.drain = &dr;
	return output_request("drain", opts, &conn, &req,
	    COHORT__V1__ENVELOPE__BODY_DRAIN_REPLY, NULL);
}

int
cmd_resume(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ResumeRequest rr = COHORT__V1__RESUME_REQUEST__INIT;
	struct output_conn_flags conn;
	int ch, rc;

	memset(&conn, 0, sizeof(conn));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", resume_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("resume", ch, argv);
		if (ch == O_HELP) {
			fputs(resume_usage, stdout);
			return EXIT_OK;
		}
		if (ch == O_EXEMPT || ch == O_NO_EXEMPT) {
			if (rr.has_suspect_exempt &&
			    rr.suspect_exempt != (ch == O_EXEMPT)) {
				output_error("resume: --exempt and "
				    "--no-exempt together");
				return EXIT_USAGE;
			}
			rr.has_suspect_exempt = 1;
			rr.suspect_exempt = ch == O_EXEMPT;
			continue;
		}
		(void)output_conn_flag(&conn, ch, optarg);
	}
	if (optind == argc) {
		output_error("resume: missing NODE (see cohort resume --help)");
		return EXIT_USAGE;
	}
	if ((rc = admin_nodes_check("resume", argv + optind,
	    (size_t)(argc - optind))) != 0)
		return rc;
	rr.n_nodes = (size_t)(argc - optind);
	rr.nodes = argv + optind;
	req.body_case = COHORT__V1__ENVELOPE__BODY_RESUME;
	req.resume = &rr;
	return output_request("resume", opts, &conn, &req,
	    COHORT__V1__ENVELOPE__BODY_RESUME_REPLY, NULL);
}

/* cohort admin members: the replicas of a replicated controller
 * (docs/REPLICATION.md), and changes to that set. */
enum { O_JSON = 0x200 };

static const struct option admin_longopts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char admin_usage[] =
    "usage: cohort admin members [list] [--json]\n"
    "  the replicas of a replicated controller: ID ADDRESS RAFT ROLE\n"
    "  (voter, standby or spare) LEADER, and the Raft term and commit\n"
    "  index. --json: one object {members, term, commit_index}.\n"
    "usage: cohort admin members add ID HOST:PORT [RAFT_HOST:PORT]\n"
    "  add a replica (cohortd --join does this itself): ID a positive\n"
    "  integer, HOST:PORT its [replication] address, RAFT_HOST:PORT its\n"
    "  raft_address (default: the same host, the next port)\n"
    "usage: cohort admin members remove ID\n"
    "  remove a replica from the configuration\n"
    "usage: cohort admin members transfer ID\n"
    "  hand the leadership to replica ID\n"
    "  Admins only. A controller that is not replicated says so (exit 1).\n";

/* ID: a positive integer, or a usage error. */
static int
admin_member_id(const char *op, const char *s, uint64_t *id)
{
	struct cerr why;

	cerr_clear(&why);
	if (conf_parse_uint(s, 1, UINT64_MAX, id, &why) == -1) {
		output_error("admin members %s: ID '%.64s' is not a positive "
		    "integer", op, s);
		return EXIT_USAGE;
	}
	return 0;
}

static int
admin_members_print(const Cohort__V1__MembersReply *mr, bool json)
{
	static const char *const head[5] = { "ID", "ADDRESS", "RAFT",
	    "ROLE", "LEADER" };
	const Cohort__V1__Member *m;
	struct output_table *t = NULL;
	json_t *arr = NULL, *doc;
	char id[24];
	const char *cells[5];
	size_t i;
	int rc;

	if ((json ? (arr = json_array()) == NULL :
	    (t = output_table_new(5, head)) == NULL))
		goto oom;
	for (i = 0; i < mr->n_members; i++) {
		m = mr->members[i];
		if (json) {
			if (json_array_append_new(arr, json_pack("{s:I, s:s, "
			    "s:o, s:s, s:b}", "id", (json_int_t)m->id, "address",
			    m->address, "raft_address", m->raft_address !=
			    NULL ? json_string(m->raft_address) : json_null(),
			    "role", m->role, "leader",
			    m->has_leader && m->leader)) == -1)
				goto oom;
			continue;
		}
		snprintf(id, sizeof(id), "%" PRIu64, m->id);
		cells[0] = id;
		cells[1] = m->address;
		cells[2] = m->raft_address;	/* NULL prints as "-" */
		cells[3] = m->role;
		cells[4] = m->has_leader && m->leader ? "yes" : "no";
		if (output_table_add(t, cells) == -1)
			goto oom;
	}
	if (json) {
		doc = json_pack("{s:o, s:o, s:o}", "members", arr, "term",
		    mr->has_term ? json_integer((json_int_t)mr->term) :
		    json_null(), "commit_index", mr->has_commit_index ?
		    json_integer((json_int_t)mr->commit_index) : json_null());
		return output_json_print(doc) == 0 ? EXIT_OK : EXIT_FAILED;
	}
	output_table_print(t, stdout);
	if (mr->has_term || mr->has_commit_index)
		printf("term %" PRIu64 ", commit index %" PRIu64 "\n",
		    mr->term, mr->commit_index);
	output_table_free(t);
	rc = fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
	return rc;
oom:
	json_decref(arr);
	output_table_free(t);
	output_error("admin members: out of memory");
	return EXIT_FAILED;
}

/* A leader that hands its leadership over closes every connection
 * (it restarts as a follower), maybe before its reply is out: ask the
 * replicas (a list request, which the new leader answers) until one
 * says ID leads. The reply, or NULL when none did within the time. */
#define ADMIN_TRANSFER_WAIT_MS 10000

static Cohort__V1__Envelope *
admin_transfer_check(const struct cconn_opts *opts,
    const struct output_conn_flags *conn, uint64_t id)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__MembersRequest mq = COHORT__V1__MEMBERS_REQUEST__INIT;
	int64_t end = output_mono_ms() + ADMIN_TRANSFER_WAIT_MS;
	struct settings s;
	struct cconn_opts o;
	struct cconn *c;
	struct cerr err;
	size_t i;

	if (output_settings(opts, conn, &s, &o) != EXIT_OK)
		return NULL;
	mq.op = "list";
	req.body_case = COHORT__V1__ENVELOPE__BODY_MEMBERS;
	req.members = &mq;
	do {
		cerr_clear(&err);
		rep = NULL;
		if ((c = cconn_open(&o, &err)) != NULL) {
			rep = cconn_call(c, &req, &err);
			cconn_close(c);
		}
		if (rep != NULL && rep->body_case ==
		    COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY)
			for (i = 0; i < rep->members_reply->n_members; i++)
				if (rep->members_reply->members[i]->id == id &&
				    rep->members_reply->members[i]->leader) {
					settings_clear(&s);
					return rep;
				}
		frame_free(rep);
		output_sleep_ms(200);
	} while (output_mono_ms() < end);
	settings_clear(&s);
	return NULL;
}

/* transfer: the reply, or the connection closing under it and then the
 * replicas naming ID the leader, is success. */
static int
admin_transfer(const char *prefix, const struct cconn_opts *opts,
    const struct output_conn_flags *conn, Cohort__V1__Envelope *req,
    uint64_t id, Cohort__V1__Envelope **rep)
{
	struct cconn *c;
	struct cerr err;
	int rc;

	*rep = NULL;
	if ((rc = output_connect(opts, conn, &c)) != EXIT_OK)
		return rc;
	cerr_clear(&err);
	*rep = cconn_call(c, req, &err);
	cconn_close(c);
	if (*rep != NULL && (*rep)->body_case ==
	    COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY)
		return EXIT_OK;
	if ((*rep == NULL && err.code == ERR_UNAVAILABLE) || (*rep != NULL &&
	    (*rep)->body_case == COHORT__V1__ENVELOPE__BODY_ERROR &&
	    wire_err_from_pb((*rep)->error->code) == ERR_UNAVAILABLE)) {
		Cohort__V1__Envelope *first = *rep;

		if ((*rep = admin_transfer_check(opts, conn, id)) != NULL) {
			frame_free(first);
			return EXIT_OK;
		}
		*rep = first;
	}
	if (*rep == NULL)
		return output_call_error(&err);
	rc = output_reply_error(prefix, *rep);
	frame_free(*rep);
	*rep = NULL;
	return rc;
}

static int
admin_members(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__MembersRequest mq = COHORT__V1__MEMBERS_REQUEST__INIT;
	struct output_conn_flags conn;
	struct addrlist_addr addr, raft;
	struct cerr why;
	const char *op = "list";
	char **args, prefix[64], rafttext[ADDRLIST_ADDR_TEXT];
	bool json = false;
	uint64_t id = 0;
	int ch, nargs, want, rc;

	memset(&conn, 0, sizeof(conn));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", admin_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error("admin", ch, argv);
		if (ch == O_HELP) {
			fputs(admin_usage, stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&conn, ch, optarg))
			continue;
		if (ch == O_JSON)
			json = true;
	}
	args = argv + optind;
	nargs = argc - optind;
	if (nargs > 0)
		op = args[0];
	if (strcmp(op, "list") == 0)
		want = 0;
	else if (strcmp(op, "add") == 0)
		want = 2;
	else if (strcmp(op, "remove") == 0 || strcmp(op, "transfer") == 0)
		want = 1;
	else {
		output_error("admin members: unknown operation '%.64s' (list, "
		    "add, remove or transfer; see cohort admin --help)", op);
		return EXIT_USAGE;
	}
	/* add: the Raft address may be left out. */
	if (nargs > 0 && nargs - 1 != want && !(want == 2 && nargs == 4)) {
		output_error("admin members %s: %s (see cohort admin --help)",
		    op, want == 0 ? "takes no arguments" : want == 1 ?
		    "takes one argument, ID" :
		    "takes ID HOST:PORT [RAFT_HOST:PORT]");
		return EXIT_USAGE;
	}
	if (want > 0 && (rc = admin_member_id(op, args[1], &id)) != 0)
		return rc;
	cerr_clear(&why);
	if (want == 2 && addrlist_addr_parse(args[2], &addr, &why) == -1) {
		output_error("admin members add: bad address: %s", why.text);
		return EXIT_USAGE;
	}
	if (want == 2 && nargs == 4) {
		if (addrlist_addr_parse(args[3], &raft, &why) == -1) {
			output_error("admin members add: bad Raft address: %s",
			    why.text);
			return EXIT_USAGE;
		}
		if (addrlist_addr_eq(&raft, &addr)) {
			output_error("admin members add: the Raft address must "
			    "differ from the address");
			return EXIT_USAGE;
		}
		addrlist_addr_format(&raft, rafttext, sizeof(rafttext));
	} else if (want == 2) {
		/* As cohortd's [replication] raft_address defaults. */
		if (addr.port == UINT16_MAX) {
			output_error("admin members add: port %u has no next "
			    "port for the Raft address; give RAFT_HOST:PORT",
			    addr.port);
			return EXIT_USAGE;
		}
		raft = addr;
		raft.port++;
		addrlist_addr_format(&raft, rafttext, sizeof(rafttext));
	}
	mq.op = (char *)op;
	if (want > 0) {
		mq.has_member_id = true;
		mq.member_id = id;
	}
	if (want == 2) {
		mq.address = args[2];
		mq.raft_address = rafttext;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_MEMBERS;
	req.members = &mq;
	snprintf(prefix, sizeof(prefix), "admin members %s", op);
	if (strcmp(op, "transfer") == 0)
		rc = admin_transfer(prefix, opts, &conn, &req, id, &rep);
	else
		rc = output_request(prefix, opts, &conn, &req,
		    COHORT__V1__ENVELOPE__BODY_MEMBERS_REPLY, &rep);
	if (rc != EXIT_OK)
		return rc;
	if (!json && want > 0)
		printf("%s member %" PRIu64 "%s%s: done\n", op, id,
		    want == 2 ? " at " : "", want == 2 ? args[2] : "");
	rc = admin_members_print(rep->members_reply, json);
	frame_free(rep);
	return rc;
}

int
cmd_admin(int argc, char **argv, const struct cconn_opts *opts)
{
	if (argc < 2) {
		output_error("admin: missing subcommand (see cohort admin "
		    "--help)");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(admin_usage, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "members") == 0)
		return admin_members(argc - 1, argv + 1, opts);
	output_error("admin: unknown subcommand '%.64s' (see cohort admin "
	    "--help)", argv[1]);
	return EXIT_USAGE;
}
