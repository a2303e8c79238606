/* Running the health-check program (health.h) on the agent's event
 * loop, or once synchronously before the agent registers.
 *
 * The program runs in a process group of its own with stdin on
 * /dev/null and stdout through a pipe (64 KiB of it kept); its stderr is
 * the agent's. A run past health_timeout is killed, group and all, with
 * SIGKILL and makes the node FAILED ("health check timed out after 5 s").
 * One run at a time: a tick that finds the last run still going leaves
 * it to its timeout. The run's end is seen through a pidfd, or a polling
 * timer where there is none. Nothing here blocks the event loop except
 * health_check_now. */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health_int.h"
#include "daemon/agent/health_parse.h"
#include "lib/log.h"

/* Fork and exec the program: its own process group, stdin /dev/null,
 * stdout the returned pipe. 0, or -1 (logged). */
/* In the child after fork: the words of a line, then a newline, with
 * write(2) only. NULL words are skipped. */
static void
health_check_say(int fd, const char *a, const char *b, const char *c,
    const char *d)
{
	const char *w[] = { a, b, c, d, "\n" };
	size_t i;
	ssize_t rc;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (w[i] != NULL)
			rc = write(fd, w[i], strlen(w[i]));
	(void)rc;
}

static int
prog_spawn(struct health *hl)
{
	const char *prog = hl->cfg->health_program;
	int p[2], fd, e;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1) {
		e = errno;
		log_warn("health: pipe");
		errno = e;
		return -1;
	}
	if ((pid = fork()) == -1) {
		e = errno;
		log_warn("health: fork");
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if ((fd = open("/dev/null", O_RDONLY)) != -1 && fd != 0) {
			dup2(fd, 0);
			close(fd);
		}
		if (p[1] != 1) {
			dup2(p[1], 1);
			close(p[1]);
		} else
			fcntl(1, F_SETFD, 0);
		execl(prog, prog, (char *)NULL);
		/* Said on the pipe, so that the verdict carries it; between
		 * fork and exec only async-signal-safe calls (write, and
		 * strerrordesc_np's static table), not dprintf/strerror. */
		health_check_say(1, "node FAILED cannot run ", prog, ": ",
		    strerrordesc_np(errno));
		_exit(127);
	}
	/* Both sides, so that the group exists before either uses it. */
	setpgid(pid, pid);
	close(p[1]);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	hl->pid = pid;
	hl->outfd = p[0];
	hl->out_eof = false;
	hl->timed_out = false;
	hl->outlen = 0;
	return 0;
}

/* Read what the pipe has, keeping up to HEALTH_OUT_MAX. false at EOF or
 * on an error other than EAGAIN. */
static bool
prog_read(struct health *hl)
{
	char buf[4096];
	ssize_t n;
	size_t keep;

	for (;;) {
		n = read(hl->outfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			hl->out_eof = true;
			return false;
		}
		keep = HEALTH_OUT_MAX - hl->outlen;
		if ((size_t)n < keep)
			keep = (size_t)n;
		memcpy(hl->out + hl->outlen, buf, keep);
		hl->outlen += keep;
		/* A program that never stops writing is stopped by its
		 * timeout; here, read in bounded bites. */
		if ((size_t)n < sizeof(buf))
			return true;
	}
}

/* The run is over (status reaped): its verdict, then the merged one. */
static void
prog_finish(struct health *hl, int status)
{
	if (hl->out_ev != NULL) {
		event_free(hl->out_ev);
		hl->out_ev = NULL;
	}
	if (hl->exit_ev != NULL) {
		event_free(hl->exit_ev);
		hl->exit_ev = NULL;
	}
	if (hl->kill_ev != NULL)
		evtimer_del(hl->kill_ev);
	if (hl->pidfd >= 0)
		close(hl->pidfd);
	hl->pidfd = -1;
	/* Whatever is still in the pipe (the program is gone; a child it
	 * left behind could keep writing, so one bite only). */
	if (!hl->out_eof)
		prog_read(hl);
	close(hl->outfd);
	hl->outfd = -1;
	hl->pid = 0;
	if (hl->timed_out) {
		memset(&hl->prog, 0, sizeof(hl->prog));
		hl->prog.health = HEALTH_FAILED;
		snprintf(hl->prog.reason, sizeof(hl->prog.reason),
		    "health check timed out after %" PRIu64 " s",
		    (hl->cfg->health_timeout_ms + 999) / 1000);
	} else
		health_parse(hl->out, hl->outlen, status, hl->ngpus,
		    &hl->prog);
	health_nvml_read(hl);
	health_update(hl);
}

static void
prog_out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;

	if (!prog_read(hl))
		event_del(hl->out_ev);
}

