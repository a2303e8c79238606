/* sbatch: Slurm's submit command, answered by cohort under its name
 * (client/main.c). Its command line and a script's #SBATCH lines are
 * read by one table (script_sbatch.h), the spec is built as cohort
 * submit builds it with Slurm's defaults (submit.h), and what it prints
 * is what sbatch prints, since tools parse it. */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/jobref.h"
#include "client/output.h"
#include "client/script_sbatch.h"
#include "client/submit.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

/* Polling for --wait starts quick, for short jobs, and backs off. */
#define SBATCH_WAIT_FIRST_MS 200
#define SBATCH_WAIT_MAX_MS 2000

static const char sbatch_usage[] =
    "usage: sbatch [OPTIONS] SCRIPT [ARGS...]\n"
    "       sbatch [OPTIONS] --wrap=CMD\n"
    "       sbatch [OPTIONS] < SCRIPT\n"
    "\n"
    "Slurm's sbatch, answered by Cohort: the options and #SBATCH lines\n"
    "mean what they mean to Slurm where Cohort can honour them, and are\n"
    "refused, each with its reason, where it cannot (see cohort(1),\n"
    "SBATCH). Defaults are Slurm's: one node, one task, no GPU, no rerun\n"
    "after a failure (--requeue for up to 3), output to slurm-%j.out.\n"
    "The script runs once, on the first node of the allocation; srun in\n"
    "it starts job steps on the allocation's nodes.\n"
    "  --parsable      print the job id alone\n"
    "  -Q, --quiet     print nothing on success\n"
    "  -W, --wait      wait for the job to end; exit with its exit code\n"
    "  --wrap=CMD      run CMD in a #!/bin/sh script\n";

/* What sbatch's own options asked. */
struct sbatch_self {
	bool parsable, quiet, wait, help, version, no_shell;
	const char *wrap;	/* borrowed from the options */
};

static void
sbatch_self(const struct script_sbatch_opt *v, size_t n,
    struct sbatch_self *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		if (v[i].kind != SBATCH_SELF)
			continue;
		if (strcmp(v[i].name, "parsable") == 0)
			s->parsable = true;
		else if (strcmp(v[i].name, "quiet") == 0)
			s->quiet = true;
		else if (strcmp(v[i].name, "wait") == 0)
			s->wait = true;
		else if (strcmp(v[i].name, "wrap") == 0)
			s->wrap = v[i].value;
		else if (strcmp(v[i].name, "help") == 0 ||
		    strcmp(v[i].name, "usage") == 0)
			s->help = true;
		else if (strcmp(v[i].name, "version") == 0)
			s->version = true;
		else if (strcmp(v[i].name, "no-shell") == 0)
			s->no_shell = true;
		/* --verbose: sbatch's own chatter; this one has none. */
	}
}

/* The script: --wrap's, the file argv[rest], or standard input, as
 * sbatch takes them. 0, or an exit code after printing why. */
static int
sbatch_script(const struct sbatch_self *s, int argc, char **argv,
    size_t rest, struct job_spec *spec, const char **file)
{
	if (s->wrap != NULL) {
		if (rest < (size_t)argc) {
			output_error("sbatch: --wrap: a script and its "
			    "arguments cannot be given with --wrap");
			return EXIT_USAGE;
		}
		/* The script sbatch makes of it, named "wrap" as the
		 * job is. */
		if (asprintf(&spec->script, "#!/bin/sh\n# This script was "
		    "created by sbatch --wrap.\n\n%s\n", s->wrap) == -1 ||
		    (spec->script_name = strdup("wrap")) == NULL) {
			output_error("sbatch: out of memory");
			return EXIT_FAILED;
		}
		spec->script_len = strlen(spec->script);
		*file = "--wrap";
		return 0;
	}
	if (rest >= (size_t)argc && isatty(STDIN_FILENO)) {
		output_error("sbatch: no script: give a file, --wrap=CMD, or "
		    "the script on standard input");
		return EXIT_USAGE;
	}
	*file = rest < (size_t)argc ? argv[rest] : "stdin";
	if (submit_read_script("sbatch", rest < (size_t)argc ? argv[rest] :
	    NULL, spec) == -1)
		return EXIT_USAGE;
	if (spec->script_len < 2 || memcmp(spec->script, "#!", 2) != 0) {
		output_error("sbatch: %s: this does not look like a batch "
		    "script: the first line must start with #! and the "
		    "interpreter's path", *file);
		return EXIT_USAGE;
	}
	return 0;
}

/* One GetJob: 1 with *code once job id has ended, 0 while it has not,
 * or an exit code + 2 after printing why. */
