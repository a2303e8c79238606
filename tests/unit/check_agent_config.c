/* cohort-agent's configuration file (daemon/agent/agent_config.c), read
 * from temporary files: a good file, the defaults, relative paths, every
 * kind of error with its exact "FILE:LINE: " prefix, and the user map. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/account.h"
#include "daemon/agent/agent.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/health.h"
#include "daemon/agent/watch.h"
#include "lib/log.h"

static char tmpdir[PATH_MAX];
static char cfgpath[PATH_MAX + 32];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_agent_config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(cfgpath, sizeof(cfgpath), "%s/agent.conf", tmpdir);
}

static void
tmp_teardown(void)
{
	unlink(cfgpath);
	rmdir(tmpdir);
}

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	ck_assert_int_eq(fclose(fp), 0);
}

#define AGENT_REQUIRED                                                         \
	"[agent]\n"                                                            \
	"controller = ctl.example:7420\n"                                      \
	"name = gpu001\n"                                                      \
	"spool = /var/spool/cohort\n"
#define TLS_REQUIRED                                                           \
	"[tls]\n"                                                              \
	"ca = /etc/cohort/ca.pem\n"                                            \
	"cert = /etc/cohort/gpu001.crt\n"                                      \
	"key = /etc/cohort/gpu001.key\n"
/* Line 9 is the first one after REQUIRED. */
#define REQUIRED AGENT_REQUIRED TLS_REQUIRED

/* Load text; expect failure with exactly "<cfgpath><suffix>". */
static void
load_fails(const char *text, const char *suffix)
{
	struct agent_config cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 512];

	write_file(cfgpath, text);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), -1);
	snprintf(want, sizeof(want), "%s%s", cfgpath, suffix);
	ck_assert_str_eq(err.text, want);
	ck_assert_int_eq(err.code, ERR_INVALID);
	/* Nothing is left allocated after a failure. */
	ck_assert_ptr_null(cfg.name);
	ck_assert_ptr_null(cfg.spool);
	ck_assert_ptr_null(cfg.ca);
	ck_assert_uint_eq(cfg.nuser_map, 0);
	agent_config_clear(&cfg);
}

START_TEST(test_load_good)
{
	struct agent_config cfg;
	struct cerr err;
	char want[PATH_MAX + 64];

	write_file(cfgpath,
	    "; cohort-agent test configuration\n"
	    "[agent]\n"
	    "controller = [::1]:7420\n"
	    "   name = gpu-17.rack_a   ; indented, inline comment\n"
	    "\tspool=spool\n"
	    "address = 10.0.0.17\n"
	    "heartbeat_interval = 500ms\n"
	    "kill_wait = 1m\n"
	    "user_map = alice:svc, bob:nobody ,*:guest\n"
	    "[tls]\n"
	    "ca = pki/ca.pem\n"
	    "cert = /etc/cohort/gpu17.crt\r\n"
	    "key = ../gpu17.key\n"
	    "[gpu]\n"
	    "source = nvml\n"
	    "nvml_library = lib/libnvidia-ml.so.1\n"
	    "count = 4\n"
	    "model = NVIDIA A100-SXM4-80GB\n"
	    "memory_mb = 81920\n"
	    "nvlink = quads\n"
	    "numa_nodes = 1\n"
	    "nics = 2\n"
	    "cpus = 128\n"
	    "memory_total_mb = 2097152\n"
	    "[health]\n"
	    "program = /usr/sbin/nhc\n"
	    "interval = 5m\n"
	    "timeout = 00:02:30\n"
	    "drain_on_gpu_failure = no\n"
	    "temperature_degraded = 85\n"
	    "[xid]\n"
	    "79 = ignore\n"
	    "13 = drain\n"
	    "999 = fail-job\n");
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.controller_host, "::1");
	ck_assert_uint_eq(cfg.controller_port, 7420);
	ck_assert_str_eq(cfg.name, "gpu-17.rack_a");
	snprintf(want, sizeof(want), "%s/spool", tmpdir);
	ck_assert_str_eq(cfg.spool, want);
	ck_assert_str_eq(cfg.address, "10.0.0.17");
	ck_assert_uint_eq(cfg.heartbeat_ms, 500);
	ck_assert_uint_eq(cfg.kill_wait_ms, 60000);
	ck_assert_uint_eq(cfg.nuser_map, 3);
	ck_assert_str_eq(cfg.user_map[1].from, "bob");
	ck_assert_str_eq(cfg.user_map[1].to, "nobody");
	snprintf(want, sizeof(want), "%s/pki/ca.pem", tmpdir);
	ck_assert_str_eq(cfg.ca, want);
	ck_assert_str_eq(cfg.cert, "/etc/cohort/gpu17.crt");
	snprintf(want, sizeof(want), "%s/../gpu17.key", tmpdir);
	ck_assert_str_eq(cfg.key, want);
	ck_assert_int_eq(cfg.source, AGENT_SOURCE_NVML);
	snprintf(want, sizeof(want), "%s/lib/libnvidia-ml.so.1", tmpdir);
	ck_assert_str_eq(cfg.nvml_library, want);
	ck_assert_uint_eq(cfg.sim.count, 4);
	ck_assert_str_eq(cfg.sim.model, "NVIDIA A100-SXM4-80GB");
	ck_assert_uint_eq(cfg.sim.memory_mb, 81920);
	ck_assert_str_eq(cfg.sim.nvlink, "quads");
	ck_assert_uint_eq(cfg.sim.numa_nodes, 1);
	ck_assert_uint_eq(cfg.sim.nics, 2);
	ck_assert_uint_eq(cfg.sim.ncpus, 128);
	ck_assert_uint_eq(cfg.sim.memory_total_mb, 2097152);
	ck_assert_str_eq(cfg.health_program, "/usr/sbin/nhc");
	ck_assert_uint_eq(cfg.health_interval_ms, 300000);
	ck_assert_uint_eq(cfg.health_timeout_ms, 150000);
	ck_assert(!cfg.drain_on_gpu_failure);
	ck_assert_uint_eq(cfg.temperature_degraded, 85);
	ck_assert_int_eq(cfg.xid_policy[79], XID_IGNORE);
	ck_assert_int_eq(cfg.xid_policy[13], XID_DRAIN);
	ck_assert_int_eq(cfg.xid_policy[999], XID_FAIL_JOB);
	ck_assert_int_eq(cfg.xid_policy[48], -1);
	agent_config_clear(&cfg);
	ck_assert_ptr_null(cfg.name);
	ck_assert_uint_eq(cfg.nuser_map, 0);
	/* clear is idempotent. */
	agent_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_defaults)
{
	struct agent_config cfg;
	struct cerr err;
	unsigned i;

	write_file(cfgpath, REQUIRED "[gpu]\ncount = 4\n");
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.controller_host, "ctl.example");
	ck_assert_uint_eq(cfg.controller_port, 7420);
	ck_assert_str_eq(cfg.name, "gpu001");
	ck_assert_str_eq(cfg.spool, "/var/spool/cohort");
	/* Other nodes reach this one by its name unless told otherwise. */
	ck_assert_str_eq(cfg.address, "gpu001");
	ck_assert_uint_eq(cfg.heartbeat_ms, 2000);
	ck_assert_uint_eq(cfg.kill_wait_ms, 10000);
	ck_assert_uint_eq(cfg.nuser_map, 0);
	ck_assert_int_eq(cfg.source, AGENT_SOURCE_AUTO);
	ck_assert_int_eq(cfg.log_level, LOG_LEVEL_INFO);
	ck_assert_ptr_null(cfg.nvml_library);
	ck_assert_ptr_null(cfg.health_program);
	ck_assert_uint_eq(cfg.health_interval_ms, 30000);
	ck_assert_uint_eq(cfg.health_timeout_ms, 60000);
	ck_assert(cfg.drain_on_gpu_failure);
	ck_assert_uint_eq(cfg.temperature_degraded, 90);
	/* No override: every code takes the default (health.c). */
	for (i = 0; i <= AGENT_XID_MAX; i++)
		ck_assert_int_eq(cfg.xid_policy[i], -1);
	ck_assert_uint_eq(cfg.sim.count, 4);
	/* One NIC per GPU unless told otherwise, whatever the count. */
	ck_assert_uint_eq(cfg.sim.nics, 4);
	ck_assert_str_eq(cfg.sim.model, "NVIDIA H100 80GB HBM3");
	ck_assert_uint_eq(cfg.sim.memory_mb, 81559);
	ck_assert_str_eq(cfg.sim.nvlink, "all");
	ck_assert_uint_eq(cfg.sim.numa_nodes, 2);
	ck_assert_uint_eq(cfg.sim.ncpus, 64);
	ck_assert_uint_eq(cfg.sim.memory_total_mb, 1024 * 1024);
	ck_assert_str_eq(agent_config_map_user(&cfg, "alice"), "alice");
	agent_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_library_name)
{
	struct agent_config cfg;
	struct cerr err;

	/* A bare name is for dlopen's search, not a path. */
	write_file(cfgpath, REQUIRED "[gpu]\nnvml_library = libnvidia-ml.so\n");
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_str_eq(cfg.nvml_library, "libnvidia-ml.so");
	agent_config_clear(&cfg);
}
END_TEST

