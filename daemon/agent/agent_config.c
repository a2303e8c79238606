/* cohort-agent's configuration file: its keys, their defaults and
 * setters. lib/conf.c reads the file, as it does cohortd's: every error
 * names the file and the line; relative paths are taken relative to the
 * file's directory and stored absolute; unknown sections and keys, keys
 * given twice and missing required keys are errors.
 *
 * Durations need a unit ("2s", "500ms", "1m", or Slurm's "MM:SS"):
 * lib/duration.c reads a bare number as minutes, as Slurm's --time does,
 * and "heartbeat_interval = 2" meaning two minutes would be a trap. */
#include "config.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/agent_config.h"
#include "lib/container.h"
#include "daemon/agent/cdi.h"
#include "daemon/agent/cgroup.h"
#include "daemon/agent/health.h"
#include "lib/log.h"

#define AGENT_DEFAULT_HEARTBEAT_MS 2000
#define AGENT_DEFAULT_KILL_WAIT_MS 10000
#define AGENT_DEFAULT_HEALTH_INTERVAL_MS 30000
#define AGENT_DEFAULT_HEALTH_TIMEOUT_MS 60000
#define AGENT_DEFAULT_TEMPERATURE_DEGRADED 90
#define AGENT_NODE_NAME_MAX 64
#define AGENT_USER_NAME_MAX 32
#define AGENT_CLUSTER_NAME_MAX 64
#define AGENT_DEFAULT_CLUSTER_NAME "cohort"
/* The directory make install puts Slurm's commands in. */
#ifndef SLURMBINDIR
#define SLURMBINDIR "/usr/local/libexec/cohort/slurm"
#endif

#define SEC 1000ULL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)

