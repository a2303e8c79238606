/* A job's checkpoint and progress files (watch.h). Both are read on the
 * agent's heartbeat: LATEST is one short line, and the progress file is
 * only lstat()ed.
 *
 * How a root agent reads as the job's user: it sets its filesystem uid
 * and gid (setfsuid, setfsgid) and its supplementary groups to the
 * user's for the one open, then sets them back. The kernel then checks
 * every directory on the way and the file itself exactly as it would for
 * the user (modes, ACLs, search permission), and drops the agent's
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH while the fsuid is not 0.
 * These calls act on the calling thread only (the groups through the raw
 * system call: glibc's setgroups would change every thread), which is
 * what file servers such as nfs-ganesha do per request. This costs a few
 * system calls per read, where a child process dropped to the user would
 * cost a fork, a wait the event loop cannot afford if the file system
 * hangs, and an answer that arrives after the heartbeat it belongs to
 * (a checkpoint written just before a task's exit must reach the
 * controller first). On top: O_NOFOLLOW (a LATEST that is a symbolic
 * link is refused even where the user could follow it: it would name a
 * file of someone else's), O_NONBLOCK (a FIFO never blocks the loop),
 * fstat before any read (a regular file, owned by the job's uid, small),
 * and no magic /proc links on the way (watch_open). */
#include "config.h"

#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "daemon/agent/watch.h"
#include "lib/log.h"
#include "lib/text.h"

int
watch_parse_latest(const char *buf, size_t len, uint64_t *step, char *path,
    size_t pathlen)
{
	const char *p = buf, *end = buf + len, *s;
	uint64_t v = 0;
	unsigned d;

	if (buf == NULL || len == 0 || pathlen == 0)
		goto bad;
	/* One line: a single trailing newline (or CRLF) is allowed. */
	if (end[-1] == '\n') {
		end--;
		if (end > p && end[-1] == '\r')
			end--;
	}
	if (memchr(p, '\n', (size_t)(end - p)) != NULL ||
	    memchr(p, '\0', (size_t)(end - p)) != NULL)
		goto bad;
	if (p == end || *p < '0' || *p > '9')
		goto bad;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			goto bad;
		v = v * 10 + d;
	}
	/* Blanks, then the path: the rest of the line, blanks and all. */
	if (p == end || (*p != ' ' && *p != '\t'))
		goto bad;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	if (s == end || (size_t)(end - s) >= pathlen)
		goto bad;
	memcpy(path, s, (size_t)(end - s));
	path[end - s] = '\0';
	/* Sent to the controller as a protobuf string and shown to people:
	 * text without control characters, or no checkpoint at all. */
	if (!text_utf8_valid(path) || text_control_at(path) != -1)
		goto bad;
	*step = v;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* A decimal at *p (before end) into *v, at most max; p moves past it. */
