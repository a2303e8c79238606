/* A cgroup v2 per job and task (cgroup.h). */
#include "config.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cgroup.h"
#include "lib/log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* A removal is retried this many sweeps (250 ms each) before it is
 * left, logged, to the operator. */
#define CGROUP_RETRIES 120

/* PID_MAX_LIMIT on 64-bit Linux: no pid is larger. */
#define CGROUP_PID_MAX 4194304

/* cgroup.procs is read whole, up to this much (some 8 million pids). */
#define CGROUP_PROCS_MAX (64u << 20)

/* The fallback kill's rounds (kill, look again), and how many of them
 * in a row may find only processes already signalled (dying) before it
 * leaves the rest to the sweep. */
#define CGROUP_KILL_ROUNDS 50
#define CGROUP_KILL_QUIET 3

struct cg_pending {
	char path[PATH_MAX];
	unsigned tries;
	struct cg_pending *next;
};

struct cgroup {
	char base[PATH_MAX];
	char mount[PATH_MAX];		/* the cgroup2 mount BASE is on */
	char name[128];			/* auto's BASE name, cohort-NODE-HASH */
	bool own_base;			/* BASE is ours to remove (auto) */
	bool checkfs;			/* records' BASEs must be cgroup2 */
	bool memory;			/* memory.max is written */
	char memory_why[PATH_MAX + 1024];		/* why not */
	bool warned_memory;		/* logged once that it is not */
	bool clone_ok;			/* tasks are cloned into cgroups */
	char clone_why[256];		/* why not */
	struct cg_pending *pending;
};

