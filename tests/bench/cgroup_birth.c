/* How long putting a fresh child into a cgroup takes, the two ways the
 * agent can (cgroup.h): fork, then the child writes its pid into
 * cgroup.procs (the fallback), against clone3 with CLONE_INTO_CGROUP
 * (cgroup_clone_into). Each round makes two fresh leaf cgroups under
 * BASE and times, in the parent, from the fork or clone to the child's
 * exit being reaped. Prints median, p90, mean, min and max of each;
 * compares nothing. Not built by make (root, a writable cgroup v2):
 *
 *   cc -O2 -I. -Ibuild -o /tmp/cgroup_birth tests/bench/cgroup_birth.c
 *   mkdir /sys/fs/cgroup/unified/cgb && /tmp/cgroup_birth \
 *       /sys/fs/cgroup/unified/cgb 300; rmdir /sys/fs/cgroup/unified/cgb */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "daemon/agent/cgroup.h"

#define MAXN	10000

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *what, double *v, int n)
{
	double sum = 0;
	int i;

	qsort(v, (size_t)n, sizeof(*v), cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	printf("%-26s median %.3f p90 %.3f mean %.3f min %.3f max %.3f ms\n",
	    what, v[n / 2], v[n * 9 / 10], sum / n, v[0], v[n - 1]);
}

/* A fresh leaf cgroup BASE/NAMEi, opened with flags: its directory or
 * its cgroup.procs. */
static int
fresh(const char *base, const char *name, int i, int flags, char *dir)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(dir, PATH_MAX, "%s/%s%d", base, name, i);
	if (mkdir(dir, 0755) == -1) {
		perror(dir);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s%s", dir,
	    flags & O_DIRECTORY ? "" : "/cgroup.procs");
	if ((fd = open(path, flags)) == -1) {
		perror(path);
		exit(1);
	}
	return fd;
}

int
main(int argc, char **argv)
{
	static double join[MAXN], clone[MAXN];
	char dir[PATH_MAX], buf[16];
	double t0;
	pid_t pid;
	int n, i, fd, st, len;

	if (argc != 3 || (n = atoi(argv[2])) < 1 || n > MAXN) {
		fprintf(stderr, "usage: cgroup_birth BASE N (1-%d)\n", MAXN);
		return 2;
	}
	for (i = 0; i < n; i++) {
		fd = fresh(argv[1], "join", i, O_WRONLY | O_CLOEXEC, dir);
		t0 = now_ms();
		if ((pid = fork()) == 0) {
			len = snprintf(buf, sizeof(buf), "%d", (int)getpid());
			_exit(write(fd, buf, (size_t)len) == len ? 0 : 1);
		}
		if (pid == -1 || waitpid(pid, &st, 0) != pid || st != 0) {
			fprintf(stderr, "cannot move a child into %s\n", dir);
			return 1;
		}
		join[i] = now_ms() - t0;
		close(fd);
		rmdir(dir);

		fd = fresh(argv[1], "clone", i, O_PATH | O_DIRECTORY |
		    O_CLOEXEC, dir);
		t0 = now_ms();
		if ((pid = cgroup_clone_into(fd)) == 0)
			_exit(0);
		if (pid == -1) {
			perror("clone3 CLONE_INTO_CGROUP");
			return 1;
		}
		waitpid(pid, &st, 0);
		clone[i] = now_ms() - t0;
		close(fd);
		rmdir(dir);
	}
	report("fork + write cgroup.procs:", join, n);
	report("clone3 CLONE_INTO_CGROUP:", clone, n);
	return 0;
}