static int
watch_decimal(const char **p, const char *end, uint64_t max, uint64_t *v)
{
	unsigned d;

	*v = 0;
	if (*p == end || **p < '0' || **p > '9')
		return -1;
	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++) {
		d = (unsigned)(**p - '0');
		if (*v > (max - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

int
watch_parse_step(const char *buf, size_t len, uint64_t *step,
    uint32_t *compute_ms)
{
	const char *p = buf, *end = buf + len;
	uint64_t s, ms;

	if (buf == NULL || len == 0)
		goto bad;
	if (end[-1] == '\n') {
		end--;
		if (end > p && end[-1] == '\r')
			end--;
	}
	if (watch_decimal(&p, end, UINT64_MAX, &s) == -1 || p == end ||
	    (*p != ' ' && *p != '\t'))
		goto bad;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (watch_decimal(&p, end, UINT32_MAX, &ms) == -1)
		goto bad;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p != end)
		goto bad;
	*step = s;
	*compute_ms = (uint32_t)ms;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* The thread's own groups while it reads as a user. */
struct watch_saved {
	bool active;
	int dumpable;		/* the kernel clears it on a setfsuid */
	uid_t fsuid;
	gid_t fsgid;
	gid_t *groups;
	int ngroups;
};

/* This thread's supplementary groups, without glibc's broadcast to
 * every thread of the process. */
static int
watch_setgroups(size_t n, const gid_t *groups)
{
#ifdef SYS_setgroups32
	return (int)syscall(SYS_setgroups32, n, groups);
#else
	return (int)syscall(SYS_setgroups, n, groups);
#endif
}

/* Back to the agent's own credentials. Not coming back would leave the
 * agent acting as a user: that is fatal. */
static void
watch_restore(struct watch_saved *s)
{
	if (!s->active)
		return;
	setfsuid(s->fsuid);
	setfsgid(s->fsgid);
	if ((uid_t)setfsuid((uid_t)-1) != s->fsuid ||
	    (gid_t)setfsgid((gid_t)-1) != s->fsgid ||
	    watch_setgroups((size_t)s->ngroups, s->groups) == -1)
		fatal("cannot restore the agent's credentials after a read "
		    "as a job's user");
	free(s->groups);
	s->groups = NULL;
	s->active = false;
	/* Root again in full: let the agent dump core as before. */
	if (s->dumpable > 0)
		(void)prctl(PR_SET_DUMPABLE, s->dumpable);
}

/* Act as cred's user for file access on this thread (only when the
 * agent is root; otherwise tasks run as the agent, who reads as
 * itself). 0, or -1 with errno: EPERM for uid 0 (no job runs as root),
 * ECANCELED when the agent cannot take the user's identity. */
static int
watch_become(const struct watch_cred *c, struct watch_saved *s)
{
	int n;

	memset(s, 0, sizeof(*s));
	if (geteuid() != 0)
		return 0;
	if (c->uid == 0) {
		errno = EPERM;
		return -1;
	}
	if ((n = getgroups(0, NULL)) == -1 ||
	    (s->groups = calloc((size_t)n + 1, sizeof(gid_t))) == NULL ||
	    (n = getgroups(n, s->groups)) == -1) {
		free(s->groups);
		errno = ECANCELED;
		return -1;
	}
	s->ngroups = n;
	s->dumpable = prctl(PR_GET_DUMPABLE);
	s->fsuid = (uid_t)setfsuid((uid_t)-1);
	s->fsgid = (gid_t)setfsgid((gid_t)-1);
	if (watch_setgroups(c->ngroups, c->groups) == -1) {
		free(s->groups);
		errno = ECANCELED;
		return -1;
	}
	s->active = true;
	setfsgid(c->gid);
	setfsuid(c->uid);
	if ((gid_t)setfsgid((gid_t)-1) != c->gid ||
	    (uid_t)setfsuid((uid_t)-1) != c->uid) {
		watch_restore(s);
		errno = ECANCELED;
		return -1;
	}
	return 0;
}

/* Open file with flags, following no "magic" link on the way
 * (/proc/PID/cwd, /proc/PID/root, /proc/PID/fd/N): those are followed
 * with the agent's CAP_SYS_PTRACE, which the fsuid switch keeps, so they
 * would reach another user's directories. openat2 (Linux 5.6) refuses
 * them; on an older kernel a path under /proc is refused instead. */
static int
watch_open_flags(const char *file, int flags)
{
#ifdef SYS_openat2
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)flags;
	how.resolve = RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, AT_FDCWD, file, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
#endif
	if (strncmp(file, "/proc/", 6) == 0) {
		errno = ELOOP;
		return -1;
	}
	return open(file, flags);
}

/* Open file for reading, not following a symbolic link at its end, and
 * without blocking (a FIFO never hangs the agent). */
static int
watch_open(const char *file)
{
	return watch_open_flags(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY);
}

int
watch_read_file(const char *dir, const char *name,
    const struct watch_cred *cred, char *buf, size_t max, size_t *len,
    int64_t *mtime_ms)
{
	char file[WATCH_PATH_MAX + 64];
	struct watch_saved saved;
	struct stat st;
	ssize_t n;
	int fd, e = 0;

	*len = 0;
	if (dir == NULL || name == NULL || cred == NULL ||
	    snprintf(file, sizeof(file), "%s/%s", dir, name) >=
	    (int)sizeof(file)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (watch_become(cred, &saved) == -1)
		return -1;
	fd = watch_open(file);
	if (fd == -1)
		e = errno;
	watch_restore(&saved);
	if (fd == -1) {
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) == -1)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (st.st_uid != cred->uid)
		e = EPERM;
	else if (st.st_size < 0 || (uint64_t)st.st_size > max)
		e = EFBIG;
	while (e == 0 && *len < max) {
		n = read(fd, buf + *len, max - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			e = errno;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	/* Full: one more byte means it grew past max since the fstat. */
	if (e == 0 && *len == max) {
		char extra;

		while ((n = read(fd, &extra, 1)) == -1 && errno == EINTR)
			;
		if (n > 0)
			e = EFBIG;
	}
	close(fd);
	if (e != 0) {
		*len = 0;
		errno = e;
		return -1;
	}
	if (mtime_ms != NULL)
		*mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
	return 0;
}

int
watch_read_latest(const char *dir, const struct watch_cred *cred,
    uint64_t *step, char *path, size_t pathlen, int64_t *mtime_ms)
{
	char buf[WATCH_LATEST_MAX];
	size_t len;

	if (watch_read_file(dir, "LATEST", cred, buf, sizeof(buf), &len,
	    mtime_ms) == -1)
		return -1;
	if (watch_parse_latest(buf, len, step, path, pathlen) == -1) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

int
watch_path_reachable(const char *path, const struct watch_cred *cred)
{
	struct watch_saved saved;
	int fd, e = 0;

	/* A URI or a relative name: the job's own to resolve. */
	if (path == NULL || path[0] != '/')
		return 0;
	if (watch_become(cred, &saved) == -1)
		return -1;
	/* O_PATH: only the walk and the name's existence; no read right
	 * needed, nothing opened that could block. */
	if ((fd = watch_open_flags(path, O_PATH | O_CLOEXEC)) == -1)
		e = errno;
	watch_restore(&saved);
	if (fd == -1) {
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

int
watch_progress_changed(const char *path, uid_t uid, int64_t *ms)
{
	struct stat st;

	*ms = 0;
	if (path == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (lstat(path, &st) == -1)
		return -1;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (st.st_uid != uid) {
		errno = EPERM;
		return -1;
	}
	*ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	return 0;
}

const char *
watch_strerror(int e)
{
	switch (e) {
	case ENOENT:
		return "no such file";
	case EACCES:
		return "the job's user may not read it";
	case ELOOP:
		return "a symbolic link";
	case EINVAL:
		return "not a regular file";
	case EPERM:
		return "owned by another user than the job's";
	case EFBIG:
		return "too large";
	case EBADMSG:
		return "not one line \"STEP PATH\"";
	case ENAMETOOLONG:
		return "path too long";
	case ECANCELED:
		return "the agent cannot take the job user's identity to read "
		    "it";
	default:
		return strerror(e);
	}
}
