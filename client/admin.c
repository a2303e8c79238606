/* cohort drain and cohort resume: an admin takes nodes out of service
 * and puts them back. The controller checks the role; a user asking is
 * refused there (exit 1), so that the rule lives in one place. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/err.h"
#include "lib/text.h"

enum { O_REASON = 0x100, O_NOW, O_HELP = 'h' };

static const struct option drain_longopts[] = {
	{ "reason", required_argument, NULL, O_REASON },
	{ "now", no_argument, NULL, O_NOW },
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
    "usage: cohort drain NODE... --reason TEXT [--now]\n"
    "  place no new work on the nodes: each is DRAINING while jobs run\n"
    "  on it and DRAINED once empty; who, why and when are recorded.\n"
    "  --now  checkpoint the jobs on them now (their --checkpoint-signal)\n"
    "         and restart them elsewhere from that checkpoint\n"
    "  Admins only.\n";
static const char resume_usage[] =
    "usage: cohort resume NODE...\n"
    "  undo a drain; a drain the node's health caused is cleared only\n"
    "  once the node reports healthy. Admins only.\n";

int
cmd_drain(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DrainRequest dr = COHORT__V1__DRAIN_REQUEST__INIT;
	struct output_conn_flags conn;
	const char *reason = NULL;
	struct cerr err;
	bool now = false;
	int ch;

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
	dr.n_nodes = (size_t)(argc - optind);
	dr.nodes = argv + optind;
	dr.reason = (char *)reason;
	dr.has_now = now;
	dr.now = now;
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
	int ch;

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
	rr.n_nodes = (size_t)(argc - optind);
	rr.nodes = argv + optind;
	req.body_case = COHORT__V1__ENVELOPE__BODY_RESUME;
	req.resume = &rr;
	return output_request("resume", opts, &conn, &req,
	    COHORT__V1__ENVELOPE__BODY_RESUME_REPLY, NULL);
}
