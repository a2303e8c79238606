/* cohort drain and cohort resume: an admin takes nodes out of service
 * and puts them back, named by hostlists. The controller checks the role; a user asking is
 * refused there (exit 1), so that the rule lives in one place. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/err.h"
#include "lib/hostlist.h"
#include "lib/text.h"

enum { O_REASON = 0x100, O_NOW, O_FORCE, O_HELP = 'h' };

static const struct option drain_longopts[] = {
	{ "reason", required_argument, NULL, O_REASON },
	{ "now", no_argument, NULL, O_NOW },
	{ "force", no_argument, NULL, O_FORCE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct option resume_longopts[] = {
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
    "usage: cohort resume NODES...\n"
    "  undo a drain; a drain the node's health caused is cleared only\n"
    "  once the node reports healthy. NODES as for drain: every node\n"
    "  must exist and be resumable, or nothing changes. Admins only.\n";

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
