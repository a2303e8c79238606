/* The mail program runner (mailer.h). The domain hands over mail items
 * while it changes jobs; they wait in a bounded ring and the programs
 * start from a deferred event, so that a change's callback only copies
 * two strings, and the mail of a change goes out after the change's
 * group commit. A program runs in a process group of its own, so a
 * timeout kills what it started too. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/ratelim.h"
#include "daemon/controller/mailer.h"

extern char **environ;

/* Jobs already told about (no mail_program): a job's mails come close
 * together, so the latest few are enough for one line per job. */
#define MAILER_TOLD 64
/* Log lines about drops, failures and kills: one per minute each. */
#define MAILER_LOG_WINDOW_MS 60000

struct mailer_item {
	uint64_t job_id;
	char *to;
	char *subject;
};

struct mailer_child {
	struct mailer *m;
	pid_t pid;		/* 0: a free slot */
	uint64_t job_id;
	bool killed;		/* past the timeout */
	struct event *timer;
};

struct mailer {
	struct event_base *base;
	char *program;		/* NULL: no mail */
	unsigned max_running;
	size_t max_queued;
	int64_t timeout_ms;
	struct mailer_item *q;	/* ring of max_queued */
	size_t head, n;
	struct mailer_child *kids;	/* max_running slots */
	unsigned running;
	struct event *sigchld;
	struct event *kick;
	uint64_t told[MAILER_TOLD];
	size_t ntold;
	struct ratelim drop_rl, fail_rl, kill_rl;
	struct mailer_stats st;
};

static void
mailer_item_free(struct mailer_item *it)
{
	free(it->to);
	free(it->subject);
	memset(it, 0, sizeof(*it));
}

/* One line per job asking for mail while none can be sent. */
static void
mailer_tell_unset(struct mailer *m, uint64_t job_id)
{
	size_t i;

	for (i = 0; i < MAILER_TOLD && i < m->ntold; i++)
		if (m->told[i] == job_id)
			return;
	m->told[m->ntold++ % MAILER_TOLD] = job_id;
	log_info("job %" PRIu64 ": asks for mail (--mail-type), but no "
	    "mail_program is set in [controller]: none is sent", job_id);
}

static void
mailer_failed(struct mailer *m, uint64_t job_id, const char *what)
{
	unsigned long left_out;

	m->st.failed++;
	if (ratelim_allow(&m->fail_rl, clock_now_ms(), 1,
	    MAILER_LOG_WINDOW_MS, &left_out))
		log_warnx("job %" PRIu64 ": mail_program %s: %s (%lu more "
		    "failures left out of the log in the last minute)",
		    job_id, m->program, what, left_out);
}

/* Start the program for it in slot c. 0, or -1 (counted as failed). */
static int
mailer_spawn(struct mailer *m, struct mailer_child *c,
    struct mailer_item *it)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	char *argv[5];
	struct timeval tv;
	pid_t pid;
	int rc;

	argv[0] = m->program;
	argv[1] = (char *)"-s";
	argv[2] = it->subject;
	argv[3] = it->to;
	argv[4] = NULL;
	sigfillset(&all);
	sigemptyset(&none);
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto fail;
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		goto fail;
	}
	/* Its own process group (killed as one), default signal actions
	 * (libevent's handlers are this process's), nothing blocked, the
	 * descriptors of the controller closed. */
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
	    0);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
		    O_WRONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || \
    (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	if (rc == 0)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	if (rc == 0)
		rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
		    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (rc == 0)
		rc = posix_spawnattr_setpgroup(&attr, 0);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&attr, &all);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (rc == 0)
		rc = posix_spawn(&pid, m->program, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		mailer_failed(m, it->job_id, strerror(rc));
		return -1;
	}
	c->pid = pid;
	c->job_id = it->job_id;
	c->killed = false;
	tv.tv_sec = (time_t)(m->timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(m->timeout_ms % 1000 * 1000);
	evtimer_add(c->timer, &tv);
	m->running++;
	log_debug("job %" PRIu64 ": mail to %s (pid %ld): %s", it->job_id,
	    it->to, (long)pid, it->subject);
	return 0;
fail:
	mailer_failed(m, it->job_id, "out of memory");
	return -1;
}

/* Start what waits, as far as there are free slots. */
static void
mailer_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mailer *m = arg;
	struct mailer_item *it;
	unsigned k;

	for (k = 0; k < m->max_running && m->n > 0; k++) {
		if (m->kids[k].pid != 0)
			continue;
		it = &m->q[m->head];
		m->head = (m->head + 1) % m->max_queued;
		m->n--;
		mailer_spawn(m, &m->kids[k], it);
		mailer_item_free(it);
	}
}

static void
mailer_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mailer_child *c = arg;
	struct mailer *m = c->m;
	unsigned long left_out;

	if (c->pid == 0)
		return;
	c->killed = true;
	kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	if (ratelim_allow(&m->kill_rl, clock_now_ms(), 1,
	    MAILER_LOG_WINDOW_MS, &left_out))
		log_warnx("job %" PRIu64 ": mail_program %s ran longer than "
		    "%" PRId64 " ms: killed (%lu more left out of the log in "
		    "the last minute)", c->job_id, m->program, m->timeout_ms,
		    left_out);
}