bool
cgroup_path_canonical(const char *path)
{
	const char *p, *c;
	size_t n;

	if (path[0] != '/')
		return false;
	if (path[1] == '\0')
		return true;
	for (p = path; *p == '/'; p = c) {
		c = p + 1 + strcspn(p + 1, "/");
		n = (size_t)(c - p - 1);
		/* An empty component ("//", a trailing '/'), "." or "..". */
		if (n == 0 || (n == 1 && p[1] == '.') ||
		    (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
	}
	return true;
}

int
cgroup_parse_self(const char *text, char *out, size_t len)
{
	const char *p = text, *nl;
	size_t n;

	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n >= 3 && strncmp(p, "0::", 3) == 0 && n - 3 < len &&
		    p[3] == '/') {
			memcpy(out, p + 3, n - 3);
			out[n - 3] = '\0';
			return 0;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	errno = ENOENT;
	return -1;
}

void
cgroup_base_name(const char *node, const char *spool, char *out, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	const unsigned char *p;

	for (p = (const unsigned char *)spool; *p != '\0'; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	snprintf(out, len, "cohort-%s-%08" PRIx32, node, h);
}

static bool
is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 &&
	    (unsigned long)sf.f_type == (unsigned long)CGROUP2_SUPER_MAGIC;
}

/* Write s to dir/file (no O_CREAT: a cgroup file exists or the
 * controller is not there). 0, or -1 with errno. */
/* mkdir with exactly 0755, whatever the agent's umask (its unit's is
 * 0077): a task must be able to read its own cgroup's limits
 * (memory.max), as runtimes that size their heaps by them do. 1 when
 * made, 0 when it was there, -1 with errno (nothing made). */
static int
cg_mkdir(const char *path)
{
	int e;

	if (mkdir(path, 0755) == -1)
		return errno == EEXIST ? 0 : -1;
	if (chmod(path, 0755) == -1) {
		e = errno;
		rmdir(path);
		errno = e;
		return -1;
	}
	return 1;
}

static int
write_file(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, e;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	if (n != (ssize_t)strlen(s)) {
		errno = n == -1 ? e : EIO;
		return -1;
	}
	return 0;
}

static int
read_file(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The whole of dir/file, read to its end (a cgroup file gives at most a
 * page per read), NUL-terminated, into a malloc'd *out of *lenp bytes.
 * 0, or -1 with errno. */
static int
read_all(const char *dir, const char *file, char **out, size_t *lenp)
{
	char path[PATH_MAX], *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, e;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	for (;;) {
		if (cap - len < 4097) {
			if (cap >= CGROUP_PROCS_MAX) {
				e = EFBIG;
				goto fail;
			}
			cap = cap == 0 ? 16384 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				e = errno;
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto fail;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	*lenp = len;
	return 0;
fail:
	close(fd);
	free(buf);
	errno = e;
	return -1;
}

/* Whether the space-separated list holds word. */
static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/* Enable the memory controller for BASE's children: in the
 * subtree_control of every cgroup from the mount down to BASE. A cgroup
 * other than the root that holds processes (the agent's own, usually)
 * refuses with EBUSY: cgroup v2 keeps processes in leaves only. */
static void
enable_memory(struct cgroup *cg, const char *mount)
{
	char dir[PATH_MAX], buf[512];
	size_t at = strlen(mount), blen = strlen(cg->base);

	if (read_file(mount, "cgroup.controllers", buf, sizeof(buf)) == -1 ||
	    !has_word(buf, "memory")) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(cg->memory_why, sizeof(cg->memory_why), "the memory "
		    "controller is not in this cgroup v2 hierarchy (%s has "
		    "'%.200s')", mount, buf);
		return;
	}
	for (;;) {
		const char *slash;

		/* dir: the cgroup whose children get memory. */
		snprintf(dir, sizeof(dir), "%.*s", (int)at, cg->base);
		if (read_file(dir, "cgroup.subtree_control", buf,
		    sizeof(buf)) == -1 || (!has_word(buf, "memory") &&
		    write_file(dir, "cgroup.subtree_control",
		    "+memory") == -1)) {
			snprintf(cg->memory_why, sizeof(cg->memory_why),
			    "cannot enable the memory controller in %s: %s%s",
			    dir, strerror(errno), errno == EBUSY ? " (it "
			    "holds processes, e.g. the agent's: give the agent "
			    "a cgroup of its own or set [agent] cgroup = PATH "
			    "outside it)" : "");
			return;
		}
		if (at >= blen)
			break;
		slash = strchr(cg->base + at + 1, '/');
		at = slash != NULL ? (size_t)(slash - cg->base) : blen;
	}
	cg->memory = true;
}

/* Whether the cgroup at dir has no process in its tree (cgroup.events
 * says "populated 0"). */
static bool
unpopulated(const char *dir)
{
	char buf[256];

	return read_file(dir, "cgroup.events", buf, sizeof(buf)) == 0 &&
	    strstr(buf, "populated 0") != NULL;
}

static int kill_and_remove(const char *path);

/* Job cgroups an earlier agent could not finish removing (it stopped
 * while their processes were still dying): nothing runs in them, and no
 * job can still need one, so they go. */
static void
remove_stale(struct cgroup *cg)
{
	struct dirent *de;
	char path[PATH_MAX];
	unsigned n = 0;
	DIR *d;

	if ((d = opendir(cg->base)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR ||
		    strncmp(de->d_name, "job-", 4) != 0 ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", cg->base,
		    de->d_name) >= sizeof(path) || !unpopulated(path))
			continue;
		if (kill_and_remove(path) == 0)
			n++;
	}
	closedir(d);
	if (n > 0)
		log_info("%s: removed %u job cgroup%s left empty", cg->base, n,
		    n == 1 ? "" : "s");
}

/* A child joins dir and exits: 0, or the errno of its write. */
static int
probe_join(const char *dir)
{
	char path[PATH_MAX];
	pid_t pid;
	int st, fd, e;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((pid = fork()) == -1)
		return errno;
	if (pid == 0) {
		e = 0;
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1 ||
		    write(fd, "0", 1) != 1)
			e = errno;
		_exit(e > 0 && e < 256 ? e : e == 0 ? 0 : EIO);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
}

/* A child is cloned into dir and exits: 0, or the errno of the clone
 * (or of opening dir). */
static int
probe_clone(const char *dir)
{
	pid_t pid;
	int fd, st, e = 0;

	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno;
	if ((pid = cgroup_clone_into(fd)) == 0)
		_exit(0);
	if (pid == -1)
		e = errno;
	close(fd);
	while (pid > 0 && waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			break;
	return e;
}

/* The probe goes once its (reaped) process has left it. */
static void
probe_remove(const char *dir)
{
	int i;

	for (i = 0; i < 100 && rmdir(dir) == -1 && errno == EBUSY; i++)
		usleep(2000);
}

struct cgroup *
cgroup_create(enum agent_cgroup mode, const char *path, const char *node,
    const char *spool, char *why, size_t len)
{
	char self[8192], own[PATH_MAX];
	const char *mount = NULL, *env;
	struct cgroup *cg;
	int fd, e;
	ssize_t n;

	why[0] = '\0';
	if (mode == AGENT_CGROUP_OFF) {
		snprintf(why, len, "cgroup = off");
		errno = ENOENT;
		return NULL;
	}
	if ((cg = calloc(1, sizeof(*cg))) == NULL)
		return NULL;
	cg->checkfs = true;
	cgroup_base_name(node, spool, cg->name, sizeof(cg->name));
	if (mode == AGENT_CGROUP_PATH) {
		/* The records name cgroups under BASE: compared as strings,
		 * which needs one spelling (agent_config.c refuses others). */
		if (!cgroup_path_canonical(path)) {
			snprintf(why, len, "%s is not a canonical path (no '.', "
			    "'..', '//' or trailing '/')", path);
			goto fail;
		}
		if (!is_cgroup2(path)) {
			snprintf(why, len, "%s is not on a cgroup v2 file "
			    "system", path);
			goto fail;
		}
		snprintf(cg->base, sizeof(cg->base), "%s", path);
		/* The mount: the first ancestor that is no longer cgroup2
		 * ends it; enable_memory starts at the top. */
		snprintf(own, sizeof(own), "%s", path);
		for (;;) {
			char *s = strrchr(own, '/');

			if (s == NULL || s == own)
				break;
			*s = '\0';
			if (!is_cgroup2(own)) {
				*s = '/';
				break;
			}
		}
		mount = own;
	} else {
		cg->own_base = true;
		if (is_cgroup2("/sys/fs/cgroup"))
			mount = "/sys/fs/cgroup";
		else if (is_cgroup2("/sys/fs/cgroup/unified"))
			mount = "/sys/fs/cgroup/unified";
		else {
			snprintf(why, len, "no cgroup v2 hierarchy at "
			    "/sys/fs/cgroup or /sys/fs/cgroup/unified");
			goto fail;
		}
		self[0] = '\0';
		if ((fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC)) !=
		    -1) {
			n = read(fd, self, sizeof(self) - 1);
			self[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		if (cgroup_parse_self(self, own, sizeof(own)) == -1) {
			snprintf(why, len, "/proc/self/cgroup names no cgroup "
			    "v2 path");
			goto fail;
		}
		if ((size_t)snprintf(cg->base, sizeof(cg->base), "%s%s/%s",
		    mount, strcmp(own, "/") == 0 ? "" : own, cg->name) >=
		    sizeof(cg->base)) {
			snprintf(why, len, "cgroup path too long");
			goto fail;
		}
		if (!cgroup_path_canonical(cg->base)) {
			snprintf(why, len, "%s (from /proc/self/cgroup) is not a "
			    "canonical path", cg->base);
			goto fail;
		}
		snprintf(own, sizeof(own), "%s", mount);
		mount = own;
	}
	if (cg_mkdir(cg->base) == -1) {
		snprintf(why, len, "cannot create %s: %s", cg->base,
		    strerror(errno));
		goto fail;
	}
	/* Usable means a cgroup can be made in it and a process put
	 * there, as each task will be (cloned in, or its supervisor moved
	 * in): a hierarchy that takes the one but not the other would fail
	 * every start. */
	snprintf(self, sizeof(self), "%s/probe", cg->base);
	if (cg_mkdir(self) == -1) {
		snprintf(why, len, "cannot create cgroups in %s: %s",
		    cg->base, strerror(errno));
		goto fail;
	}
	/* Decided here, once for the agent's life: a kernel that can
	 * clone into this cgroup can clone into every task's. */
	env = getenv("COHORT_AGENT_NO_CLONE3");
	if (env != NULL && env[0] != '\0')
		snprintf(cg->clone_why, sizeof(cg->clone_why),
		    "COHORT_AGENT_NO_CLONE3 is set");
	else if ((e = probe_clone(self)) != 0)
		snprintf(cg->clone_why, sizeof(cg->clone_why), "clone3 into "
		    "a cgroup: %s", strerror(e));
	else
		cg->clone_ok = true;
	if (!cg->clone_ok && (e = probe_join(self)) != 0) {
		snprintf(why, len, "cannot move a process into a cgroup under "
		    "%s: %s", cg->base, strerror(e));
		probe_remove(self);
		goto fail;
	}
	probe_remove(self);
	snprintf(cg->mount, sizeof(cg->mount), "%s", mount);
	enable_memory(cg, mount);
	remove_stale(cg);
	return cg;
fail:
	free(cg);
	errno = ENOENT;
	return NULL;
}

struct cgroup *
cgroup_create_at(const char *base)
{
	struct cgroup *cg;

	if ((cg = calloc(1, sizeof(*cg))) == NULL)
		return NULL;
	snprintf(cg->base, sizeof(cg->base), "%s", base);
	snprintf(cg->mount, sizeof(cg->mount), "%s", base);
	if (strrchr(cg->mount, '/') != NULL)
		*strrchr(cg->mount, '/') = '\0';
	snprintf(cg->name, sizeof(cg->name), "%s", strrchr(base, '/') != NULL ?
	    strrchr(base, '/') + 1 : base);
	snprintf(cg->memory_why, sizeof(cg->memory_why), "a test's cgroup");
	snprintf(cg->clone_why, sizeof(cg->clone_why), "a test's cgroup");
	return cg;
}

void
cgroup_destroy(struct cgroup *cg)
{
	struct cg_pending *p;
	int i;

	if (cg == NULL)
		return;
	/* SIGKILLed processes are gone within milliseconds: a last bounded
	 * try, so that a clean stop leaves no cgroup behind. */
	for (i = 0; i < 20 && cg->pending != NULL; i++) {
		usleep(25000);
		cgroup_sweep(cg);
	}
	while ((p = cg->pending) != NULL) {
		cg->pending = p->next;
		free(p);
	}
	/* auto's BASE goes once no job runs here; a running job's keeps it
	 * (EBUSY), for the next agent. The operator's PATH stays: it is
	 * theirs, and the next start needs it. */
	if (cg->own_base)
		rmdir(cg->base);
	free(cg);
}

const char *
cgroup_base(const struct cgroup *cg)
{
	return cg != NULL ? cg->base : "";
}

bool
cgroup_memory_enforced(const struct cgroup *cg, const char **why)
{
	if (why != NULL)
		*why = cg == NULL ? "no cgroup v2" : cg->memory_why;
	return cg != NULL && cg->memory;
}

bool
cgroup_clone_into_ok(const struct cgroup *cg, const char **why)
{
	if (why != NULL)
		*why = cg == NULL ? "no cgroup v2" : cg->clone_why;
	return cg != NULL && cg->clone_ok;
}

static int
record_path(const char *start_dir, char *file)
{
	return (size_t)snprintf(file, PATH_MAX, "%s/cgroup", start_dir) >=
	    PATH_MAX ? -1 : 0;
}

int
cgroup_job_create(struct cgroup *cg, const char *start_dir, uint64_t job_id,
    uint32_t restart, uint64_t mem_mb, char *path, struct cerr *err)
{
	char file[PATH_MAX], tmp[PATH_MAX + 8], val[32];
	int made, fd;
	FILE *fp;

	path[0] = '\0';
	if (cg == NULL)
		return 0;
	if ((size_t)snprintf(path, PATH_MAX, "%s/job-%" PRIu64 ".%" PRIu32,
	    cg->base, job_id, restart) >= PATH_MAX ||
	    record_path(start_dir, file) == -1) {
		path[0] = '\0';
		return cerr_set(err, ERR_INVALID, "cgroup path too long");
	}
	if ((made = cg_mkdir(path)) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot create cgroup %s: %s",
		    path, strerror(errno));
		path[0] = '\0';
		return -1;
	}
	if (mem_mb > 0 && cg->memory) {
		snprintf(val, sizeof(val), "%" PRIu64, mem_mb * 1024 * 1024);
		if (write_file(path, "memory.max", val) == -1) {
			cerr_set(err, ERR_INTERNAL, "cannot set %s/memory.max: "
			    "%s", path, strerror(errno));
			goto fail;
		}
	} else if (mem_mb > 0 && !cg->warned_memory) {
		cg->warned_memory = true;
		log_warnx("--mem-per-node is not enforced on this node: %s",
		    cg->memory_why);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || (fp = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		cerr_set(err, ERR_INTERNAL, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (fprintf(fp, "%s\n", path) < 0 || fclose(fp) == EOF ||
	    rename(tmp, file) == -1) {
		unlink(tmp);
		cerr_set(err, ERR_INTERNAL, "%s: %s", file, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (made)
		rmdir(path);
	path[0] = '\0';
	return -1;
}

int
cgroup_task_create(const char *job_path, unsigned rank, char *dir,
    struct cerr *err)
{
	return cgroup_step_task_create(job_path, NULL, rank, dir, err);
}

int
cgroup_step_task_create(const char *job_path, const uint32_t *step,
    unsigned rank, char *dir, struct cerr *err)
{
	char sname[32] = "";

	if (step != NULL)
		snprintf(sname, sizeof(sname), "step-%" PRIu32 ".", *step);
	/* Room for "/cgroup.procs", which the fallback opens. */
	if ((size_t)snprintf(dir, PATH_MAX, "%s/%srank-%u", job_path, sname,
	    rank) >= PATH_MAX - sizeof("/cgroup.procs"))
		return cerr_set(err, ERR_INVALID, "cgroup path too long");
	if (cg_mkdir(dir) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot create cgroup %s: "
		    "%s", dir, strerror(errno));
	return 0;
}

/* Whether base may hold a job cgroup recorded in the spool: this
 * agent's BASE, or one an earlier agent of this node and spool used
 * (auto's BASE follows the agent's own cgroup, which a restart may
 * change): named like ours, on the same cgroup2 mount. */
static bool
our_base(const struct cgroup *cg, const char *base)
{
	size_t mlen = strlen(cg->mount);
	const char *name = strrchr(base, '/');
	struct stat st;

	if (strcmp(base, cg->base) == 0)
		return true;
	if (name == NULL || strcmp(name + 1, cg->name) != 0 || mlen == 0 ||
	    strncmp(base, cg->mount, mlen) != 0 || base[mlen] != '/')
		return false;
	if (!cg->checkfs)
		return true;
	/* Gone already: nothing there to kill, nothing to follow. */
	if (stat(base, &st) == -1 && errno == ENOENT)
		return true;
	return is_cgroup2(base);
}

int
cgroup_job_load(const struct cgroup *cg, const char *start_dir, char *path)
{
	char file[PATH_MAX], base[PATH_MAX];
	const char *last;
	ssize_t n;
	int fd;

	if (cg == NULL || record_path(start_dir, file) == -1) {
		errno = ENOENT;
		return -1;
	}
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, path, PATH_MAX - 1);
	close(fd);
	if (n <= 0) {
		errno = ENOENT;
		return -1;
	}
	path[n] = '\0';
	path[strcspn(path, "\n")] = '\0';
	/* BASE/job-..., canonical (one spelling, no way back up), BASE
	 * one of ours. */
	last = strrchr(path, '/');
	if (!cgroup_path_canonical(path) || last == NULL || last == path ||
	    strncmp(last + 1, "job-", 4) != 0 ||
	    (size_t)(last - path) >= sizeof(base)) {
		errno = EPERM;
		goto refused;
	}
	memcpy(base, path, (size_t)(last - path));
	base[last - path] = '\0';
	if (our_base(cg, base))
		return 0;
	errno = EPERM;
refused:
	log_warnx("%s names cgroup '%s', not one of this agent's; left "
	    "alone", file, path);
	path[0] = '\0';
	return -1;
}

/* Pids killed this call: sorted, for a binary search. */
struct pidset {
	pid_t *v;
	size_t n, cap;
};

/* Add pid; false when it is there already (or out of memory, where the
 * worst is a second SIGKILL). */
static bool
pidset_add(struct pidset *s, pid_t pid)
{
	size_t lo = 0, hi = s->n, mid;
	pid_t *nv;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (s->v[mid] == pid)
			return false;
		if (s->v[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == s->cap) {
		if ((nv = realloc(s->v, (s->cap == 0 ? 256 : s->cap * 2) *
		    sizeof(*nv))) == NULL)
			return true;
		s->v = nv;
		s->cap = s->cap == 0 ? 256 : s->cap * 2;
	}
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = pid;
	s->n++;
	return true;
}

/* SIGKILL pid through a pidfd where the kernel has them (5.3): the
 * signal reaches the process the pidfd was opened on, or none, never
 * one that took its pid since. */
static int
kill_pid(pid_t pid)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	static bool nopidfd;
	int fd, rc, e;

	if (!nopidfd) {
		if ((fd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0) {
			rc = (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL,
			    NULL, 0);
			e = errno;
			close(fd);
			errno = e;
			return rc;
		}
		if (errno != ENOSYS)
			return -1;	/* ESRCH: gone */
		nopidfd = true;
	}
#endif
	return kill(pid, SIGKILL);
}

/* A pid from a cgroup.procs line (p .. p+n, no '\n'): digits only, one
 * that can be a process other than init and ourselves; else 0. */
static pid_t
parse_pid(const char *p, size_t n)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 7)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	if (v <= 1 || v > CGROUP_PID_MAX || v == (long)getpid())
		return 0;
	return (pid_t)v;
}

/* One round over dir's tree, depth first: every pid listed (*listed),
 * each not yet in seen signalled (*fresh; *killed the signals that
 * went). */
static void
kill_tree(const char *dir, struct pidset *seen, unsigned *listed,
    unsigned *fresh, unsigned *killed)
{
	struct dirent *de;
	char sub[PATH_MAX], *buf, *p, *nl, *end;
	size_t len;
	pid_t pid;
	DIR *d;

	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", dir,
			    de->d_name) < sizeof(sub))
				kill_tree(sub, seen, listed, fresh, killed);
		}
		closedir(d);
	}
	if (read_all(dir, "cgroup.procs", &buf, &len) == -1)
		return;
	/* Whole lines only: what follows the last '\n' is not one. */
	end = buf + len;
	for (p = buf; (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
	    p = nl + 1) {
		if ((pid = parse_pid(p, (size_t)(nl - p))) == 0)
			continue;
		(*listed)++;
		if (!pidset_add(seen, pid))
			continue;
		(*fresh)++;
		if (kill_pid(pid) == 0)
			(*killed)++;
	}
	free(buf);
}

/* Freeze dir's tree (cgroup.freeze, Linux 5.2), so that nothing in it
 * forks while it is being killed: a frozen process still dies of
 * SIGKILL. Waits a little for the kernel to say it is frozen. Whether
 * it was asked to. */
static bool
freeze(const char *dir)
{
	char buf[256];
	int i;

	if (write_file(dir, "cgroup.freeze", "1") == -1)
		return false;
	for (i = 0; i < 100; i++) {
		if (read_file(dir, "cgroup.events", buf, sizeof(buf)) == -1 ||
		    strstr(buf, "frozen 1") != NULL)
			break;
		usleep(1000);
	}
	return true;
}

unsigned
cgroup_kill_procs(const char *dir)
{
	struct pidset seen = { 0 };
	unsigned killed = 0, listed, fresh, quiet = 0, round;
	bool frozen = freeze(dir);

	for (round = 0; round < CGROUP_KILL_ROUNDS; round++) {
		listed = fresh = 0;
		kill_tree(dir, &seen, &listed, &fresh, &killed);
		if (listed == 0 || unpopulated(dir))
			break;
		/* All listed are dying: a few more looks, for what they
		 * forked before the signal; the sweep does the rest. */
		if (fresh == 0 && ++quiet >= CGROUP_KILL_QUIET)
			break;
		if (fresh > 0)
			quiet = 0;
		usleep(2000);
	}
	if (frozen)
		write_file(dir, "cgroup.freeze", "0");
	free(seen.v);
	return killed;
}

/* The job's cgroup under a BASE of an earlier agent (another cgroup):
 * that BASE goes too once it is empty. */
static void
remove_old_base(const struct cgroup *cg, const char *job_path)
{
	char base[PATH_MAX];
	char *slash;

	snprintf(base, sizeof(base), "%s", job_path);
	if ((slash = strrchr(base, '/')) == NULL)
		return;
	*slash = '\0';
	if (strcmp(base, cg->base) != 0 &&
	    strcmp(strrchr(base, '/') != NULL ? strrchr(base, '/') + 1 : base,
	    cg->name) == 0 && rmdir(base) == 0)
		log_info("%s: removed (an earlier agent's, from another "
		    "cgroup)", base);
}

/* rmdir path after its sub-cgroups, deepest first (a task's container
 * has one of its own, which a runtime killed mid-run leaves behind).
 * 0, or -1 with errno. */
static int
rmdir_tree(const char *path, int depth)
{
	struct dirent *de;
	char sub[PATH_MAX];
	DIR *d;

	if (depth < 8 && (d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
			    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    de->d_name) < sizeof(sub))
				rmdir_tree(sub, depth + 1);
		closedir(d);
	}
	return rmdir(path);
}

/* Kill the tree and try to remove it, children first. 0 when gone. */
static int
kill_and_remove(const char *path)
{
	struct dirent *de;
	char sub[PATH_MAX];
	int rc = 0;
	DIR *d;

	/* cgroup.kill takes the whole subtree at once, forks and all. */
	if (write_file(path, "cgroup.kill", "1") == -1) {
		if (errno == ENOENT && access(path, F_OK) == -1)
			return 0;	/* already gone */
		cgroup_kill_procs(path);
	}
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    de->d_name) < sizeof(sub) &&
			    rmdir_tree(sub, 1) == -1 && errno != ENOENT)
				rc = -1;
		}
		closedir(d);
	}
	if (rmdir(path) == -1 && errno != ENOENT)
		rc = -1;
	return rc;
}

