/* The CLI's way to the controller (cconn_open in conn.h): through the
 * user's cohort-mux, which holds one TLS connection for every CLI process
 * with the same settings, so that a command costs a Unix-socket round
 * trip instead of an OpenSSL start-up and a handshake.
 *
 * The mux listens on DIR/mux-KEY.sock, DIR being $XDG_RUNTIME_DIR/cohort
 * or /tmp/cohort-UID (created 0700) and KEY a hash of the version, the
 * server address list (parsed: the whole list, in order) and the
 * identity of the three files (so a renewed
 * certificate or an upgrade gets a new mux). A runtime directory the
 * CLI cannot trust or use (not ours, open to others, in a parent others
 * may rename things in, a socket there that another user owns or serves,
 * a path too long for a Unix socket) is not an error: the command says
 * so in one line on stderr and uses a mux of its own on a socket pair,
 * as with COHORT_MUX=no, so that where the CLI runs never decides
 * whether it works. When nobody
 * listens there, the CLI starts one under a lock (DIR/spawn.lock, so
 * that racing CLIs start one between them), and the mux tells it on a
 * pipe whether it reached the controller: "OK", or "E<code> <text>" with
 * the very error the CLI would have met connecting itself ("L<code>
 * <text>" when it could not listen on its socket: only that, a spawn
 * lock the file system refuses and the checks above send the command to
 * a private mux). An XDG_RUNTIME_DIR of another user's (su keeps it)
 * gives way to /tmp/cohort-UID.
 *
 * COHORT_MUX: how long an idle mux stays (a duration, default 60s), or
 * "no"/"0": one mux per command, started on a socket pair, which exits
 * with the command. */
#include "config.h"

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "client/conn_int.h"
#include "lib/clock.h"
#include "lib/duration.h"
#include "lib/fnv.h"

#define MUX_DEFAULT_PERSIST_S 60
#define MUX_MAX_PERSIST_S (24 * 3600)
#define MUX_ATTEMPTS 3
#define MUX_VERDICT_MARGIN_MS 300

/* COHORT_MUX as seconds to persist; 0 means one mux per command. */
static int
mux_persist(int *secs, struct cerr *err)
{
	const char *v = getenv("COHORT_MUX");
	uint64_t s;
	struct cerr why;

	*secs = MUX_DEFAULT_PERSIST_S;
	if (v == NULL || *v == '\0')
		return 0;
	if (strcmp(v, "no") == 0 || strcmp(v, "off") == 0) {
		*secs = 0;
		return 0;
	}
	cerr_clear(&why);
	if (conf_parse_duration(v, 0, MUX_MAX_PERSIST_S, &s, &why) == -1)
		return cerr_set(err, ERR_INVALID, "COHORT_MUX: %s; or 'no'",
		    why.text);
	*secs = (int)s;
	return 0;
}

/* Said once per command: why it does not share the user's mux. */
static void
mux_note_private(const struct cerr *why)
{
	static int said;

	if (said++)
		return;
	fprintf(stderr, "cohort: not sharing cohort-mux: %s; using a private "
	    "connection\n", why->text);
}

/* A directory we may keep sockets in: a directory, ours, closed to
 * others. 0, or -1 with err. */
static int
mux_dir_ours(const char *dir, const struct stat *st, struct cerr *err)
{
	if (!S_ISDIR(st->st_mode))
		return cerr_set(err, ERR_INVALID, "%s is not a directory",
		    dir);
	if (st->st_uid != getuid())
		return cerr_set(err, ERR_INVALID, "%s belongs to uid %u, not "
		    "to us", dir, (unsigned)st->st_uid);
	if ((st->st_mode & 077) != 0)
		return cerr_set(err, ERR_INVALID, "%s is not closed to others "
		    "(mode %03o)", dir, (unsigned)(st->st_mode & 0777));
	return 0;
}

/* dir made if missing, checked to be ours and closed to others. */
static int
mux_dir_make(const char *dir, struct cerr *err)
{
	struct stat st;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return cerr_set(err, ERR_INVALID, "cannot create %s: %s", dir,
		    strerror(errno));
	if (lstat(dir, &st) == -1)
		return cerr_set(err, ERR_INVALID, "%s: %s", dir,
		    strerror(errno));
	return mux_dir_ours(dir, &st, err);
}