static int agent_set_controller(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_name(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int agent_set_address(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_user_map(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_allow_users(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_source(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_library(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_model(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int agent_set_nvlink(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_features(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_numa_cpus(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_cgroup(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_xid(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int agent_set_nics(const struct conf_ctx *, const struct conf_key *,
    const char *, struct cerr *);
static int agent_set_slurm_commands(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_ctr_runtime(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_ctr_registries(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_ctr_cdi_dirs(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_ctr_mounts(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);
static int agent_set_cluster_name(const struct conf_ctx *,
    const struct conf_key *, const char *, struct cerr *);

#define FIELD(f) CONF_FIELD(struct agent_config, f)
#define KEY(sec, key, req, setter)                                             \
	{ .section = sec, .name = key, .required = req, .set = setter }
#define PATHKEY(sec, key, f, req)                                              \
	{ .section = sec, .name = key, .required = req,                        \
	  .set = conf_key_path, FIELD(f) }
#define MSKEY(sec, key, f, lo, hi)                                             \
	{ .section = sec, .name = key, .set = conf_key_ms, FIELD(f),           \
	  .min = lo, .max = hi }
#define SIMKEY(key, f, lo, hi)                                                 \
	{ .section = "gpu", .name = key, .set = conf_key_uint, FIELD(sim.f),   \
	  .min = lo, .max = hi }

static const struct conf_key agent_keys[] = {
	KEY("agent", "controller", true, agent_set_controller),
	KEY("agent", "name", true, agent_set_name),
	PATHKEY("agent", "spool", spool, true),
	KEY("agent", "address", false, agent_set_address),
	MSKEY("agent", "heartbeat_interval", heartbeat_ms, 100, 10 * MIN),
	{ .section = "agent", .name = "log_level", .set = conf_key_log_level,
	  FIELD(log_level) },
	MSKEY("agent", "kill_wait", kill_wait_ms, 0, HOUR),
	{ .section = "agent", .name = "spare", .set = conf_key_bool,
	  FIELD(spare) },
	/* Constraints: what --constraint matches. */
	KEY("agent", "features", false, agent_set_features),
	/* CPU binding and cgroups. */
	KEY("agent", "numa_cpus", false, agent_set_numa_cpus),
	KEY("agent", "cgroup", false, agent_set_cgroup),
	{ .section = "agent", .name = "user_map", .repeatable = true,
	  .set = agent_set_user_map },
	/* Accounts: system accounts run no jobs. */
	{ .section = "agent", .name = "min_uid", .set = conf_key_uint,
	  FIELD(min_uid), .min = 0, .max = UINT32_MAX },
	{ .section = "agent", .name = "allow_system_users",
	  .repeatable = true, .set = agent_set_allow_users },
	/* Rails: the GPUs' NICs from a saved hwloc topology
	 * instead of this machine's. */
	PATHKEY("agent", "hwloc_xml", hwloc_xml, false),
	/* What a Slurm script finds in its environment. */
	{ .section = "agent", .name = "slurm_commands",
	  .set = agent_set_slurm_commands, FIELD(slurm_commands) },
	KEY("agent", "cluster_name", false, agent_set_cluster_name),
	PATHKEY("tls", "ca", ca, true),
	PATHKEY("tls", "cert", cert, true),
	PATHKEY("tls", "key", key, true),
	/* Revocation: CRLs of the CA, re-read on SIGHUP (main.c). */
	PATHKEY("tls", "crl", crl, false),
	KEY("gpu", "source", false, agent_set_source),
	{ .section = "gpu", .name = "nvml_library", .set = agent_set_library,
	  FIELD(nvml_library) },
	SIMKEY("count", count, 0, INV_MAX_GPUS),
	KEY("gpu", "model", false, agent_set_model),
	SIMKEY("memory_mb", memory_mb, 1, 1ULL << 24),
	KEY("gpu", "nvlink", false, agent_set_nvlink),
	SIMKEY("numa_nodes", numa_nodes, 1, 64),
	KEY("gpu", "nics", false, agent_set_nics),
	SIMKEY("cpus", ncpus, 1, 1U << 20),
	SIMKEY("memory_total_mb", memory_total_mb, 1, 1ULL << 32),
	PATHKEY("health", "program", health_program, false),
	MSKEY("health", "interval", health_interval_ms, SEC, 24 * HOUR),
	MSKEY("health", "timeout", health_timeout_ms, SEC, HOUR),
	{ .section = "health", .name = "drain_on_gpu_failure",
	  .set = conf_key_bool, FIELD(drain_on_gpu_failure) },
	/* Jobs in container images (container.h). */
	{ .section = "container", .name = "enabled", .set = conf_key_bool,
	  FIELD(ctr_enabled) },
	KEY("container", "runtime", false, agent_set_ctr_runtime),
	PATHKEY("container", "cache", ctr_cache, false),
	{ .section = "container", .name = "cache_size", .set = conf_key_size,
	  FIELD(ctr_cache_max), .min = 1ULL << 20, .max = 1ULL << 50 },
	KEY("container", "mounts", false, agent_set_ctr_mounts),
	{ .section = "container", .name = "shm_size", .set = conf_key_size,
	  FIELD(ctr_shm), .min = 1ULL << 20, .max = 1ULL << 44 },
	MSKEY("container", "prepare_timeout", ctr_prepare_timeout_ms, SEC,
	    24 * HOUR),
	KEY("container", "registries", false, agent_set_ctr_registries),
	KEY("container", "cdi_dirs", false, agent_set_ctr_cdi_dirs),
	{ .section = "health", .name = "temperature_degraded",
	  .set = conf_key_uint, FIELD(temperature_degraded), .min = 0,
	  .max = 200 },
};
#define AGENT_NKEYS (sizeof(agent_keys) / sizeof(agent_keys[0]))

/* The [xid] section's keys are the codes "1".."999": lib/conf.c wants
 * every key named, so agent_config_load appends one per code to the
 * table above. A code out of range, or not written in plain decimal, is
 * then an unknown key, reported with its line. */
#define AGENT_ALL_KEYS (AGENT_NKEYS + AGENT_XID_MAX)
static char agent_xid_names[AGENT_XID_MAX + 1][4];

static void
agent_config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->heartbeat_ms = AGENT_DEFAULT_HEARTBEAT_MS;
	cfg->log_level = LOG_LEVEL_INFO;
	cfg->ctr_enabled = true;
	cfg->ctr_cache_max = 50ULL << 30;
	cfg->ctr_shm = 16ULL << 30;
	cfg->ctr_prepare_timeout_ms = 30 * MIN;
	cfg->kill_wait_ms = AGENT_DEFAULT_KILL_WAIT_MS;
	cfg->health_interval_ms = AGENT_DEFAULT_HEALTH_INTERVAL_MS;
	cfg->health_timeout_ms = AGENT_DEFAULT_HEALTH_TIMEOUT_MS;
	cfg->drain_on_gpu_failure = true;
	cfg->temperature_degraded = AGENT_DEFAULT_TEMPERATURE_DEGRADED;
	cfg->min_uid = AGENT_DEFAULT_MIN_UID;
	memset(cfg->xid_policy, -1, sizeof(cfg->xid_policy));
	inventory_sim_defaults(&cfg->sim);
}

static void
agent_user_map_free(struct user_map_entry *map, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		free(map[i].from);
		free(map[i].to);
	}
}

void
agent_config_clear(struct agent_config *cfg)
{
	unsigned i;

	if (cfg == NULL)
		return;
	free(cfg->name);
	free(cfg->spool);
	free(cfg->address);
	free(cfg->features);
	free(cfg->cgroup_path);
	free(cfg->ctr_runtime);
	free(cfg->ctr_runtime_name);
	free(cfg->ctr_cache);
	free(cfg->ctr_mounts);
	free(cfg->ctr_registries);
	free(cfg->ctr_cdi_dirs);
	agent_user_map_free(cfg->user_map, cfg->nuser_map);
	for (i = 0; i < cfg->nallow_users; i++)
		free(cfg->allow_users[i]);
	free(cfg->ca);
	free(cfg->cert);
	free(cfg->key);
	free(cfg->crl);
	free(cfg->hwloc_xml);
	free(cfg->slurm_commands);
	free(cfg->cluster_name);
	free(cfg->nvml_library);
	free(cfg->health_program);
	agent_config_defaults(cfg);
}

const char *
agent_config_map_user(const struct agent_config *cfg, const char *user)
{
	unsigned i;

	for (i = 0; i < cfg->nuser_map; i++) {
		if (strcmp(cfg->user_map[i].from, "*") == 0 ||
		    strcmp(cfg->user_map[i].from, user) == 0)
			return cfg->user_map[i].to;
	}
	return user;
}

bool
agent_config_account_allowed(const struct agent_config *cfg,
    const char *account, uint32_t uid)
{
	unsigned i;

	if (uid >= cfg->min_uid)
		return true;
	for (i = 0; account != NULL && i < cfg->nallow_users; i++)
		if (strcmp(cfg->allow_users[i], account) == 0)
			return true;
	return false;
}

/* ---- values ---- */

static int
agent_set_str(char **dst, const char *value, struct cerr *err)
{
	if (conf_set_str(dst, value) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

/* Letters, digits, '.', '_' and '-': what node and account names are
 * made of. */
static bool
agent_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static bool
agent_valid_node_name(const char *s)
{
	size_t i;

	if (!agent_name_char(s[0]) || s[0] == '.' || s[0] == '_' ||
	    s[0] == '-')
		return false;
	for (i = 1; s[i] != '\0'; i++)
		if (i >= AGENT_NODE_NAME_MAX || !agent_name_char(s[i]))
			return false;
	return true;
}

/* A POSIX-portable account name, as useradd takes it: no leading '-',
 * which would read as an option to the tools an administrator uses. */
static bool
agent_valid_user_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > AGENT_USER_NAME_MAX || s[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!agent_name_char(s[i]))
			return false;
	return true;
}

static int
agent_set_controller(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	struct addrlist l;

	/* One address, or the replicas of a replicated controller. */
	if (addrlist_parse(value, &l, err) == -1)
		return -1;
	cfg->controllers = l;
	snprintf(cfg->controller_host, sizeof(cfg->controller_host), "%s",
	    l.a[0].host);
	cfg->controller_port = l.a[0].port;
	return 0;
}

static int
agent_set_name(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	if (!agent_valid_node_name(value))
		return cerr_set(err, ERR_INVALID,
		    "'%.80s' is not a node name (a letter or digit, then up "
		    "to %d letters, digits, '.', '_' or '-')", value,
		    AGENT_NODE_NAME_MAX - 1);
	return agent_set_str(&cfg->name, value, err);
}

/* "none" turns it off; a path is made absolute, as it goes into the
 * tasks' PATH, where a relative one would be taken from their working
 * directory. Whether it exists is not checked: the agent may start
 * before a shared file system is mounted. */
static int
agent_set_slurm_commands(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	cfg->slurm_commands_set = true;
	if (strcmp(value, "none") == 0)
		return 0;
	if (strchr(value, ':') != NULL)
		return cerr_set(err, ERR_INVALID, "'%.80s' holds ':', which "
		    "would split it on PATH", value);
	return conf_key_path(c, k, value, err);
}

/* A word, as Slurm's ClusterName (scripts put it in file names). */
static int
agent_set_cluster_name(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	size_t i;

	for (i = 0; value[i] != '\0'; i++)
		if (i >= AGENT_CLUSTER_NAME_MAX || !agent_name_char(value[i]))
			break;
	if (i == 0 || value[i] != '\0' || value[0] == '-')
		return cerr_set(err, ERR_INVALID,
		    "'%.80s' is not a cluster name (1 to %d letters, digits, "
		    "'.', '_' or '-', not starting with '-')", value,
		    AGENT_CLUSTER_NAME_MAX);
	return agent_set_str(&cfg->cluster_name, value, err);
}

/* Node features for --constraint: a comma-separated list of names,
 * checked here so that a bad one stops the agent at start, naming the
 * line, rather than the controller refusing its inventory. */
static int
agent_set_features(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	struct inventory *scratch;
	char why[200];
	int rc;

	(void)k;
	/* About 20 KiB: not on the stack. */
	if ((scratch = calloc(1, sizeof(*scratch))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	rc = inventory_set_features(scratch, value, why, sizeof(why));
	free(scratch);
	if (rc == -1)
		return cerr_set(err, ERR_INVALID, "%s", why);
	return agent_set_str(&cfg->features, value, err);
}

/* NUMA node -> CPUs, "0:0-3 1:4-7": for a simulated inventory, whose
 * GPUs sit on NUMA nodes this machine may not have. Every CPU must
 * exist here, or binding to it would fail each task's start. */
static int
agent_set_numa_cpus(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	cpu_set_t all, here;
	char why[200], list[200];
	unsigned i;
	long n;

	(void)k;
	if (cpubind_map_parse(value, &cfg->numa_map, why, sizeof(why)) == -1)
		return cerr_set(err, ERR_INVALID, "%s", why);
	CPU_ZERO(&all);
	for (i = 0; i < cfg->numa_map.nnodes; i++)
		CPU_OR(&all, &all, &cfg->numa_map.cpus[i]);
	CPU_ZERO(&here);
	if ((n = sysconf(_SC_NPROCESSORS_CONF)) > 0)
		for (i = 0; i < (unsigned)n && i < CPU_SETSIZE; i++)
			CPU_SET(i, &here);
	CPU_XOR(&here, &here, &all);
	CPU_AND(&here, &here, &all);
	if (n > 0 && CPU_COUNT(&here) > 0) {
		cpubind_list_format(&here, list, sizeof(list));
		return cerr_set(err, ERR_INVALID, "CPU %s does not "
		    "exist on this machine (CPUs 0-%ld)", list, n - 1);
	}
	cfg->has_numa_map = true;
	return 0;
}

/* auto, off, or the absolute path of a cgroup v2 directory. Whether it
 * is one is the agent's to find at start (cgroup.c), so that a missing
 * hierarchy degrades to no cgroups with a log line rather than no
 * agent. */
static int
agent_set_cgroup(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	(void)k;
	if (strcmp(value, "auto") == 0) {
		cfg->cgroup = AGENT_CGROUP_AUTO;
		return 0;
	}
	if (strcmp(value, "off") == 0 || strcmp(value, "no") == 0) {
		cfg->cgroup = AGENT_CGROUP_OFF;
		return 0;
	}
	if (value[0] != '/')
		return cerr_set(err, ERR_INVALID, "'%s': expected auto, "
		    "off or an absolute path", value);
	if (strlen(value) > 3000)
		return cerr_set(err, ERR_INVALID, "path too long");
	/* The spool's records are checked against PATH as strings. */
	if (!cgroup_path_canonical(value))
		return cerr_set(err, ERR_INVALID, "'%s' is not a canonical path "
		    "(no '.', '..', '//' or trailing '/')", value);
	cfg->cgroup = AGENT_CGROUP_PATH;
	return agent_set_str(&cfg->cgroup_path, value, err);
}

/* runc or crun (found on the usual root PATH), or an absolute path. Not
 * finding it is no error: the node runs no container until it is
 * installed, and says so for each job that asks. */
static int
agent_set_ctr_runtime(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	(void)k;
	if (value[0] != '/' && strcmp(value, "runc") != 0 &&
	    strcmp(value, "crun") != 0)
		return cerr_set(err, ERR_INVALID, "'%s': expected runc, crun "
		    "or an absolute path", value);
	if (strlen(value) > 1024)
		return cerr_set(err, ERR_INVALID, "path too long");
	return agent_set_str(&cfg->ctr_runtime_name, value, err);
}

static int
agent_set_ctr_mounts(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	struct ctr_mount *m;
	size_t n;

	(void)k;
	if (ctr_mounts_parse(value, &m, &n, err) == -1)
		return -1;
	ctr_mounts_free(m, n);
	return agent_set_str(&cfg->ctr_mounts, value, err);
}

static int
agent_set_ctr_cdi_dirs(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	(void)k;
	if (cdi_dirs_check(value, err) == -1)
		return -1;
	return agent_set_str(&cfg->ctr_cdi_dirs, value, err);
}

/* A comma list of registry hosts (ctr_registry_host_ok each). */
static int
agent_set_ctr_registries(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	const char *e, *end, *h, *t;

	(void)k;
	if (strlen(value) >= CTR_TEXT_MAX)
		return cerr_set(err, ERR_INVALID, "too long");
	/* Empty: none, as when it is not set. */
	if (value[strspn(value, " ")] == '\0') {
		free(cfg->ctr_registries);
		cfg->ctr_registries = NULL;
		return 0;
	}
	for (e = value; ; e = end + 1) {
		end = e + strcspn(e, ",");
		for (h = e; h < end && *h == ' '; h++)
			;
		for (t = end; t > h && t[-1] == ' '; t--)
			;
		if (!ctr_registry_host_ok(h, (size_t)(t - h)))
			return cerr_set(err, ERR_INVALID, "'%.*s' is not a "
			    "registry host (HOST or HOST:PORT)",
			    (int)(end - e), e);
		if (*end == '\0')
			break;
	}
	return agent_set_str(&cfg->ctr_registries, value, err);
}

/* The runtime's absolute path: as given, or found on root's usual PATH;
 * NULL (no error) when absent. */
static int
agent_find_runtime(struct agent_config *cfg)
{
	static const char *const dirs[] = { "/usr/local/sbin",
	    "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL };
	const char *name = cfg->ctr_runtime_name != NULL ?
	    cfg->ctr_runtime_name : "runc";
	char path[PATH_MAX];
	size_t i;

	if (name[0] == '/')
		return (cfg->ctr_runtime = strdup(name)) == NULL ? -1 : 0;
	for (i = 0; dirs[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (access(path, X_OK) == 0)
			return (cfg->ctr_runtime = strdup(path)) == NULL ?
			    -1 : 0;
	}
	return 0;
}

/* What other nodes connect to: a host name, or an IPv4 or IPv6 address
 * (bare, since it becomes MASTER_ADDR). */
static int
agent_set_address(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	unsigned char v6[16];
	size_t len = strlen(value), i;

	if (len == 0 || len > CONF_HOST_MAX)
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is not a host name or address", value);
	if (strchr(value, ':') != NULL) {
		if (inet_pton(AF_INET6, value, v6) != 1)
			return cerr_set(err, ERR_INVALID,
			    "'%.64s' is not an IPv6 address", value);
	} else {
		for (i = 0; i < len; i++)
			if (!agent_name_char(value[i]))
				return cerr_set(err, ERR_INVALID,
				    "'%.64s' is not a host name or address",
				    value);
	}
	return agent_set_str(&cfg->address, value, err);
}

/* A bare library name is for dlopen to look up on the library search
 * path, as it does for the default; only a value with a '/' is a path. */
static int
agent_set_library(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	if (strchr(value, '/') != NULL)
		return conf_key_path(c, k, value, err);
	if (value[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty library name");
	return agent_set_str(&cfg->nvml_library, value, err);
}

static int
agent_set_model(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	size_t len = strlen(value);

	if (len == 0 || len >= sizeof(cfg->sim.model))
		return cerr_set(err, ERR_INVALID,
		    "a model name has 1 to %zu characters",
		    sizeof(cfg->sim.model) - 1);
	memcpy(cfg->sim.model, value, len + 1);
	return 0;
}

static int
agent_set_nvlink(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	static const char *const layouts[] = { "all", "quads", "pairs",
		"none" };
	struct agent_config *cfg = c->cfg;
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (strcmp(value, layouts[i]) == 0) {
			snprintf(cfg->sim.nvlink, sizeof(cfg->sim.nvlink),
			    "%s", value);
			return 0;
		}
	}
	return cerr_set(err, ERR_INVALID,
	    "unknown layout '%.64s' (all, quads, pairs or none)", value);
}

static int
agent_set_source(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;

	static const struct {
		const char *name;
		enum agent_source source;
	} sources[] = {
		{ "auto", AGENT_SOURCE_AUTO },
		{ "nvml", AGENT_SOURCE_NVML },
		{ "simulated", AGENT_SOURCE_SIMULATED },
		{ "none", AGENT_SOURCE_NONE },
	};
	size_t i;

	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		if (strcmp(value, sources[i].name) == 0) {
			cfg->source = sources[i].source;
			return 0;
		}
	}
	return cerr_set(err, ERR_INVALID,
	    "'%.64s' is not a source (auto, nvml, simulated or none)", value);
}

/* The simulated NICs: a number, split evenly over the GPUs and unnamed
 * (as before NICs had names), or NAME:GPUS ... (inventory_sim_nics). */
static int
agent_set_nics(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	uint64_t v;

	(void)k;
	if (value[0] >= '0' && value[0] <= '9' && strchr(value, ':') == NULL) {
		if (conf_parse_uint(value, 0, INV_MAX_NICS, &v, err) == -1)
			return -1;
		cfg->sim.nics = (unsigned)v;
		cfg->sim.nics_named = false;
		return 0;
	}
	return inventory_sim_nics(&cfg->sim, value, err);
}

/* "79 = drain": the key is the code (see agent_xid_keys). */
static int
agent_set_xid(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	unsigned code = (unsigned)strtoul(k->name, NULL, 10);
	enum xid_action a;

	if (strcmp(value, "ignore") == 0)
		a = XID_IGNORE;
	else if (strcmp(value, "fail-job") == 0)
		a = XID_FAIL_JOB;
	else if (strcmp(value, "drain") == 0)
		a = XID_DRAIN;
	else
		return cerr_set(err, ERR_INVALID,
		    "'%.64s' is not an XID action (ignore, fail-job or drain)",
		    value);
	cfg->xid_policy[code] = (signed char)a;
	return 0;
}

/* agent_keys followed by one key per XID code. */
static void
agent_xid_keys(struct conf_key *keys)
{
	unsigned i;

	memcpy(keys, agent_keys, sizeof(agent_keys));
	for (i = 1; i <= AGENT_XID_MAX; i++) {
		snprintf(agent_xid_names[i], sizeof(agent_xid_names[i]), "%u",
		    i);
		keys[AGENT_NKEYS + i - 1] = (struct conf_key){
			.section = "xid", .name = agent_xid_names[i],
			.set = agent_set_xid };
	}
}

/* One "from:to" of a user map, blanks around it already skipped. */
static int
agent_map_entry(const char *s, size_t len, struct user_map_entry *e,
    struct cerr *err)
{
	const char *colon = memchr(s, ':', len);
	size_t flen, tlen;

	if (colon == NULL)
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not USER:ACCOUNT", (int)(len > 64 ? 64 : len),
		    s);
	flen = (size_t)(colon - s);
	tlen = len - flen - 1;
	if (!(flen == 1 && s[0] == '*') && !agent_valid_user_name(s, flen))
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not a user name or '*'",
		    (int)(flen > 64 ? 64 : flen), s);
	if (!agent_valid_user_name(colon + 1, tlen))
		return cerr_set(err, ERR_INVALID,
		    "'%.*s' is not an account name",
		    (int)(tlen > 64 ? 64 : tlen), colon + 1);
	/* The agent never runs a user's command as root; a map saying so
	 * is a mistake to stop at, not to find out about later. */
	if (tlen == 4 && memcmp(colon + 1, "root", 4) == 0)
		return cerr_set(err, ERR_INVALID,
		    "tasks are never run as root");
	if ((e->from = strndup(s, flen)) == NULL ||
	    (e->to = strndup(colon + 1, tlen)) == NULL) {
		free(e->from);
		e->from = NULL;
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* The next entry of a comma-separated list at *s, blanks around it
 * trimmed: it starts at *s (moved past leading blanks), is *len bytes
 * long and ends at *end (the comma or the NUL). -1 with err when empty. */
static int
agent_list_entry(const char **s, const char **end, size_t *len,
    struct cerr *err)
{
	*s += strspn(*s, " \t");
	*end = *s + strcspn(*s, ",");
	*len = (size_t)(*end - *s);
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
	if (*len == 0)
		return cerr_set(err, ERR_INVALID, "empty entry");
	return 0;
}

/* "alice:svc,bob:nobody,*:guest": the first entry that matches wins,
 * so a user named twice, or anything after "*", could never be used and
 * is refused as a likely typo. inih cuts lines at 200 characters, so a
 * long map is written as several user_map lines, which add up in
 * order. */
static int
agent_set_user_map(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	struct user_map_entry *map = cfg->user_map;
	const char *s = value, *end;
	size_t len;
	unsigned n0 = cfg->nuser_map, n = n0, i;

	for (;;) {
		if (agent_list_entry(&s, &end, &len, err) == -1)
			goto fail;
		if (n == AGENT_USER_MAP_MAX) {
			cerr_set(err, ERR_INVALID, "more than %d entries",
			    AGENT_USER_MAP_MAX);
			goto fail;
		}
		if (n > 0 && strcmp(map[n - 1].from, "*") == 0) {
			cerr_set(err, ERR_INVALID,
			    "'%.*s' comes after '*', which matches every user",
			    (int)(len > 64 ? 64 : len), s);
			goto fail;
		}
		if (agent_map_entry(s, len, &map[n], err) == -1)
			goto fail;
		n++;
		for (i = 0; i + 1 < n; i++) {
			if (strcmp(map[i].from, map[n - 1].from) == 0) {
				cerr_set(err, ERR_INVALID,
				    "user '%s' is mapped twice",
				    map[n - 1].from);
				goto fail;
			}
		}
		if (*end == '\0')
			break;
		s = end + 1;
	}
	cfg->nuser_map = n;
	return 0;

fail:
	/* The entries of this line go; those of earlier lines stay, for
	 * agent_config_clear. */
	agent_user_map_free(map + n0, n - n0);
	memset(map + n0, 0, (n - n0) * sizeof(map[0]));
	return -1;
}

/* "svc-ci, backup": accounts below min_uid that may run jobs anyway.
 * Several lines add up, as user_map's do. root is refused here, as in
 * user_map: the agent never runs a task as root. */
static int
agent_set_allow_users(const struct conf_ctx *c, const struct conf_key *k,
    const char *value, struct cerr *err)
{
	struct agent_config *cfg = c->cfg;
	const char *s = value, *end;
	unsigned n0 = cfg->nallow_users, n = n0, i;
	size_t len;

	for (;;) {
		if (agent_list_entry(&s, &end, &len, err) == -1)
			goto fail;
		if (!agent_valid_user_name(s, len)) {
			cerr_set(err, ERR_INVALID, "'%.*s' is not an account "
			    "name", (int)(len > 64 ? 64 : len), s);
			goto fail;
		}
		if (len == 4 && memcmp(s, "root", 4) == 0) {
			cerr_set(err, ERR_INVALID,
			    "tasks are never run as root");
			goto fail;
		}
		if (n == AGENT_ALLOW_USERS_MAX) {
			cerr_set(err, ERR_INVALID, "more than %d accounts",
			    AGENT_ALLOW_USERS_MAX);
			goto fail;
		}
		if ((cfg->allow_users[n] = strndup(s, len)) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto fail;
		}
		n++;
		if (*end == '\0')
			break;
		s = end + 1;
	}
	cfg->nallow_users = n;
	return 0;
fail:
	for (i = n0; i < n; i++) {
		free(cfg->allow_users[i]);
		cfg->allow_users[i] = NULL;
	}
	return -1;
}

/* What the file leaves to be derived: the address defaults to the name,
 * the simulated NICs to one per GPU; and the named NICs checked against
 * the GPU count. */
static int
agent_finish(struct agent_config *cfg, const int *seen, const char *path,
    struct cerr *err)
{
	size_t i;

	unsigned g;

	for (i = 0; i < AGENT_NKEYS; i++) {
		if (strcmp(agent_keys[i].name, "nics") != 0)
			continue;
		if (seen[i] == 0)
			cfg->sim.nics = cfg->sim.count;
		/* count may come after nics: checked once both are read. */
		for (g = cfg->sim.count; cfg->sim.nics_named &&
		    g < INV_MAX_GPUS; g++)
			if (cfg->sim.nic_of[g] != -1)
				return cerr_set(err, ERR_INVALID, "%s:%d: NIC "
				    "%s names GPU %u, but count = %u", path,
				    seen[i],
				    cfg->sim.nic_names[cfg->sim.nic_of[g]], g,
				    cfg->sim.count);
	}
	if (cfg->address == NULL && (cfg->address = strdup(cfg->name)) ==
	    NULL)
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	if ((!cfg->slurm_commands_set && (cfg->slurm_commands =
	    strdup(SLURMBINDIR)) == NULL) || (cfg->cluster_name == NULL &&
	    (cfg->cluster_name = strdup(AGENT_DEFAULT_CLUSTER_NAME)) == NULL))
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	if (agent_find_runtime(cfg) == -1)
		return cerr_set(err, ERR_INTERNAL, "%s: out of memory", path);
	return 0;
}

int
agent_config_load(struct agent_config *cfg, const char *path,
    struct cerr *err)
{
	static struct conf_key keys[AGENT_ALL_KEYS];
	int seen[AGENT_ALL_KEYS];

	agent_config_defaults(cfg);
	agent_xid_keys(keys);
	if (conf_load(path, keys, AGENT_ALL_KEYS, cfg, seen, err) == -1 ||
	    agent_finish(cfg, seen, path, err) == -1) {
		agent_config_clear(cfg);
		return -1;
	}
	return 0;
}