static int
sbatch_poll(struct cconn *c, uint64_t id, int *code)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct job *j;
	struct cerr err;
	int ret = 0;

	gj.job_id = id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	cerr_clear(&err);
	if ((rep = cconn_call(c, &req, &err)) == NULL)
		return output_call_error(&err) + 2;
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY) {
		ret = output_reply_error("sbatch", rep) + 2;
		frame_free(rep);
		return ret;
	}
	if ((j = wire_job_from_pb(rep->get_job_reply->job, &err)) == NULL) {
		output_error("sbatch: the controller sent a job we cannot "
		    "read: %s", err.text);
		frame_free(rep);
		return EXIT_FAILED + 2;
	}
	if (job_state_is_final(j->state)) {
		/* As sbatch --wait: the job's exit code, 1 when it ended
		 * without one of its own (a signal, a cancel, a limit). */
		if (j->state == JOB_COMPLETED)
			*code = 0;
		else if (j->has_exit && j->exit_code > 0 &&
		    j->exit_code < 128)
			*code = j->exit_code;
		else
			*code = 1;
		ret = 1;
	}
	job_free(j);
	frame_free(rep);
	return ret;
}

/* --wait: until job id (every task of an array) has ended; the highest
 * exit code, as sbatch's. */
static int
sbatch_wait(const struct cconn_opts *opts, uint64_t id, bool array)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	struct jobref_ids ids = { 0 };
	struct cconn *c;
	struct cerr err;
	char ref[32];
	int64_t step;
	int rc, r, code = 0, worst = 0;
	size_t i;

	if ((rc = output_connect(opts, &cf, &c)) != EXIT_OK)
		return rc;
	snprintf(ref, sizeof(ref), "%" PRIu64, id);
	cerr_clear(&err);
	if (array && jobref_resolve(c, ref, &ids, &err) == -1) {
		output_error("sbatch: %s", err.text);
		cconn_close(c);
		return EXIT_FAILED;
	}
	for (i = 0; i < (array ? ids.n : 1); i++) {
		step = SBATCH_WAIT_FIRST_MS;
		while ((r = sbatch_poll(c, array ? ids.ids[i] : id,
		    &code)) == 0) {
			output_sleep_ms(step);
			step = step * 3 / 2 < SBATCH_WAIT_MAX_MS ?
			    step * 3 / 2 : SBATCH_WAIT_MAX_MS;
		}
		if (r >= 2) {
			worst = r - 2;
			break;
		}
		if (code > worst)
			worst = code;
	}
	jobref_ids_clear(&ids);
	cconn_close(c);
	return worst;
}

int
cmd_sbatch(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	struct script_sbatch_opt *cl = NULL;
	struct sbatch_self self;
	struct job_spec spec;
	struct cerr err;
	const char *file = NULL;
	size_t ncl = 0, rest = 0;
	uint64_t id;
	bool waited = false;
	int rc;

	job_spec_init(&spec);
	cerr_clear(&err);
	if (script_sbatch_parse(argv + 1, argc > 0 ? (size_t)argc - 1 : 0,
	    &rest, &cl, &ncl, &err) == -1) {
		output_error("sbatch: %s", err.text);
		return EXIT_FAILED;
	}
	rest++;		/* an index into argv */
	sbatch_self(cl, ncl, &self);
	if (self.no_shell) {
		output_error("sbatch: --no-shell: not an sbatch option (it is "
		    "salloc's)");
		rc = EXIT_USAGE;
		goto out;
	}
	if (self.help || self.version) {
		if (self.help)
			fputs(sbatch_usage, stdout);
		else
			printf("slurm 0.0.0 (cohort %s)\n", PACKAGE_VERSION);
		rc = EXIT_OK;
		goto out;
	}
	if ((rc = sbatch_script(&self, argc, argv, rest, &spec, &file)) != 0 ||
	    (rc = submit_prepare_sbatch(&spec, file, cl, ncl, argv +
	    (rest < (size_t)argc ? rest + 1 : rest), rest < (size_t)argc ?
	    (size_t)argc - rest - 1 : 0)) != 0)
		goto out;
	/* As Slurm's: the script runs once, on the first node, and its
	 * srun starts the steps in the allocation. */
	spec.batch = true;
	if ((rc = submit_send(&spec, opts, &cf, &id)) != EXIT_OK)
		goto out;
	if (self.parsable)
		printf("%" PRIu64 "\n", id);
	else if (!self.quiet)
		printf("Submitted batch job %" PRIu64 "\n", id);
	if (fflush(stdout) == EOF)
		rc = EXIT_FAILED;
	else if (self.wait) {
		rc = sbatch_wait(opts, id, spec.array != NULL);
		waited = true;
	}
out:
	script_sbatch_free(cl, ncl);
	job_spec_clear(&spec);
	/* sbatch's failures all exit 1; --wait's code is the job's. */
	return rc == EXIT_OK || waited ? rc : EXIT_FAILED;
}
