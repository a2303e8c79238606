/* Container images on this node: the cache and the tasks' bundles (see
 * container.h). */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/agent/cdi.h"
#include "daemon/agent/container.h"
#include "daemon/agent/imgdigest.h"
#include "daemon/agent/ocispec.h"
#include "daemon/agent/tasks_int.h"
#include "lib/clock.h"
#include "lib/fnv.h"
#include "lib/log.h"

/* GPU device nodes given to one container, at most. */
#define INV_MAX_CTR_DEVS 24

/* The child's exit codes besides 0 (unpacked): */
#define PREP_CACHED	10	/* the entry was there already */
#define PREP_ACCESS	64	/* + errno: the user may not read it */
#define PREP_SCRIPT	100	/* and up: the script failed */
#define PREP_NO_SKOPEO	107	/* a registry's image, and no skopeo */

/* $1 kind (oci, sqsh, docker), $2 the source (docker: skopeo's,
 * docker://HOST/IMAGE:TAG), $3 the tag, $4 the entry, $5 the cache's
 * cap in KiB. See container.h. A registry's image is copied with skopeo
 * into an OCI layout in the entry, unpacked like any other, and only
 * the layout's index.json kept (its manifest digest); the cached entry
 * is used as long as it stays in the cache. */
static const char prep_script[] =
"set -u\n"
"kind=$1 src=$2 tag=$3 dest=$4 cap=$5\n"
"umask 022\n"
"cache=${dest%/*}\n"
"mkdir -p \"$cache\" || exit 100\n"
"# A preparation killed past prepare_timeout left its work behind.\n"
"rm -rf \"$dest\".tmp.*\n"
"if [ \"$kind\" = docker ]; then\n"
"	id=$src\n"
"else\n"
"	if [ \"$kind\" = oci ]; then idf=$src/index.json; else idf=$src; fi\n"
"	id=$(stat -L -c '%d:%i:%s:%Y' \"$idf\") || exit 101\n"
"fi\n"
"if [ -d \"$dest/rootfs\" ] && [ -e \"$dest/lock\" ] &&\n"
"    [ \"$(cat \"$dest/identity\" 2>/dev/null)\" = \"$id:$tag\" ]; then\n"
"	touch -c \"$dest\"\n"
"	exit 10\n"
"fi\n"
"tmp=$dest.tmp.$$\n"
"rm -rf \"$tmp\"\n"
"mkdir -p \"$tmp\" || exit 102\n"
"if [ \"$kind\" = docker ]; then\n"
"	if ! command -v skopeo >/dev/null; then\n"
"		rm -rf \"$tmp\"; exit 107\n"
"	fi\n"
"	skopeo copy --quiet \"$src\" \"oci:$tmp/oci:$tag\" >&2 &&\n"
"	    umoci raw unpack --image \"$tmp/oci:$tag\" \"$tmp/rootfs\" >&2 &&\n"
"	    mv \"$tmp/oci/index.json\" \"$tmp/index.json\" &&\n"
"	    rm -rf \"$tmp/oci\" && mkdir \"$tmp/oci\" &&\n"
"	    mv \"$tmp/index.json\" \"$tmp/oci/index.json\"\n"
"elif [ \"$kind\" = oci ]; then\n"
"	umoci raw unpack --image \"$src:$tag\" \"$tmp/rootfs\" >&2\n"
"else\n"
"	unsquashfs -no-progress -quiet -d \"$tmp/rootfs\" \"$src\" >&2\n"
"fi\n"
"if [ $? -ne 0 ] || [ ! -d \"$tmp/rootfs\" ]; then\n"
"	rm -rf \"$tmp\"; exit 103\n"
"fi\n"
"chmod 755 \"$tmp/rootfs\"\n"
"# A squashfs file's sha256, what the image is known by (an OCI\n"
"# layout's manifest digest is read from its index).\n"
"if [ \"$kind\" = sqsh ]; then\n"
"	sha256sum \"$src\" 2>/dev/null | cut -d' ' -f1 >\"$tmp/digest\"\n"
"fi\n"
"echo \"$id:$tag\" >\"$tmp/identity\" && : >\"$tmp/lock\" &&\n"
"    du -sk \"$tmp/rootfs\" | cut -f1 >\"$tmp/size\" ||\n"
"	{ rm -rf \"$tmp\"; exit 104; }\n"
"# An older unpack of the same path may still be in use: it goes out of\n"
"# the way and is evicted like any other entry.\n"
"if [ -e \"$dest\" ]; then mv \"$dest\" \"$dest.old.$$\" || exit 105; fi\n"
"mv \"$tmp\" \"$dest\" || exit 106\n"
"touch \"$dest\"\n"
"IFS='\n"
"'\n"
"total=0\n"
"for s in $(cat \"$cache\"/*/size 2>/dev/null); do total=$((total + s)); done\n"
"for d in $(ls -1dtr \"$cache\"/*/ 2>/dev/null); do\n"
"	d=${d%/}\n"
"	[ \"$total\" -le \"$cap\" ] && break\n"
"	[ \"$d\" = \"$dest\" ] && continue\n"
"	case $d in *.tmp.*) continue ;; esac\n"
"	[ -n \"$(find \"$d\" -maxdepth 0 -mmin -1)\" ] && continue\n"
"	sz=$(cat \"$d/size\" 2>/dev/null || echo 0)\n"
"	if [ ! -e \"$d/lock\" ] ||\n"
"	    flock -n -x \"$d/lock\" rm -rf \"$d\"; then\n"
"		rm -rf \"$d\"\n"
"		total=$((total - sz))\n"
"		echo \"cohort: evicted $d ($sz KiB)\" >&2\n"
"	fi\n"
"done\n"
"exit 0\n";

