/* salloc: Slurm's interactive allocation, answered by cohort under its
 * name (client/main.c). The options are sbatch's (script_sbatch.h,
 * salloc_args.h); the job is a batch job marked interactive whose own
 * task only holds the nodes. Once it runs, the command (or the user's
 * shell) runs here with the allocation's SLURM_* variables and the job's
 * step credential in a private file, so that srun there starts steps in
 * it. While it runs, salloc keeps the job alive; when it exits, the job
 * ends with its code; when the job ends under it, it is hung up. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/salloc.h"
#include "client/salloc_args.h"
#include "client/script_sbatch.h"
#include "client/submit.h"
#include "lib/frame.h"
#include "lib/hostlist.h"
#include "lib/job.h"
#include "lib/wire.h"

/* Waiting for the allocation: quick first, backing off. */
#define SALLOC_WAIT_FIRST_MS 200
#define SALLOC_WAIT_MAX_MS 2000
/* While the shell runs: its exit is looked for every tick, the job's
 * state asked every SALLOC_STATE_MS, a keepalive sent every
 * SALLOC_KEEPALIVE_MS (well within [controller] interactive_grace). */
#define SALLOC_TICK_MS 100
#define SALLOC_STATE_MS 2000
#define SALLOC_KEEPALIVE_MS 30000
/* A hung-up shell still there after this long is killed. */
#define SALLOC_HUP_WAIT_MS 10000
#define SALLOC_CRED_MAX 64

extern char **environ;

static const char salloc_usage[] =
    "usage: salloc [OPTIONS] [COMMAND [ARGS...]]\n"
    "\n"
    "Slurm's salloc, answered by Cohort: asks for an allocation with\n"
    "sbatch's options (see sbatch --help and cohort(1), SALLOC), waits for\n"
    "it, then runs COMMAND, or your $SHELL, here, with SLURM_JOB_ID and the\n"
    "allocation's variables set: srun in it starts job steps on the\n"
    "allocation's nodes. When it exits, the allocation ends (COMPLETED\n"
    "for 0, else FAILED with its code) and salloc exits with its code.\n"
    "  --no-shell      allocate and exit: the job runs until its time\n"
    "                  limit or scancel; srun --jobid J starts steps in it\n"
    "  -Q, --quiet     print nothing but errors\n";

/* Signals that reached salloc while the shell runs. */
static volatile sig_atomic_t salloc_sig;

static void
salloc_on_signal(int sig)
{
	salloc_sig = sig;
}

static void
salloc_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
salloc_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("salloc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
salloc_call(struct cconn *c, uint64_t job_id, enum salloc_op op,
    int exit_code, enum job_state *state, uint8_t *cred, size_t credmax,
    size_t *credlen, struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__AllocRequest ar = COHORT__V1__ALLOC_REQUEST__INIT;
	const Cohort__V1__AllocReply *r;
	int rc = 0;

	ar.job_id = job_id;
	ar.op = (Cohort__V1__AllocRequest__Op)op;
	if (op == SALLOC_RELEASE) {
		ar.has_exit_code = 1;
		ar.exit_code = exit_code;
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_ALLOC;
	req.alloc = &ar;
	cerr_clear(err);
	if ((rep = cconn_call(c, &req, err)) == NULL)
		return -1;
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR)
		rc = cerr_set(err, wire_err_from_pb(rep->error->code), "%s",
		    rep->error->text);
	else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_ALLOC_REPLY)
		rc = cerr_set(err, ERR_PROTOCOL, "unexpected reply");
	else {
		r = rep->alloc_reply;
		if (wire_state_from_pb(r->state, state) == -1)
			rc = cerr_set(err, ERR_PROTOCOL, "unknown job state");
		else if (op == SALLOC_CRED) {
			if (!r->has_cred || r->cred.len == 0 ||
			    r->cred.len > credmax)
				rc = cerr_set(err, ERR_PROTOCOL, "no "
				    "credential in the reply");
			else {
				memcpy(cred, r->cred.data, r->cred.len);
				*credlen = r->cred.len;
			}
		}
	}
	frame_free(rep);
	return rc;
}

/* The job as the controller has it: the job (job_free it), or NULL
 * after printing why. */
