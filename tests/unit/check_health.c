/* The node's health (daemon/agent/health.c): parsing the check program's
 * output, real programs run on the event loop and synchronously (one
 * that fails, one that hangs and is killed, one that cannot start), the
 * XID policy, and NVML's XIDs, ECC counts and temperatures through the
 * fake library. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/agent/agent_config.h"
#include "daemon/agent/health.h"
#include "daemon/agent/health_parse.h"
#include "daemon/agent/nvml.h"

#define EXITED(n) ((n) << 8)

static struct node_health h;

static void
parse(const char *out, int status, unsigned ngpus)
{
	memset(&h, 0xa5, sizeof(h));
	ck_assert_int_eq(health_parse(out, strlen(out), status, ngpus, &h), 0);
}

START_TEST(test_parse_ok)
{
	parse("", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_str_eq(h.reason, "");
	ck_assert_uint_eq(h.ngpus, 0);
	/* OK lines, blank lines and comments say nothing more. */
	parse("# nhc 1.4\n\nnode OK\ngpu 0 OK\r\n  gpu 7 OK  \n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_str_eq(h.reason, "");
	ck_assert_uint_eq(h.ngpus, 0);
}
END_TEST

START_TEST(test_parse_gpu_lines)
{
	parse("gpu 3 FAILED xid=79\ngpu 1 DEGRADED temp=91\ngpu 0 OK\n", 0,
	    8);
	/* Parsing alone does not fail the node for a GPU: the config
	 * decides (drain_on_gpu_failure). */
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_uint_eq(h.ngpus, 2);
	/* By index. */
	ck_assert_uint_eq(h.gpus[0].index, 1);
	ck_assert_int_eq(h.gpus[0].health, HEALTH_DEGRADED);
	ck_assert_str_eq(h.gpus[0].reason, "temp=91");
	ck_assert_uint_eq(h.gpus[1].index, 3);
	ck_assert_int_eq(h.gpus[1].health, HEALTH_FAILED);
	ck_assert_str_eq(h.gpus[1].reason, "xid=79");
	/* A GPU named twice: the worse wins, with its reason; no trailing
	 * newline; states in any case. */
	parse("gpu 2 DEGRADED slow\ngpu 2 failed xid=48\ngpu 2 OK", 0, 4);
	ck_assert_uint_eq(h.ngpus, 1);
	ck_assert_int_eq(h.gpus[0].health, HEALTH_FAILED);
	ck_assert_str_eq(h.gpus[0].reason, "xid=48");
	/* Without a reason. */
	parse("gpu 0 FAILED\n", 0, 1);
	ck_assert_int_eq(h.gpus[0].health, HEALTH_FAILED);
	ck_assert_str_eq(h.gpus[0].reason, "");
}
END_TEST