START_TEST(test_load_relative_file)
{
	struct agent_config cfg;
	struct cerr err;
	char cwd[PATH_MAX], want[PATH_MAX + 64];

	/* A file named relative to the cwd: paths in it are relative to
	 * the file's directory, made absolute. */
	write_file(cfgpath, REQUIRED "[health]\nprogram = check.sh\n");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(tmpdir), 0);
	ck_assert_msg(agent_config_load(&cfg, "./agent.conf", &err) == 0,
	    "%s", err.text);
	ck_assert_int_eq(chdir(cwd), 0);
	snprintf(want, sizeof(want), "%s/check.sh", tmpdir);
	ck_assert_str_eq(cfg.health_program, want);
	agent_config_clear(&cfg);
}
END_TEST

/* One character too many for a node name. */
#define NAME65 "a1234567890123456789012345678901234567890" \
	"123456789012345678901234"

START_TEST(test_load_errors)
{
	static const struct {
		const char *text, *suffix;
	} c[] = {
		{ "name = x\n", ":1: key 'name' is outside any section" },
		{ "[agent]\nfoo = 1\n", ":2: unknown key 'foo' in [agent]" },
		{ "[gpus]\ncount = 1\n", ":2: unknown section [gpus]" },
		{ "[agent]\nname\n",
		    ":2: syntax error: expected [section] or key = value" },
		{ "[agent\n",
		    ":1: syntax error: expected [section] or key = value" },
		{ REQUIRED "[agent]\nname = gpu002\n",
		    ":10: 'name' given twice in [agent] (first on line 3)" },
		{ "[agent]\ncontroller = ctl\n",
		    ":2: controller: 'ctl': missing port (expected "
		    "HOST:PORT)" },
		{ "[agent]\ncontroller = ctl:0\n",
		    ":2: controller: port 0 out of range 1..65535" },
		{ "[agent]\nname = -gpu\n",
		    ":2: name: '-gpu' is not a node name (a letter or digit, "
		    "then up to 63 letters, digits, '.', '_' or '-')" },
		{ "[agent]\nname = gpu/1\n",
		    ":2: name: 'gpu/1' is not a node name (a letter or digit, "
		    "then up to 63 letters, digits, '.', '_' or '-')" },
		{ "[agent]\nname = " NAME65 "\n",
		    ":2: name: '" NAME65 "' is not a node name (a letter or "
		    "digit, then up to 63 letters, digits, '.', '_' or '-')" },
		{ "[agent]\nspool =\n", ":2: spool: empty path" },
		{ "[agent]\naddress = a b\n",
		    ":2: address: 'a b' is not a host name or address" },
		{ "[agent]\naddress = ::g\n",
		    ":2: address: '::g' is not an IPv6 address" },
		{ "[agent]\nheartbeat_interval = 2\n",
		    ":2: heartbeat_interval: '2' needs a unit (ms, s, m or "
		    "h)" },
		{ "[agent]\nheartbeat_interval = 50ms\n",
		    ":2: heartbeat_interval: 50ms out of range 100ms..10m" },
		{ "[agent]\nheartbeat_interval = 11m\n",
		    ":2: heartbeat_interval: 11m out of range 100ms..10m" },
		{ "[agent]\nheartbeat_interval = 99999999999999999999999ms\n",
		    ":2: heartbeat_interval: 99999999999999999999999ms out of "
		    "range 100ms..10m" },
		{ "[agent]\nheartbeat_interval = 2 s\n",
		    ":2: heartbeat_interval: '2 s' is not a duration (e.g. "
		    "500ms, 2s, 10m)" },
		{ "[agent]\nheartbeat_interval = ms\n",
		    ":2: heartbeat_interval: 'ms' is not a duration (e.g. "
		    "500ms, 2s, 10m)" },
		{ "[agent]\nkill_wait = 2h\n",
		    ":2: kill_wait: 2h out of range 0s..1h" },
		{ "[tls]\nca =\n", ":2: ca: empty path" },
		{ "[agent]\nnuma_cpus = 0:0 0:1\n",
		    ":2: numa_cpus: NUMA node 0 is given twice" },
		{ "[agent]\nnuma_cpus = 0:0-1 1:1\n",
		    ":2: numa_cpus: CPU 1 is on two NUMA nodes" },
		{ "[agent]\nnuma_cpus = 0-1\n",
		    ":2: numa_cpus: '0-1': expected NODE:CPUS (0:0-3; NODE 0 "
		    "to 63)" },
		{ "[agent]\ncgroup = sometimes\n",
		    ":2: cgroup: 'sometimes': expected auto, off or an absolute "
		    "path" },
		{ "[agent]\ncgroup = /a/../b\n",
		    ":2: cgroup: '/a/../b' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\ncgroup = /sys/fs/cgroup/./x\n",
		    ":2: cgroup: '/sys/fs/cgroup/./x' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\ncgroup = /sys/fs//cgroup\n",
		    ":2: cgroup: '/sys/fs//cgroup' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\ncgroup = /sys/fs/cgroup/x/\n",
		    ":2: cgroup: '/sys/fs/cgroup/x/' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\ncgroup = /sys/fs/cgroup/..\n",
		    ":2: cgroup: '/sys/fs/cgroup/..' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\ncgroup = /.\n",
		    ":2: cgroup: '/.' is not a canonical path (no '.', '..', "
		    "'//' or trailing '/')" },
		{ "[agent]\nfeatures = fp64,,ib\n",
		    ":2: features: empty feature name at column 6" },
		{ "[agent]\nfeatures = fp64,a b\n",
		    ":2: features: 'a b' is not a feature name (letters, "
		    "digits, '.', '_', '-', at most 64)" },
		{ "[agent]\nfeatures = fp64&ib\n",
		    ":2: features: 'fp64&ib' is not a feature name (letters, "
		    "digits, '.', '_', '-', at most 64)" },
		{ "[agent]\nfeatures = " NAME65 "\n",
		    ":2: features: '" NAME65 "' is not a feature name "
		    "(letters, digits, '.', '_', '-', at most 64)" },
		{ "[agent]\nfeatures = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,"
		    "u,v,w,x,y,z,A,B,C,D,E,F,G\n",
		    ":2: features: more than 32 features" },
		{ "[gpu]\nsource = cuda\n",
		    ":2: source: 'cuda' is not a source (auto, nvml, simulated or none)" },
		{ "[gpu]\nnvml_library =\n",
		    ":2: nvml_library: empty library name" },
		{ "[gpu]\ncount = 65\n", ":2: count: 65 out of range 0..64" },
		{ "[gpu]\ncount = -1\n", ":2: count: '-1' is not a number" },
		{ "[gpu]\nmemory_mb = 0\n",
		    ":2: memory_mb: 0 out of range 1..16777216" },
		{ "[gpu]\nnvlink = ring\n",
		    ":2: nvlink: unknown layout 'ring' (all, quads, pairs or "
		    "none)" },
		{ "[gpu]\nnuma_nodes = 0\n",
		    ":2: numa_nodes: 0 out of range 1..64" },
		{ "[gpu]\ncpus = many\n", ":2: cpus: 'many' is not a number" },
		{ "[gpu]\nmodel =\n",
		    ":2: model: a model name has 1 to 95 characters" },
		{ "[health]\ninterval = 500ms\n",
		    ":2: interval: 500ms out of range 1s..24h" },
		{ "[health]\ntimeout = 2h\n",
		    ":2: timeout: 2h out of range 1s..1h" },
		{ "[health]\nprogram =\n", ":2: program: empty path" },
		{ "[health]\ndrain_on_gpu_failure = maybe\n",
		    ":2: drain_on_gpu_failure: 'maybe' is not a boolean "
		    "(yes/no, true/false, on/off, 1/0)" },
		{ "[health]\ntemperature_degraded = 300\n",
		    ":2: temperature_degraded: 300 out of range 0..200" },
		{ "[xid]\n79 = reboot\n",
		    ":2: 79: 'reboot' is not an XID action (ignore, fail-job "
		    "or drain)" },
		{ "[xid]\n79 = Drain\n",
		    ":2: 79: 'Drain' is not an XID action (ignore, fail-job "
		    "or drain)" },
		{ "[xid]\n79 =\n",
		    ":2: 79: '' is not an XID action (ignore, fail-job or "
		    "drain)" },
		{ "[xid]\n1000 = drain\n", ":2: unknown key '1000' in [xid]" },
		{ "[xid]\n0 = drain\n", ":2: unknown key '0' in [xid]" },
		{ "[xid]\n079 = drain\n", ":2: unknown key '079' in [xid]" },
		{ "[xid]\nxid79 = drain\n",
		    ":2: unknown key 'xid79' in [xid]" },
		{ "[xid]\n79 = drain\n79 = ignore\n",
		    ":3: '79' given twice in [xid] (first on line 2)" },
		/* Only the first error is reported. */
		{ "[agent]\nname = -x\nfoo = 1\n",
		    ":2: name: '-x' is not a node name (a letter or digit, "
		    "then up to 63 letters, digits, '.', '_' or '-')" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		load_fails(c[i].text, c[i].suffix);
}
END_TEST

START_TEST(test_load_missing)
{
	static const struct {
		const char *text, *suffix;
	} c[] = {
		{ TLS_REQUIRED, ": missing 'controller' in [agent]" },
		{ "[agent]\ncontroller = c:1\nspool = /s\n" TLS_REQUIRED,
		    ": missing 'name' in [agent]" },
		{ "[agent]\ncontroller = c:1\nname = n\n" TLS_REQUIRED,
		    ": missing 'spool' in [agent]" },
		{ AGENT_REQUIRED, ": missing 'ca' in [tls]" },
		{ AGENT_REQUIRED "[tls]\nca = a\nkey = k\n",
		    ": missing 'cert' in [tls]" },
		{ AGENT_REQUIRED "[tls]\nca = a\ncert = c\n",
		    ": missing 'key' in [tls]" },
		{ "", ": missing 'controller' in [agent]" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		load_fails(c[i].text, c[i].suffix);
}
END_TEST

START_TEST(test_load_long_line)
{
	char *text, *pad;
	size_t n = 9000;

	/* A long path is taken whole (inih's own buffer is 200 bytes); one
	 * past 8192 characters is refused rather than cut. The whole-value
	 * case is in check_conf. */
	ck_assert_ptr_nonnull(pad = malloc(n + 1));
	memset(pad, 'a', n);
	pad[n] = '\0';
	ck_assert_int_ne(asprintf(&text, "[agent]\nspool = /%s\n", pad), -1);
	load_fails(text, ":2: line too long (at most 197 characters, or 8192 "
	    "for key = value)");
	free(text);
	free(pad);
}
END_TEST

START_TEST(test_load_no_file)
{
	struct agent_config cfg;
	struct cerr err;
	char want[sizeof(cfgpath) + 64];

	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), -1);
	snprintf(want, sizeof(want), "%s: cannot open: %s", cfgpath,
	    strerror(ENOENT));
	ck_assert_str_eq(err.text, want);
	agent_config_clear(&cfg);
}
END_TEST

/* The example shipped in etc/ loads, and says what the defaults are. */
START_TEST(test_load_example)
{
	static const char self[] = "tests/unit/check_agent_config.c";
	struct agent_config cfg, def;
	struct cerr err;
	char path[PATH_MAX];
	size_t n = strlen(__FILE__) - strlen(self);

	/* The source tree, from where the compiler found this file. */
	ck_assert_str_eq(__FILE__ + n, self);
	snprintf(path, sizeof(path), "%.*setc/cohort-agent.conf", (int)n,
	    __FILE__);
	ck_assert_msg(agent_config_load(&cfg, path, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.name, "gpu001");
	ck_assert_str_eq(cfg.controller_host, "cohort-ctl.example.org");
	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&def, cfgpath, &err), 0);
	ck_assert_uint_eq(cfg.heartbeat_ms, def.heartbeat_ms);
	ck_assert_uint_eq(cfg.kill_wait_ms, def.kill_wait_ms);
	ck_assert_uint_eq(cfg.health_interval_ms, def.health_interval_ms);
	ck_assert_uint_eq(cfg.health_timeout_ms, def.health_timeout_ms);
	ck_assert_uint_eq(cfg.sim.count, def.sim.count);
	ck_assert_str_eq(cfg.sim.model, def.sim.model);
	ck_assert_uint_eq(cfg.sim.memory_mb, def.sim.memory_mb);
	ck_assert_str_eq(cfg.sim.nvlink, def.sim.nvlink);
	ck_assert_uint_eq(cfg.sim.numa_nodes, def.sim.numa_nodes);
	ck_assert_uint_eq(cfg.sim.nics, def.sim.nics);
	ck_assert_uint_eq(cfg.sim.ncpus, def.sim.ncpus);
	ck_assert_uint_eq(cfg.sim.memory_total_mb, def.sim.memory_total_mb);
	ck_assert_int_eq(cfg.source, def.source);
	ck_assert_int_eq(cfg.drain_on_gpu_failure, def.drain_on_gpu_failure);
	ck_assert_uint_eq(cfg.temperature_degraded, def.temperature_degraded);
	ck_assert_mem_eq(cfg.xid_policy, def.xid_policy,
	    sizeof(cfg.xid_policy));
	agent_config_clear(&cfg);
	agent_config_clear(&def);
}
END_TEST

/* slurm_commands: the installed directory by default, a relative path
 * made absolute, none turns it off, a ':' is refused (it would split
 * PATH). cluster_name: cohort by default, a word. */
/* [container]: defaults, each key, and refusals with their line. */
START_TEST(test_container)
{
	struct agent_config cfg;
	struct cerr err;
	char want[PATH_MAX + 64];

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert(cfg.ctr_enabled);
	ck_assert_ptr_null(cfg.ctr_cache);
	ck_assert_ptr_null(cfg.ctr_mounts);
	ck_assert_uint_eq(cfg.ctr_cache_max, 50ULL << 30);
	ck_assert_uint_eq(cfg.ctr_prepare_timeout_ms, 30 * 60 * 1000);
	ck_assert_ptr_null(cfg.ctr_registries);
	ck_assert_ptr_null(cfg.ctr_cdi_dirs);
	agent_config_clear(&cfg);
	write_file(cfgpath, REQUIRED "[container]\nenabled = no\n"
	    "cdi_dirs = /etc/cdi:/opt/cdi\n"
	    "runtime = /opt/runc\ncache = images\ncache_size = 2G\n"
	    "mounts = /shared:/shared:ro,/scratch\nshm_size = 1G\n"
	    "prepare_timeout = 90s\n"
	    "registries = nvcr.io, reg.lan:5000,docker.io\n");
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert(!cfg.ctr_enabled);
	ck_assert_str_eq(cfg.ctr_runtime, "/opt/runc");
	snprintf(want, sizeof(want), "%s/images", tmpdir);
	ck_assert_str_eq(cfg.ctr_cache, want);
	ck_assert_uint_eq(cfg.ctr_cache_max, 2ULL << 30);
	ck_assert_str_eq(cfg.ctr_mounts, "/shared:/shared:ro,/scratch");
	ck_assert_uint_eq(cfg.ctr_shm, 1ULL << 30);
	ck_assert_uint_eq(cfg.ctr_prepare_timeout_ms, 90 * 1000);
	ck_assert_str_eq(cfg.ctr_registries, "nvcr.io, reg.lan:5000,docker.io");
	ck_assert_str_eq(cfg.ctr_cdi_dirs, "/etc/cdi:/opt/cdi");
	agent_config_clear(&cfg);
	load_fails("[container]\ncdi_dirs = etc/cdi\n", ":2: cdi_dirs: "
	    "etc/cdi is not an absolute path without \"..\"");
	load_fails("[container]\ncdi_dirs = /etc/cdi::/x\n", ":2: cdi_dirs: "
	    "an empty or too long directory in /etc/cdi::/x");
	write_file(cfgpath, REQUIRED "[container]\nregistries =\n");
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_ptr_null(cfg.ctr_registries);
	agent_config_clear(&cfg);
	load_fails("[container]\nprepare_timeout = 500ms\n",
	    ":2: prepare_timeout: 500ms out of range 1s..24h");
	load_fails("[container]\nprepare_timeout = 25h\n",
	    ":2: prepare_timeout: 25h out of range 1s..24h");
	load_fails("[container]\nprepare_timeout = 30\n",
	    ":2: prepare_timeout: '30' needs a unit (ms, s, m or h)");
	load_fails("[container]\nprepare_timeout = soon\n",
	    ":2: prepare_timeout: 'soon' is not a duration (e.g. 500ms, 2s, "
	    "10m)");
	load_fails("[container]\nregistries = nvcr.io,,docker.io\n",
	    ":2: registries: '' is not a registry host (HOST or HOST:PORT)");
	load_fails("[container]\nregistries = https://nvcr.io\n",
	    ":2: registries: 'https://nvcr.io' is not a registry host (HOST "
	    "or HOST:PORT)");
	load_fails("[container]\nregistries = reg:99999\n",
	    ":2: registries: 'reg:99999' is not a registry host (HOST or "
	    "HOST:PORT)");
	load_fails("[container]\nruntime = docker\n", ":2: runtime: "
	    "'docker': expected runc, crun or an absolute path");
	load_fails("[container]\nmounts = /a:b\n", ":2: mounts: "
	    "--container-mounts '/a:b': SRC and DST must be absolute paths "
	    "without '.' or '..'");
	load_fails("[container]\nmounts = /a:/b:bogus\n", ":2: mounts: "
	    "--container-mounts '/a:/b:bogus': unknown flag 'bogus' (ro, rw, "
	    "nosuid, nodev, noexec, private, rprivate, slave, rslave, shared, "
	    "rshared; several with '+')");
}
END_TEST

START_TEST(test_slurm_keys)
{
	struct agent_config cfg;
	struct cerr err;
	char want[PATH_MAX + 64];

	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_str_eq(cfg.slurm_commands, SLURMBINDIR);
	ck_assert_str_eq(cfg.cluster_name, "cohort");
	agent_config_clear(&cfg);
	write_file(cfgpath, AGENT_REQUIRED "slurm_commands = build/slurm\n"
	    "cluster_name = gpu-east.2\n" TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	snprintf(want, sizeof(want), "%s/build/slurm", tmpdir);
	ck_assert_str_eq(cfg.slurm_commands, want);
	ck_assert_str_eq(cfg.cluster_name, "gpu-east.2");
	agent_config_clear(&cfg);
	write_file(cfgpath, AGENT_REQUIRED "slurm_commands = none\n"
	    TLS_REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_ptr_null(cfg.slurm_commands);
	agent_config_clear(&cfg);
	load_fails("[agent]\nslurm_commands = /a:/b\n", ":2: slurm_commands: "
	    "'/a:/b' holds ':', which would split it on PATH");
	load_fails("[agent]\ncluster_name = two words\n", ":2: cluster_name: "
	    "'two words' is not a cluster name (1 to 64 letters, digits, "
	    "'.', '_' or '-', not starting with '-')");
	load_fails("[agent]\ncluster_name = -x\n", ":2: cluster_name: "
	    "'-x' is not a cluster name (1 to 64 letters, digits, "
	    "'.', '_' or '-', not starting with '-')");
}
END_TEST

/* numa_cpus and cgroup: the map as given (CPU 0 exists everywhere),
 * the three cgroup forms, auto by default. */
START_TEST(test_numa_cgroup)
{
	struct agent_config cfg;
	struct cerr err;

	write_file(cfgpath, AGENT_REQUIRED "numa_cpus = 1:0\n"
	    "cgroup = /sys/fs/cgroup/cohort.slice\n" TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert(cfg.has_numa_map);
	ck_assert_uint_eq(cfg.numa_map.nnodes, 1);
	ck_assert_int_eq(cfg.numa_map.node[0], 1);
	ck_assert(CPU_ISSET(0, &cfg.numa_map.cpus[0]));
	ck_assert_int_eq(cfg.cgroup, AGENT_CGROUP_PATH);
	ck_assert_str_eq(cfg.cgroup_path, "/sys/fs/cgroup/cohort.slice");
	agent_config_clear(&cfg);
	/* Dots inside a name are no '..' component. */
	write_file(cfgpath, AGENT_REQUIRED "cgroup = /sys/fs/cgroup/a..b/.c\n"
	    TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.cgroup_path, "/sys/fs/cgroup/a..b/.c");
	agent_config_clear(&cfg);
	write_file(cfgpath, AGENT_REQUIRED "cgroup = off\n" TLS_REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_int_eq(cfg.cgroup, AGENT_CGROUP_OFF);
	agent_config_clear(&cfg);
	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert(!cfg.has_numa_map);
	ck_assert_int_eq(cfg.cgroup, AGENT_CGROUP_AUTO);
	ck_assert_ptr_null(cfg.cgroup_path);
	agent_config_clear(&cfg);
	/* A CPU this machine lacks would fail every bound task's start. */
	write_file(cfgpath, AGENT_REQUIRED "numa_cpus = 0:0 1:1023\n"
	    TLS_REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_msg(strstr(err.text, ":5: numa_cpus: CPU 1023 does not "
	    "exist on this machine (CPUs 0-") != NULL, "%s", err.text);
	write_file(cfgpath, AGENT_REQUIRED "cgroup = relative/dir\n"
	    TLS_REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "cgroup: 'relative/dir': "
	    "expected auto, off or an absolute path"));
}
END_TEST

/* COHORT_TASK_CPUS for what numa_cpus can bind a task to: any set of
 * CPU_SETSIZE CPUs fits the agent's buffer (the worst, "a-b,..." pairs,
 * is some 2900 characters) and reads back as itself; a buffer too small
 * or no CPU is an error, never an empty value. */
START_TEST(test_task_cpus_env)
{
	char line[sizeof("COHORT_TASK_CPUS=") + AGENT_CPU_LIST_MAX], why[128];
	const size_t pre = sizeof("COHORT_TASK_CPUS=") - 1;
	cpu_set_t set, back;
	int pattern, c;

	for (pattern = 0; pattern < 4; pattern++) {
		CPU_ZERO(&set);
		for (c = 0; c < CPU_SETSIZE; c++)
			if (pattern == 0 || (pattern == 1 && c % 2 == 0) ||
			    (pattern == 2 && c % 3 != 2) ||
			    (pattern == 3 && c < 256 && c % 2 == 0))
				CPU_SET(c, &set);
		ck_assert_msg(agent_task_cpus_env(&set, line, sizeof(line)) ==
		    0, "pattern %d: %s", pattern, strerror(errno));
		ck_assert_int_eq(strncmp(line, "COHORT_TASK_CPUS=", pre), 0);
		ck_assert_msg(strlen(line) > pre, "pattern %d: empty", pattern);
		ck_assert_msg(cpubind_list_parse(line + pre, &back, why,
		    sizeof(why)) == 0, "%s", why);
		ck_assert(CPU_EQUAL(&set, &back));
	}
	/* The last pattern's list (128 CPUs) in too small a buffer. */
	ck_assert_int_eq(agent_task_cpus_env(&set, line, pre + 100), -1);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_str_eq(line, "");
	CPU_ZERO(&set);
	ck_assert_int_eq(agent_task_cpus_env(&set, line, sizeof(line)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(line, "");
}
END_TEST

/* features: kept as written, and turned into the inventory's list with
 * blanks trimmed and a repeated name counted once. */
START_TEST(test_features)
{
	struct agent_config cfg;
	struct inventory *inv;
	struct cerr err;
	char buf[INV_FEATURES_TEXT_MAX];

	write_file(cfgpath, AGENT_REQUIRED "features = fp64, ib ,nvl72,ib\n"
	    TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(cfg.features, "fp64, ib ,nvl72,ib");
	ck_assert_ptr_nonnull(inv = calloc(1, sizeof(*inv)));
	ck_assert_int_eq(inventory_set_features(inv, cfg.features, err.text,
	    sizeof(err.text)), 0);
	ck_assert_uint_eq(inv->nfeatures, 3);
	inventory_features_format(inv, buf, sizeof(buf));
	ck_assert_str_eq(buf, "fp64,ib,nvl72");
	ck_assert_int_eq(inventory_set_features(inv, "", err.text,
	    sizeof(err.text)), 0);
	ck_assert_uint_eq(inv->nfeatures, 0);
	inventory_features_format(inv, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	free(inv);
	agent_config_clear(&cfg);
	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_ptr_null(cfg.features);
	agent_config_clear(&cfg);
}
END_TEST

/* [gpu] nics: a number as before, or named NICs with their GPUs; bad
 * ones name their line, and GPUs past count are caught once count is
 * known, wherever it is in the file. [agent] hwloc_xml is a path. */
START_TEST(test_nics)
{
	static const struct {
		const char *value, *suffix;
	} bad[] = {
		{ "mlx5_0", ":10: nics: 'mlx5_0' is not NAME:GPUS (e.g. "
		    "mlx5_0:0-3)" },
		{ "mlx5_0:0-3 mlx5_0:4", ":10: nics: NIC mlx5_0 is given "
		    "twice" },
		{ "mlx5_0:0-3 mlx5_1:3", ":10: nics: NIC mlx5_1: GPU 3 has a "
		    "NIC already" },
		{ "mlx5_0:", ":10: nics: NIC mlx5_0: '' is not a GPU index or "
		    "range" },
		{ "mlx5_0:1,x", ":10: nics: NIC mlx5_0: 'x' is not a GPU index "
		    "or range" },
		{ "mlx5_0:3-1", ":10: nics: NIC mlx5_0: GPUs '3-1' out of "
		    "range (0 to 63, low to high)" },
		{ "mlx5_0:64", ":10: nics: NIC mlx5_0: GPUs '64' out of range "
		    "(0 to 63, low to high)" },
		{ "ml$x:0", ":10: nics: 'ml$x' is not a NIC name (letters, "
		    "digits, '.', '_', '-')" },
		{ ":0", ":10: nics: ':0': a NIC name has 1 to 31 characters" },
		{ "1025", ":10: nics: 1025 out of range 0..1024" },
		{ "mlx5_0:0-3 mlx5_1:4-8", ":10: NIC mlx5_1 names GPU 8, but "
		    "count = 8" },
	};
	struct agent_config cfg;
	struct cerr err;
	char *text;
	size_t i;

	write_file(cfgpath, REQUIRED "[gpu]\nnics = mlx5_0:0-1,3 "
	    "mlx5_1:4-7\t ib.x-2:2\ncount = 8\n[agent]\nhwloc_xml = t.xml\n");
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert(cfg.sim.nics_named);
	ck_assert_uint_eq(cfg.sim.nics, 3);
	ck_assert_str_eq(cfg.sim.nic_names[0], "mlx5_0");
	ck_assert_str_eq(cfg.sim.nic_names[2], "ib.x-2");
	ck_assert_int_eq(cfg.sim.nic_of[0], 0);
	ck_assert_int_eq(cfg.sim.nic_of[2], 2);
	ck_assert_int_eq(cfg.sim.nic_of[3], 0);
	ck_assert_int_eq(cfg.sim.nic_of[7], 1);
	ck_assert_int_eq(cfg.sim.nic_of[8], -1);
	ck_assert_ptr_nonnull(cfg.hwloc_xml);
	ck_assert_str_eq(cfg.hwloc_xml + strlen(tmpdir), "/t.xml");
	agent_config_clear(&cfg);

	write_file(cfgpath, REQUIRED "[gpu]\nnics = 2\n");
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert(!cfg.sim.nics_named);
	ck_assert_uint_eq(cfg.sim.nics, 2);
	ck_assert_ptr_null(cfg.hwloc_xml);
	agent_config_clear(&cfg);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_ne(asprintf(&text, REQUIRED "[gpu]\nnics = %s\n",
		    bad[i].value), -1);
		load_fails(text, bad[i].suffix);
		free(text);
	}
}
END_TEST

/* ---- user_map ---- */

static void
load_map(struct agent_config *cfg, const char *map)
{
	char *text;
	struct cerr err;

	/* Line 5, in [agent]. */
	ck_assert_int_ne(asprintf(&text, AGENT_REQUIRED "user_map = %s\n"
	    TLS_REQUIRED, map), -1);
	write_file(cfgpath, text);
	free(text);
	ck_assert_msg(agent_config_load(cfg, cfgpath, &err) == 0, "%s",
	    err.text);
}

START_TEST(test_user_map_order)
{
	struct agent_config cfg;

	load_map(&cfg, "alice:svc_a,bob:nobody,*:guest");
	ck_assert_uint_eq(cfg.nuser_map, 3);
	ck_assert_str_eq(agent_config_map_user(&cfg, "alice"), "svc_a");
	ck_assert_str_eq(agent_config_map_user(&cfg, "bob"), "nobody");
	/* "*" catches everyone not named before it. */
	ck_assert_str_eq(agent_config_map_user(&cfg, "carol"), "guest");
	ck_assert_str_eq(agent_config_map_user(&cfg, "alice2"), "guest");
	agent_config_clear(&cfg);

	load_map(&cfg, "alice:svc_a");
	/* Without "*", a user not in the map is themselves. */
	ck_assert_str_eq(agent_config_map_user(&cfg, "carol"), "carol");
	ck_assert_str_eq(agent_config_map_user(&cfg, "alice"), "svc_a");
	agent_config_clear(&cfg);

	load_map(&cfg, "*:nobody");
	ck_assert_uint_eq(cfg.nuser_map, 1);
	ck_assert_str_eq(agent_config_map_user(&cfg, "alice"), "nobody");
	agent_config_clear(&cfg);
}
END_TEST

START_TEST(test_user_map_errors)
{
	static const struct {
		const char *map, *suffix;
	} c[] = {
		{ "alice", ":5: user_map: 'alice' is not USER:ACCOUNT" },
		{ "alice:", ":5: user_map: '' is not an account name" },
		{ ":svc", ":5: user_map: '' is not a user name or '*'" },
		{ "al ice:svc",
		    ":5: user_map: 'al ice' is not a user name or '*'" },
		{ "-x:svc", ":5: user_map: '-x' is not a user name or '*'" },
		{ "a:b:c", ":5: user_map: 'b:c' is not an account name" },
		{ "alice:root", ":5: user_map: tasks are never run as root" },
		{ "a:b,,c:d", ":5: user_map: empty entry" },
		{ "a:b,", ":5: user_map: empty entry" },
		{ "*:guest,alice:svc",
		    ":5: user_map: 'alice:svc' comes after '*', which matches "
		    "every user" },
		{ "alice:a,bob:b,alice:c",
		    ":5: user_map: user 'alice' is mapped twice" },
		{ "abcdefghijklmnopqrstuvwxyz0123456:x",
		    ":5: user_map: 'abcdefghijklmnopqrstuvwxyz0123456' is not "
		    "a user name or '*'" },
	};
	char *text;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_int_ne(asprintf(&text, AGENT_REQUIRED
		    "user_map = %s\n" TLS_REQUIRED, c[i].map), -1);
		load_fails(text, c[i].suffix);
		free(text);
	}
}
END_TEST

/* ---- accounts: min_uid, allow_system_users ---- */

START_TEST(test_accounts)
{
	struct agent_config cfg;
	struct cerr err;

	/* Default: uids below 1000 are system accounts. */
	write_file(cfgpath, REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.min_uid, 1000);
	ck_assert_uint_eq(cfg.nallow_users, 0);
	ck_assert(agent_config_account_allowed(&cfg, "alice", 1000));
	ck_assert(agent_config_account_allowed(&cfg, "nobody", 65534));
	ck_assert(!agent_config_account_allowed(&cfg, "daemon", 1));
	ck_assert(!agent_config_account_allowed(&cfg, "svc", 999));
	ck_assert(!agent_config_account_allowed(&cfg, NULL, 999));
	agent_config_clear(&cfg);

	/* Exceptions by name, over two lines; a raised minimum. */
	write_file(cfgpath, AGENT_REQUIRED "min_uid = 2000\n"
	    "allow_system_users = backup, svc-ci\n"
	    "allow_system_users = daemon\n" TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.min_uid, 2000);
	ck_assert_uint_eq(cfg.nallow_users, 3);
	ck_assert(agent_config_account_allowed(&cfg, "svc-ci", 500));
	ck_assert(agent_config_account_allowed(&cfg, "daemon", 1));
	ck_assert(agent_config_account_allowed(&cfg, "backup", 34));
	ck_assert(!agent_config_account_allowed(&cfg, "alice", 1500));
	ck_assert(agent_config_account_allowed(&cfg, "alice", 2000));
	ck_assert(!agent_config_account_allowed(&cfg, "svc", 500));
	ck_assert(!agent_config_account_allowed(&cfg, NULL, 500));
	agent_config_clear(&cfg);
	ck_assert_uint_eq(cfg.nallow_users, 0);

	/* min_uid = 0 lets any uid run (the agent still refuses root). */
	write_file(cfgpath, AGENT_REQUIRED "min_uid = 0\n" TLS_REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert(agent_config_account_allowed(&cfg, "daemon", 1));
	agent_config_clear(&cfg);

	load_fails(AGENT_REQUIRED "allow_system_users = root\n" TLS_REQUIRED,
	    ":5: allow_system_users: tasks are never run as root");
	load_fails(AGENT_REQUIRED "allow_system_users = a,,b\n" TLS_REQUIRED,
	    ":5: allow_system_users: empty entry");
	load_fails(AGENT_REQUIRED "allow_system_users = a b\n" TLS_REQUIRED,
	    ":5: allow_system_users: 'a b' is not an account name");
	load_fails(AGENT_REQUIRED "min_uid = -1\n" TLS_REQUIRED,
	    ":5: min_uid: '-1' is not a number");
}
END_TEST

/* Who tasks run as, against the policy (account.c). Under root the
 * account is looked up; otherwise tasks run as the agent itself. */
START_TEST(test_account_resolve)
{
	struct agent_config cfg;
	struct account acc;
	struct watch_cred *cp = &acc.cred;
	struct passwd *pw;
	struct cerr err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.min_uid = 1000;
	if (geteuid() != 0) {
		/* Whatever the account asked for: ourselves. */
		cfg.min_uid = 0;
		ck_assert_int_eq(account_resolve(&cfg, "root", &acc, &err), 0);
		ck_assert_uint_eq(cp->uid, geteuid());
		ck_assert_uint_eq(cp->ngroups, 0);
		account_clear(&acc);
		/* Our own uid is held to min_uid too. */
		cfg.min_uid = (uint32_t)geteuid() + 1;
		ck_assert_int_eq(account_resolve(&cfg, "x", &acc, &err), -1);
		ck_assert_int_eq(err.code, ERR_DENIED);
		ck_assert_ptr_nonnull(strstr(err.text, "min_uid"));
		return;
	}
	ck_assert_int_eq(account_resolve(&cfg, "root", &acc, &err), -1);
	ck_assert_int_eq(err.code, ERR_DENIED);
	ck_assert_ptr_nonnull(strstr(err.text, "as root"));
	ck_assert_int_eq(account_resolve(&cfg, "cohort-no-such-user", &acc,
	    &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text, "user 'cohort-no-such-user' does not "
	    "exist on this node");
	if ((pw = getpwnam("nobody")) != NULL && pw->pw_uid >= 1000) {
		ck_assert_msg(account_resolve(&cfg, "nobody", &acc, &err) == 0,
		    "%s", err.text);
		ck_assert_uint_eq(cp->uid, pw->pw_uid);
		ck_assert_uint_eq(cp->gid, pw->pw_gid);
		ck_assert_uint_ge(cp->ngroups, 1);
		account_clear(&acc);
	}
	if ((pw = getpwnam("daemon")) != NULL && pw->pw_uid < 1000 &&
	    pw->pw_uid > 0) {
		ck_assert_int_eq(account_resolve(&cfg, "daemon", &acc, &err),
		    -1);
		ck_assert_int_eq(err.code, ERR_DENIED);
		ck_assert_ptr_nonnull(strstr(err.text, "min_uid 1000"));
		ck_assert_ptr_null(cp->groups);
		/* Listed: allowed. */
		cfg.allow_users[0] = "daemon";
		cfg.nallow_users = 1;
		ck_assert_int_eq(account_resolve(&cfg, "daemon", &acc, &err),
		    0);
		ck_assert_uint_eq(cp->uid, pw->pw_uid);
		account_clear(&acc);
		cfg.nallow_users = 0;
	}
}
END_TEST

/* The identity the spool kept for a start. */
START_TEST(test_account_from_ids)
{
	struct watch_cred c;

	if (geteuid() != 0) {
		ck_assert_int_eq(account_from_ids(NULL, &c), 0);
		ck_assert_uint_eq(c.uid, geteuid());
		return;
	}
	ck_assert_int_eq(account_from_ids(NULL, &c), -1);
	ck_assert_int_eq(account_from_ids("0 0\n", &c), -1);
	ck_assert_int_eq(account_from_ids("garbage\n", &c), -1);
	ck_assert_int_eq(account_from_ids("65534 65534\n", &c), 0);
	ck_assert_uint_eq(c.uid, 65534);
	ck_assert_uint_eq(c.gid, 65534);
	free(c.groups);
}
END_TEST

/* A configuration with a map of n entries "uI:lI", eight to a user_map
 * line (inih's lines are short), the first on line 5. */
static char *
long_map(unsigned n)
{
	char *text, *out;
	size_t len = 0;
	FILE *fp;
	unsigned i;

	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	fputs(AGENT_REQUIRED, fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%su%u:l%u", i % 8 != 0 ? "," : i == 0 ?
		    "user_map = " : "\nuser_map = ", i, i);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_ne(asprintf(&out, "%s\n" TLS_REQUIRED, text), -1);
	free(text);
	return out;
}

START_TEST(test_user_map_full)
{
	struct agent_config cfg;
	struct cerr err;
	char *text, from[16], to[16];
	unsigned i;

	/* Several user_map lines add up, in order. */
	text = long_map(AGENT_USER_MAP_MAX);
	write_file(cfgpath, text);
	free(text);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.nuser_map, AGENT_USER_MAP_MAX);
	for (i = 0; i < AGENT_USER_MAP_MAX; i++) {
		snprintf(from, sizeof(from), "u%u", i);
		snprintf(to, sizeof(to), "l%u", i);
		ck_assert_str_eq(cfg.user_map[i].from, from);
		ck_assert_str_eq(agent_config_map_user(&cfg, from), to);
	}
	agent_config_clear(&cfg);

	/* One more is too many: the 65th entry opens line 13. */
	text = long_map(AGENT_USER_MAP_MAX + 1);
	load_fails(text, ":13: user_map: more than 64 entries");
	free(text);

	/* The other checks span lines too. */
	load_fails(AGENT_REQUIRED "user_map = a:b\nuser_map = a:c\n"
	    TLS_REQUIRED, ":6: user_map: user 'a' is mapped twice");
	load_fails(AGENT_REQUIRED "user_map = *:b\nuser_map = a:c\n"
	    TLS_REQUIRED,
	    ":6: user_map: 'a:c' comes after '*', which matches every user");
}
END_TEST


/* [agent] controller: one address, or the replicas of a replicated
 * controller, each checked, the bad one named. */
START_TEST(test_controller_list)
{
	struct agent_config cfg;
	struct cerr err;

	write_file(cfgpath, "[agent]\n"
	    "controller = 10.0.0.1:7420, ctl2.example:7421 ,[::1]:7422\n"
	    "name = gpu001\nspool = /var/spool/cohort\n" TLS_REQUIRED);
	ck_assert_msg(agent_config_load(&cfg, cfgpath, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(cfg.controllers.n, 3);
	ck_assert_str_eq(cfg.controllers.a[1].host, "ctl2.example");
	ck_assert_uint_eq(cfg.controllers.a[1].port, 7421);
	ck_assert_str_eq(cfg.controllers.a[2].host, "::1");
	ck_assert_str_eq(cfg.controller_host, "10.0.0.1");
	ck_assert_uint_eq(cfg.controller_port, 7420);
	agent_config_clear(&cfg);
	write_file(cfgpath, REQUIRED);
	ck_assert_int_eq(agent_config_load(&cfg, cfgpath, &err), 0);
	ck_assert_uint_eq(cfg.controllers.n, 1);
	ck_assert_str_eq(cfg.controllers.a[0].host, "ctl.example");
	agent_config_clear(&cfg);
	load_fails("[agent]\ncontroller = a:1, b\n", ":2: controller: "
	    "address 2 ('b'): 'b': missing port (expected HOST:PORT)");
	load_fails("[agent]\ncontroller = a:1,,b:2\n", ":2: controller: "
	    "address 2 of 'a:1,,b:2' is empty");
	load_fails("[agent]\ncontroller = a:1, a:1\n", ":2: controller: "
	    "address 2 ('a:1') repeats address 1");
}
END_TEST
static Suite *
agent_config_suite(void)
{
	Suite *s = suite_create("agent_config");
	TCase *tc;

	tc = tcase_create("file");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_load_good);
	tcase_add_test(tc, test_load_defaults);
	tcase_add_test(tc, test_load_library_name);
	tcase_add_test(tc, test_load_relative_file);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_load_missing);
	tcase_add_test(tc, test_load_long_line);
	tcase_add_test(tc, test_load_no_file);
	tcase_add_test(tc, test_load_example);
	suite_add_tcase(s, tc);

	tc = tcase_create("user_map");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, test_user_map_order);
	tcase_add_test(tc, test_user_map_errors);
	tcase_add_test(tc, test_accounts);
	tcase_add_test(tc, test_account_resolve);
	tcase_add_test(tc, test_account_from_ids);
	tcase_add_test(tc, test_user_map_full);
	tcase_add_test(tc, test_features);
	tcase_add_test(tc, test_slurm_keys);
	tcase_add_test(tc, test_container);
	tcase_add_test(tc, test_numa_cgroup);
	tcase_add_test(tc, test_task_cpus_env);
	tcase_add_test(tc, test_nics);
	tcase_add_test(tc, test_controller_list);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(agent_config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
