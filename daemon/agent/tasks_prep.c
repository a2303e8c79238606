/* Everything a task's start needs, prepared in the agent before it forks
 * the supervisor (tasks_int.h): the user to become, the working
 * directory, every spool path, the argv and the list of paths execve
 * will try, the start directory, the batch script and the log. The
 * children (tasks_child.c) may not allocate or format, so nothing is
 * left for them to work out.
 *
 * The children run as root only until the task drops to the user; the
 * spool logs (stdout, stderr) are opened and chowned here and
 * inherited, so the user needs no write access to the spool, but must
 * be able to search the spool directory to run a batch script from it.
 * What a job leaves there is private to its user: directories 0711
 * (searched, never listed), files 0600 (the script 0700) and the user's
 * or root's. The -o/-e files are the task's to open, as the user
 * (tasks_child.c). */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/container.h"
#include "daemon/agent/cpubind.h"
#include "daemon/agent/tasks_int.h"
#include "daemon/agent/tasks_spool.h"

#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

void
tasks_prep_destroy(struct launch *L)
{
	size_t i;

	if (L == NULL)
		return;
	container_task_free(L);
	if (L->logfd != -1)
		close(L->logfd);
	if (L->errlogfd != -1)
		close(L->errlogfd);
	if (L->nullfd != -1)
		close(L->nullfd);
	if (L->stdin_wfd != -1)
		close(L->stdin_wfd);
	if (L->cgfd != -1)
		close(L->cgfd);
	for (i = 0; i < L->ncands; i++)
		free(L->cands[i]);
	free(L->cands);
	free(L->argv);
	free(L->shargv);
	free(L->groups);
	free(L->user);
	free(L->workdir);
	free(L->out_file);
	free(L->err_file);
	free(L);
}

static const char *
envp_get(char *const *envp, const char *key)
{
	size_t klen = strlen(key);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, key, klen) == 0 && (*envp)[klen] == '=')
			return *envp + klen + 1;
	return NULL;
}

/* getpwnam_r or getpwuid_r (name NULL) into a growing buffer. 0 with
 * *found NULL when there is no such user, or -1 with errno. */
static int
pw_lookup(const char *name, uid_t uid, struct passwd *pw, char **buf,
    struct passwd **found)
{
	size_t len = 4096;
	char *nb;
	int rc;

	for (;;) {
		if ((nb = realloc(*buf, len)) == NULL)
			return -1;
		*buf = nb;
		rc = name != NULL ? getpwnam_r(name, pw, *buf, len, found) :
		    getpwuid_r(uid, pw, *buf, len, found);
		if (rc != ERANGE)
			break;
		if (len >= (1U << 20)) {
			errno = ERANGE;
			return -1;
		}
		len *= 2;
	}
	/* Some libcs report "no such user" as ENOENT and the like. */
	if (rc != 0 && rc != ENOENT && rc != ESRCH && rc != EBADF &&
	    rc != EPERM) {
		errno = rc;
		return -1;
	}
	if (rc != 0)
		*found = NULL;
	return 0;
}