static struct job *
salloc_get(struct cconn *c, uint64_t id)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetJobRequest gj = COHORT__V1__GET_JOB_REQUEST__INIT;
	struct job *j = NULL;
	struct cerr err;

	gj.job_id = id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_JOB;
	req.get_job = &gj;
	cerr_clear(&err);
	if ((rep = cconn_call(c, &req, &err)) == NULL) {
		salloc_msg("error: %s", err.text);
		return NULL;
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_GET_JOB_REPLY)
		(void)output_reply_error("salloc", rep);
	else if ((j = wire_job_from_pb(rep->get_job_reply->job, &err)) == NULL)
		salloc_msg("error: the controller sent a job we cannot read: "
		    "%s", err.text);
	frame_free(rep);
	return j;
}

/* The job's nodes in rank order, as a hostlist (free it), or NULL. */
static char *
salloc_nodes(const struct job *j)
{
	char **names;
	char *list;
	size_t i;

	if (j->nplace == 0 || (names = calloc(j->nplace,
	    sizeof(*names))) == NULL)
		return NULL;
	for (i = 0; i < j->nplace; i++)
		if (j->place[i].node_rank < j->nplace)
			names[j->place[i].node_rank] = (char *)j->place[i].node;
	for (i = 0; i < j->nplace; i++)
		if (names[i] == NULL) {
			free(names);
			return NULL;
		}
	list = hostlist_compress_ordered(names, j->nplace);
	free(names);
	return list;
}

/* Wait until job id runs: the job, or NULL once it ended (or cannot be
 * followed) after saying so. A SIGINT meanwhile gives up the request. */
static struct job *
salloc_wait(struct cconn *c, uint64_t id, bool quiet)
{
	struct job *j;
	enum job_state st;
	struct cerr err;
	int64_t step = SALLOC_WAIT_FIRST_MS;
	bool told = false;

	for (;;) {
		if (salloc_sig == SIGINT || salloc_sig == SIGTERM ||
		    salloc_sig == SIGHUP) {
			(void)salloc_call(c, id, SALLOC_RELEASE, 1, &st, NULL,
			    0, NULL, &err);
			salloc_msg("Job allocation %" PRIu64 " has been "
			    "revoked.", id);
			return NULL;
		}
		if ((j = salloc_get(c, id)) == NULL)
			return NULL;
		if (j->state == JOB_RUNNING && j->nplace > 0)
			return j;
		if (job_state_is_final(j->state)) {
			salloc_msg("Job allocation %" PRIu64 " has been "
			    "revoked.", id);
			job_free(j);
			return NULL;
		}
		job_free(j);
		if (!told && !quiet)
			salloc_msg("job %" PRIu64 " queued and waiting for "
			    "resources", id);
		told = true;
		output_sleep_ms(step);
		step = step * 3 / 2 < SALLOC_WAIT_MAX_MS ? step * 3 / 2 :
		    SALLOC_WAIT_MAX_MS;
	}
}

/* The credential into a private file: its path (free it), or NULL after
 * saying why. */
static char *
salloc_cred_file(const uint8_t *cred, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char *path, hex[SALLOC_CRED_MAX * 2 + 2];
	size_t i;
	int fd;

	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", cred[i]);
	hex[2 * len] = '\n';
	if (asprintf(&path, "%s/cohort-salloc-XXXXXX", tmp != NULL &&
	    tmp[0] == '/' ? tmp : "/tmp") == -1)
		return NULL;
	/* mkstemp makes it 0600, ours alone. */
	if ((fd = mkstemp(path)) == -1) {
		salloc_msg("error: cannot make the credential file %s: %s",
		    path, strerror(errno));
		free(path);
		return NULL;
	}
	if (fchmod(fd, 0600) == -1 || write(fd, hex, 2 * len + 1) !=
	    (ssize_t)(2 * len + 1) || close(fd) == -1) {
		salloc_msg("error: cannot write the credential file %s: %s",
		    path, strerror(errno));
		close(fd);
		unlink(path);
		free(path);
		return NULL;
	}
	explicit_bzero(hex, sizeof(hex));
	return path;
}

/* The directory of Slurm's command links: the one salloc ran from
 * (argv0 with a slash, else the first salloc on PATH), else the
 * installed one. Free it. */