struct ctr_req {
	char image[CTR_TEXT_MAX];
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	ctr_done_cb cb;
	void *arg;
	bool cancelled;
	struct ctr_result res;
	int64_t queued_ms;
	TAILQ_ENTRY(ctr_req) entry;
};

struct ctr_cache {
	struct event_base *base;
	const struct agent_config *cfg;
	char dir[PATH_MAX];		/* the cache */
	char log[PATH_MAX];		/* the running child's output */
	TAILQ_HEAD(, ctr_req) queue;	/* the head runs when pid != 0 */
	pid_t pid;
	int pidfd;
	struct event *exit_ev;		/* pidfd readable */
	struct event *next_ev;		/* run the next, or report */
	struct event *timeout_ev;	/* the running one's prepare_timeout */
	bool timed_out;			/* ... passed: its group killed */
	struct ctr_req *running;
	char entry[PATH_MAX];		/* the running one's */
	struct cdi_spec *cdi;		/* nvidia.com/gpu, or NULL */
};

static void ctr_run_next(struct ctr_cache *c);

/* The running preparation passed prepare_timeout: its whole process
 * group (the script and its unpack) is killed; its exit, which follows,
 * answers the request. */
static void
ctr_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctr_cache *c = arg;

	(void)fd;
	(void)what;
	if (c->pid <= 0)
		return;
	c->timed_out = true;
	log_warnx("container image %s: still preparing after "
	    "prepare_timeout (%" PRIu64 " s): killing it",
	    c->running != NULL ? c->running->image : "?",
	    c->cfg->ctr_prepare_timeout_ms / 1000);
	if (kill(-c->pid, SIGKILL) == -1 && errno == ESRCH)
		kill(c->pid, SIGKILL);
}

static void
ctr_next_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ctr_run_next(arg);
}

/* snprintf for texts that may be cut (messages, paths checked before). */
static void __attribute__((format(printf, 3, 4)))
fmt_to(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(buf, len, fmt, ap) < 0)
		buf[0] = '\0';
	va_end(ap);
}

struct ctr_cache *
ctr_cache_create(struct event_base *base, const struct agent_config *cfg,
    struct cerr *err)
{
	struct ctr_cache *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->base = base;
	c->cfg = cfg;
	c->pidfd = -1;
	TAILQ_INIT(&c->queue);
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s", cfg->ctr_cache !=
	    NULL ? cfg->ctr_cache : cfg->spool) >= sizeof(c->dir) - 64 ||
	    (cfg->ctr_cache == NULL && strlen(c->dir) + 8 >= sizeof(c->dir))) {
		free(c);
		cerr_set(err, ERR_INVALID, "container cache path too long");
		return NULL;
	}
	if (cfg->ctr_cache == NULL)
		strcat(c->dir, "/images");
	snprintf(c->log, sizeof(c->log), "%s/.prepare.log", c->dir);
	if ((c->next_ev = evtimer_new(base, ctr_next_cb, c)) == NULL ||
	    (c->timeout_ev = evtimer_new(base, ctr_timeout_cb, c)) == NULL) {
		if (c->next_ev != NULL)
			event_free(c->next_ev);
		free(c);
		cerr_set(err, ERR_INTERNAL, "cannot create a timer");
		return NULL;
	}
	if (cfg->ctr_enabled)
		c->cdi = cdi_node_load(cfg->ctr_cdi_dirs);
	return c;
}

static void
req_free(struct ctr_req *r)
{
	if (r != NULL) {
		free(r->groups);
		free(r);
	}
}

void
ctr_cache_destroy(struct ctr_cache *c)
{
	struct ctr_req *r;

	if (c == NULL)
		return;
	while ((r = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, r, entry);
		req_free(r);
	}
	/* A child still unpacking finishes on its own; init reaps it. */
	if (c->exit_ev != NULL)
		event_free(c->exit_ev);
	if (c->pidfd != -1)
		close(c->pidfd);
	event_free(c->next_ev);
	event_free(c->timeout_ev);
	cdi_spec_free(c->cdi);
	free(c);
}

