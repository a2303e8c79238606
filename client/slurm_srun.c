/* srun: a job step in the allocation srun runs in (client/main.c runs
 * it under its name). Its command line is read as Slurm's (srun_args.h);
 * the step is created with the job's step credential, waiting while the
 * allocation is busy with other steps; then the step's status and every
 * task's stdout and stderr are polled together over the one connection,
 * and written out line by line per task, labelled as srun -l labels
 * them; srun's standard input goes to task 0 in the same rounds
 * (srun_input.h). Signals reach the step as srun's do. srun exits with the highest
 * task exit code. */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/export.h"
#include "client/output.h"
#include "client/salloc.h"
#include "client/srun_args.h"
#include "client/srun_input.h"
#include "client/srun_pty.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

/* The step credential's file: a few hundred bytes of hex. */
#define SRUN_CRED_MAX 256
/* Creating a step the allocation cannot hold now: ask again, backing off
 * from the first to the most. */
#define SRUN_BUSY_FIRST_MS 50
#define SRUN_BUSY_MAX_MS 1000
/* Polling: quick while output flows, backing off to the most when idle. */
#define SRUN_POLL_MIN_MS 20
#define SRUN_POLL_MAX_MS 1000
/* --pty: after output or a key, the next look comes this soon, and the
 * pause doubles while nothing happens, up to the most (a key wakes srun
 * at once whatever the pause). */
#define SRUN_PTY_MIN_MS 1
#define SRUN_PTY_MAX_MS 250
/* The longest a round's status waits at the controller for the step's
 * end: signals (Ctrl-C) are handled between rounds. */
#define SRUN_WAIT_MAX_MS 250
/* Output asked of one task stream in one request. */
#define SRUN_READ_BYTES (64 * 1024)
/* Log reads in one round at most, whatever the task count: the rest wait
 * their turn (round robin). */
#define SRUN_ROUND_READS 64
/* A task's line longer than this is written in pieces. */
#define SRUN_LINE_MAX (64 * 1024)

extern char **environ;

static const char srun_usage[] =
    "usage: srun [OPTIONS] COMMAND [ARGS...]\n"
    "\n"
    "Slurm's srun, answered by Cohort: inside a job (sbatch's script, where\n"
    "SLURM_JOB_ID is set) it runs COMMAND as a job step on the job's nodes\n"
    "and prints the tasks' output. Outside a job, --jobid J attaches the\n"
    "step to your running job J (salloc --no-shell makes one); without it\n"
    "srun is refused: use sbatch or salloc. srun's standard input goes\n"
    "to task 0; the other tasks read /dev/null.\n"
    "  -N, --nodes N              nodes of the step (default: as the tasks\n"
    "                             need, else all of the job's)\n"
    "  -n, --ntasks N             tasks in all\n"
    "      --ntasks-per-node N    tasks on each node\n"
    "  -w, --nodelist HOSTLIST    these nodes of the job's\n"
    "  -x, --exclude HOSTLIST     not these\n"
    "  -c, --cpus-per-task N      cores for each task\n"
    "      --gpus-per-task N, --gpus-per-node N, -G, --gpus N (0: none)\n"
    "      --exclusive            no other step on the step's nodes\n"
    "      --overlap              may share GPUs with other steps\n"
    "      --export ALL|NONE|VAR[,VAR=VALUE...]  srun's environment sent\n"
    "  -l, --label                prefix each line with its task id\n"
    "  -u, --unbuffered           output as it comes, not by lines\n"
    "  -K, --kill-on-bad-exit     a task's failure ends the step\n"
    "  -J, --job-name NAME        the step's name\n"
    "  -D, --chdir DIR            the tasks' directory\n"
    "  -o, --output PATTERN       stdout to files: %t task, %n node index,\n"
    "                             %N node, %j job, %s step, %J job.step, %%\n"
    "  -e, --error PATTERN        stderr the same way (default: -o's)\n"
    "  -i, --input none|0         none: every task reads /dev/null; 0\n"
    "                             (the default): task 0 reads srun's input\n"
    "      --pty                  task 0 on a pseudo-terminal: this\n"
    "                             terminal in raw mode drives it (keys,\n"
    "                             Ctrl-C included, and the window size)\n"
    "      --mpi=none             (no other: Cohort has no PMI server)\n"
    "      --jobid ID             the job srun runs in (SLURM_JOB_ID)\n"
    "  -v, --verbose  -Q, --quiet  -h, --help  --usage  -V, --version\n"
    "Other srun options are refused, each with its reason. The first\n"
    "Ctrl-C prints the tasks' states, a second within a second cancels\n"
    "the step; SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are sent on\n"
    "to the tasks.\n";

/* One task stream: rank's stdout or stderr. */
struct srun_stream {
	uint32_t rank;
	bool is_err;
	bool done;
	bool at_bol;		/* -u: the next byte starts a line */
	uint64_t offset;
	FILE *fp;		/* where it is written */
	char *line;		/* a line not yet ended */
	size_t len, cap;
};

/* A file of -o/-e, opened once however many streams share it. */
struct srun_file {
	char *path;
	FILE *fp;
};

struct srun {
	struct srun_args a;
	struct cconn *c;
	uint64_t job_id;
	bool attach;		/* --jobid outside the job: credential asked */
	uint32_t step_id;
	uint32_t attempt;
	Cohort__V1__Envelope *st_rep;	/* the latest Step, as sent */
	const Cohort__V1__Step *step;	/* in st_rep */
	struct srun_stream *streams;	/* [2r] stdout, [2r + 1] stderr */
	size_t nstreams;
	size_t cursor;			/* round robin over the streams */
	struct srun_file *files;
	size_t nfiles;
	int width;			/* -l's */
	struct srun_input *in;		/* stdin for task 0; NULL: -i none */
	bool ended;
	int failed;			/* an exit code of srun's own, or 0 */
};