int
cgroup_job_end(struct cgroup *cg, const char *job_path,
    const char *start_dir)
{
	struct cg_pending *p;
	char file[PATH_MAX];

	if (start_dir != NULL && record_path(start_dir, file) == 0)
		unlink(file);
	if (cg == NULL || job_path[0] == '\0')
		return 0;
	if (kill_and_remove(job_path) == 0) {
		remove_old_base(cg, job_path);
		return 0;
	}
	for (p = cg->pending; p != NULL; p = p->next)
		if (strcmp(p->path, job_path) == 0)
			return 1;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	snprintf(p->path, sizeof(p->path), "%s", job_path);
	p->next = cg->pending;
	cg->pending = p;
	return 1;
}

void
cgroup_sweep(struct cgroup *cg)
{
	struct cg_pending **pp, *p;

	if (cg == NULL)
		return;
	for (pp = &cg->pending; (p = *pp) != NULL;) {
		if (kill_and_remove(p->path) == 0) {
			log_debug("%s: removed", p->path);
			remove_old_base(cg, p->path);
		} else if (++p->tries < CGROUP_RETRIES) {
			pp = &p->next;
			continue;
		} else
			log_warn("%s: cannot remove the job's cgroup", p->path);
		*pp = p->next;
		free(p);
	}
}