/* Who the caller looked up (l->who) becomes L's user. */
static int
given_user(struct launch *L, const struct task_user *who, struct cerr *err)
{
	/* Never root, whoever the caller found. */
	if (who->uid == 0)
		return cerr_set(err, ERR_DENIED, "refusing to run a task as "
		    "root (user '%s')", who->name);
	if (who->ngroups > 0 && (L->groups = calloc(who->ngroups,
	    sizeof(*L->groups))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (who->ngroups > 0)
		memcpy(L->groups, who->groups, who->ngroups *
		    sizeof(*L->groups));
	L->ngroups = (int)who->ngroups;
	L->drop = 1;
	L->uid = who->uid;
	L->gid = who->gid;
	if ((L->user = strdup(who->name)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

/* Who the task runs as, and where it starts when no workdir is given:
 * from l->who when the caller looked the user up, else asked here. */
static int
resolve_user(struct launch *L, const struct task_launch *l,
    struct cerr *err)
{
	struct passwd pw, *found = NULL;
	const char *home = NULL;
	char *buf = NULL;
	gid_t *g;
	int ng = 16, rc = -1;

	if (l->who != NULL) {
		if (geteuid() == 0 && given_user(L, l->who, err) == -1)
			goto out;
		home = l->who->home;
		goto workdir;
	}
	if (geteuid() != 0) {
		/* Not root: run as ourselves; l->user is not ours to use. */
		if (pw_lookup(NULL, geteuid(), &pw, &buf, &found) == 0 &&
		    found != NULL)
			home = pw.pw_dir;
		else
			home = envp_get(l->envp, "HOME");
		goto workdir;
	}
	if (l->user == NULL || l->user[0] == '\0') {
		cerr_set(err, ERR_INVALID, "no user to run the task as");
		goto out;
	}
	if (pw_lookup(l->user, 0, &pw, &buf, &found) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot look up user '%s': %s",
		    l->user, strerror(errno));
		goto out;
	}
	if (found == NULL) {
		cerr_set(err, ERR_INVALID, "user '%s' does not exist on this "
		    "node", l->user);
		goto out;
	}
	if (pw.pw_uid == 0) {
		cerr_set(err, ERR_DENIED, "refusing to run a task as root "
		    "(user '%s')", l->user);
		goto out;
	}
	for (;;) {
		if ((g = reallocarray(L->groups, (size_t)ng,
		    sizeof(*g))) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
		L->groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, L->groups, &ng) != -1)
			break;
		if (ng > 65536) {
			cerr_set(err, ERR_INTERNAL, "user '%s' has too many "
			    "groups", l->user);
			goto out;
		}
	}
	L->ngroups = ng;
	L->drop = 1;
	L->uid = pw.pw_uid;
	L->gid = pw.pw_gid;
	home = pw.pw_dir;
	if ((L->user = strdup(l->user)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
workdir:
	if (l->workdir != NULL)
		home = l->workdir;
	else if (home == NULL || home[0] == '\0')
		home = "/";
	if ((L->workdir = strdup(home)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

static int
launch_paths(struct launch *L, const char *spool, const struct task_launch *l)
{
	const char *d = L->dir;
	unsigned r = l->rank;

	if (tasks_spool_start_dir(L->startdir, spool, l->job_id,
	    l->restart) == -1)
		return -1;
	if (l->has_step) {
		if (tasks_spool_path(L->dir, "%s/step-%" PRIu32, L->startdir,
		    l->step_id) == -1)
			return -1;
	} else
		memcpy(L->dir, L->startdir, sizeof(L->dir));
	if (tasks_spool_path(L->log, "%s/rank-%u.log", d, r) == -1 ||
	    tasks_spool_path(L->errlog, "%s/rank-%u.err", d, r) == -1 ||
	    tasks_spool_path(L->pid, "%s/rank-%u.pid", d, r) == -1 ||
	    tasks_spool_path(L->pidtmp, "%s/rank-%u.pid.tmp", d, r) == -1 ||
	    tasks_spool_path(L->exit, "%s/rank-%u.exit", d, r) == -1 ||
	    tasks_spool_path(L->exittmp, "%s/rank-%u.exit.tmp", d, r) == -1 ||
	    tasks_spool_path(L->error, "%s/rank-%u.error", d, r) == -1 ||
	    tasks_spool_path(L->errortmp, "%s/rank-%u.error.tmp", d, r) == -1 ||
	    tasks_spool_path(L->cpusfile, "%s/rank-%u.cpus", d, r) == -1 ||
	    tasks_spool_path(L->cpustmp, "%s/rank-%u.cpus.tmp", d, r) == -1 ||
	    tasks_spool_path(L->script, "%s/script", d) == -1 ||
	    tasks_spool_path(L->scripttmp, "%s/script.tmp.%u", d, r) == -1)
		return -1;
	return 0;
}

static int
cand_add(struct launch *L, const char *dir, size_t dlen, const char *file)
{
	char **nc, *c;

	if (dlen == 0)
		c = strdup(file);	/* an empty PATH entry: the workdir */
	else if (asprintf(&c, "%.*s/%s", (int)dlen, dir, file) == -1)
		c = NULL;
	if (c == NULL)
		return -1;
	if ((nc = reallocarray(L->cands, L->ncands + 1, sizeof(*nc))) ==
	    NULL) {
		free(c);
		return -1;
	}
	nc[L->ncands++] = c;
	L->cands = nc;
	return 0;
}

/* The argv and the list of paths execve will try. */
static int
launch_exec(struct launch *L, const struct task_launch *l)
{
	const char *file, *path, *p, *colon;
	size_t n, i, j = 0;

	n = l->argc + (l->script != NULL ? 1 : 0);
	if ((L->argv = calloc(n + 1, sizeof(*L->argv))) == NULL ||
	    (L->shargv = calloc(n + 2, sizeof(*L->shargv))) == NULL)
		return -1;
	if (l->script != NULL)
		L->argv[j++] = L->script;
	for (i = 0; i < l->argc; i++)
		L->argv[j++] = l->argv[i];
	L->shargv[0] = "/bin/sh";
	for (i = 1; i < n; i++)
		L->shargv[i + 1] = L->argv[i];

	file = L->name = L->argv[0];
	if (file[0] == '\0')
		return 0;	/* no candidate: ENOENT, as execvp says */
	if (strchr(file, '/') != NULL)
		return cand_add(L, NULL, 0, file);
	if ((path = envp_get(L->envp, "PATH")) == NULL)
		path = DEFAULT_PATH;
	for (p = path;; p = colon + 1) {
		colon = strchrnul(p, ':');
		if (cand_add(L, p, (size_t)(colon - p), file) == -1)
			return -1;
		if (*colon == '\0')
			break;
	}
	return 0;
}

/* mkdir that accepts an existing directory; either way it ends with
 * exactly mode, whatever the umask or an older agent left, because the
 * task user must be able to reach its script through it and nobody else
 * may list it. *made says whether it is new. */
static int
mkdir_mode(const char *path, mode_t mode, int *made)
{
	*made = 0;
	if (mkdir(path, mode) == -1) {
		if (errno != EEXIST)
			return -1;
	} else
		*made = 1;
	return chmod(path, mode);
}

/* The batch script, once per start directory: ranks sharing it find it
 * there already. Written under a per-rank name and renamed, so that no
 * rank ever runs half a script; the task user's alone (it may hold
 * secrets), owned by them before it takes its name, as they run it. */
static int
write_script(struct launch *L, const struct task_launch *l, int *made)
{
	*made = 0;
	if (access(L->script, F_OK) == 0)
		return 0;
	if (tasks_child_write_atomic(L->scripttmp, L->script, l->script,
	    l->script_len, 0700, L->drop ? L->uid : (uid_t)-1,
	    L->drop ? L->gid : (gid_t)-1) == -1)
		return -1;
	*made = 1;
	return 0;
}

int
tasks_prep_fd_high(int *fd)
{
	int nfd;

	if (*fd > SUP_FD)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, SUP_FD + 1)) == -1)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

/* One spool log: the task writes to it only through the inherited fd;
 * the user may read their own log, and nobody else (not their group:
 * sites put every user in one). */
static int
open_log(struct launch *L, const char *path, int *fd)
{
	if ((*fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 ||
	    tasks_prep_fd_high(fd) == -1)
		return -1;
	if (fchmod(*fd, 0600) == -1 ||
	    (L->drop && fchown(*fd, L->uid, L->gid) == -1))
		return -1;
	return 0;
}

/* The task's stdin as a pipe: the read end where /dev/null would be,
 * the write end kept by the agent. Both close-on-exec (the supervisor
 * closes every fd it does not need, so no other task holds the write
 * end, and the task sees EOF once the agent closes it); the write end
 * non-blocking, since the agent's loop must never wait on a task. */
static int
open_stdin_pipe(struct launch *L)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	L->nullfd = p[0];
	L->stdin_wfd = p[1];
	if (fcntl(L->stdin_wfd, F_SETFL, O_NONBLOCK) == -1)
		return -1;
	return tasks_prep_fd_high(&L->nullfd);
}

/* A pseudo-terminal of the window asked (24 x 80 by default): the
 * master, non-blocking as a pipe's write end is, where the agent writes
 * the input and the supervisor reads the output; the terminal's name
 * for the task to open. nullfd stays /dev/null for the supervisor. */
static int
open_pty(struct launch *L, const struct task_launch *l)
{
	struct winsize ws;

	memset(&ws, 0, sizeof(ws));
	ws.ws_row = l->rows > 0 && l->cols > 0 ? l->rows : 24;
	ws.ws_col = l->rows > 0 && l->cols > 0 ? l->cols : 80;
	if ((L->stdin_wfd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
	    -1 || tasks_prep_fd_high(&L->stdin_wfd) == -1 ||
	    grantpt(L->stdin_wfd) == -1 || unlockpt(L->stdin_wfd) == -1 ||
	    ptsname_r(L->stdin_wfd, L->ptsname, sizeof(L->ptsname)) != 0 ||
	    ioctl(L->stdin_wfd, TIOCSWINSZ, &ws) == -1 ||
	    fcntl(L->stdin_wfd, F_SETFL, O_NONBLOCK) == -1)
		return -1;
	L->pty = true;
	if ((L->nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	return tasks_prep_fd_high(&L->nullfd);
}

static int
open_fds(struct launch *L, const struct task_launch *l, const char **failed)
{
	bool stdin_pipe = l->stdin_pipe;

	*failed = "/dev/null";
	if (stdin_pipe && l->pty) {
		*failed = "a pseudo-terminal";
		if (open_pty(L, l) == -1)
			return -1;
	} else if (stdin_pipe) {
		*failed = "the stdin pipe";
		if (open_stdin_pipe(L) == -1)
			return -1;
	} else if ((L->nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) ==
	    -1 || tasks_prep_fd_high(&L->nullfd) == -1)
		return -1;
	*failed = L->log;
	if (open_log(L, L->log, &L->logfd) == -1)
		return -1;
	*failed = L->errlog;
	return open_log(L, L->errlog, &L->errlogfd);
}

/* The task's output files, for the task to open once it is the user,
 * and the umask it opens them with. */
static int
launch_outputs(struct launch *L, const struct task_launch *l)
{
	/* The same file for both (-o without -e, as sbatch): one open
	 * file, so that the two streams share its offset. */
	L->err_with_out = l->out_file != NULL && l->err_file != NULL &&
	    strcmp(l->out_file, l->err_file) == 0;
	if (l->out_file != NULL && (L->out_file = strdup(l->out_file)) == NULL)
		return -1;
	if (l->err_file != NULL && !L->err_with_out &&
	    (L->err_file = strdup(l->err_file)) == NULL)
		return -1;
	L->out_trunc = l->out_trunc;
	L->err_trunc = l->err_trunc;
	L->umask = l->has_umask ? l->umask & 0777 : TASKS_UMASK_DEFAULT;
	return 0;
}

/* The task's cores, recorded in rank-R.cpus for an agent that restarts
 * (so that it does not hand them out again), and its cgroup, opened
 * here: the directory for the task to be cloned into, or cgroup.procs
 * for the supervisor to write its pid to (the child may not open paths
 * it did not prepare). */
static int
launch_binding(struct launch *L, const struct task_launch *l,
    struct cerr *err)
{
	char path[PATH_MAX];
	size_t n;

	if (l->cpus != NULL) {
		L->bind = true;
		L->cpus = *l->cpus;
		if (cpubind_list_format(&L->cpus, L->cpulist,
		    sizeof(L->cpulist) - 1) == -1)
			return cerr_set(err, ERR_INTERNAL, "CPU list too long");
		n = strlen(L->cpulist);
		L->cpulist[n] = '\n';
		if (tasks_child_write_atomic(L->cpustmp, L->cpusfile,
		    L->cpulist, n + 1, 0600, (uid_t)-1, (gid_t)-1) == -1) {
			L->cpulist[n] = '\0';
			return cerr_set(err, ERR_INTERNAL, "cannot write %s: %s",
			    L->cpusfile, strerror(errno));
		}
		L->cpulist[n] = '\0';
	}
	if (l->cgroup == NULL)
		return 0;
	L->cgjoin = l->cgroup_join;
	if (tasks_spool_path(path, "%s%s", l->cgroup, L->cgjoin ?
	    "/cgroup.procs" : "") == -1)
		return cerr_set(err, ERR_INVALID, "cgroup path too long");
	if ((L->cgfd = open(path, L->cgjoin ? O_WRONLY | O_CLOEXEC :
	    O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    tasks_prep_fd_high(&L->cgfd) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot open %s: %s", path,
		    strerror(errno));
	return 0;
}

struct launch *
tasks_prep_create(const char *spool, const struct task_launch *l,
    struct cerr *err)
{
	struct launch *L;
	char jobs[PATH_MAX];
	const char *failed;
	int made_jobs, made_start, made = 0, e;

	if ((L = calloc(1, sizeof(*L))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	L->logfd = L->errlogfd = L->nullfd = L->cgfd = L->stdin_wfd = -1;
	L->envp = l->envp;

	if (resolve_user(L, l, err) == -1)
		goto fail;
	if (launch_paths(L, spool, l) == -1 ||
	    tasks_spool_path(jobs, "%s/jobs", spool) == -1) {
		cerr_set(err, ERR_INVALID, "spool path too long");
		goto fail;
	}
	if (launch_exec(L, l) == -1 || launch_outputs(L, l) == -1) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	/* A pid file means this rank of this start already ran: starting
	 * it again would run the task twice. */
	if (access(L->pid, F_OK) == 0) {
		cerr_set(err, ERR_CONFLICT, "rank %u of job %" PRIu64
		    " (start %" PRIu32 ") is already started on this node",
		    l->rank, l->job_id, l->restart);
		goto fail;
	}
	if (mkdir_mode(jobs, TASKS_SPOOL_DIR_MODE, &made_jobs) == -1 ||
	    (l->has_step && mkdir_mode(L->startdir, TASKS_SPOOL_DIR_MODE,
	    &made_start) == -1) ||
	    mkdir_mode(L->dir, TASKS_SPOOL_DIR_MODE, &made) == -1) {
		L->made_dir = made;
		cerr_set(err, ERR_INTERNAL, "cannot create %s: %s", L->dir,
		    strerror(errno));
		goto fail;
	}
	L->made_dir = made;
	L->files = true;
	made = 0;
	if (l->script != NULL && write_script(L, l, &made) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot write %s: %s", L->script,
		    strerror(errno));
		goto fail;
	}
	L->made_script = made;
	if (open_fds(L, l, &failed) == -1) {
		cerr_set(err, ERR_INTERNAL, "cannot open %s: %s", failed,
		    strerror(errno));
		goto fail;
	}
	if (launch_binding(L, l, err) == -1)
		goto fail;
	if (l->ctr != NULL && container_task_prep(L, l, err) == -1)
		goto fail;
	return L;
fail:
	e = errno;
	tasks_prep_undo(L);
	tasks_prep_destroy(L);
	errno = e;
	return NULL;
}

void
tasks_prep_undo(struct launch *L)
{
	int e = errno;

	if (L->files) {
		unlink(L->log);
		unlink(L->errlog);
		unlink(L->pid);
		unlink(L->pidtmp);
		unlink(L->exit);
		unlink(L->exittmp);
		unlink(L->error);
		unlink(L->errortmp);
		unlink(L->cpusfile);
		unlink(L->cpustmp);
		if (L->made_script)
			unlink(L->script);
		if (L->made_dir)
			rmdir(L->dir);
	}
	errno = e;
}