const struct cdi_spec *
ctr_cache_cdi(const struct ctr_cache *c)
{
	return c != NULL ? c->cdi : NULL;
}

struct ctr_req *
ctr_prepare(struct ctr_cache *c, const char *image, uid_t uid, gid_t gid,
    const gid_t *groups, size_t ngroups, ctr_done_cb cb, void *arg)
{
	struct ctr_req *r;
	struct timeval now = { 0, 0 };

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if (ngroups > 0 && (r->groups = calloc(ngroups,
	    sizeof(*groups))) == NULL) {
		free(r);
		return NULL;
	}
	snprintf(r->image, sizeof(r->image), "%s", image);
	r->uid = uid;
	r->gid = gid;
	if (ngroups > 0)
		memcpy(r->groups, groups, ngroups * sizeof(*groups));
	r->ngroups = ngroups;
	r->cb = cb;
	r->arg = arg;
	r->queued_ms = clock_now_ms();
	TAILQ_INSERT_TAIL(&c->queue, r, entry);
	if (c->pid == 0)
		evtimer_add(c->next_ev, &now);
	return r;
}

void
ctr_req_cancel(struct ctr_cache *c, struct ctr_req *r)
{
	if (r == NULL)
		return;
	if (r == c->running) {
		r->cancelled = true;	/* freed when its child ends */
		return;
	}
	TAILQ_REMOVE(&c->queue, r, entry);
	req_free(r);
}

/* r is done: out of the queue, told, freed. */
static void
req_finish(struct ctr_cache *c, struct ctr_req *r)
{
	TAILQ_REMOVE(&c->queue, r, entry);
	r->res.ms = clock_now_ms() - r->queued_ms;
	if (!r->cancelled)
		r->cb(r->arg, &r->res);
	req_free(r);
}

/* Fail r at once (nothing to run), with a reason. */
static void __attribute__((format(printf, 4, 5)))
req_fail(struct ctr_cache *c, struct ctr_req *r, int e, const char *fmt,
    ...)
{
	va_list ap;

	r->res.err = e;
	r->res.permanent = true;
	va_start(ap, fmt);
	vsnprintf(r->res.why, sizeof(r->res.why), fmt, ap);
	va_end(ap);
	req_finish(c, r);
}

/* The paths the user must be able to read, as the user. */
static void
access_paths(const struct ctr_image_ref *ref, char p[3][PATH_MAX],
    int mode[3], size_t *n)
{
	if (ref->kind == CTR_IMAGE_OCI) {
		fmt_to(p[0], PATH_MAX, "%s", ref->path);
		mode[0] = R_OK | X_OK;
		fmt_to(p[1], PATH_MAX, "%s/index.json", ref->path);
		mode[1] = R_OK;
		fmt_to(p[2], PATH_MAX, "%s/blobs", ref->path);
		mode[2] = R_OK | X_OK;
		*n = 3;
	} else if (ref->kind == CTR_IMAGE_SQUASHFS) {
		fmt_to(p[0], PATH_MAX, "%s", ref->path);
		mode[0] = R_OK;
		*n = 1;
	} else
		*n = 0;	/* a registry's: whoever the node lets import it */
}

/* In the child: only system calls until the exec. */
static void __attribute__((noreturn))
prep_child(const struct ctr_req *r, char p[3][PATH_MAX], const int *mode,
    size_t n, int logfd, char *const *argv, char *const *envp)
{
	struct stat st;
	size_t i;
	int e;

	setpgid(0, 0);
	if (dup2(logfd, 1) == -1 || dup2(logfd, 2) == -1)
		_exit(PREP_SCRIPT + 20);
	close_range(3, ~0U, 0);
	/* The user's view, not root's: its groups, gid and uid as the
	 * effective ones (root stays the real and saved uid to come
	 * back to). */
	if (setgroups(r->ngroups, r->groups) == -1 ||
	    setresgid((gid_t)-1, r->gid, (gid_t)-1) == -1 ||
	    setresuid((uid_t)-1, r->uid, (uid_t)-1) == -1)
		_exit(PREP_SCRIPT + 21);
	for (i = 0; i < n; i++)
		if (faccessat(AT_FDCWD, p[i], mode[i], AT_EACCESS) == -1) {
			e = errno;
			_exit(PREP_ACCESS + (e > 0 && e < 35 ? e : EIO));
		}
	/* A squashfs image is a file; a layout a directory. */
	if (n > 0 && stat(p[0], &st) == -1)
		_exit(PREP_ACCESS + ENOENT);
	if (n == 1 && !S_ISREG(st.st_mode))
		_exit(PREP_ACCESS + EISDIR);
	if (setresuid((uid_t)-1, 0, (uid_t)-1) == -1 ||
	    setresgid((gid_t)-1, 0, (gid_t)-1) == -1 ||
	    setgroups(0, NULL) == -1)
		_exit(PREP_SCRIPT + 21);
	execve("/bin/sh", argv, envp);
	_exit(PREP_SCRIPT + 22);
}