static char *
salloc_slurm_dir(const char *argv0)
{
	const char *path = getenv("PATH"), *p, *e;
	char cand[PATH_MAX], *slash;

	if (strchr(argv0, '/') != NULL) {
		snprintf(cand, sizeof(cand), "%s", argv0);
		slash = strrchr(cand, '/');
		*slash = '\0';
		return realpath(cand[0] != '\0' ? cand : "/", NULL);
	}
	for (p = path; p != NULL && *p != '\0'; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)(e - p), p,
		    argv0) >= (int)sizeof(cand) || access(cand, X_OK) != 0)
			continue;
		cand[e - p] = '\0';
		return realpath(cand[0] != '\0' ? cand : ".", NULL);
	}
	return strdup(SLURMBINDIR);
}

/* The command's child side: its own process group, the terminal's
 * foreground when salloc has it, the signals as they were. */
static void
salloc_child(char **cmd, char **env, bool tty)
{
	sigset_t none;

	setpgid(0, 0);
	if (tty)
		(void)tcsetpgrp(STDIN_FILENO, getpgrp());
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	environ = env;
	execvp(cmd[0], cmd);
	fprintf(stderr, "salloc: error: %s: %s\n", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* One request on the connection, made again when it was lost. -1 when
 * it failed (err). */
static int
salloc_ask(const struct cconn_opts *opts, struct cconn **c, uint64_t id,
    enum salloc_op op, int code, enum job_state *st, struct cerr *err)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };

	if (*c == NULL && output_connect(opts, &cf, c) != EXIT_OK) {
		*c = NULL;
		return cerr_set(err, ERR_UNAVAILABLE, "no connection");
	}
	if (salloc_call(*c, id, op, code, st, NULL, 0, NULL, err) == -1) {
		if (err->code == ERR_UNAVAILABLE || err->code == ERR_PROTOCOL) {
			cconn_close(*c);
			*c = NULL;
		}
		return -1;
	}
	return 0;
}

/* Run cmd until it exits or the job ends under it. The exit code. */
static int
salloc_run(const struct cconn_opts *opts, struct cconn **c, uint64_t id,
    char **cmd, char **env)
{
	struct sigaction sa;
	enum job_state st;
	struct cerr err;
	int64_t since_state = 0, since_keep = 0, hup_ms = -1;
	bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) ==
	    getpgrp();
	bool revoked = false;
	pid_t pid, w;
	int status, code;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = salloc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The shell gets the terminal's signals, not salloc. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	fflush(NULL);
	if ((pid = fork()) == -1) {
		salloc_msg("error: cannot start %s: %s", cmd[0],
		    strerror(errno));
		return EXIT_FAILED;
	}
	if (pid == 0)
		salloc_child(cmd, env, tty);
	setpgid(pid, pid);
	if (tty)
		(void)tcsetpgrp(STDIN_FILENO, pid);
	for (;;) {
		if ((w = waitpid(pid, &status, WNOHANG)) == pid)
			break;
		if (w == -1 && errno != EINTR) {
			status = 1 << 8;
			break;
		}
		if (salloc_sig == SIGTERM || salloc_sig == SIGHUP) {
			kill(-pid, salloc_sig);
			salloc_sig = 0;
		}
		output_sleep_ms(SALLOC_TICK_MS);
		since_state += SALLOC_TICK_MS;
		since_keep += SALLOC_TICK_MS;
		if (hup_ms >= 0) {
			if ((hup_ms += SALLOC_TICK_MS) >= SALLOC_HUP_WAIT_MS) {
				kill(-pid, SIGKILL);
				hup_ms = -1;
			}
			continue;
		}
		if (revoked || since_state < SALLOC_STATE_MS)
			continue;
		since_state = 0;
		if (salloc_ask(opts, c, id, since_keep >= SALLOC_KEEPALIVE_MS ?
		    SALLOC_KEEPALIVE : SALLOC_STATE, 0, &st, &err) == -1)
			continue;	/* the grace is the controller's */
		if (since_keep >= SALLOC_KEEPALIVE_MS)
			since_keep = 0;
		if (st != JOB_RUNNING) {
			salloc_msg("Job allocation %" PRIu64 " has been "
			    "revoked.", id);
			revoked = true;
			kill(-pid, SIGHUP);
			kill(-pid, SIGCONT);
			hup_ms = 0;
		}
	}
	if (tty)
		(void)tcsetpgrp(STDIN_FILENO, getpgrp());
	code = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
	if (revoked)
		return code != 0 ? code : EXIT_FAILED;
	salloc_msg("Relinquishing job allocation %" PRIu64, id);
	if (salloc_ask(opts, c, id, SALLOC_RELEASE, code, &st, &err) == -1)
		salloc_msg("error: job %" PRIu64 " could not be released "
		    "(%s): it ends when the controller stops hearing from "
		    "salloc", id, err.text);
	return code;
}