START_TEST(test_parse_node_lines)
{
	parse("node DEGRADED fan 3 slow\n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_DEGRADED);
	ck_assert_str_eq(h.reason, "fan 3 slow");
	parse("node DEGRADED a\nnode FAILED disk full: /scratch\n"
	    "node DEGRADED b\n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "disk full: /scratch");
	ck_assert_uint_eq(h.ngpus, 0);
}
END_TEST

START_TEST(test_parse_key_values)
{
	parse("gpu 2 FAILED xid=79 pci=0000:18:00.0 msg=fell_off\n", 0, 8);
	ck_assert_str_eq(h.gpus[0].reason,
	    "xid=79 pci=0000:18:00.0 msg=fell_off");
	/* Tabs between words; the reason is kept as written. */
	parse("gpu\t4\tDEGRADED\tecc_sbe=1200   rate=high\n", 0, 8);
	ck_assert_uint_eq(h.gpus[0].index, 4);
	ck_assert_str_eq(h.gpus[0].reason, "ecc_sbe=1200   rate=high");
}
END_TEST

START_TEST(test_parse_long_reason)
{
	char out[1024];

	memset(out, 'x', sizeof(out));
	memcpy(out, "node FAILED ", 12);
	out[sizeof(out) - 1] = '\0';
	parse(out, 0, 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_uint_eq(strlen(h.reason), HEALTH_REASON_MAX - 1);
}
END_TEST

START_TEST(test_parse_exit_status)
{
	/* Non-zero without lines: FAILED with the status. */
	parse("", EXITED(1), 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "health check exited with status 1");
	/* A DEGRADED line is kept as the detail. */
	parse("node DEGRADED fan slow\n", EXITED(2), 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason,
	    "health check exited with status 2; fan slow");
	/* NHC's own words (not our convention) become the detail. */
	parse("ERROR:  nhc:  Health check failed:  no /scratch\n", EXITED(1),
	    8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "health check exited with status 1; "
	    "unparsable line 'ERROR:  nhc:  Health check failed:  no "
	    "/scratch'");
	/* Killed by a signal. */
	parse("", SIGKILL, 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "health check killed by signal 9");
	/* A FAILED line explains the status: it stands as is. */
	parse("gpu 1 FAILED xid=79\n", EXITED(1), 8);
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_int_eq(h.gpus[0].health, HEALTH_FAILED);
	parse("node FAILED no ib0\n", EXITED(1), 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "no ib0");
}
END_TEST

START_TEST(test_parse_garbage)
{
	/* Reported, not ignored; the node's state is what the good lines
	 * say. */
	parse("hello world\ngpu 1 DEGRADED hot\n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_str_eq(h.reason, "unparsable line 'hello world'");
	ck_assert_uint_eq(h.ngpus, 1);
	parse("node DEGRADED x\nfoo\nbar\nnode BROKEN\n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_DEGRADED);
	ck_assert_str_eq(h.reason,
	    "x; unparsable line 'foo' (and 2 more bad lines)");
	parse("node\n", 0, 8);
	ck_assert_str_eq(h.reason,
	    "node: '' is not OK, DEGRADED or FAILED");
	parse("gpu 1 BROKEN\n", 0, 8);
	ck_assert_str_eq(h.reason,
	    "gpu 1: 'BROKEN' is not OK, DEGRADED or FAILED");
	parse("gpu x FAILED\n", 0, 8);
	ck_assert_str_eq(h.reason, "gpu: 'x' is not a GPU index");
	parse("gpu -1 FAILED\n", 0, 8);
	ck_assert_str_eq(h.reason, "gpu: '-1' is not a GPU index");
	ck_assert_uint_eq(h.ngpus, 0);
	/* A NUL byte in the output. */
	ck_assert_int_eq(health_parse("gpu 1\0 FAILED\n", 14, 0, 8, &h), 0);
	ck_assert_str_eq(h.reason, "a line with a NUL byte");
	ck_assert_uint_eq(h.ngpus, 0);
}
END_TEST

START_TEST(test_parse_gpu_range)
{
	parse("gpu 8 FAILED xid=79\n", 0, 8);
	ck_assert_int_eq(h.health, HEALTH_OK);
	ck_assert_uint_eq(h.ngpus, 0);
	ck_assert_str_eq(h.reason, "gpu 8: no such GPU (this node has 8)");
	parse("gpu 99999999999 FAILED\n", 0, 8);
	ck_assert_str_eq(h.reason, "gpu: '99999999999' is not a GPU index");
	/* A node without GPUs has none to fail. */
	parse("gpu 0 FAILED\n", 0, 0);
	ck_assert_uint_eq(h.ngpus, 0);
	/* ... and with an exit status, the node fails instead. */
	parse("gpu 8 FAILED xid=79\n", EXITED(1), 8);
	ck_assert_int_eq(h.health, HEALTH_FAILED);
	ck_assert_str_eq(h.reason, "health check exited with status 1; "
	    "gpu 8: no such GPU (this node has 8)");
}
END_TEST

START_TEST(test_parse_einval)
{
	ck_assert_int_eq(health_parse("", 0, 0, 8, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(health_parse(NULL, 5, 0, 8, &h), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(health_parse("", 0, 0, INV_MAX_GPUS + 1, &h), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(health_parse(NULL, 0, 0, 8, &h), 0);
	ck_assert_int_eq(h.health, HEALTH_OK);
}
END_TEST

/* ---- the XID policy ---- */

static void
cfg_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->health_interval_ms = 200;
	cfg->health_timeout_ms = 1000;
	cfg->drain_on_gpu_failure = true;
	cfg->temperature_degraded = 90;
	memset(cfg->xid_policy, -1, sizeof(cfg->xid_policy));
}

START_TEST(test_xid_defaults)
{
	static const unsigned job[] = { 13, 31, 43 };
	static const unsigned drain[] = { 48, 63, 64, 74, 79, 92, 94, 95 };
	struct agent_config cfg;
	size_t i;

	cfg_defaults(&cfg);
	for (i = 0; i < sizeof(job) / sizeof(job[0]); i++) {
		ck_assert_int_eq(health_nvml_xid_action(NULL, job[i]), XID_FAIL_JOB);
		ck_assert_int_eq(health_nvml_xid_action(&cfg, job[i]),
		    XID_FAIL_JOB);
	}
	for (i = 0; i < sizeof(drain) / sizeof(drain[0]); i++)
		ck_assert_int_eq(health_nvml_xid_action(&cfg, drain[i]), XID_DRAIN);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 0), XID_IGNORE);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 45), XID_IGNORE);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 1000000), XID_IGNORE);
}
END_TEST

START_TEST(test_xid_overrides)
{
	struct agent_config cfg;
	struct cerr err;
	char dir[] = "/tmp/check_health.XXXXXX", path[64];
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/agent.conf", dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs("[agent]\ncontroller = c:1\nname = n\nspool = /s\n"
	    "[tls]\nca = /a\ncert = /b\nkey = /c\n"
	    "[xid]\n79 = ignore\n13 = drain\n45 = fail-job\n", fp);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_msg(agent_config_load(&cfg, path, &err) == 0, "%s",
	    err.text);
	unlink(path);
	rmdir(dir);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 79), XID_IGNORE);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 13), XID_DRAIN);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 45), XID_FAIL_JOB);
	/* The others keep their defaults. */
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 48), XID_DRAIN);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 31), XID_FAIL_JOB);
	ck_assert_int_eq(health_nvml_xid_action(&cfg, 1), XID_IGNORE);
	agent_config_clear(&cfg);
}
END_TEST