/* What the image just prepared is known by; none, said once in the log,
 * when it cannot be read (an entry made before digests were kept). */
static void
prep_digest(struct ctr_cache *c, struct ctr_req *r)
{
	struct ctr_image_ref ref;
	struct cerr err;
	char layout[PATH_MAX];
	int rc;

	r->res.digest[0] = '\0';
	if (ctr_image_parse(r->image, &ref, &err) == -1)
		return;
	if (ref.kind == CTR_IMAGE_OCI)
		rc = imgdigest_oci(ref.path, ref.tag, r->res.digest,
		    sizeof(r->res.digest), &err);
	else if (ref.kind == CTR_IMAGE_DOCKER) {
		/* The imported layout's index, kept in the entry. */
		fmt_to(layout, sizeof(layout), "%s/oci", c->entry);
		rc = imgdigest_oci(layout, ref.tag, r->res.digest,
		    sizeof(r->res.digest), &err);
	} else
		rc = imgdigest_entry(c->entry, r->res.digest,
		    sizeof(r->res.digest), &err);
	if (rc == -1)
		log_info("container image %s: no digest: %s", r->image,
		    err.text);
}

static void
prep_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctr_cache *c = arg;
	struct ctr_req *r = c->running;
	struct timeval now = { 0, 0 };
	char tail[400], *nl;
	int st = 0, code;
	ssize_t n;
	pid_t w;

	(void)fd;
	(void)what;
	while ((w = waitpid(c->pid, &st, 0)) == -1 && errno == EINTR)
		;
	event_free(c->exit_ev);
	c->exit_ev = NULL;
	evtimer_del(c->timeout_ev);
	if (c->pidfd != -1)
		close(c->pidfd);
	c->pidfd = -1;
	c->pid = 0;
	c->running = NULL;
	code = w == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (c->timed_out) {
		/* Another node, or this one later, may do better: the
		 * controller backs off and tries again. */
		c->timed_out = false;
		r->res.err = ETIMEDOUT;
		r->res.permanent = false;
		fmt_to(r->res.why, sizeof(r->res.why), "preparing the "
		    "container image '%s' took longer than [container] "
		    "prepare_timeout (%" PRIu64 " s): killed", r->image,
		    c->cfg->ctr_prepare_timeout_ms / 1000);
	} else if (code == PREP_NO_SKOPEO) {
		r->res.err = ENOENT;
		r->res.permanent = true;
		fmt_to(r->res.why, sizeof(r->res.why), "cannot import the "
		    "container image '%s': skopeo is not installed on this "
		    "node (Debian's skopeo package)", r->image);
	} else if (code == 0 || code == PREP_CACHED) {
		r->res.cached = code == PREP_CACHED;
		fmt_to(r->res.rootfs, sizeof(r->res.rootfs), "%s/rootfs",
		    c->entry);
		fmt_to(r->res.lock, sizeof(r->res.lock), "%s/lock",
		    c->entry);
		prep_digest(c, r);
	} else if (code > PREP_ACCESS && code < PREP_SCRIPT) {
		r->res.err = code - PREP_ACCESS;
		r->res.permanent = true;
		fmt_to(r->res.why, sizeof(r->res.why), "cannot read the "
		    "container image '%s' as the job's user: %s", r->image,
		    strerror(r->res.err));
	} else {
		/* The script's last words, for the reason. */
		tail[0] = '\0';
		if ((fd = open(c->log, O_RDONLY | O_CLOEXEC)) != -1) {
			off_t end = lseek(fd, 0, SEEK_END);

			if (end > (off_t)sizeof(tail) - 1)
				lseek(fd, end - (off_t)sizeof(tail) + 1,
				    SEEK_SET);
			else
				lseek(fd, 0, SEEK_SET);
			if ((n = read(fd, tail, sizeof(tail) - 1)) < 0)
				n = 0;
			tail[n] = '\0';
			close(fd);
			while (n > 0 && tail[n - 1] == '\n')
				tail[--n] = '\0';
			if ((nl = strrchr(tail, '\n')) != NULL)
				memmove(tail, nl + 1, strlen(nl + 1) + 1);
		}
		r->res.err = EIO;
		r->res.permanent = false;
		fmt_to(r->res.why, sizeof(r->res.why), "cannot prepare the "
		    "container image '%s' in %s (exit %d)%s%s", r->image,
		    c->dir, code, tail[0] != '\0' ? ": " : "", tail);
	}
	if (r->res.err == 0)
		log_info("container image %s: %s for uid %u in %" PRId64
		    " ms (%s)", r->image, r->res.cached ? "cached" :
		    "unpacked", (unsigned)r->uid, clock_now_ms() -
		    r->queued_ms, c->entry);
	else
		log_warnx("container image %s: %s", r->image, r->res.why);
	req_finish(c, r);
	if (!TAILQ_EMPTY(&c->queue))
		evtimer_add(c->next_ev, &now);
}