/* The directory for our sockets, made if missing, checked to be ours and
 * closed to everyone else, in a parent where nobody else can swap it,
 * and short enough for the socket paths in it. An XDG_RUNTIME_DIR of
 * another user's (su keeps the caller's) gives way to /tmp/cohort-UID,
 * said in one line. 0, or -1 with err saying why it cannot be used. */
static int
mux_dir(char *dir, size_t len, struct cerr *err)
{
	const char *run = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un sun;
	struct stat st;
	struct cerr theirs, why;
	int n;

	cerr_clear(&theirs);
	cerr_clear(&why);
	/* Its parent: others may not rename what is in it (sticky /tmp
	 * is fine), or our directory could be swapped under us. */
	if (run != NULL && run[0] == '/') {
		if (stat(run, &st) == -1)
			return cerr_set(err, ERR_INVALID, "XDG_RUNTIME_DIR %s: "
			    "%s", run, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cerr_set(err, ERR_INVALID, "XDG_RUNTIME_DIR %s "
			    "is not a directory", run);
		if (st.st_uid != getuid() && (st.st_uid != 0 ||
		    access(run, W_OK | X_OK) != 0)) {
			cerr_set(&theirs, ERR_INVALID, "XDG_RUNTIME_DIR %s "
			    "belongs to uid %u, not us", run,
			    (unsigned)st.st_uid);
			run = NULL;
		} else if ((st.st_mode & 022) != 0 &&
		    (st.st_mode & S_ISVTX) == 0)
			return cerr_set(err, ERR_INVALID, "XDG_RUNTIME_DIR %s "
			    "is open to others", run);
	}
	if (run != NULL && run[0] == '/')
		n = snprintf(dir, len, "%s/cohort", run);
	else
		n = snprintf(dir, len, "/tmp/cohort-%u", (unsigned)getuid());
	/* DIR/mux-<16 hex digits>.sock must fit in sun_path. */
	if (n < 0 || (size_t)n >= len ||
	    (size_t)n + sizeof("/mux-0123456789abcdef.sock") >
	    sizeof(sun.sun_path))
		return cerr_set(err, ERR_INVALID, "runtime directory %.*s%s is "
		    "too long a path for a Unix socket (%zu bytes at most)",
		    n > 60 ? 60 : n, dir, n > 60 ? "..." : "",
		    sizeof(sun.sun_path) - sizeof("/mux-0123456789abcdef.sock"));
	if (mux_dir_make(dir, &why) == -1) {
		if (theirs.code != ERR_NONE)
			return cerr_set(err, ERR_INVALID, "%.200s; and %.300s",
			    theirs.text, why.text);
		*err = why;
		return -1;
	}
	if (theirs.code != ERR_NONE)
		fprintf(stderr, "cohort: %s; sharing cohort-mux in %s "
		    "instead\n", theirs.text, dir);
	return 0;
}

/* What makes two commands able to share a mux: the same servers (the
 * whole list, in its order, however it was spaced) and the same files
 * (absolute paths), unchanged. */
static uint64_t
mux_key(const struct cconn_opts *o, const struct addrlist *list)
{
	char a[ADDRLIST_ADDR_TEXT];
	size_t j;
	const char *files[4] = { o->cert, o->key, o->ca, o->crl };
	struct stat st;
	uint64_t h = FNV64_BASIS;
	int i;

	/* Another build speaks for another CLI: a mux of its own. */
	h = fnv64(h, PACKAGE_VERSION, sizeof(PACKAGE_VERSION));
	for (j = 0; j < list->n; j++) {
		addrlist_addr_format(&list->a[j], a, sizeof(a));
		h = fnv64(h, a, strlen(a) + 1);
	}
	h = fnv64(h, "", 1);
	/* A new CRL (its mtime) means a new mux: the old one has checked
	 * the controller against the old list. */
	for (i = 0; i < 4; i++) {
		if (files[i] == NULL)
			continue;
		h = fnv64(h, files[i], strlen(files[i]) + 1);
		memset(&st, 0, sizeof(st));
		if (stat(files[i], &st) == 0) {
			h = fnv64(h, &st.st_dev, sizeof(st.st_dev));
			h = fnv64(h, &st.st_ino, sizeof(st.st_ino));
			h = fnv64(h, &st.st_size, sizeof(st.st_size));
			h = fnv64(h, &st.st_mtim, sizeof(st.st_mtim));
		}
	}
	return h;
}

/* cohort-mux beside this program (build tree or bindir), else on PATH. */
static void
mux_program(char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/cohort-mux", self) <
			    len && access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "cohort-mux");
}