/* ---- programs ---- */

static char tmpdir[PATH_MAX];
static char prog[PATH_MAX + 16];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_health.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(prog, sizeof(prog), "%s/check", tmpdir);
}

static void
tmp_teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The check program: a shell script with body, replaced by rename. */
static void
write_prog(const char *body)
{
	char tmp[PATH_MAX + 32];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", prog);
	ck_assert_ptr_nonnull(fp = fopen(tmp, "w"));
	fprintf(fp, "#!/bin/sh\n%s\n", body);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(chmod(tmp, 0755), 0);
	ck_assert_int_eq(rename(tmp, prog), 0);
}

struct seen {
	int calls;
	struct node_health last;
	struct event_base *base;
	bool stop;		/* break the loop at the next change */
};

static void
changed_cb(const struct node_health *nh, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	s->last = *nh;
	if (s->stop && s->base != NULL)
		event_base_loopbreak(s->base);
}

static void
guard_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
run_for(struct event_base *base, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event *guard = evtimer_new(base, guard_cb, base);

	ck_assert_ptr_nonnull(guard);
	evtimer_add(guard, &tv);
	event_base_dispatch(base);
	event_free(guard);
}

/* Run the loop until the verdict changes, at most secs. */
static void
run_until_change(struct seen *s, int secs)
{
	struct timeval tv = { secs, 0 };
	struct event *guard = evtimer_new(s->base, guard_cb, s->base);
	int calls = s->calls;

	ck_assert_ptr_nonnull(guard);
	evtimer_add(guard, &tv);
	s->stop = true;
	event_base_dispatch(s->base);
	s->stop = false;
	event_free(guard);
	ck_assert_msg(s->calls > calls, "no change within %d s", secs);
}

START_TEST(test_prog_failed_line)
{
	struct agent_config cfg;
	struct seen s = { 0 };
	struct health *hl;
	const struct node_health *cur;
	struct cerr err;

	cfg_defaults(&cfg);
	cfg.health_program = prog;
	write_prog("echo 'gpu 3 FAILED xid=79'");
	ck_assert_ptr_nonnull(s.base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(s.base, &cfg, NULL, 8,
	    changed_cb, &s, &err));
	/* Healthy until checked. */
	ck_assert_int_eq(health_current(hl)->health, HEALTH_OK);
	health_check_now(hl);
	cur = health_current(hl);
	ck_assert_int_eq(cur->health, HEALTH_FAILED);
	ck_assert_str_eq(cur->reason, "gpu 3 FAILED: xid=79");
	ck_assert_uint_eq(cur->ngpus, 1);
	ck_assert_uint_eq(cur->gpus[0].index, 3);
	ck_assert_int_eq(cur->gpus[0].health, HEALTH_FAILED);
	ck_assert_str_eq(cur->gpus[0].reason, "xid=79");
	ck_assert_int_gt(cur->checked_ms, 0);
	ck_assert_int_eq(s.calls, 1);
	/* The same verdict again is no change. */
	health_check_now(hl);
	ck_assert_int_eq(s.calls, 1);

	/* Healed: the next run on the loop says so. */
	write_prog("echo 'gpu 3 OK'");
	run_until_change(&s, 5);
	ck_assert_int_eq(s.last.health, HEALTH_OK);
	ck_assert_uint_eq(s.last.ngpus, 0);
	ck_assert_str_eq(s.last.reason, "");
	/* And a failure again. */
	write_prog("echo 'node FAILED no /scratch'; exit 1");
	run_until_change(&s, 5);
	ck_assert_int_eq(s.last.health, HEALTH_FAILED);
	ck_assert_str_eq(s.last.reason, "no /scratch");
	health_destroy(hl);
	event_base_free(s.base);
}
END_TEST

