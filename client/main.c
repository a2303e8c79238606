/* cohort: the command-line client. main resolves the connection flags
 * given before the command and hands over to the command's function. */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/settings.h"
#include "client/slurm_query.h"

static int cmd_help(int, char **, const struct cconn_opts *);

static const struct command {
	const char *name;
	int (*fn)(int, char **, const struct cconn_opts *);
	const char *summary;
} commands[] = {
	{ "submit", cmd_submit, "submit a job: [OPTIONS] -- CMD [ARGS...] "
	    "or [OPTIONS] SCRIPT [ARGS...]" },
	{ "run", cmd_run, "submit, stream the output, exit with the job's "
	    "code: [OPTIONS] -- CMD" },
	{ "jobs", cmd_jobs, "list jobs [--all] [--user U] [--state S,...] "
	    "[--since T] [--until T] [--limit N] [--format COLS] [--start]" },
	{ "show", cmd_show, "show one job: JOB" },
	{ "cancel", cmd_cancel, "cancel jobs: JOB... (ids, ranges 12-20) or "
	    "[--user U] [--state S,S] [--name N]" },
	{ "hold", cmd_hold, "keep pending jobs from starting: JOB..." },
	{ "release", cmd_release, "let held jobs start: JOB..." },
	{ "requeue", cmd_requeue, "checkpoint, stop and requeue running "
	    "jobs: JOB..." },
	{ "update", cmd_update, "change a job: JOB [--time T] [--priority P] "
	    "[--nodes N] ..." },
	{ "wait", cmd_wait, "wait for a job to end: JOB [--timeout SEC]" },
	{ "logs", cmd_logs, "a task's output: JOB [--rank R] [--follow]" },
	{ "attach", cmd_attach, "join a running step's output, and its "
	    "input with -i (its terminal, for srun --pty): JOB.STEP" },
	{ "nodes", cmd_nodes, "list nodes: [NODES] [--state S] [--summary] "
	    "[--reasons]" },
	{ "node", cmd_node, "nodes and their GPUs: show NODES; forget a "
	    "DOWN node (admin): delete NODE" },
	{ "drain", cmd_drain, "stop placing work on nodes (admin): NODES... "
	    "--reason TEXT [--now] [--force]" },
	{ "resume", cmd_resume, "undo a drain (admin): NODES..." },
	{ "admin", cmd_admin, "the controller's replicas (admin): members "
	    "[list|add ID HOST:PORT|remove ID|transfer ID]" },
	{ "queues", cmd_queues, "the queue tree: quotas, usage, borrowing, "
	    "fair share [--json]" },
	{ "events", cmd_events, "the event log: [--job J] [--node N] "
	    "[--since T] [--follow]" },
	{ "usage", cmd_usage, "GPU-hours used and wasted, like sreport: "
	    "[--since T] [--until T] [--user U] [--queue Q] "
	    "[--by user|queue|state|day]" },
	{ "help", cmd_help, "a command's usage and options: help COMMAND "
	    "(the same as COMMAND --help)" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Slurm's commands, answered by this program when it runs under their
 * names (the links make install puts in $(pkglibexecdir)/slurm, which
 * cohort-local env and the agent put on PATH). Each takes its whole
 * command line, argv[0] its name, as Slurm's command does, and the
 * settings from the environment. */
static const struct command slurm_commands[] = {
	/* client/slurm_query.c */
	{ "squeue", cmd_squeue, "the queue, as Slurm's squeue" },
	{ "sacct", cmd_sacct, "jobs' accounting, as Slurm's sacct" },
	{ "sinfo", cmd_sinfo, "partitions and nodes, as Slurm's sinfo" },
	{ "scontrol", cmd_scontrol, "show and change jobs, as Slurm's "
	    "scontrol" },
	{ "scancel", cmd_scancel, "cancel jobs, as Slurm's scancel" },
	/* client/slurm_submit.c */
	{ "sbatch", cmd_sbatch, "submit a batch script, as Slurm's sbatch" },
	/* client/slurm_srun.c */
	{ "srun", cmd_srun, "run a job step in the job's allocation, as "
	    "Slurm's srun" },
	/* client/slurm_salloc.c */
	{ "salloc", cmd_salloc, "an interactive allocation, as Slurm's "
	    "salloc" },
	{ "sattach", cmd_sattach, "join a running job step, as Slurm's "
	    "sattach" },
	{ NULL, NULL, NULL },
};

enum { O_VERSION = 0x200, O_HELP = 'h' };

static const struct option main_longopts[] = {
	{ "version", no_argument, NULL, O_VERSION },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: cohort [--server HOST:PORT[,HOST:PORT...]] "
	    "[--cert FILE] "
	    "[--key FILE] [--ca FILE] COMMAND [ARGS...]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name,
		    commands[i].summary);
	fprintf(fp, "\nEvery command takes --json where it lists, --help, "
	    "and the connection flags.\nSettings come from flags, else "
	    "COHORT_SERVER, COHORT_CERT, COHORT_KEY,\nCOHORT_CA, else "
	    "~/.config/cohort/client.conf.\nCOHORT_SERVER may list a "
	    "replicated controller's replicas: h1:p,h2:p,h3:p.\n"
	    "Commands share one connection "
	    "per identity through cohort-mux, which\nexits after 60 s "
	    "unused (COHORT_MUX=DURATION to change, COHORT_MUX=no for one\n"
	    "per command).\nCOHORT_CRL=FILE checks the controller's "
	    "certificate against the CRLs in FILE.\nExit codes: 0 ok, "
	    "1 refused or failed, 2 usage error, 3 cannot reach or\n"
	    "authenticate to the "
	    "controller.\n'cohort help COMMAND' shows a command's options; "
	    "the manual is cohort(1).\n");
}

static const struct command *
command_find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* cohort help [COMMAND]: the list of commands, or what COMMAND --help
 * prints (the command itself prints it, so the two cannot differ). Runs
 * before any setting is resolved: help needs no controller. */
static int
cmd_help(int argc, char **argv, const struct cconn_opts *opts)
{
	const struct command *c;
	char *hargv[3];

	/* help, help --help and help help: the list of commands. */
	if (argc == 1 || (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0))) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 2) {
		output_error("help takes one command, not '%s' (try 'cohort "
		    "help %s')", argv[2], argv[1]);
		return EXIT_USAGE;
	}
	if ((c = command_find(argv[1])) == NULL) {
		output_error("unknown command '%s' (see cohort help for the "
		    "list of commands)", argv[1]);
		return EXIT_USAGE;
	}
	if (c->fn == cmd_help) {
		usage(stdout);
		return EXIT_OK;
	}
	hargv[0] = (char *)c->name;
	hargv[1] = (char *)"--help";
	hargv[2] = NULL;
	return c->fn(2, hargv, opts);
}