/* Read the mux's verdict from its ready pipe within c's deadline;
 * *cannot_listen is 1 when it failed to listen on its path ("L"), the
 * runtime directory's fault. */
static int
mux_verdict(struct cconn *c, int rfd, int *cannot_listen, struct cerr *err)
{
	char buf[sizeof(err->text) + 16], *sp;
	size_t got = 0;
	ssize_t n;
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	int64_t left;
	long code;

	*cannot_listen = 0;
	for (;;) {
		left = c->deadline - (int64_t)(clock_mono_us() / 1000);
		if (left <= 0)
			return cerr_set(err, ERR_UNAVAILABLE, "controller %s "
			    "did not answer within %d s", c->where,
			    (c->timeout_ms + 999) / 1000);
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)left) == -1 && errno != EINTR)
			return cerr_set(err, ERR_INTERNAL, "poll: %s",
			    strerror(errno));
		if (pfd.revents == 0)
			continue;
		n = read(rfd, buf + got, sizeof(buf) - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || (got += n) == sizeof(buf) - 1 ||
		    memchr(buf, '\n', got) != NULL)
			break;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, "OK") == 0)
		return 0;
	if ((buf[0] == 'E' || buf[0] == 'L') &&
	    (code = strtol(buf + 1, &sp, 10)) > 0 && code <= ERR_LIMIT &&
	    *sp == ' ') {
		*cannot_listen = buf[0] == 'L';
		return cerr_set(err, (enum err_code)code, "%s", sp + 1);
	}
	return cerr_set(err, ERR_UNAVAILABLE, "cohort-mux for controller %s "
	    "exited without a word (is cohort-mux installed beside cohort?)",
	    c->where);
}

/* Start cohort-mux, detached from us (its own session, stdio on
 * /dev/null: it must not hold a pipe a shell waits on), and wait for its
 * verdict (*cannot_listen as in mux_verdict). It listens on path, or
 * with path NULL serves fd alone. */