START_TEST(test_prog_gpu_only)
{
	struct agent_config cfg;
	struct health *hl;
	const struct node_health *cur;
	struct event_base *base;
	struct cerr err;

	/* drain_on_gpu_failure = no: only the GPU fails. */
	cfg_defaults(&cfg);
	cfg.drain_on_gpu_failure = false;
	cfg.health_program = prog;
	write_prog("echo 'gpu 3 FAILED xid=79'; echo 'gpu 5 DEGRADED hot'");
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(base, &cfg, NULL, 8, NULL,
	    NULL, &err));
	health_check_now(hl);
	cur = health_current(hl);
	ck_assert_int_eq(cur->health, HEALTH_OK);
	ck_assert_uint_eq(cur->ngpus, 2);
	ck_assert_int_eq(cur->gpus[0].health, HEALTH_FAILED);
	ck_assert_int_eq(cur->gpus[1].health, HEALTH_DEGRADED);
	health_destroy(hl);
	event_base_free(base);
}
END_TEST

/* "pid STATE": the process is gone (or only a zombie). */
static bool
gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return true;
	p = fgets(buf, sizeof(buf), fp);
	fclose(fp);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return true;
	return p[2] == 'Z' || p[2] == 'X';
}

static pid_t
read_pid(const char *path)
{
	FILE *fp;
	int pid = 0, i;

	for (i = 0; i < 200 && (fp = fopen(path, "r")) == NULL; i++)
		usleep(10000);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fscanf(fp, "%d", &pid), 1);
	fclose(fp);
	return (pid_t)pid;
}

START_TEST(test_prog_hangs_sync)
{
	struct agent_config cfg;
	struct health *hl;
	const struct node_health *cur;
	struct event_base *base;
	struct cerr err;
	char body[PATH_MAX + 128], pidfile[PATH_MAX + 16];
	int64_t t0, dt;
	pid_t child;
	int i;

	cfg_defaults(&cfg);
	cfg.health_program = prog;
	cfg.health_timeout_ms = 1000;
	/* A child in the background too: the whole group goes. */
	snprintf(pidfile, sizeof(pidfile), "%s/child.pid", tmpdir);
	snprintf(body, sizeof(body), "echo 'gpu 1 DEGRADED so far'\n"
	    "sleep 30 & echo $! > %s\nsleep 30", pidfile);
	write_prog(body);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(base, &cfg, NULL, 8, NULL,
	    NULL, &err));
	t0 = mono_ms();
	health_check_now(hl);
	dt = mono_ms() - t0;
	ck_assert_int_ge(dt, 900);
	ck_assert_int_lt(dt, 5000);
	cur = health_current(hl);
	ck_assert_int_eq(cur->health, HEALTH_FAILED);
	ck_assert_str_eq(cur->reason, "health check timed out after 1 s");
	/* A run that timed out says nothing of the GPUs. */
	ck_assert_uint_eq(cur->ngpus, 0);
	child = read_pid(pidfile);
	for (i = 0; i < 200 && !gone(child); i++)
		usleep(10000);
	ck_assert_msg(gone(child), "the check's child %d survived",
	    (int)child);
	health_destroy(hl);
	event_base_free(base);
}
END_TEST