/* The spec sbatch would build, for a task that only holds the nodes. */
/* spec, as its options made it, turned into an allocation's: a batch
 * job whose script only holds the nodes while the command runs here,
 * never started again. 0, or an exit code after saying why. */
int
salloc_hold_spec(struct job_spec *spec, bool interactive)
{
	free(spec->script);
	free(spec->script_name);
	if ((spec->script = strdup("#!/bin/sh\n# salloc: this task holds "
	    "the allocation while salloc's shell runs.\nexec sleep "
	    "2147483647\n")) == NULL || (spec->script_name =
	    strdup("salloc")) == NULL) {
		salloc_msg("error: out of memory");
		return EXIT_FAILED;
	}
	spec->script_len = strlen(spec->script);
	free(spec->output);
	free(spec->error);
	spec->output = strdup("/dev/null");
	spec->error = strdup("/dev/null");
	if (spec->output == NULL || spec->error == NULL) {
		salloc_msg("error: out of memory");
		return EXIT_FAILED;
	}
	spec->batch = true;
	spec->interactive = interactive;
	spec->max_restarts = 0;
	return 0;
}

static int
salloc_spec(struct job_spec *spec, const struct script_sbatch_opt *cl,
    size_t ncl, const char *name, bool interactive)
{
	int rc;

	/* sbatch's reading of the options wants a script: the holding
	 * one, put again after. */
	if ((rc = salloc_hold_spec(spec, interactive)) != 0 ||
	    (rc = submit_prepare_sbatch(spec, "salloc", cl, ncl, NULL,
	    0)) != 0 || (rc = salloc_hold_spec(spec, interactive)) != 0)
		return rc;
	if (spec->name == NULL && (spec->name = strdup(name)) == NULL) {
		salloc_msg("error: out of memory");
		return EXIT_FAILED;
	}
	return 0;
}

/* The shell's command: argv[rest..], or $SHELL, or /bin/sh. */
static char **
salloc_cmd(int argc, char **argv, size_t rest, char **shell)
{
	const char *sh = getenv("SHELL");

	if (rest < (size_t)argc)
		return argv + rest;
	shell[0] = (char *)(sh != NULL && sh[0] == '/' ? sh : "/bin/sh");
	shell[1] = NULL;
	return shell;
}

static int
salloc_go(int argc, char **argv, const struct cconn_opts *opts,
    const struct salloc_self *self, const struct script_sbatch_opt *cl,
    size_t ncl, size_t rest)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	struct salloc_how how;
	struct job_spec spec;
	char **cmd, *shell[2];
	const char *base;
	int rc;

	cmd = salloc_cmd(argc, argv, rest, shell);
	base = strrchr(cmd[0], '/') != NULL ? strrchr(cmd[0], '/') + 1 :
	    cmd[0];
	job_spec_init(&spec);
	if ((rc = salloc_spec(&spec, cl, ncl, base[0] != '\0' ? base :
	    "salloc", !self->no_shell)) == 0) {
		memset(&how, 0, sizeof(how));
		how.argv0 = argv[0];
		how.ntasks = self->ntasks;
		how.quiet = self->quiet;
		how.no_shell = self->no_shell;
		rc = salloc_session(opts, &cf, &spec, cmd, &how);
	}
	job_spec_clear(&spec);
	return rc;
}