static volatile sig_atomic_t srun_sigint;
static volatile sig_atomic_t srun_sigmask;	/* forwarded, pending */

static const int srun_fwd_sigs[] = {
	SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
};
#define SRUN_NFWD (sizeof(srun_fwd_sigs) / sizeof(srun_fwd_sigs[0]))

static void
srun_on_signal(int sig)
{
	size_t i;

	if (sig == SIGINT) {
		srun_sigint++;
		return;
	}
	for (i = 0; i < SRUN_NFWD; i++)
		if (srun_fwd_sigs[i] == sig)
			srun_sigmask |= 1 << i;
}

static void
srun_signals(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = srun_on_signal;
	sigemptyset(&sa.sa_mask);
	/* Blocking reads go on; the sleeps between polls end early. */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < SRUN_NFWD; i++)
		sigaction(srun_fwd_sigs[i], &sa, NULL);
}

/* Sleep up to ms, ending early when a signal arrives. */
static void
srun_sleep(int64_t ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	(void)nanosleep(&ts, NULL);
}

static void
srun_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Who speaks in srun_msg's lines: srun, or attach and sattach. */
static const char *srun_prog = "srun";

static void
srun_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", srun_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The credential from the file COHORT_STEP_CRED names. Its length, or
 * -1 after saying why. */