START_TEST(test_prog_hangs_loop)
{
	struct agent_config cfg;
	struct seen s = { 0 };
	struct health *hl;
	struct cerr err;
	int64_t t0, dt;

	cfg_defaults(&cfg);
	cfg.health_program = prog;
	cfg.health_interval_ms = 100;
	cfg.health_timeout_ms = 700;
	write_prog("sleep 30");
	ck_assert_ptr_nonnull(s.base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(s.base, &cfg, NULL, 8,
	    changed_cb, &s, &err));
	t0 = mono_ms();
	run_until_change(&s, 5);
	dt = mono_ms() - t0;
	/* One interval, then the timeout; ticks meanwhile start nothing
	 * new. */
	ck_assert_int_ge(dt, 750);
	ck_assert_int_lt(dt, 3000);
	ck_assert_int_eq(s.last.health, HEALTH_FAILED);
	ck_assert_str_eq(s.last.reason, "health check timed out after 1 s");
	/* Destroyed while a run is going: it is killed and reaped, at
	 * once. */
	run_for(s.base, 300);
	t0 = mono_ms();
	health_destroy(hl);
	ck_assert_int_lt(mono_ms() - t0, 1000);
	event_base_free(s.base);
}
END_TEST

START_TEST(test_prog_missing)
{
	struct agent_config cfg;
	struct health *hl;
	const struct node_health *cur;
	struct event_base *base;
	struct cerr err;
	char path[PATH_MAX + 16];

	cfg_defaults(&cfg);
	snprintf(path, sizeof(path), "%s/no-such-check", tmpdir);
	cfg.health_program = path;
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(base, &cfg, NULL, 8, NULL,
	    NULL, &err));
	health_check_now(hl);
	cur = health_current(hl);
	ck_assert_int_eq(cur->health, HEALTH_FAILED);
	ck_assert_msg(strstr(cur->reason, "cannot run ") != NULL &&
	    strstr(cur->reason, "No such file or directory") != NULL, "%s",
	    cur->reason);
	health_destroy(hl);
	event_base_free(base);
}
END_TEST

START_TEST(test_prog_big_output)
{
	struct agent_config cfg;
	struct health *hl;
	const struct node_health *cur;
	struct event_base *base;
	struct cerr err;

	/* More than the pipe holds and more than is kept: the program is
	 * not blocked, and the lines that fit count. */
	cfg_defaults(&cfg);
	cfg.health_program = prog;
	cfg.health_timeout_ms = 5000;
	write_prog("echo 'gpu 2 FAILED xid=74'; i=0; "
	    "while [ $i -lt 3000 ]; do "
	    "echo '# padding padding padding padding padding padding'; "
	    "i=$((i+1)); done; exit 0");
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(base, &cfg, NULL, 8, NULL,
	    NULL, &err));
	health_check_now(hl);
	cur = health_current(hl);
	ck_assert_int_eq(cur->health, HEALTH_FAILED);
	ck_assert_str_eq(cur->reason, "gpu 2 FAILED: xid=74");
	health_destroy(hl);
	event_base_free(base);
}
END_TEST

START_TEST(test_no_checks)
{
	struct agent_config cfg;
	struct health *hl;
	struct event_base *base;
	struct xid_event xe[4];
	struct cerr err;

	cfg_defaults(&cfg);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(hl = health_create(base, &cfg, NULL, 8, NULL,
	    NULL, &err));
	health_check_now(hl);
	ck_assert_int_eq(health_current(hl)->health, HEALTH_OK);
	ck_assert_uint_eq(health_nvml_take_xids(hl, xe, 4), 0);
	health_destroy(hl);
	ck_assert_ptr_null(health_create(base, &cfg, NULL, INV_MAX_GPUS + 1,
	    NULL, NULL, &err));
	event_base_free(base);
}
END_TEST

/* ---- NVML through the fake library ---- */

static void
fake_env(const char *xid, const char *ecc, const char *temp)
{
	setenv("FAKE_NVML_GPUS", "8", 1);
	unsetenv("FAKE_NVML_FAIL_INIT");
	unsetenv("FAKE_NVML_TOPO");
	if (xid != NULL)
		setenv("FAKE_NVML_XID", xid, 1);
	else
		unsetenv("FAKE_NVML_XID");
	if (ecc != NULL)
		setenv("FAKE_NVML_ECC", ecc, 1);
	else
		unsetenv("FAKE_NVML_ECC");
	if (temp != NULL)
		setenv("FAKE_NVML_TEMP", temp, 1);
	else
		unsetenv("FAKE_NVML_TEMP");
}

struct nv_case {
	struct agent_config cfg;
	struct event_base *base;
	struct nvml *nv;
	struct health *hl;
	struct seen s;
};

