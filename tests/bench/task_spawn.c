/* Where a task start's time goes in the agent (tasks.h), the task
 * `true` as "nobody" in a scratch spool, no cgroup. Times, in the
 * caller: a bare fork of this process (the page-table copy, which grows
 * with the resident size: BALLAST_MB of touched memory is added first);
 * tasks_prep_create alone; tasks_start (prepare, fork, wait for the
 * report); and per batch of BATCH starts: tasks_start each in turn (as
 * the agent started a round), tasks_spawn for all (what the agent's
 * loop now spends on a round), and that followed by tasks_spawn_finish
 * for all (until every report is in). Prints median, p90 and min of
 * each; compares nothing. Not built by make (root: the task runs as
 * "nobody"):
 *
 *   cc -O2 -I. -Ibuild -o /tmp/task_spawn tests/bench/task_spawn.c \
 *       build/daemon/agent/libagent.a build/lib/libcohort.a -levent \
 *       -levent_openssl -lssl -lcrypto -lprotobuf-c -ljansson -lhwloc -ldl
 *   /tmp/task_spawn [ROUNDS [BALLAST_MB [BATCH]]]      # 200 0 8 */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/agent/tasks.h"
#include "daemon/agent/tasks_int.h"
#include "daemon/agent/tasks_spool.h"

#define MAXN	2000
#define MAXB	64

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
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("%-34s median %.3f p90 %.3f min %.3f ms\n", what, v[n / 2],
	    v[n * 9 / 10], v[0]);
}

static void
launch_init(struct task_launch *l, unsigned rank)
{
	static const char *const argv[] = { "true" };
	static char *const envp[] = { "PATH=/usr/bin:/bin", NULL };

	memset(l, 0, sizeof(*l));
	l->job_id = 1;
	l->rank = l->local_rank = rank;
	l->argv = argv;
	l->argc = 1;
	l->envp = envp;
	l->workdir = "/";
	l->user = "nobody";
}

/* Until its supervisor has written the exit record, then reaped and
 * forgotten, so that the rank may start again. */
static void
reap(struct task *t)
{
	int st;

	while (tasks_result(t, &st, NULL, 0, NULL) == -1 && errno == ENOENT)
		usleep(200);
	if (t->pidfd != -1)
		close(t->pidfd);
	tasks_spool_forget(t);
}

int
main(int argc, char **argv)
{
	static double fk[MAXN], prep[MAXN], start[MAXN], batch[MAXN];
	static double spawned[MAXN], serial[MAXN];
	struct task_spawn *s[MAXB];
	struct task t[MAXB];
	struct task_launch l;
	struct launch *L;
	struct cerr err;
	char spool[] = "/tmp/task_spawn.XXXXXX";
	int n = argc > 1 ? atoi(argv[1]) : 200;
	size_t mb = argc > 2 ? (size_t)atoi(argv[2]) : 0;
	int nb = argc > 3 ? atoi(argv[3]) : 8;
	double t0;
	char *ballast;
	pid_t p;
	int i, j, st;

	if (n < 1 || n > MAXN || nb < 1 || nb > MAXB || mkdtemp(spool) == NULL)
		return 2;
	if (mb > 0 && (ballast = malloc(mb << 20)) != NULL)
		memset(ballast, 1, mb << 20);
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		if ((p = fork()) == 0)
			_exit(0);
		fk[i] = now_ms() - t0;
		waitpid(p, &st, 0);
	}
	for (i = 0; i < n; i++) {
		launch_init(&l, 0);
		t0 = now_ms();
		if ((L = tasks_prep_create(spool, &l, &err)) == NULL)
			return fprintf(stderr, "%s\n", err.text), 1;
		prep[i] = now_ms() - t0;
		tasks_prep_undo(L);
		tasks_prep_destroy(L);
		t0 = now_ms();
		if (tasks_start(spool, &l, &t[0], &err) == -1)
			return fprintf(stderr, "%s\n", err.text), 1;
		start[i] = now_ms() - t0;
		reap(&t[0]);
	}
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		for (j = 0; j < nb; j++) {
			launch_init(&l, (unsigned)j);
			if (tasks_start(spool, &l, &t[j], &err) == -1)
				return fprintf(stderr, "%s\n", err.text), 1;
		}
		serial[i] = now_ms() - t0;
		for (j = 0; j < nb; j++)
			reap(&t[j]);
		t0 = now_ms();
		for (j = 0; j < nb; j++) {
			launch_init(&l, (unsigned)j);
			if ((s[j] = tasks_spawn(spool, &l, &err)) == NULL)
				return fprintf(stderr, "%s\n", err.text), 1;
		}
		spawned[i] = now_ms() - t0;
		for (j = 0; j < nb; j++)
			if (tasks_spawn_finish(s[j], true, &t[j], &err) == -1)
				return fprintf(stderr, "%s\n", err.text), 1;
		batch[i] = now_ms() - t0;
		for (j = 0; j < nb; j++)
			reap(&t[j]);
	}
	printf("%d rounds, %zu MB ballast\n", n, mb);
	report("bare fork (parent side)", fk, n);
	report("tasks_prep_create", prep, n);
	report("tasks_start (one)", start, n);
	printf("batch of %d:\n", nb);
	report("tasks_start each in turn", serial, n);
	report("tasks_spawn all (the loop's part)", spawned, n);
	report("tasks_spawn all, then finish all", batch, n);
	return 0;
}