int
salloc_session(const struct cconn_opts *opts,
    const struct output_conn_flags *cf, const struct job_spec *spec,
    char **cmd, const struct salloc_how *how)
{
	const struct salloc_how *self = how;
	struct salloc_env_in in;
	struct job *j = NULL;
	struct cconn *c = NULL;
	struct cerr err;
	struct sigaction sa;
	enum job_state st;
	uint8_t cred[SALLOC_CRED_MAX];
	size_t credlen = 0, nenv = 0;
	char **env = NULL, *nodes = NULL, *cred_path = NULL;
	char *slurm_dir = NULL, cwd[PATH_MAX];
	uint64_t id;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = salloc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if ((rc = submit_send(spec, opts, cf, &id)) != EXIT_OK)
		goto out;
	if (!self->quiet)
		salloc_msg("Pending job allocation %" PRIu64, id);
	rc = EXIT_FAILED;
	if (output_connect(opts, cf, &c) != EXIT_OK)
		goto out;
	if ((j = salloc_wait(c, id, self->quiet)) == NULL)
		goto out;
	if ((nodes = salloc_nodes(j)) == NULL) {
		salloc_msg("error: job %" PRIu64 "'s nodes cannot be read", id);
		goto out;
	}
	if (!self->quiet) {
		salloc_msg("Granted job allocation %" PRIu64, id);
		salloc_msg("Nodes %s are ready for job", nodes);
	}
	if (self->no_shell) {
		rc = EXIT_OK;
		goto out;
	}
	if (salloc_call(c, id, SALLOC_CRED, 0, &st, cred, sizeof(cred),
	    &credlen, &err) == -1) {
		salloc_msg("error: job %" PRIu64 "'s step credential: %s", id,
		    err.text);
		goto release;
	}
	if ((cred_path = salloc_cred_file(cred, credlen)) == NULL)
		goto release;
	memset(&in, 0, sizeof(in));
	in.job_id = id;
	in.job_name = j->spec.name;
	in.nodelist = nodes;
	in.nnodes = (unsigned)j->nplace;
	in.tasks_per_node = j->spec.tasks_per_node > 0 ?
	    j->spec.tasks_per_node : 1;
	in.ntasks = self->ntasks;
	in.partition = j->spec.queue;
	in.submit_dir = j->spec.workdir != NULL ? j->spec.workdir :
	    (getcwd(cwd, sizeof(cwd)) != NULL ? cwd : "/");
	in.submit_host = j->spec.submit_host;
	in.cluster = "cohort";
	in.cred_path = cred_path;
	in.slurm_dir = slurm_dir = salloc_slurm_dir(how->argv0);
	if (salloc_env(environ, &in, &env, &nenv) == -1) {
		salloc_msg("error: out of memory");
		goto release;
	}
	rc = salloc_run(opts, &c, id, cmd, env);
	goto out;
release:
	/* The shell never ran: the allocation goes as a failure. */
	(void)salloc_call(c, id, SALLOC_RELEASE, 1, &st, NULL, 0, NULL, &err);
out:
	if (cred_path != NULL) {
		unlink(cred_path);
		free(cred_path);
	}
	explicit_bzero(cred, sizeof(cred));
	strv_free(env, nenv);
	free(slurm_dir);
	free(nodes);
	job_free(j);
	if (c != NULL)
		cconn_close(c);
	return rc;
}

int
cmd_salloc(int argc, char **argv, const struct cconn_opts *opts)
{
	struct script_sbatch_opt *cl = NULL;
	struct salloc_self self;
	struct cerr err;
	size_t ncl = 0, rest = 0, i;
	int rc;

	cerr_clear(&err);
	if (script_sbatch_parse(argv + 1, argc > 0 ? (size_t)argc - 1 : 0,
	    &rest, &cl, &ncl, &err) == -1) {
		salloc_msg("error: %s", err.text);
		return EXIT_FAILED;
	}
	rest++;		/* an index into argv */
	if (salloc_self_parse(cl, ncl, &self, &err) == -1) {
		salloc_msg("error: %s", err.text);
		rc = EXIT_FAILED;
		goto out;
	}
	if (self.help || self.version) {
		if (self.help)
			fputs(salloc_usage, stdout);
		else
			printf("slurm 0.0.0 (cohort %s)\n", PACKAGE_VERSION);
		rc = EXIT_OK;
		goto out;
	}
	for (i = 0; i < ncl; i++)
		if (cl[i].kind == SBATCH_WARN)
			salloc_msg("warning: %s", cl[i].text);
	rc = salloc_go(argc, argv, opts, &self, cl, ncl, rest);
out:
	script_sbatch_free(cl, ncl);
	return rc;
}