static void
nv_open(struct nv_case *c)
{
	struct cerr err;

	ck_assert_ptr_nonnull(c->base = event_base_new());
	c->s.base = c->base;
	ck_assert_msg((c->nv = nvml_create(FAKE_NVML, &err)) != NULL, "%s",
	    err.text);
	ck_assert_ptr_nonnull(c->hl = health_create(c->base, &c->cfg, c->nv,
	    8, changed_cb, &c->s, &err));
}

static void
nv_close(struct nv_case *c)
{
	health_destroy(c->hl);
	nvml_destroy(c->nv);
	event_base_free(c->base);
}

START_TEST(test_nvml_xid_drain)
{
	struct nv_case c = { 0 };
	const struct node_health *cur;
	struct xid_event xe[4];

	fake_env("3:79", NULL, NULL);
	cfg_defaults(&c.cfg);
	nv_open(&c);
	health_check_now(c.hl);
	cur = health_current(c.hl);
	ck_assert_int_eq(cur->health, HEALTH_FAILED);
	ck_assert_str_eq(cur->reason, "gpu 3 FAILED: xid=79");
	ck_assert_uint_eq(cur->ngpus, 1);
	ck_assert_uint_eq(cur->gpus[0].index, 3);
	ck_assert_int_eq(cur->gpus[0].health, HEALTH_FAILED);
	ck_assert_str_eq(cur->gpus[0].reason, "xid=79");
	ck_assert_uint_eq(health_nvml_take_xids(c.hl, xe, 4), 1);
	ck_assert_uint_eq(xe[0].gpu, 3);
	ck_assert_uint_eq(xe[0].xid, 79);
	ck_assert_int_eq(xe[0].action, XID_DRAIN);
	ck_assert_int_gt(xe[0].time_ms, 0);
	ck_assert_uint_eq(health_nvml_take_xids(c.hl, xe, 4), 0);
	/* Sticky: later checks keep the GPU FAILED. */
	health_check_now(c.hl);
	ck_assert_int_eq(health_current(c.hl)->gpus[0].health, HEALTH_FAILED);
	nv_close(&c);
}
END_TEST

START_TEST(test_nvml_xid_loop)
{
	struct nv_case c = { 0 };
	struct xid_event xe[4];

	/* Found by the poll on the loop, with no check run: fail-job on
	 * GPU 2 is reported but fails nothing; drain on GPU 6 fails it. */
	fake_env("2:13,6:48,1:45", NULL, NULL);
	cfg_defaults(&c.cfg);
	c.cfg.health_interval_ms = 60000;
	nv_open(&c);
	run_until_change(&c.s, 5);
	ck_assert_int_eq(c.s.last.health, HEALTH_FAILED);
	ck_assert_str_eq(c.s.last.reason, "gpu 6 FAILED: xid=48");
	ck_assert_uint_eq(c.s.last.ngpus, 1);
	ck_assert_uint_eq(health_nvml_take_xids(c.hl, xe, 1), 1);
	ck_assert_uint_eq(xe[0].gpu, 2);
	ck_assert_uint_eq(xe[0].xid, 13);
	ck_assert_int_eq(xe[0].action, XID_FAIL_JOB);
	/* 45 is ignored: only logged. */
	ck_assert_uint_eq(health_nvml_take_xids(c.hl, xe, 4), 1);
	ck_assert_uint_eq(xe[0].gpu, 6);
	ck_assert_int_eq(xe[0].action, XID_DRAIN);
	nv_close(&c);
}
END_TEST

START_TEST(test_nvml_xid_policy)
{
	struct nv_case c = { 0 };
	struct xid_event xe[4];

	/* 79 ignored by the config, 45 made fail-job. */
	fake_env("3:79,4:45", NULL, NULL);
	cfg_defaults(&c.cfg);
	c.cfg.xid_policy[79] = XID_IGNORE;
	c.cfg.xid_policy[45] = XID_FAIL_JOB;
	nv_open(&c);
	health_check_now(c.hl);
	ck_assert_int_eq(health_current(c.hl)->health, HEALTH_OK);
	ck_assert_uint_eq(health_current(c.hl)->ngpus, 0);
	ck_assert_uint_eq(health_nvml_take_xids(c.hl, xe, 4), 1);
	ck_assert_uint_eq(xe[0].gpu, 4);
	ck_assert_uint_eq(xe[0].xid, 45);
	ck_assert_int_eq(xe[0].action, XID_FAIL_JOB);
	nv_close(&c);
}
END_TEST