static void
prog_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;
	int status;
	pid_t w;

	while ((w = waitpid(hl->pid, &status, WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	if (w == 0) {
		/* Still running: the polling timer goes on; a pidfd that
		 * woke us early is watched again. */
		if (hl->pidfd >= 0)
			event_add(hl->exit_ev, NULL);
		return;
	}
	if (w == -1) {
		log_warn("health: waitpid %d", (int)hl->pid);
		status = W_EXITCODE(127, 0);
	}
	prog_finish(hl, status);
}

static void
prog_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct health *hl = arg;
	int status;
	pid_t w;

	/* An agent that did not run for a while (a loaded machine, a
	 * stopped process) finds this timer and the program's exit due in
	 * the same round, in either order: a program that has ended was
	 * not late, whatever the clock says now. */
	while ((w = waitpid(hl->pid, &status, WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	if (w == hl->pid) {
		prog_finish(hl, status);
		return;
	}
	log_warnx("health: %s still running after %" PRIu64 " ms; killed",
	    hl->cfg->health_program, hl->cfg->health_timeout_ms);
	hl->timed_out = true;
	kill(-hl->pid, SIGKILL);
	/* prog_exit_cb reaps it. */
}

/* The check could not even start: that is its verdict. */
static void
prog_unstartable(struct health *hl, int e)
{
	memset(&hl->prog, 0, sizeof(hl->prog));
	hl->prog.health = HEALTH_FAILED;
	snprintf(hl->prog.reason, sizeof(hl->prog.reason),
	    "cannot start the health check: %s", strerror(e));
	health_nvml_read(hl);
	health_update(hl);
}

void
health_check_start(struct health *hl)
{
	struct timeval tv;

	if (prog_spawn(hl) == -1) {
		prog_unstartable(hl, errno);
		return;
	}
	hl->pidfd = pidfd_open(hl->pid, 0);
	hl->out_ev = event_new(hl->base, hl->outfd, EV_READ | EV_PERSIST,
	    prog_out_cb, hl);
	if (hl->pidfd >= 0)
		hl->exit_ev = event_new(hl->base, hl->pidfd, EV_READ,
		    prog_exit_cb, hl);
	else
		hl->exit_ev = event_new(hl->base, -1, EV_PERSIST,
		    prog_exit_cb, hl);
	if (hl->out_ev == NULL || hl->exit_ev == NULL) {
		log_warnx("health: cannot watch the check");
		hl->timed_out = true;
		kill(-hl->pid, SIGKILL);
		while (waitpid(hl->pid, NULL, 0) == -1 && errno == EINTR)
			;
		prog_finish(hl, 0);
		return;
	}
	event_add(hl->out_ev, NULL);
	health_ms_tv(HEALTH_REAP_POLL_MS, &tv);
	event_add(hl->exit_ev, hl->pidfd >= 0 ? NULL : &tv);
	health_ms_tv(hl->cfg->health_timeout_ms, &tv);
	evtimer_add(hl->kill_ev, &tv);
}

void
health_check_now(struct health *hl)
{
	struct pollfd pfd;
	int64_t deadline, left;
	int status = 0, w;

	health_nvml_poll(hl);
	if (hl->cfg->health_program == NULL || hl->pid != 0) {
		health_nvml_read(hl);
		health_update(hl);
		return;
	}
	if (prog_spawn(hl) == -1) {
		prog_unstartable(hl, errno);
		return;
	}
	deadline = clock_now_ms() + (int64_t)hl->cfg->health_timeout_ms;
	for (;;) {
		if ((w = waitpid(hl->pid, &status, WNOHANG)) == hl->pid)
			break;
		if (w == -1 && errno != EINTR) {
			status = W_EXITCODE(127, 0);
			break;
		}
		if ((left = deadline - clock_now_ms()) <= 0) {
			hl->timed_out = true;
			kill(-hl->pid, SIGKILL);
			while (waitpid(hl->pid, &status, 0) == -1 &&
			    errno == EINTR)
				;
			break;
		}
		pfd.fd = hl->outfd;
		pfd.events = POLLIN;
		/* Short waits: the exit is noticed by waitpid. */
		if (hl->out_eof)
			poll(NULL, 0, left < 20 ? (int)left : 20);
		else if (poll(&pfd, 1, left < 20 ? (int)left : 20) > 0)
			prog_read(hl);
	}
	prog_finish(hl, status);
}

int
health_check_init(struct health *hl)
{
	hl->kill_ev = evtimer_new(hl->base, prog_kill_cb, hl);
	return hl->kill_ev != NULL ? 0 : -1;
}

void
health_check_stop(struct health *hl)
{
	if (hl->pid != 0) {
		kill(-hl->pid, SIGKILL);
		while (waitpid(hl->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	if (hl->out_ev != NULL)
		event_free(hl->out_ev);
	if (hl->exit_ev != NULL)
		event_free(hl->exit_ev);
	if (hl->kill_ev != NULL)
		event_free(hl->kill_ev);
	if (hl->pidfd >= 0)
		close(hl->pidfd);
	if (hl->outfd >= 0)
		close(hl->outfd);
	hl->out_ev = hl->exit_ev = hl->kill_ev = NULL;
	hl->pidfd = hl->outfd = -1;
	hl->pid = 0;
}