/* Start the head of the queue (from the loop: next_ev). */
static void
ctr_run_next(struct ctr_cache *c)
{
	const struct agent_config *cfg = c->cfg;
	struct ctr_image_ref ref;
	struct ctr_req *r;
	struct cerr err;
	char p[3][PATH_MAX], cap[32], key[40], src[CTR_TEXT_MAX];
	char *argv[9], *envp[2];
	const char *kind;
	struct timeval tmo;
	int mode[3], logfd;
	size_t n;
	uint64_t h;

	while (c->pid == 0 && (r = TAILQ_FIRST(&c->queue)) != NULL) {
		if (!cfg->ctr_enabled) {
			req_fail(c, r, EOPNOTSUPP, "containers are disabled "
			    "on this node ([container] enabled = no): cannot "
			    "run in image '%s'", r->image);
			continue;
		}
		if (cfg->ctr_runtime == NULL) {
			req_fail(c, r, ENOENT, "no container runtime (%s) on "
			    "this node: cannot run in image '%s'",
			    cfg->ctr_runtime_name != NULL ?
			    cfg->ctr_runtime_name : "runc", r->image);
			continue;
		}
		if (ctr_image_parse(r->image, &ref, &err) == -1) {
			req_fail(c, r, EINVAL, "%s", err.text);
			continue;
		}
		kind = ref.kind == CTR_IMAGE_OCI ? "oci" :
		    ref.kind == CTR_IMAGE_DOCKER ? "docker" : "sqsh";
		if (ref.kind == CTR_IMAGE_DOCKER) {
			if (!ctr_registry_allowed(cfg->ctr_registries,
			    ref.registry)) {
				req_fail(c, r, EACCES, "cannot import the "
				    "container image '%s': registry %s is not "
				    "allowed on this node ([container] "
				    "registries = %s)", r->image,
				    ref.registry[0] != '\0' ? ref.registry :
				    CTR_DEFAULT_REGISTRY " (the default)",
				    cfg->ctr_registries != NULL ?
				    cfg->ctr_registries : "none");
				continue;
			}
			/* The source, skopeo's form, stands for the path. */
			if (ctr_image_source(&ref, src, sizeof(src)) == -1) {
				req_fail(c, r, EINVAL, "container image '%s': "
				    "too long", r->image);
				continue;
			}
			fmt_to(ref.path, sizeof(ref.path), "%s", src);
		}
		h = fnv64_str(FNV64_BASIS, kind);
		h = fnv64_str(h, ref.path);
		h = fnv64_str(h, ref.tag);
		snprintf(key, sizeof(key), "%016" PRIx64, h);
		fmt_to(c->entry, sizeof(c->entry), "%s/%s", c->dir, key);
		snprintf(cap, sizeof(cap), "%" PRIu64, cfg->ctr_cache_max /
		    1024);
		access_paths(&ref, p, mode, &n);
		/* Root's alone: a user reaches an image's files only through
		 * a container, after the check above, never by its path. */
		if ((mkdir(c->dir, 0700) == -1 && errno != EEXIST) ||
		    chmod(c->dir, 0700) == -1) {
			req_fail(c, r, errno, "cannot create the container "
			    "cache %s: %s", c->dir, strerror(errno));
			continue;
		}
		if ((logfd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0600)) == -1) {
			req_fail(c, r, errno, "cannot write %s: %s", c->log,
			    strerror(errno));
			continue;
		}
		argv[0] = (char *)"sh";
		argv[1] = (char *)"-c";
		argv[2] = (char *)prep_script;
		argv[3] = (char *)"sh";
		argv[4] = (char *)kind;
		argv[5] = ref.path;
		argv[6] = ref.tag;
		argv[7] = c->entry;
		argv[8] = NULL;
		/* $5, the cap: argv has room for it. */
		{
			char *full[10];

			memcpy(full, argv, 8 * sizeof(*argv));
			full[8] = cap;
			full[9] = NULL;
			envp[0] = (char *)"PATH=/usr/local/sbin:/usr/local/bin:"
			    "/usr/sbin:/usr/bin:/sbin:/bin";
			envp[1] = NULL;
			c->pid = fork();
			if (c->pid == 0)
				prep_child(r, p, mode, n, logfd, full, envp);
		}
		close(logfd);
		/* Its own group from the start, as the child makes it, so
		 * that prepare_timeout's kill reaches all of it. */
		if (c->pid > 0)
			(void)setpgid(c->pid, c->pid);
		if (c->pid == -1) {
			c->pid = 0;
			req_fail(c, r, errno, "cannot fork to prepare '%s': "
			    "%s", r->image, strerror(errno));
			continue;
		}
		c->running = r;
		if ((c->pidfd = pidfd_open(c->pid, 0)) == -1 ||
		    (c->exit_ev = event_new(c->base, c->pidfd, EV_READ,
		    prep_exit_cb, c)) == NULL ||
		    event_add(c->exit_ev, NULL) == -1) {
			/* Cannot watch it: wait for it here, once. */
			log_warnx("container image %s: cannot watch the "
			    "preparation; waiting for it", r->image);
			if (c->exit_ev != NULL) {
				event_free(c->exit_ev);
				c->exit_ev = NULL;
			}
			c->exit_ev = event_new(c->base, -1, 0, prep_exit_cb, c);
			prep_exit_cb(-1, 0, c);
			return;
		}
		tmo.tv_sec = (time_t)(cfg->ctr_prepare_timeout_ms / 1000);
		tmo.tv_usec = (suseconds_t)(cfg->ctr_prepare_timeout_ms %
		    1000 * 1000);
		c->timed_out = false;
		if (evtimer_add(c->timeout_ev, &tmo) == -1)
			log_warnx("container image %s: cannot bound its "
			    "preparation's time", r->image);
		log_info("container image %s: preparing for uid %u in %s",
		    r->image, (unsigned)r->uid, c->entry);
	}
}

