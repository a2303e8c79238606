/* The spool's records of the tasks started on this node (the layout is
 * in tasks.h): their paths, reading back what a supervisor wrote,
 * finding every task after an agent restart, and clearing records the
 * controller has. Touches only files, never a process but to ask
 * whether a recorded supervisor is still the one we started. */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cpubind.h"
#include "daemon/agent/tasks_int.h"
#include "daemon/agent/tasks_spool.h"

int
tasks_spool_path(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
tasks_spool_start_dir(char *buf, const char *spool, uint64_t job_id,
    uint32_t restart)
{
	return tasks_spool_path(buf, "%s/jobs/%" PRIu64 ".%" PRIu32, spool,
	    job_id, restart);
}

int
tasks_spool_read_exit(const struct task *t, int *status)
{
	char path[PATH_MAX], buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	if (tasks_spool_path(path, "%s/rank-%u.exit", t->dir, t->rank) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = EIO;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\n' && *end != '\0') ||
	    v < INT_MIN || v > INT_MAX) {
		errno = EIO;
		return -1;
	}
	*status = (int)v;
	return 0;
}

void
tasks_spool_read_error(const struct task *t, char *why, size_t len,
    bool *permanent)
{
	char path[PATH_MAX], buf[600];
	const char *msg = buf;
	ssize_t n;
	int fd;

	*permanent = false;
	if (why != NULL && len > 0)
		why[0] = '\0';
	if (tasks_spool_path(path, "%s/rank-%u.error", t->dir, t->rank) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if ((buf[0] == 'P' || buf[0] == 'T') && buf[1] == ' ') {
		*permanent = buf[0] == 'P';
		msg = buf + 2;
	}
	if (why != NULL && len > 0)
		snprintf(why, len, "%s", msg);
}

int
tasks_spool_forget(const struct task *t)
{
	char path[PATH_MAX];

	/* The pid record goes first: without it adoption skips the rank
	 * (and tasks_start removes what is left of the others). */
	if (tasks_spool_path(path, "%s/rank-%u.pid", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	if (tasks_spool_path(path, "%s/rank-%u.exit", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	if (tasks_spool_path(path, "%s/rank-%u.error", t->dir, t->rank) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT))
		return -1;
	return 0;
}

/* The "SUPERVISOR_PID TASK_PGID" of rank-R.pid. */
static int
read_pids(const char *path, pid_t *sup, pid_t *pgid)
{
	char buf[64];
	ssize_t n;
	int fd, a, b;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%d %d", &a, &b) != 2 || a <= 1 || b <= 1)
		return -1;
	*sup = a;
	*pgid = b;
	return 0;
}

/* rank-R.cpus, the cores the task was bound to, so that a restarted
 * agent does not give them to another task. */
static void
read_cpus(struct task *t)
{
	char path[PATH_MAX], buf[4096], why[160];
	ssize_t n;
	int fd;

	t->bound = false;
	CPU_ZERO(&t->cpus);
	if (tasks_spool_path(path, "%s/rank-%u.cpus", t->dir, t->rank) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	t->bound = cpubind_list_parse(buf, &t->cpus, why, sizeof(why)) == 0;
}

/* Every rank-R.pid of one start directory (step NULL) or of one of its
 * steps' step-S directories (*step: S), and, in a start directory,
 * those of each of its steps. */
static int
adopt_dir(const char *parent, const char *name, uint64_t job_id,
    uint32_t restart, const uint32_t *step,
    int (*cb)(struct task *, void *), void *arg, struct cerr *err)
{
	struct dirent *de;
	struct task t;
	char path[PATH_MAX];
	unsigned rank;
	uint32_t sid;
	DIR *d;
	int rc = 0, st, end;

	memset(&t, 0, sizeof(t));
	t.stdin_fd = -1;
	if (tasks_spool_path(t.dir, "%s/%s", parent, name) == -1)
		return 0;
	if ((d = opendir(t.dir)) == NULL)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
		    cerr_set(err, ERR_INTERNAL, "cannot read %s: %s", t.dir,
		    strerror(errno));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		end = 0;
		if (step == NULL && sscanf(de->d_name, "step-%" SCNu32 "%n",
		    &sid, &end) == 1 && de->d_name[end] == '\0' &&
		    isdigit((unsigned char)de->d_name[5])) {
			rc = adopt_dir(t.dir, de->d_name, job_id, restart,
			    &sid, cb, arg, err);
			continue;
		}
		end = 0;
		if (sscanf(de->d_name, "rank-%u.pid%n", &rank, &end) != 1 ||
		    end == 0 || de->d_name[end] != '\0')
			continue;
		if (tasks_spool_path(path, "%s/%s", t.dir, de->d_name) == -1 ||
		    read_pids(path, &t.supervisor, &t.pgid) == -1)
			continue;	/* not a record we wrote */
		t.job_id = job_id;
		t.restart = restart;
		t.rank = rank;
		t.has_step = step != NULL;
		t.step_id = step != NULL ? *step : 0;
		t.pidfd = -1;
		read_cpus(&t);
		/* An ended task's pids may belong to strangers by now. */
		if (tasks_spool_read_exit(&t, &st) == -1 && errno == ENOENT &&
		    (t.pidfd = pidfd_open(t.supervisor, 0)) != -1 &&
		    getsid(t.supervisor) != t.supervisor) {
			close(t.pidfd);
			t.pidfd = -1;
		}
		if (cb(&t, arg) != 0)
			rc = cerr_set(err, ERR_INTERNAL, "adopting rank %u of "
			    "job %" PRIu64 " failed", t.rank, job_id);
	}
	closedir(d);
	return rc;
}

int
tasks_spool_adopt(const char *spool, int (*cb)(struct task *t, void *arg),
    void *arg, struct cerr *err)
{
	char jobs[PATH_MAX];
	struct dirent *de;
	uint64_t job_id;
	uint32_t restart;
	DIR *d;
	int rc = 0, end;

	cerr_clear(err);
	if (tasks_spool_path(jobs, "%s/jobs", spool) == -1)
		return cerr_set(err, ERR_INVALID, "spool path too long");
	if ((d = opendir(jobs)) == NULL) {
		if (errno == ENOENT)
			return 0;	/* nothing ever started here */
		return cerr_set(err, ERR_INTERNAL, "cannot read %s: %s", jobs,
		    strerror(errno));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		/* Only start directories, as tasks_spool_start_dir names
		 * them. */
		end = 0;
		if (sscanf(de->d_name, "%" SCNu64 ".%" SCNu32 "%n", &job_id,
		    &restart, &end) != 2 || de->d_name[end] != '\0' ||
		    !isdigit((unsigned char)de->d_name[0]))
			continue;
		rc = adopt_dir(jobs, de->d_name, job_id, restart, NULL, cb,
		    arg, err);
	}
	closedir(d);
	return rc;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) == -1 && errno != ENOENT ? -1 : 0;
}

int
tasks_spool_remove(const char *spool, uint64_t job_id, uint32_t restart)
{
	return tasks_spool_remove_step(spool, job_id, restart, NULL);
}

int
tasks_spool_step_dir(char *buf, const char *spool, uint64_t job_id,
    uint32_t restart, uint32_t step_id)
{
	return tasks_spool_path(buf, "%s/jobs/%" PRIu64 ".%" PRIu32
	    "/step-%" PRIu32, spool, job_id, restart, step_id);
}

int
tasks_spool_remove_step(const char *spool, uint64_t job_id,
    uint32_t restart, const uint32_t *step)
{
	char dir[PATH_MAX];
	struct stat sb;

	if ((step == NULL ? tasks_spool_start_dir(dir, spool, job_id,
	    restart) : tasks_spool_step_dir(dir, spool, job_id, restart,
	    *step)) == -1)
		return -1;
	if (lstat(dir, &sb) == -1)
		return errno == ENOENT ? 0 : -1;
	/* Depth first, without following links a task may have left. */
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int
tasks_spool_log_path(const char *spool, uint64_t job_id, uint32_t restart,
    unsigned rank, bool is_stderr, char *buf, size_t len)
{
	return tasks_spool_step_log_path(spool, job_id, restart, NULL, rank,
	    is_stderr, buf, len);
}

int
tasks_spool_step_log_path(const char *spool, uint64_t job_id,
    uint32_t restart, const uint32_t *step, unsigned rank, bool is_stderr,
    char *buf, size_t len)
{
	char sdir[32] = "";
	int n;

	if (step != NULL)
		snprintf(sdir, sizeof(sdir), "/step-%" PRIu32, *step);
	n = snprintf(buf, len, "%s/jobs/%" PRIu64 ".%" PRIu32 "%s/rank-%u.%s",
	    spool, job_id, restart, sdir, rank, is_stderr ? "err" : "log");
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