/* Reap our own children only (never waitpid(-1): a pid is ours to wait
 * for only if we started it). */
static void
mailer_sigchld_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mailer *m = arg;
	struct mailer_child *c;
	char why[64];
	unsigned k;
	pid_t r;
	int status;

	for (k = 0; k < m->max_running; k++) {
		c = &m->kids[k];
		if (c->pid == 0)
			continue;
		do
			r = waitpid(c->pid, &status, WNOHANG);
		while (r == -1 && errno == EINTR);
		if (r == 0)
			continue;
		evtimer_del(c->timer);
		if (r == c->pid && !c->killed && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			m->st.sent++;
		else if (!c->killed) {
			if (r == -1)
				snprintf(why, sizeof(why), "lost (%s)",
				    strerror(errno));
			else if (WIFEXITED(status))
				snprintf(why, sizeof(why), "exit status %d",
				    WEXITSTATUS(status));
			else
				snprintf(why, sizeof(why), "killed by signal "
				    "%d", WIFSIGNALED(status) ?
				    WTERMSIG(status) : 0);
			mailer_failed(m, c->job_id, why);
		} else
			m->st.failed++;
		c->pid = 0;
		m->running--;
	}
	if (m->n > 0)
		event_active(m->kick, EV_TIMEOUT, 0);
}

struct mailer *
mailer_create(struct event_base *base, const struct mailer_opts *o,
    struct cerr *err)
{
	struct mailer *m;
	unsigned k;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		goto nomem;
	m->base = base;
	m->max_running = o->max_running ? o->max_running :
	    MAILER_MAX_RUNNING;
	m->max_queued = o->max_queued ? o->max_queued : MAILER_MAX_QUEUED;
	m->timeout_ms = o->timeout_ms ? o->timeout_ms : MAILER_TIMEOUT_MS;
	if (o->program == NULL)
		return m;
	if ((m->program = strdup(o->program)) == NULL ||
	    (m->q = calloc(m->max_queued, sizeof(*m->q))) == NULL ||
	    (m->kids = calloc(m->max_running, sizeof(*m->kids))) == NULL)
		goto nomem;
	for (k = 0; k < m->max_running; k++) {
		m->kids[k].m = m;
		if ((m->kids[k].timer = evtimer_new(base, mailer_timeout_cb,
		    &m->kids[k])) == NULL)
			goto nomem;
	}
	if ((m->kick = event_new(base, -1, 0, mailer_kick_cb, m)) == NULL ||
	    (m->sigchld = evsignal_new(base, SIGCHLD, mailer_sigchld_cb,
	    m)) == NULL || evsignal_add(m->sigchld, NULL) == -1) {
		cerr_set(err, ERR_INTERNAL, "mail: cannot watch SIGCHLD");
		mailer_destroy(m);
		return NULL;
	}
	if (access(m->program, X_OK) == -1)
		log_warnx("mail_program %s: %s: every mail will fail",
		    m->program, strerror(errno));
	return m;
nomem:
	cerr_set(err, ERR_INTERNAL, "out of memory");
	mailer_destroy(m);
	return NULL;
}

void
mailer_destroy(struct mailer *m)
{
	unsigned k;

	if (m == NULL)
		return;
	while (m->q != NULL && m->n > 0) {
		mailer_item_free(&m->q[m->head]);
		m->head = (m->head + 1) % m->max_queued;
		m->n--;
	}
	for (k = 0; m->kids != NULL && k < m->max_running; k++)
		if (m->kids[k].timer != NULL)
			event_free(m->kids[k].timer);
	if (m->sigchld != NULL)
		event_free(m->sigchld);
	if (m->kick != NULL)
		event_free(m->kick);
	free(m->kids);
	free(m->q);
	free(m->program);
	free(m);
}

void
mailer_send(struct mailer *m, uint64_t job_id, const char *to,
    const char *subject)
{
	struct mailer_item *it;
	unsigned long left_out;

	if (m->program == NULL) {
		mailer_tell_unset(m, job_id);
		return;
	}
	if (m->n == m->max_queued) {
		/* The oldest goes: the newest says most about the job now. */
		mailer_item_free(&m->q[m->head]);
		m->head = (m->head + 1) % m->max_queued;
		m->n--;
		m->st.dropped++;
		if (ratelim_allow(&m->drop_rl, clock_now_ms(), 1,
		    MAILER_LOG_WINDOW_MS, &left_out))
			log_warnx("mail: %zu mails waiting for mail_program "
			    "%s: the oldest dropped (%" PRIu64 " in all; "
			    "cohort_mail_dropped_total)", m->max_queued,
			    m->program, m->st.dropped);
	}
	it = &m->q[(m->head + m->n) % m->max_queued];
	it->job_id = job_id;
	if ((it->to = strdup(to)) == NULL ||
	    (it->subject = strdup(subject)) == NULL) {
		mailer_item_free(it);
		m->st.dropped++;
		return;
	}
	m->n++;
	if (!event_pending(m->kick, EV_TIMEOUT, NULL))
		event_active(m->kick, EV_TIMEOUT, 0);
}

void
mailer_stats(const struct mailer *m, struct mailer_stats *st)
{
	*st = m->st;
	st->queued = m->n;
	st->running = m->running;
}