/* rmdir dir's subdirectories, deepest first, then dir. */
static void
rmdir_tree(const char *dir, int depth)
{
	struct dirent *de;
	char sub[PATH_MAX];
	DIR *d;

	if (depth < 8 && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
			    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir,
			    de->d_name) < sizeof(sub))
				rmdir_tree(sub, depth + 1);
		closedir(d);
	}
	rmdir(dir);
}

void
container_cgroup_v1_end(const char *job_path)
{
	const char *rel = container_cgroup_rel(job_path);
	struct dirent *de;
	char dir[PATH_MAX], *slash;
	DIR *d;

	/* Only a hybrid layout has v1 hierarchies beside unified/. */
	if (rel == NULL || strncmp(job_path, "/sys/fs/cgroup/unified/", 23)
	    != 0 || (d = opendir("/sys/fs/cgroup")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "unified") == 0)
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s",
		    de->d_name, rel) >= sizeof(dir))
			continue;
		rmdir_tree(dir, 0);
		/* And the agent's base there, once no job holds it. */
		if ((slash = strrchr(dir, '/')) != NULL) {
			*slash = '\0';
			rmdir(dir);
		}
	}
	closedir(d);
}

const char *
container_cgroup_rel(const char *abs)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/unified",
	    "/sys/fs/cgroup", NULL };
	size_t i, n;

	if (abs == NULL)
		return NULL;
	for (i = 0; mounts[i] != NULL; i++) {
		n = strlen(mounts[i]);
		if (strncmp(abs, mounts[i], n) == 0 && abs[n] == '/')
			return abs + n;
	}
	return NULL;
}

/* The GPU device nodes of the task's GPUs, and the driver's shared ones,
 * where they exist here. */
static size_t
gpu_devs(const struct ctr_launch *cl, struct ocispec_dev *devs,
    char (*paths)[32], size_t max)
{
	static const char *const shared[] = { "/dev/nvidiactl",
	    "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", NULL };
	struct stat st;
	size_t i, n = 0;

	for (i = 0; i < cl->ngpus && n < max; i++) {
		fmt_to(paths[n], 32, "/dev/nvidia%u", cl->gpus[i]);
		if (stat(paths[n], &st) == 0 && S_ISCHR(st.st_mode)) {
			devs[n].path = paths[n];
			devs[n].major = major(st.st_rdev);
			devs[n].minor = minor(st.st_rdev);
			n++;
		}
	}
	if (n == 0)
		return 0;
	for (i = 0; shared[i] != NULL && n < max; i++)
		if (stat(shared[i], &st) == 0 && S_ISCHR(st.st_mode)) {
			fmt_to(paths[n], 32, "%s", shared[i]);
			devs[n].path = paths[n];
			devs[n].major = major(st.st_rdev);
			devs[n].minor = minor(st.st_rdev);
			n++;
		}
	return n;
}

/* Where the task starts inside: --container-workdir, else the job's
 * directory when the image has it or a mount brings it, else "/". */