START_TEST(test_nvml_ecc_temp)
{
	struct nv_case c = { 0 };
	const struct node_health *cur;

	fake_env(NULL, "5:2", "4:95");
	cfg_defaults(&c.cfg);
	c.cfg.drain_on_gpu_failure = false;
	nv_open(&c);
	health_check_now(c.hl);
	cur = health_current(c.hl);
	ck_assert_int_eq(cur->health, HEALTH_OK);
	ck_assert_uint_eq(cur->ngpus, 2);
	ck_assert_uint_eq(cur->gpus[0].index, 4);
	ck_assert_int_eq(cur->gpus[0].health, HEALTH_DEGRADED);
	ck_assert_str_eq(cur->gpus[0].reason, "temperature=95C");
	ck_assert_uint_eq(cur->gpus[1].index, 5);
	ck_assert_int_eq(cur->gpus[1].health, HEALTH_FAILED);
	ck_assert_str_eq(cur->gpus[1].reason, "ecc uncorrected=2");
	nv_close(&c);

	/* A higher threshold, or none: not hot. */
	memset(&c, 0, sizeof(c));
	cfg_defaults(&c.cfg);
	c.cfg.temperature_degraded = 96;
	nv_open(&c);
	health_check_now(c.hl);
	ck_assert_uint_eq(health_current(c.hl)->ngpus, 1);
	ck_assert_uint_eq(health_current(c.hl)->gpus[0].index, 5);
	nv_close(&c);
}
END_TEST

START_TEST(test_nvml_merge)
{
	struct nv_case c = { 0 };
	const struct node_health *cur;

	/* The program says GPU 3 is DEGRADED and GPU 1 FAILED; NVML says
	 * GPU 3 FAILED: the worse wins for each. */
	fake_env("3:79", NULL, NULL);
	cfg_defaults(&c.cfg);
	c.cfg.health_program = prog;
	c.cfg.drain_on_gpu_failure = false;
	write_prog("echo 'gpu 3 DEGRADED warm'; echo 'gpu 1 FAILED pcie'; "
	    "echo 'node DEGRADED fan'");
	nv_open(&c);
	health_check_now(c.hl);
	cur = health_current(c.hl);
	ck_assert_int_eq(cur->health, HEALTH_DEGRADED);
	ck_assert_str_eq(cur->reason, "fan");
	ck_assert_uint_eq(cur->ngpus, 2);
	ck_assert_uint_eq(cur->gpus[0].index, 1);
	ck_assert_str_eq(cur->gpus[0].reason, "pcie");
	ck_assert_uint_eq(cur->gpus[1].index, 3);
	ck_assert_int_eq(cur->gpus[1].health, HEALTH_FAILED);
	ck_assert_str_eq(cur->gpus[1].reason, "xid=79");
	nv_close(&c);
}
END_TEST

static Suite *
health_suite(void)
{
	Suite *s = suite_create("health");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_ok);
	tcase_add_test(tc, test_parse_gpu_lines);
	tcase_add_test(tc, test_parse_node_lines);
	tcase_add_test(tc, test_parse_key_values);
	tcase_add_test(tc, test_parse_long_reason);
	tcase_add_test(tc, test_parse_exit_status);
	tcase_add_test(tc, test_parse_garbage);
	tcase_add_test(tc, test_parse_gpu_range);
	tcase_add_test(tc, test_parse_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("xid");
	tcase_add_test(tc, test_xid_defaults);
	tcase_add_test(tc, test_xid_overrides);
	suite_add_tcase(s, tc);

	tc = tcase_create("program");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_prog_failed_line);
	tcase_add_test(tc, test_prog_gpu_only);
	tcase_add_test(tc, test_prog_hangs_sync);
	tcase_add_test(tc, test_prog_hangs_loop);
	tcase_add_test(tc, test_prog_missing);
	tcase_add_test(tc, test_prog_big_output);
	tcase_add_test(tc, test_no_checks);
	suite_add_tcase(s, tc);

	tc = tcase_create("nvml");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_nvml_xid_drain);
	tcase_add_test(tc, test_nvml_xid_loop);
	tcase_add_test(tc, test_nvml_xid_policy);
	tcase_add_test(tc, test_nvml_ecc_temp);
	tcase_add_test(tc, test_nvml_merge);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(health_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