static int
mux_spawn(struct cconn *c, const struct cconn_opts *o, const char *path,
    int fd, int persist, int *cannot_listen, struct cerr *err)
{
	char prog[PATH_MAX], timeout[16], persist_s[16], fdarg[16], readyarg[16];
	int ready[2], null, rc, st, hi_ready, hi_fd, k;
	int64_t left;
	pid_t pid;

	*cannot_listen = 0;
	if (pipe2(ready, O_CLOEXEC) == -1)
		return cerr_set(err, ERR_INTERNAL, "pipe: %s", strerror(errno));
	mux_program(prog, sizeof(prog));
	/* What is left of our deadline, less a margin: walking a list of
	 * replicas may take all of it, and the mux's verdict (naming what
	 * each said) must reach us before we stop waiting for it. */
	left = c->deadline - (int64_t)(clock_mono_us() / 1000) -
	    MUX_VERDICT_MARGIN_MS;
	snprintf(timeout, sizeof(timeout), "%d", left < 100 ? 100 :
	    left > c->timeout_ms ? c->timeout_ms : (int)left);
	snprintf(persist_s, sizeof(persist_s), "%d", persist);
	snprintf(fdarg, sizeof(fdarg), "%d", 4);
	snprintf(readyarg, sizeof(readyarg), "%d", 3);
	if ((pid = fork()) == -1) {
		close(ready[0]);
		close(ready[1]);
		return cerr_set(err, ERR_INTERNAL, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* Fork again so that the mux is nobody's zombie. */
		setsid();
		if (fork() != 0)
			_exit(0);
		if (chdir("/") == -1)
			_exit(127);
		/* Keep nothing of ours but the two fds it needs (as 3 and 4):
		 * an inherited pipe held open would stall whoever reads it. */
		hi_ready = fcntl(ready[1], F_DUPFD, 10);
		hi_fd = path == NULL ? fcntl(fd, F_DUPFD, 10) : -1;
		if (hi_ready == -1 || dup2(hi_ready, 3) == -1 ||
		    (path == NULL && (hi_fd == -1 || dup2(hi_fd, 4) == -1)))
			_exit(127);
		if (close_range(path == NULL ? 5 : 4, ~0U, 0) == -1)
			for (k = path == NULL ? 5 : 4; k < 65536; k++)
				close(k);	/* kernels before 5.9 */
		if ((null = open("/dev/null", O_RDWR)) != -1) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > 4)
				close(null);
		}
		execlp(prog, "cohort-mux", "--server", o->server, "--cert",
		    o->cert, "--key", o->key, "--ca", o->ca, "--timeout-ms",
		    timeout, "--ready-fd", readyarg,
		    path != NULL ? "--listen" : "--fd",
		    path != NULL ? path : fdarg, "--persist", persist_s,
		    o->crl != NULL ? "--crl" : (char *)NULL, o->crl,
		    (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	rc = mux_verdict(c, ready[0], cannot_listen, err);
	close(ready[0]);
	return rc;
}

/* Connect to path within c's deadline (a full backlog is busy, not
 * gone: wait). The fd, or -1 with errno: ENOENT or ECONNREFUSED when
 * nobody listens there. */
static int
mux_connect(struct cconn *c, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	int fd, saved;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if ((errno == EAGAIN || errno == EINTR) &&
		    (int64_t)(clock_mono_us() / 1000) < c->deadline) {
			nanosleep(&pause, NULL);
			continue;
		}
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* What is at path, if anything, is a socket of ours: one another user
 * put there (or one served by another user's process) could answer our
 * commands in the controller's name. 0, or -1 with err. */
static int
mux_sock_ours(const char *path, struct cerr *err)
{
	struct stat st;

	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		return cerr_set(err, ERR_INVALID, "%s: %s", path,
		    strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid())
		return cerr_set(err, ERR_INVALID, "%s is not a socket of ours "
		    "(uid %u)", path, (unsigned)st.st_uid);
	return 0;
}

/* The process listening on fd's other end runs as us. 0, or -1 with
 * err. */
static int
mux_peer_ours(int fd, const char *path, struct cerr *err)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1)
		return cerr_set(err, ERR_INVALID, "%s: SO_PEERCRED: %s", path,
		    strerror(errno));
	if (cr.uid != getuid())
		return cerr_set(err, ERR_INVALID, "%s is served by uid %u "
		    "(pid %ld), not by us", path, (unsigned)cr.uid,
		    (long)cr.pid);
	return 0;
}

/* Take the spawn lock within c's deadline. 0 or -1 with err. */
static int
mux_lock(struct cconn *c, int lfd, const char *lock, struct cerr *err)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	while (flock(lfd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return cerr_set(err, ERR_INTERNAL, "%s: %s", lock,
			    strerror(errno));
		if ((int64_t)(clock_mono_us() / 1000) >= c->deadline)
			return cerr_set(err, ERR_UNAVAILABLE, "waited %d s for "
			    "another command starting cohort-mux (%s)",
			    (c->timeout_ms + 999) / 1000, lock);
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* fd, connected to path, if a process of ours serves it; else -1 with
 * err. */
static int
mux_checked(int fd, const char *path, struct cerr *err)
{
	if (mux_peer_ours(fd, path, err) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The spawn lock's fd: a regular file of ours, never through a link.
 * -1 with err. */
static int
mux_open_lock(const char *lock, struct cerr *err)
{
	struct stat st;
	int lfd;

	if ((lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1)
		return cerr_set(err, ERR_INVALID, "%s: %s", lock,
		    strerror(errno));
	if (fstat(lfd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid()) {
		close(lfd);
		return cerr_set(err, ERR_INVALID, "%s is not a file of ours",
		    lock);
	}
	return lfd;
}

/* Connect to the shared mux, starting it under the lock when nobody
 * listens. The fd, or -1 with err; *local is 1 when what failed is the
 * runtime directory (a private mux will do), 0 when it is the controller
 * or the mux's start (a private one would fail the same way). */
static int
mux_shared(struct cconn *c, const struct cconn_opts *o,
    const struct addrlist *list, const char *dir, int persist, int *local,
    struct cerr *err)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char lock[PATH_MAX + 16];
	uint64_t key = mux_key(o, list);
	int fd, lfd, e, cannot_listen;

	cerr_clear(err);
	*local = 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/mux-%016" PRIx64 ".sock",
	    dir, key) >= sizeof(path))
		return cerr_set(err, ERR_INVALID, "%s: too long a path for a "
		    "socket", dir);
	if (mux_sock_ours(path, err) == -1)
		return -1;
	if ((fd = mux_connect(c, path)) != -1)
		return mux_checked(fd, path, err);
	if (errno != ENOENT && errno != ECONNREFUSED)
		return cerr_set(err, ERR_UNAVAILABLE, "cannot connect to "
		    "cohort-mux at %s: %s", path, strerror(errno));
	snprintf(lock, sizeof(lock), "%s/spawn.lock", dir);
	if ((lfd = mux_open_lock(lock, err)) == -1)
		return -1;
	if (mux_lock(c, lfd, lock, err) == -1) {
		/* Only another command still starting it stops us; a lock
		 * the file system refuses (NFS without locks) is the
		 * directory's fault. */
		*local = err->code != ERR_UNAVAILABLE;
		close(lfd);
		return -1;
	}
	/* Someone may have started it while we waited. */
	if (mux_sock_ours(path, err) == -1) {
		close(lfd);
		return -1;
	}
	if ((fd = mux_connect(c, path)) == -1) {
		e = errno;
		if (e == ECONNREFUSED || e == ENOENT) {
			unlink(path);	/* a mux that died left its socket */
			if (mux_spawn(c, o, path, -1, persist,
			    &cannot_listen, err) == -1) {
				/* A mux that cannot listen blames our
				 * directory; anything else (the controller,
				 * a fork, TLS) would fail a private one too. */
				*local = cannot_listen;
				close(lfd);
				return -1;
			}
			e = (fd = mux_connect(c, path)) == -1 ? errno : 0;
		}
		if (e != 0)
			cerr_set(err, ERR_UNAVAILABLE, "cannot connect to "
			    "cohort-mux at %s: %s", path, strerror(e));
	}
	close(lfd);
	return fd == -1 ? -1 : mux_checked(fd, path, err);
}

/* A mux of our own on a socket pair, gone with us. The fd, or -1. */
static int
mux_private(struct cconn *c, const struct cconn_opts *o, struct cerr *err)
{
	int sv[2], cannot_listen;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return cerr_set(err, ERR_INTERNAL, "socketpair: %s",
		    strerror(errno));
	if (mux_spawn(c, o, NULL, sv[1], 0, &cannot_listen, err) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1) {
		close(sv[0]);
		return cerr_set(err, ERR_INTERNAL, "fcntl: %s",
		    strerror(errno));
	}
	return sv[0];
}

/* The shared mux, or, when the runtime directory will not do, a private
 * one (saying why once). The fd, or -1 with err. */
static int
mux_any(struct cconn *c, const struct cconn_opts *o,
    const struct addrlist *list, const char *dir, int *persist,
    struct cerr *err)
{
	int fd, local;

	if (*persist == 0)
		return mux_private(c, o, err);
	if ((fd = mux_shared(c, o, list, dir, *persist, &local, err)) != -1 ||
	    !local)
		return fd;
	mux_note_private(err);
	*persist = 0;
	cerr_clear(err);
	cconn_start_op(c);
	return mux_private(c, o, err);
}

/* What a connection keeps to open a new one (see mux_reopen). */
struct mux_saved {
	struct cconn_opts o;
	char *server, *cert, *key, *ca, *crl;
};

static void
mux_saved_free(void *arg)
{
	struct mux_saved *s = arg;

	if (s == NULL)
		return;
	free(s->server);
	free(s->cert);
	free(s->key);
	free(s->ca);
	free(s->crl);
	free(s);
}

static struct mux_saved *
mux_saved_new(const struct cconn_opts *o)
{
	struct mux_saved *s;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->server = strdup(o->server)) == NULL ||
	    (s->cert = strdup(o->cert)) == NULL ||
	    (s->key = strdup(o->key)) == NULL ||
	    (s->ca = strdup(o->ca)) == NULL ||
	    (o->crl != NULL && (s->crl = strdup(o->crl)) == NULL)) {
		mux_saved_free(s);
		return NULL;
	}
	s->o = *o;
	s->o.server = s->server;
	s->o.cert = s->cert;
	s->o.key = s->key;
	s->o.ca = s->ca;
	s->o.crl = s->crl;
	return s;
}

/* A new connection through the mux in place of c's broken one: the mux
 * whose controller went has removed its socket, so this starts (or
 * finds, if another command was first) the one that looks for the new
 * leader. c keeps its id counter; 0, or -1 with err. */
static int
mux_reopen(struct cconn *c, struct cerr *err)
{
	struct mux_saved *s = c->reopen_arg;
	struct cconn *n;

	if ((n = cconn_open(&s->o, err)) == NULL)
		return -1;
	if (c->tr != NULL && c->tr->close != NULL)
		c->tr->close(c);
	if (c->fd != -1)
		close(c->fd);
	free(c->identity);
	free(c->role);
	c->fd = n->fd;
	c->tr = n->tr;
	c->identity = n->identity;
	c->role = n->role;
	c->max_frame = n->max_frame;
	c->broken = c->eof = 0;
	n->fd = -1;
	n->tr = NULL;
	n->identity = n->role = NULL;
	cconn_close(n);
	return 0;
}

struct cconn *
cconn_open(const struct cconn_opts *opts, struct cerr *err)
{
	char dir[PATH_MAX];
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX], crl[PATH_MAX];
	struct cconn_opts ro = *opts, *o = &ro;
	struct addrlist list;
	struct cconn *c;
	int persist, i;

	if (cconn_check_opts(opts, &list, err) == -1 ||
	    mux_persist(&persist, err) == -1)
		return NULL;
	if (persist > 0 && mux_dir(dir, sizeof(dir), err) == -1) {
		mux_note_private(err);
		cerr_clear(err);
		persist = 0;
	}
	/* The mux runs in / and outlives our working directory. */
	if (realpath(opts->cert, cert) == NULL ||
	    realpath(opts->key, key) == NULL || realpath(opts->ca, ca) == NULL) {
		cerr_set(err, ERR_INVALID, "cannot resolve the certificate "
		    "paths: %s", strerror(errno));
		return NULL;
	}
	if (opts->crl != NULL && realpath(opts->crl, crl) == NULL) {
		cerr_set(err, ERR_INVALID, "CRL file %s (COHORT_CRL): %s",
		    opts->crl, strerror(errno));
		return NULL;
	}
	ro.cert = cert;
	ro.key = key;
	ro.ca = ca;
	ro.crl = opts->crl != NULL ? crl : NULL;
	/* A mux that is exiting (idle, or its controller gone) may close
	 * before it answers hello; nothing was sent on then, so try again. */
	for (i = 0; i < MUX_ATTEMPTS; i++) {
		if ((c = cconn_new(o, err)) == NULL)
			return NULL;
		cconn_start_op(c);
		c->fd = mux_any(c, o, &list, dir, &persist, err);
		if (c->fd != -1 && cconn_hello(c, err) == 0) {
			/* Without memory for it, a read simply is not sent
			 * again after a failover. */
			if ((c->reopen_arg = mux_saved_new(o)) != NULL) {
				c->reopen = mux_reopen;
				c->reopen_free = mux_saved_free;
			}
			return c;
		}
		if (c->fd == -1 || !c->eof || persist == 0) {
			cconn_close(c);
			return NULL;
		}
		cconn_close(c);
	}
	return NULL;
}