static const char *
task_cwd(const struct ctr_launch *cl, const char *rootfs, const char *wd,
    const struct ctr_mount *m, size_t nm)
{
	char path[PATH_MAX];
	struct stat st;
	size_t i, n;

	if (cl->opts->workdir != NULL)
		return cl->opts->workdir;
	if (wd == NULL || wd[0] != '/')
		return "/";
	for (i = 0; i < nm; i++) {
		n = strlen(m[i].dst);
		if (strncmp(wd, m[i].dst, n) == 0 && (wd[n] == '\0' ||
		    wd[n] == '/'))
			return wd;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s", rootfs, wd) <
	    sizeof(path) && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return wd;
	return "/";
}

static int
mkdir_exact(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return -1;
	return chmod(path, mode);
}

/* Every bind: the admin's, the job's, the user's home, the start's
 * spool directory (its script, progress and credential files). */
static int
all_mounts(const struct ctr_launch *cl, struct ctr_mount **out, size_t *n,
    struct cerr *err)
{
	struct ctr_mount *a = NULL, *j = NULL, *all;
	size_t na = 0, nj = 0, k = 0, i;

	*out = NULL;
	*n = 0;
	if ((cl->admin_mounts != NULL && ctr_mounts_parse(cl->admin_mounts,
	    &a, &na, err) == -1) || (cl->opts->mounts != NULL &&
	    ctr_mounts_parse(cl->opts->mounts, &j, &nj, err) == -1)) {
		ctr_mounts_free(a, na);
		return -1;
	}
	if ((all = calloc(na + nj + 2, sizeof(*all))) == NULL) {
		ctr_mounts_free(a, na);
		ctr_mounts_free(j, nj);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	for (i = 0; i < na; i++)
		all[k++] = a[i];
	for (i = 0; i < nj; i++)
		all[k++] = j[i];
	free(a);
	free(j);
	if (cl->opts->mount_home && cl->home != NULL && cl->home[0] == '/' &&
	    strcmp(cl->home, "/") != 0) {
		all[k].src = strdup(cl->home);
		all[k].dst = strdup(cl->home);
		all[k].propagation = "rprivate";
		if (all[k].src == NULL || all[k].dst == NULL) {
			ctr_mounts_free(all, k + 1);
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		k++;
	}
	all[k].src = strdup(cl->startdir);
	all[k].dst = strdup(cl->startdir);
	all[k].propagation = "rprivate";
	if (all[k].src == NULL || all[k].dst == NULL) {
		ctr_mounts_free(all, k + 1);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	*out = all;
	*n = k + 1;
	return 0;
}

static int
write_file(const char *path, const char *text, size_t len)
{
	ssize_t w;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	while (len > 0) {
		if ((w = write(fd, text, len)) == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		text += w;
		len -= (size_t)w;
	}
	return close(fd);
}

int
container_task_prep(struct launch *L, const struct task_launch *l,
    struct cerr *err)
{
	const struct ctr_launch *cl = l->ctr;
	const struct ctr_result *res = cl->res;
	struct ocispec_dev devs[INV_MAX_CTR_DEVS];
	char devpaths[INV_MAX_CTR_DEVS][32];
	char bundle[PATH_MAX], path[PATH_MAX], state[PATH_MAX];
	char layer[PATH_MAX], cgpath[PATH_MAX];
	const char *rel;
	struct ctr_mount *m = NULL;
	struct ocispec spec, cspec, *specp = &spec;
	struct cdi_applied held;
	struct cerr cerr;
	size_t nm = 0, argc, len;
	char *json = NULL;
	int rc = -1;

	L->ctr = true;
	if ((L->ctr_image = strdup(cl->image)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (res->err != 0) {
		/* The task says why when it starts: the job's reason. */
		L->ctr_err = res->err;
		L->ctr_permanent = res->permanent;
		if ((L->ctr_why = strdup(res->why)) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		return 0;
	}
	if (tasks_spool_path(bundle, "%s/rank-%u.ctr", L->dir, l->rank) ==
	    -1 || tasks_spool_path(state, "%s/runc", cl->spool) == -1)
		return cerr_set(err, ERR_INVALID, "spool path too long");
	if (mkdir_exact(state, 0700) == -1 || mkdir_exact(bundle, 0711) ==
	    -1)
		return cerr_set(err, ERR_INTERNAL, "cannot create %s: %s",
		    bundle, strerror(errno));
	/* The task's own layer; a named container's (--container-name)
	 * is the start's, one per local rank, so that a later step of the
	 * job on this node finds what an earlier one wrote. */
	if (cl->opts->name != NULL) {
		if (tasks_spool_path(layer, "%s/ctr-%s.%u", cl->startdir,
		    cl->opts->name, l->local_rank) == -1)
			return cerr_set(err, ERR_INVALID,
			    "spool path too long");
		if (mkdir_exact(layer, 0711) == -1)
			return cerr_set(err, ERR_INTERNAL, "cannot create %s: "
			    "%s", layer, strerror(errno));
	} else
		snprintf(layer, sizeof(layer), "%s", bundle);
	if (tasks_spool_path(path, "%s/upper", layer) == -1 ||
	    (mkdir(path, 0755) == -1 && errno != EEXIST) ||
	    tasks_spool_path(path, "%s/work", layer) == -1 ||
	    mkdir_exact(path, 0700) == -1 ||
	    tasks_spool_path(path, "%s/rootfs", bundle) == -1 ||
	    mkdir_exact(path, 0755) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot create %s: %s",
		    path, strerror(errno));
	if ((L->ctr_root = strdup(path)) == NULL ||
	    asprintf(&L->ctr_overlay, "lowerdir=%s,upperdir=%s/upper,"
	    "workdir=%s/work", res->rootfs, layer, layer) == -1 ||
	    (L->ctr_lock = strdup(res->lock)) == NULL ||
	    (L->ctr_runtime = strdup(cl->runtime)) == NULL) {
		L->ctr_overlay = NULL;
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	/* Overlay options with ',' or ':' in a path would be misread. */
	if (strpbrk(res->rootfs, ",:") != NULL || strpbrk(layer, ",:") !=
	    NULL)
		return cerr_set(err, ERR_INVALID, "a ',' or ':' in %s or %s",
		    res->rootfs, layer);

	if (all_mounts(cl, &m, &nm, err) == -1)
		return -1;
	for (argc = 0; L->argv[argc] != NULL; argc++)
		;
	memset(&spec, 0, sizeof(spec));
	memset(&held, 0, sizeof(held));
	spec.rootfs = L->ctr_root;
	spec.writable = cl->opts->writable;
	spec.argv = L->argv;
	spec.argc = argc;
	spec.envp = L->envp;
	spec.cwd = task_cwd(cl, res->rootfs, L->workdir, m, nm);
	spec.uid = L->drop ? L->uid : getuid();
	spec.gid = L->drop ? L->gid : getgid();
	spec.groups = L->drop ? L->groups : NULL;
	spec.ngroups = L->drop ? (size_t)L->ngroups : 0;
	spec.mounts = m;
	spec.nmounts = nm;
	spec.ndevs = gpu_devs(cl, devs, devpaths, INV_MAX_CTR_DEVS);
	spec.devs = devs;
	/* A cgroup of its own under the task's: still inside the job's
	 * (the agent's kill reaches it), and one the runtime can remove
	 * when it ends, which it cannot do to the one it runs in itself
	 * (it would retry for some 200 ms first). */
	if ((rel = container_cgroup_rel(cl->cgroup)) != NULL) {
		if (tasks_spool_path(cgpath, "%s/ctr", rel) == -1) {
			cerr_set(err, ERR_INVALID, "cgroup path too long");
			goto out;
		}
		spec.cgroups_path = cgpath;
	}
	spec.shm_bytes = cl->shm;
	/* The driver's files and nodes from the node's CDI spec; without
	 * them the job still runs, with device nodes only. */
	if (cl->cdi != NULL && cl->ngpus > 0) {
		if (cdi_apply(cl->cdi, cl->gpus, cl->ngpus, &spec, &cspec,
		    &held, &cerr) == 0)
			specp = &cspec;
		else
			log_warnx("job %" PRIu64 ": CDI edits not applied: %s",
			    l->job_id, cerr.text);
	}
	if (ocispec_json(specp, &json, &len, err) == -1)
		goto out;
	if (tasks_spool_path(path, "%s/config.json", bundle) == -1 ||
	    write_file(path, json, len) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot write %s: %s", path,
		    strerror(errno));
		goto out;
	}
	/* runc --root STATE --log LOG run --no-new-keyring --bundle B ID:
	 * its own log keeps the cgroup chatter out of the job's stderr;
	 * its fatal errors still go to stderr. */
	if ((L->ctr_argv = calloc(11, sizeof(*L->ctr_argv))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	L->ctr_argv[0] = L->ctr_runtime;
	L->ctr_argv[1] = "--root";
	L->ctr_argv[3] = "--log";
	L->ctr_argv[5] = "run";
	L->ctr_argv[6] = "--no-new-keyring";
	L->ctr_argv[7] = "--bundle";
	if ((L->ctr_strs[0] = strdup(state)) == NULL ||
	    asprintf(&L->ctr_strs[1], "%s/runc.log", bundle) == -1 ||
	    (L->ctr_strs[2] = strdup(bundle)) == NULL ||
	    asprintf(&L->ctr_strs[3], "cohort-%" PRIu64 ".%" PRIu32 ".%u",
	    l->job_id, l->restart, l->rank) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (l->has_step) {
		free(L->ctr_strs[3]);
		if (asprintf(&L->ctr_strs[3], "cohort-%" PRIu64 ".%" PRIu32
		    ".s%" PRIu32 ".%u", l->job_id, l->restart, l->step_id,
		    l->rank) == -1) {
			L->ctr_strs[3] = NULL;
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
	}
	L->ctr_argv[2] = L->ctr_strs[0];
	L->ctr_argv[4] = L->ctr_strs[1];
	L->ctr_argv[8] = L->ctr_strs[2];
	L->ctr_argv[9] = L->ctr_strs[3];
	L->ctr_argv[10] = NULL;
	rc = 0;
out:
	free(json);
	cdi_applied_free(&held);
	ctr_mounts_free(m, nm);
	return rc;
}

void
container_task_free(struct launch *L)
{
	size_t i;

	free(L->ctr_image);
	free(L->ctr_why);
	free(L->ctr_runtime);
	free(L->ctr_root);
	free(L->ctr_overlay);
	free(L->ctr_lock);
	free(L->ctr_argv);
	for (i = 0; i < sizeof(L->ctr_strs) / sizeof(L->ctr_strs[0]); i++)
		free(L->ctr_strs[i]);
}