/* The Slurm command called name, if any. */
static const struct command *
slurm_find(const char *name)
{
	const struct command *c;

	for (c = slurm_commands; c->name != NULL; c++)
		if (strcmp(name, c->name) == 0)
			return c;
	return NULL;
}

/* Run as one of Slurm's commands: its settings from the environment and
 * the client's file only (its flags are Slurm's). */
static int
slurm_main(const struct command *c, int argc, char **argv)
{
	struct cconn_opts opts = { NULL, NULL, NULL, NULL, 0, NULL };
	struct settings s;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	settings_resolve(&s, NULL, NULL, NULL, NULL, NULL, NULL);
	opts.server = s.server;
	opts.cert = s.cert;
	opts.key = s.key;
	opts.ca = s.ca;
	if ((opts.crl = getenv("COHORT_CRL")) != NULL && opts.crl[0] == '\0')
		opts.crl = NULL;
	rc = c->fn(argc, argv, &opts);
	settings_clear(&s);
	return rc;
}

int
main(int argc, char **argv)
{
	struct output_conn_flags f = { NULL, NULL, NULL, NULL };
	struct cconn_opts opts = { NULL, NULL, NULL, NULL, 0, NULL };
	struct settings s;
	const struct command *c;
	const char *name;
	int ch, rc;

	name = argc > 0 ? strrchr(argv[0], '/') : NULL;
	name = name != NULL ? name + 1 : argc > 0 ? argv[0] : "cohort";
	if ((c = slurm_find(name)) != NULL)
		return slurm_main(c, argc, argv);
	/* A controller that goes away must give an error, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", main_longopts, NULL)) !=
	    -1) {
		if (ch == O_VERSION) {
			printf("cohort %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		}
		if (ch == O_HELP) {
			usage(stdout);
			return EXIT_OK;
		}
		if (output_conn_flag(&f, ch, optarg))
			continue;
		if (ch == ':')
			output_error("%s: missing argument (see cohort --help)",
			    argv[optind - 1]);
		else
			output_error("unknown option '%s' (see cohort --help)",
			    argv[optind - 1]);
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((c = command_find((name = argv[optind]))) == NULL) {
		output_error("unknown command '%s' (see cohort --help)", name);
		return EXIT_USAGE;
	}
	if (c->fn == cmd_help)
		return cmd_help(argc - optind, argv + optind, &opts);

	/* A setting missing here may still come from the command's own
	 * flags: the command resolves again and reports what is missing. */
	settings_resolve(&s, f.server, f.cert, f.key, f.ca, NULL, NULL);
	opts.server = s.server ? s.server : f.server;
	opts.cert = s.cert ? s.cert : f.cert;
	opts.key = s.key ? s.key : f.key;
	opts.ca = s.ca ? s.ca : f.ca;
	/* Revocation: optional, from the environment only. */
	if ((opts.crl = getenv("COHORT_CRL")) != NULL && opts.crl[0] == '\0')
		opts.crl = NULL;
	rc = c->fn(argc - optind, argv + optind, &opts);
	settings_clear(&s);
	return rc;
}