static int
srun_read_cred(uint8_t *cred, size_t len)
{
	char text[SRUN_CRED_MAX * 2 + 2];
	const char *path;
	struct cerr err;
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	if ((path = getenv("COHORT_STEP_CRED")) == NULL || path[0] == '\0') {
		srun_msg("error: COHORT_STEP_CRED is not set: srun runs "
		    "inside a Cohort job, whose agent sets it");
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		srun_msg("error: cannot read the step credential %s: %s",
		    path, strerror(errno));
		return -1;
	}
	while (got < sizeof(text) && (n = read(fd, text + got,
	    sizeof(text) - got)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			srun_msg("error: cannot read the step credential "
			    "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	cerr_clear(&err);
	if (got == sizeof(text)) {
		srun_msg("error: the step credential %s is over %zu bytes",
		    path, sizeof(text) - 1);
		return -1;
	}
	if ((rc = srun_cred_decode(text, got, cred, len, &err)) == -1) {
		srun_msg("error: the step credential %s: %s", path, err.text);
		return -1;
	}
	return rc;
}

/* srun --jobid J outside J: J's credential from the controller (its
 * owner's, while it runs). Its length, or -1 after saying why. */
static int
srun_attach_cred(struct srun *s, uint8_t *cred, size_t len)
{
	enum job_state st;
	struct cerr err;
	size_t got = 0;

	if (salloc_call(s->c, s->job_id, SALLOC_CRED, 0, &st, cred, len, &got,
	    &err) == -1) {
		srun_msg("error: cannot attach a step to job %" PRIu64 ": %s",
		    s->job_id, err.text);
		return -1;
	}
	return (int)got;
}

/* ---- creating the step ---- */

static int
srun_create(struct srun *s, char **argv, int argc, char **env, size_t nenv,
    const uint8_t *cred, size_t credlen, const char *workdir)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__StepCreateRequest sc =
	    COHORT__V1__STEP_CREATE_REQUEST__INIT;
	Cohort__V1__Container ctr;
	struct cerr err;
	int64_t wait = SRUN_BUSY_FIRST_MS;
	bool told = false;

	sc.job_id = s->job_id;
	sc.cred.data = (uint8_t *)cred;
	sc.cred.len = credlen;
	sc.name = (char *)s->a.name;
	sc.argv = argv;
	sc.n_argv = (size_t)argc;
	sc.env = env;
	sc.n_env = nenv;
	sc.workdir = (char *)workdir;
#define SRUN_U32(f) do { \
	if (s->a.f != 0) { sc.has_##f = 1; sc.f = s->a.f; } } while (0)
	SRUN_U32(nodes);
	SRUN_U32(ntasks);
	SRUN_U32(ntasks_per_node);
	SRUN_U32(cpus_per_task);
	SRUN_U32(gpus_per_task);
	SRUN_U32(gpus_per_node);
	SRUN_U32(gpus);
#undef SRUN_U32
	sc.nodelist = (char *)s->a.nodelist;
	sc.exclude = (char *)s->a.exclude;
	sc.has_no_gpus = sc.no_gpus = s->a.no_gpus;
	sc.has_overlap = sc.overlap = s->a.overlap;
	sc.has_exclusive = sc.exclusive = s->a.exclusive;
	sc.has_kill_on_bad_exit = sc.kill_on_bad_exit = s->a.kill_on_bad_exit;
	sc.has_input = sc.input = s->in != NULL;
	sc.container = wire_ctr_to_pb(&s->a.ctr, &ctr);
	if (s->a.pty) {
		uint16_t rows, cols;

		sc.has_pty = sc.pty = true;
		if (srun_pty_size(STDIN_FILENO, &rows, &cols) ||
		    srun_pty_size(STDOUT_FILENO, &rows, &cols)) {
			sc.has_rows = sc.has_cols = true;
			sc.rows = rows;
			sc.cols = cols;
		}
	}
	req.body_case = COHORT__V1__ENVELOPE__BODY_STEP_CREATE;
	req.step_create = &sc;
	for (;;) {
		cerr_clear(&err);
		if ((rep = cconn_call(s->c, &req, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case ==
		    COHORT__V1__ENVELOPE__BODY_STEP_CREATE_REPLY &&
		    rep->step_create_reply->step != NULL)
			break;
		if (rep->body_case != COHORT__V1__ENVELOPE__BODY_ERROR ||
		    rep->error->code != COHORT__V1__ERROR_CODE__ERROR_BUSY) {
			if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR)
				srun_msg("error: Unable to create step for job "
				    "%" PRIu64 ": %s", s->job_id,
				    rep->error->text);
			else
				(void)output_reply_error("srun", rep);
			frame_free(rep);
			return EXIT_FAILED;
		}
		frame_free(rep);
		if (!told && !s->a.quiet)
			srun_msg("Job step creation temporarily disabled, "
			    "retrying (Requested nodes are busy)");
		told = true;
		if (srun_sigint || srun_sigmask) {
			srun_msg("Cancelled pending job step");
			return EXIT_FAILED;
		}
		srun_sleep(wait);
		wait = wait * 2 < SRUN_BUSY_MAX_MS ? wait * 2 :
		    SRUN_BUSY_MAX_MS;
	}
	s->st_rep = rep;
	s->step = rep->step_create_reply->step;
	s->step_id = s->step->step_id;
	s->attempt = s->step->has_attempt ? s->step->attempt : 0;
	if (told && !s->a.quiet)
		srun_msg("Step created for StepId=%" PRIu64 ".%" PRIu32,
		    s->job_id, s->step_id);
	return EXIT_OK;
}

/* ---- where the output goes ---- */

static const char *
srun_node_of(const struct srun *s, uint32_t rank, uint32_t *index)
{
	const Cohort__V1__Step *st = s->step;
	int i;

	i = srun_rank_node(st->tasks_per_node, st->n_tasks_per_node <
	    st->n_nodelist ? st->n_tasks_per_node : st->n_nodelist, rank);
	if (i < 0) {
		*index = 0;
		return "?";
	}
	*index = (uint32_t)i;
	return st->nodelist[i];
}

static FILE *
srun_open(struct srun *s, const char *pat, uint32_t rank)
{
	struct srun_pat_vars v;
	struct srun_file *nf;
	struct cerr err;
	char name[4096], path[4096 + 1024];
	size_t i;
	FILE *fp;

	v.job_id = s->job_id;
	v.step_id = s->step_id;
	v.task = rank;
	v.node = srun_node_of(s, rank, &v.node_index);
	cerr_clear(&err);
	if (srun_pattern(pat, &v, name, sizeof(name), NULL, &err) == -1) {
		srun_msg("error: %s", err.text);
		return NULL;
	}
	/* Relative to the tasks' directory, as the tasks see it. */
	if (name[0] != '/' && s->a.chdir != NULL)
		snprintf(path, sizeof(path), "%s/%s", s->a.chdir, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	for (i = 0; i < s->nfiles; i++)
		if (strcmp(s->files[i].path, path) == 0)
			return s->files[i].fp;
	if ((fp = fopen(path, "w")) == NULL) {
		srun_msg("error: cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if ((nf = reallocarray(s->files, s->nfiles + 1,
	    sizeof(*nf))) == NULL || (nf[s->nfiles].path = strdup(path)) ==
	    NULL) {
		if (nf != NULL)
			s->files = nf;
		fclose(fp);
		srun_msg("error: out of memory");
		return NULL;
	}
	s->files = nf;
	nf[s->nfiles++].fp = fp;
	return fp;
}

static int
srun_streams(struct srun *s)
{
	uint32_t n = s->step->has_ntasks ? s->step->ntasks : 0, r;
	const char *epat;
	struct srun_stream *st;

	if (n == 0) {
		uint32_t t = 0;
		size_t i;

		for (i = 0; i < s->step->n_tasks_per_node; i++)
			t += s->step->tasks_per_node[i];
		n = t;
	}
	s->width = srun_label_width(n);
	if (n == 0)
		return 0;
	if ((s->streams = calloc((size_t)n * 2, sizeof(*s->streams))) ==
	    NULL) {
		srun_msg("error: out of memory");
		return -1;
	}
	s->nstreams = (size_t)n * 2;
	epat = s->a.error != NULL ? s->a.error : s->a.output;
	for (r = 0; r < n; r++) {
		st = &s->streams[2 * r];
		st[0].rank = st[1].rank = r;
		st[1].is_err = true;
		st[0].at_bol = st[1].at_bol = true;
		st[0].fp = s->a.output != NULL ?
		    srun_open(s, s->a.output, r) : stdout;
		st[1].fp = epat != NULL ? srun_open(s, epat, r) : stderr;
		if ((s->a.output != NULL && st[0].fp == NULL) ||
		    (epat != NULL && st[1].fp == NULL))
			return -1;
	}
	return 0;
}

/* Write data of stream st with its label. */
static void
srun_put(struct srun *s, struct srun_stream *st, const char *data,
    size_t len)
{
	if (len == 0)
		return;
	if (s->a.label && st->at_bol)
		fprintf(st->fp, "%*" PRIu32 ": ", s->width, st->rank);
	fwrite(data, 1, len, st->fp);
	st->at_bol = data[len - 1] == '\n';
}

/* Take data read from st: whole lines are written at once (so that the
 * lines of different tasks never mix), the rest kept for later. */
static void
srun_feed(struct srun *s, struct srun_stream *st, const uint8_t *data,
    size_t len)
{
	const char *p = (const char *)data, *nl;
	size_t take;
	char *nline;

	if (s->a.unbuffered) {
		while (len > 0) {
			nl = memchr(p, '\n', len);
			take = nl != NULL ? (size_t)(nl - p) + 1 : len;
			srun_put(s, st, p, take);
			p += take;
			len -= take;
		}
		return;
	}
	while (len > 0) {
		nl = memchr(p, '\n', len);
		take = nl != NULL ? (size_t)(nl - p) + 1 : len;
		if (st->len + take > st->cap) {
			size_t ncap = st->cap ? st->cap : 256;

			while (ncap < st->len + take)
				ncap *= 2;
			if ((nline = realloc(st->line, ncap)) == NULL) {
				/* Write what there is rather than lose it. */
				srun_put(s, st, st->line, st->len);
				st->len = 0;
				srun_put(s, st, p, take);
				p += take;
				len -= take;
				continue;
			}
			st->line = nline;
			st->cap = ncap;
		}
		memcpy(st->line + st->len, p, take);
		st->len += take;
		p += take;
		len -= take;
		if (nl != NULL || st->len >= SRUN_LINE_MAX) {
			srun_put(s, st, st->line, st->len);
			st->len = 0;
		}
	}
}

/* ---- polling ---- */

static void
srun_set_step(struct srun *s, Cohort__V1__Envelope *rep)
{
	frame_free(s->st_rep);
	s->st_rep = rep;
	s->step = rep->step_status_reply->step;
	s->ended = s->step->state != COHORT__V1__JOB_STATE__RUNNING &&
	    s->step->state != COHORT__V1__JOB_STATE__PENDING;
}

/* Take one log reply for stream st. 1 when it brought data. */
static int
srun_log_reply(struct srun *s, struct srun_stream *st,
    const Cohort__V1__Envelope *rep)
{
	const Cohort__V1__LogsReply *lr;

	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		/* Not there yet (the task has not started on its node), or
		 * too many reads at once on the user's connection (other
		 * sruns share it): again later. A node that cannot be
		 * reached now: again, unless the step has ended. */
		if (rep->error->code == COHORT__V1__ERROR_CODE__ERROR_LIMIT ||
		    ((rep->error->code ==
		    COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND ||
		    rep->error->code ==
		    COHORT__V1__ERROR_CODE__ERROR_UNAVAILABLE) && !s->ended))
			return 0;
		if (rep->error->code !=
		    COHORT__V1__ERROR_CODE__ERROR_NOT_FOUND)
			srun_msg("error: task %" PRIu32 "'s %s: %s", st->rank,
			    st->is_err ? "stderr" : "stdout",
			    rep->error->text);
		st->done = true;
		return 0;
	}
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_LOGS_REPLY) {
		st->done = true;
		return 0;
	}
	lr = rep->logs_reply;
	if (st->fp != NULL)
		srun_feed(s, st, lr->data.data, lr->data.len);
	st->offset = lr->next_offset;
	if (lr->finished)
		st->done = true;
	return lr->data.len > 0;
}

/* One round: the step's status and the next streams' output; with
 * wait_ms, the status is answered when the step ends or after that long
 * (the controller waits, not srun). 1 when output came, 0 when none did,
 * or an exit code + 2. */
static int
srun_round(struct srun *s, uint32_t wait_ms)
{
	Cohort__V1__Envelope reqs[CCONN_BATCH_MAX], *preq[CCONN_BATCH_MAX];
	Cohort__V1__Envelope *reps[CCONN_BATCH_MAX];
	Cohort__V1__LogsRequest lreq[CCONN_BATCH_MAX];
	Cohort__V1__StepStatusRequest ss =
	    COHORT__V1__STEP_STATUS_REQUEST__INIT;
	Cohort__V1__StepInputRequest iq;
	struct srun_stream *who[CCONN_BATCH_MAX];
	size_t n, i, left, scanned, reads = 0, in_at = SIZE_MAX;
	bool status = true, flowed = false;
	struct cerr err;
	char why[256];
	int rc;

	ss.job_id = s->job_id;
	ss.step_id = s->step_id;
	ss.has_wait_ms = wait_ms > 0;
	ss.wait_ms = wait_ms;
	if (s->in != NULL && !s->ended)
		srun_input_read(s->in);
	while (status || reads < SRUN_ROUND_READS) {
		n = 0;
		if (status) {
			reqs[0] = (Cohort__V1__Envelope)COHORT__V1__ENVELOPE__INIT;
			reqs[0].body_case =
			    COHORT__V1__ENVELOPE__BODY_STEP_STATUS;
			reqs[0].step_status = &ss;
			who[0] = NULL;
			n = 1;
			/* One chunk of input in flight, after the status. */
			if (s->in != NULL && !s->ended &&
			    srun_input_request(s->in, s->job_id, s->step_id,
			    &iq)) {
				reqs[n] = (Cohort__V1__Envelope)
				    COHORT__V1__ENVELOPE__INIT;
				reqs[n].body_case =
				    COHORT__V1__ENVELOPE__BODY_STEP_INPUT;
				reqs[n].step_input = &iq;
				who[n] = NULL;
				in_at = n++;
			}
		}
		left = s->nstreams;
		for (scanned = 0; scanned < left && n < CCONN_BATCH_MAX &&
		    reads < SRUN_ROUND_READS; scanned++) {
			struct srun_stream *st = &s->streams[s->cursor];

			s->cursor = (s->cursor + 1) % s->nstreams;
			if (st->done)
				continue;
			lreq[n] = (Cohort__V1__LogsRequest)
			    COHORT__V1__LOGS_REQUEST__INIT;
			lreq[n].job_id = s->job_id;
			lreq[n].rank = st->rank;
			lreq[n].has_rank = 1;
			lreq[n].offset = st->offset;
			lreq[n].has_offset = 1;
			lreq[n].max_bytes = SRUN_READ_BYTES;
			lreq[n].has_max_bytes = 1;
			lreq[n].has_stderr_stream = 1;
			lreq[n].stderr_stream = st->is_err;
			lreq[n].has_attempt = s->attempt != 0;
			lreq[n].attempt = s->attempt;
			lreq[n].has_step_id = 1;
			lreq[n].step_id = s->step_id;
			reqs[n] = (Cohort__V1__Envelope)COHORT__V1__ENVELOPE__INIT;
			reqs[n].body_case = COHORT__V1__ENVELOPE__BODY_LOGS;
			reqs[n].logs = &lreq[n];
			who[n] = st;
			n++;
			reads++;
		}
		if (n == 0)
			break;
		for (i = 0; i < n; i++)
			preq[i] = &reqs[i];
		cerr_clear(&err);
		if (cconn_call_many(s->c, preq, n, reps, &err) == -1)
			return output_call_error(&err) + 2;
		for (i = 0; i < n; i++) {
			if (i == in_at) {
				rc = srun_input_reply(s->in, reps[i], why,
				    sizeof(why));
				frame_free(reps[i]);
				in_at = SIZE_MAX;
				if (rc == 1)
					flowed = true;
				/* A step that has ended takes no input:
				 * nothing to say. */
				else if (rc == -1 && !s->ended && !s->a.quiet)
					srun_msg("warning: standard input is no "
					    "longer forwarded: %s", why);
				continue;
			}
			if (who[i] == NULL) {
				if (reps[i]->body_case !=
				    COHORT__V1__ENVELOPE__BODY_STEP_STATUS_REPLY ||
				    reps[i]->step_status_reply->step == NULL) {
					rc = output_reply_error("srun", reps[i]);
					for (; i < n; i++)
						frame_free(reps[i]);
					return rc + 2;
				}
				srun_set_step(s, reps[i]);
				continue;
			}
			if (srun_log_reply(s, who[i], reps[i]))
				flowed = true;
			frame_free(reps[i]);
		}
		status = false;
		if (scanned >= left)
			break;	/* every stream had its turn */
	}
	fflush(stdout);
	for (i = 0; i < s->nfiles; i++)
		fflush(s->files[i].fp);
	return flowed ? 1 : 0;
}

static bool
srun_all_done(const struct srun *s)
{
	size_t i;

	for (i = 0; i < s->nstreams; i++)
		if (!s->streams[i].done)
			return false;
	return true;
}

static int
srun_signal_step(struct srun *s, int sig)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__StepSignalRequest sr =
	    COHORT__V1__STEP_SIGNAL_REQUEST__INIT;
	struct cerr err;
	int rc = 0;

	sr.job_id = s->job_id;
	sr.step_id = s->step_id;
	sr.signal = (uint32_t)sig;
	req.body_case = COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL;
	req.step_signal = &sr;
	cerr_clear(&err);
	if ((rep = cconn_call(s->c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_STEP_SIGNAL_REPLY)
		rc = output_reply_error("srun", rep);
	frame_free(rep);
	return rc;
}

/* What a task's wait status says, as srun's messages say it. */
static void
srun_task_state(int32_t ws, char *buf, size_t len)
{
	if (ws < 0)
		snprintf(buf, len, "running");
	else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		snprintf(buf, len, "exited");
	else if (WIFEXITED(ws))
		snprintf(buf, len, "exited abnormally");
	else if (WIFSIGNALED(ws))
		snprintf(buf, len, "killed by signal");
	else
		snprintf(buf, len, "unknown");
}

/* The first Ctrl-C: the tasks' states, ranks in runs of one state. */
static void
srun_report(const struct srun *s)
{
	const Cohort__V1__Step *st = s->step;
	char a[32], b[32], range[48];
	size_t i, from;

	srun_msg("interrupt (one more within 1 sec to abort)");
	for (from = 0; from < st->n_task_status; from = i) {
		srun_task_state(st->task_status[from], a, sizeof(a));
		for (i = from + 1; i < st->n_task_status; i++) {
			srun_task_state(st->task_status[i], b, sizeof(b));
			if (strcmp(a, b) != 0)
				break;
		}
		srun_msg("StepId=%" PRIu64 ".%" PRIu32 " %s: %s", s->job_id,
		    s->step_id, srun_task_range((uint32_t)from,
		    (uint32_t)(i - 1), range, sizeof(range)), a);
	}
}

/* Signals that arrived since the last look. An exit code + 2 when the
 * controller could not be told, else 0. */
static int
srun_handle_signals(struct srun *s, int64_t *last_int)
{
	int64_t now;
	size_t i;
	int rc;

	if (srun_sigint > 0) {
		srun_sigint = 0;
		now = output_mono_ms();
		if (*last_int != 0 && now - *last_int <= 1000) {
			srun_msg("forcing job termination");
			if ((rc = srun_signal_step(s, SIGKILL)) != 0)
				return rc + 2;
			*last_int = 0;
		} else {
			srun_report(s);
			*last_int = now;
		}
	}
	for (i = 0; i < SRUN_NFWD; i++) {
		if (!(srun_sigmask & (1 << i)))
			continue;
		srun_sigmask &= ~(1 << i);
		if ((rc = srun_signal_step(s, srun_fwd_sigs[i])) != 0)
			return rc + 2;
	}
	return 0;
}

/* The failed tasks, as srun reports them: per node, ranks in runs of one
 * outcome. */
static void
srun_report_failures(const struct srun *s)
{
	const Cohort__V1__Step *st = s->step;
	uint32_t ni, nj;
	const char *node;
	char what[64], other[64], range[48];
	size_t i, from;
	int32_t ws;

	for (from = 0; from < st->n_task_status; from = i) {
		ws = st->task_status[from];
		i = from + 1;
		if (ws < 0 || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
			continue;
		if (WIFEXITED(ws))
			snprintf(what, sizeof(what), "Exited with exit code %d",
			    WEXITSTATUS(ws));
		else if (WIFSIGNALED(ws))
			snprintf(what, sizeof(what), "%s",
			    strsignal(WTERMSIG(ws)));
		else
			continue;
		node = srun_node_of(s, (uint32_t)from, &ni);
		for (; i < st->n_task_status; i++) {
			ws = st->task_status[i];
			if (ws < 0)
				break;
			if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0)
				snprintf(other, sizeof(other), "Exited with "
				    "exit code %d", WEXITSTATUS(ws));
			else if (WIFSIGNALED(ws))
				snprintf(other, sizeof(other), "%s",
				    strsignal(WTERMSIG(ws)));
			else
				break;
			(void)srun_node_of(s, (uint32_t)i, &nj);
			if (nj != ni || strcmp(what, other) != 0)
				break;
		}
		srun_msg("error: %s: %s: %s", node, srun_task_range(
		    (uint32_t)from, (uint32_t)(i - 1), range, sizeof(range)),
		    what);
	}
	if (st->node_fail)
		srun_msg("error: StepId=%" PRIu64 ".%" PRIu32 " ended: a node "
		    "failed%s%s", s->job_id, s->step_id, st->reason ? ": " :
		    "", st->reason ? st->reason : "");
	else if (st->state == COHORT__V1__JOB_STATE__CANCELLED)
		srun_msg("error: StepId=%" PRIu64 ".%" PRIu32 " CANCELLED%s%s",
		    s->job_id, s->step_id, st->reason ? ": " : "",
		    st->reason ? st->reason : "");
}

/* srun's exit code: the highest of the tasks' (128 + N for signal N). */
static int
srun_exit_code(const struct srun *s)
{
	const Cohort__V1__Step *st = s->step;
	int code = 0, c;
	size_t i;

	if (st->has_exit_code && st->exit_code > 0)
		return st->exit_code > 255 ? 255 : st->exit_code;
	for (i = 0; i < st->n_task_status; i++) {
		if (st->task_status[i] < 0)
			continue;
		if (WIFEXITED(st->task_status[i]))
			c = WEXITSTATUS(st->task_status[i]);
		else if (WIFSIGNALED(st->task_status[i]))
			c = 128 + WTERMSIG(st->task_status[i]);
		else
			c = 1;
		if (c > code)
			code = c;
	}
	if (code == 0 && st->state != COHORT__V1__JOB_STATE__COMPLETED)
		code = 1;	/* cancelled or failed without a code */
	return code;
}

static int
srun_follow(struct srun *s)
{
	int64_t delay = SRUN_POLL_MIN_MS, last_int = 0;
	uint32_t wait = 0;
	int r;

	if (!s->a.quiet && s->a.verbose > 0)
		srun_msg("StepId=%" PRIu64 ".%" PRIu32 ": %zu tasks",
		    s->job_id, s->step_id, s->nstreams / 2);
	for (;;) {
		if ((r = srun_handle_signals(s, &last_int)) != 0)
			return r - 2;
		if ((r = srun_round(s, wait)) >= 2)
			return r - 2;
		if (s->ended && srun_all_done(s))
			break;
		/* Quick while output flows. While none does, the next
		 * round's status waits at the controller for the step's end,
		 * longer each time (up to SRUN_WAIT_MAX_MS, so that signals
		 * are seen soon): a step that ends is seen at once. */
		wait = 0;
		if (r == 1)
			delay = SRUN_POLL_MIN_MS;
		else if ((delay *= 2) > SRUN_POLL_MAX_MS)
			delay = SRUN_POLL_MAX_MS;
		/* Input held back (a full pipe): retried after a short
		 * sleep, not a wait at the controller. */
		if (r == 0 && !s->ended && (s->in == NULL ||
		    !srun_input_pending(s->in))) {
			wait = (uint32_t)(delay < SRUN_WAIT_MAX_MS ? delay :
			    SRUN_WAIT_MAX_MS);
			continue;
		}
		/* Input flowing: the next chunk at once, if there is one. */
		if (r == 1 && s->in != NULL && srun_input_active(s->in)) {
			srun_input_read(s->in);
			if (srun_input_pending(s->in))
				continue;
		}
		/* Input the task's pipe did not take: sent again after a
		 * back-off (up to SRUN_WAIT_MAX_MS), since each try carries
		 * the chunk. */
		if (!srun_sigint && !srun_sigmask)
			srun_sleep(r == 1 || (r == 0 && !s->ended) ?
			    (delay < SRUN_WAIT_MAX_MS ? delay :
			    SRUN_WAIT_MAX_MS) : SRUN_POLL_MIN_MS);
	}
	return EXIT_OK;
}

/* Wait up to ms for a key (when there is room for one) or a signal. */
static void
srun_pty_wait(struct srun *s, int64_t ms)
{
	struct pollfd p;

	if (s->in == NULL || !srun_input_room(s->in)) {
		srun_sleep(ms);
		return;
	}
	p.fd = STDIN_FILENO;
	p.events = POLLIN;
	p.revents = 0;
	(void)poll(&p, 1, (int)ms);
}

/* --pty (and cohort attach): keys are sent as they come, the window
 * when it changes, and the output is looked for soon after anything
 * happened, less often while nothing does. */
static int
srun_follow_pty(struct srun *s)
{
	int64_t delay = SRUN_PTY_MIN_MS, last_int = 0;
	uint16_t rows, cols;
	int r;

	for (;;) {
		if ((r = srun_handle_signals(s, &last_int)) != 0)
			return r - 2;
		if (srun_pty_resized() && s->in != NULL &&
		    srun_pty_size(STDIN_FILENO, &rows, &cols))
			srun_input_window(s->in, rows, cols);
		if ((r = srun_round(s, 0)) >= 2)
			return r - 2;
		if (s->ended && srun_all_done(s))
			break;
		if (r == 1)
			delay = SRUN_PTY_MIN_MS;
		else if ((delay *= 2) > SRUN_PTY_MAX_MS)
			delay = SRUN_PTY_MAX_MS;
		if (!srun_sigint && !srun_sigmask)
			srun_pty_wait(s, s->ended ? SRUN_POLL_MIN_MS : delay);
	}
	return EXIT_OK;
}

static void srun_flush_lines(struct srun *);

/* Follow the step to its end, keys as they come when keys (--pty, or
 * input from a terminal), on this terminal in raw mode when raw, put
 * back after; then say how its tasks ended. The step's exit code, an
 * exit code of srun's own, or -1 when raw mode could not be had. */
static int
srun_drive(struct srun *s, bool raw, bool keys)
{
	int rc;

	if (raw && srun_pty_start(STDIN_FILENO) == -1) {
		srun_msg("error: cannot put the terminal in raw mode: %s",
		    strerror(errno));
		return -1;
	}
	rc = keys ? srun_follow_pty(s) : srun_follow(s);
	srun_pty_restore();
	if (rc != EXIT_OK)
		return rc;
	srun_flush_lines(s);
	srun_report_failures(s);
	return srun_exit_code(s);
}

/* A line a task never ended is written as it is. */
static void
srun_flush_lines(struct srun *s)
{
	size_t i;

	for (i = 0; i < s->nstreams; i++) {
		if (s->streams[i].len > 0 && s->streams[i].fp != NULL)
			srun_put(s, &s->streams[i], s->streams[i].line,
			    s->streams[i].len);
		s->streams[i].len = 0;
	}
	fflush(stdout);
}

static void
srun_free(struct srun *s)
{
	size_t i;

	srun_flush_lines(s);
	for (i = 0; i < s->nstreams; i++)
		free(s->streams[i].line);
	free(s->streams);
	for (i = 0; i < s->nfiles; i++) {
		if (fclose(s->files[i].fp) == EOF)
			srun_msg("error: %s: %s", s->files[i].path,
			    strerror(errno));
		free(s->files[i].path);
	}
	free(s->files);
	frame_free(s->st_rep);
	srun_input_destroy(s->in);
	if (s->c != NULL)
		cconn_close(s->c);
}

/* The job srun runs in: SLURM_JOB_ID, which --jobid must equal. 0, or an
 * exit code after saying why. */
static int
srun_job(struct srun *s)
{
	const char *env = getenv("SLURM_JOB_ID");
	char *end;

	/* --jobid of a job other than the one srun runs in (or outside
	 * any): a step attached to it, the credential asked of the
	 * controller, which gives it to the job's owner only. */
	if (s->a.jobid != 0 && (env == NULL || env[0] == '\0' ||
	    strtoull(env, NULL, 10) != s->a.jobid)) {
		s->job_id = s->a.jobid;
		s->attach = true;
		return 0;
	}
	if (env == NULL || env[0] == '\0') {
		srun_msg("error: srun runs job steps inside a job, and "
		    "SLURM_JOB_ID is not set: submit a script that calls srun "
		    "with sbatch, run it in salloc, or give --jobid of your "
		    "running job");
		return EXIT_FAILED;
	}
	errno = 0;
	s->job_id = strtoull(env, &end, 10);
	if (errno != 0 || *end != '\0' || s->job_id == 0) {
		srun_msg("error: SLURM_JOB_ID '%s' is not a job id", env);
		return EXIT_FAILED;
	}
	if (s->a.jobid != 0 && s->a.jobid != s->job_id) {
		srun_msg("error: --jobid=%" PRIu64 " is not the job srun runs "
		    "in (SLURM_JOB_ID=%" PRIu64 "): a step runs in its own "
		    "job's allocation", s->a.jobid, s->job_id);
		return EXIT_FAILED;
	}
	return 0;
}

int
cmd_srun(int argc, char **argv, const struct cconn_opts *opts)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	uint8_t cred[SRUN_CRED_MAX];
	struct export_note note;
	struct srun s;
	struct cerr err;
	char **env = NULL, cwd[4096];
	size_t nenv = 0;
	int credlen = 0, rc;

	memset(&s, 0, sizeof(s));
	cerr_clear(&err);
	if (srun_args_parse(argc, argv, &s.a, &err) == -1) {
		srun_msg("%s", err.text);
		return EXIT_FAILED;
	}
	if (s.a.help || s.a.usage) {
		fputs(srun_usage, stdout);
		return EXIT_OK;
	}
	if (s.a.version) {
		printf("slurm 0.0.0 (cohort %s)\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (s.a.cmd >= argc) {
		srun_msg("fatal: No command given to execute.");
		return EXIT_FAILED;
	}
	if ((rc = srun_job(&s)) != 0)
		return rc;
	if (!s.attach && (credlen = srun_read_cred(cred, sizeof(cred))) == -1)
		return EXIT_FAILED;
	if (export_build(s.a.export_mode, environ, NULL, 0, &env, &nenv,
	    &note, &err) == -1) {
		srun_msg("error: %s", err.text);
		return EXIT_FAILED;
	}
	if (note.nskipped > 0 && !s.a.quiet)
		srun_msg("warning: --export: %zu variables not sent (not "
		    "UTF-8 text): %s", note.nskipped, note.names);
	if (s.a.chdir == NULL && getcwd(cwd, sizeof(cwd)) == NULL) {
		srun_msg("error: cannot tell the current directory: %s",
		    strerror(errno));
		rc = EXIT_FAILED;
		goto out;
	}
	if (!s.a.no_input && (s.in = srun_input_create(STDIN_FILENO)) ==
	    NULL) {
		srun_msg("error: out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	srun_signals();
	if ((rc = output_connect(opts, &cf, &s.c)) != EXIT_OK)
		goto out;
	if (s.attach && (credlen = srun_attach_cred(&s, cred,
	    sizeof(cred))) == -1) {
		rc = EXIT_FAILED;
		goto out;
	}
	if ((rc = srun_create(&s, argv + s.a.cmd, argc - s.a.cmd, env, nenv,
	    cred, (size_t)credlen, s.a.chdir != NULL ? s.a.chdir : cwd)) !=
	    EXIT_OK)
		goto out;
	if (srun_streams(&s) == -1) {
		(void)srun_signal_step(&s, SIGKILL);
		rc = EXIT_FAILED;
		goto out;
	}
	if ((rc = srun_drive(&s, s.a.pty, s.a.pty)) == -1) {
		(void)srun_signal_step(&s, SIGKILL);
		rc = EXIT_FAILED;
	}
out:
	srun_pty_restore();
	explicit_bzero(cred, sizeof(cred));
	srun_free(&s);
	strv_free(env, nenv);
	return rc;
}

/* ---- cohort attach, sattach ---- */

static const char attach_usage[] =
    "usage: cohort attach [OPTIONS] JOB.STEP\n"
    "       sattach [OPTIONS] JOB.STEP\n"
    "\n"
    "Join a running job step of yours: its tasks' output from the start,\n"
    "then as it comes, until the step ends; with input, what you type goes\n"
    "to task 0 (after whatever srun sends it). A step started with\n"
    "srun --pty is joined as a terminal: raw mode, the window size, Ctrl-C\n"
    "to its foreground processes. Ctrl-C otherwise detaches (the step goes\n"
    "on). Exits with the step's code once it ends.\n"
    "  -i, --input                send standard input to task 0 (sattach:\n"
    "                             the default; cohort attach: off)\n"
    "      --no-input             only the output\n"
    "  -l, --label                prefix each line with its task id\n"
    "  -Q, --quiet                no messages of attach's own\n"
    "  -h, --help\n";

/* JOB.STEP, both decimal. */
static int
attach_parse_id(const char *v, uint64_t *job, uint32_t *step)
{
	unsigned long long j, st;
	char *end;

	errno = 0;
	j = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *end != '.' || j == 0 || v[0] == '-')
		return -1;
	v = end + 1;
	if (*v < '0' || *v > '9')
		return -1;
	st = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || st > UINT32_MAX)
		return -1;
	*job = j;
	*step = (uint32_t)st;
	return 0;
}

/* The step as it is now: 0, or an exit code after saying why. */
static int
attach_status(struct srun *s)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__StepStatusRequest ss =
	    COHORT__V1__STEP_STATUS_REQUEST__INIT;
	struct cerr err;

	ss.job_id = s->job_id;
	ss.step_id = s->step_id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_STEP_STATUS;
	req.step_status = &ss;
	cerr_clear(&err);
	if ((rep = cconn_call(s->c, &req, &err)) == NULL)
		return output_call_error(&err);
	if (rep->body_case != COHORT__V1__ENVELOPE__BODY_STEP_STATUS_REPLY ||
	    rep->step_status_reply->step == NULL) {
		int rc = output_reply_error("attach", rep);

		frame_free(rep);
		return rc;
	}
	srun_set_step(s, rep);
	s->attempt = s->step->has_attempt ? s->step->attempt : 0;
	if (s->ended) {
		srun_msg("error: StepId=%" PRIu64 ".%" PRIu32 " has ended: "
		    "nothing to attach to", s->job_id, s->step_id);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static int
attach_args(int argc, char **argv, bool slurm, struct srun *s, bool *input,
    const char **id)
{
	int i;

	*input = slurm;
	*id = NULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-i") == 0 || strcmp(a, "--input") == 0)
			*input = true;
		else if (strcmp(a, "--no-input") == 0)
			*input = false;
		else if (strcmp(a, "-l") == 0 || strcmp(a, "--label") == 0)
			s->a.label = true;
		else if (strcmp(a, "-Q") == 0 || strcmp(a, "--quiet") == 0)
			s->a.quiet = true;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			s->a.help = true;
			return 0;
		} else if (a[0] == '-') {
			srun_msg("error: unknown option %s (see --help)", a);
			return -1;
		} else if (*id != NULL) {
			srun_msg("error: one step at a time: %s and %s", *id,
			    a);
			return -1;
		} else
			*id = a;
	}
	if (*id == NULL) {
		srun_msg("error: which step? JOB.STEP (see --help)");
		return -1;
	}
	if (attach_parse_id(*id, &s->job_id, &s->step_id) == -1) {
		srun_msg("error: '%s' is not JOB.STEP (say 12.0)", *id);
		return -1;
	}
	return 0;
}

int
cmd_attach_step(int argc, char **argv, const struct cconn_opts *opts,
    bool slurm)
{
	struct output_conn_flags cf = { NULL, NULL, NULL, NULL };
	const char *id;
	struct srun s;
	bool input;
	int rc;

	memset(&s, 0, sizeof(s));
	srun_prog = slurm ? "sattach" : "attach";
	if (attach_args(argc, argv, slurm, &s, &input, &id) == -1)
		return EXIT_FAILED;
	if (s.a.help) {
		fputs(attach_usage, stdout);
		return EXIT_OK;
	}
	srun_signals();
	if ((rc = output_connect(opts, &cf, &s.c)) != EXIT_OK ||
	    (rc = attach_status(&s)) != EXIT_OK)
		goto out;
	s.a.pty = s.step->has_pty && s.step->pty;
	s.a.unbuffered = true;
	if (input && s.step->has_input && s.step->input) {
		if ((s.in = srun_input_create(STDIN_FILENO)) == NULL) {
			srun_msg("error: out of memory");
			rc = EXIT_FAILED;
			goto out;
		}
		srun_input_set_append(s.in);
	} else if (input && slurm == false && !s.a.quiet)
		srun_msg("warning: StepId=%s takes no input (srun -i none): "
		    "only its output is shown", id);
	if (srun_streams(&s) == -1) {
		rc = EXIT_FAILED;
		goto out;
	}
	if (!s.a.quiet)
		srun_msg("attached to StepId=%" PRIu64 ".%" PRIu32 "%s",
		    s.job_id, s.step_id, s.a.pty && s.in != NULL ?
		    " (its terminal: raw mode until it ends)" : "");
	if ((rc = srun_drive(&s, s.a.pty && s.in != NULL, s.a.pty ||
	    s.in != NULL)) == -1)
		rc = EXIT_FAILED;
out:
	srun_pty_restore();
	srun_free(&s);
	return rc;
}

int
cmd_attach(int argc, char **argv, const struct cconn_opts *opts)
{
	return cmd_attach_step(argc, argv, opts, false);
}

int
cmd_sattach(int argc, char **argv, const struct cconn_opts *opts)
{
	return cmd_attach_step(argc, argv, opts, true);
}
