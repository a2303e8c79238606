/* cohort-agent's configuration file (INI). Relative paths are relative to
 * the file's directory.
 *
 *   [agent]
 *   controller = HOST:PORT        required; or a comma-separated list of
 *                                 the replicas of a replicated controller
 *                                 (the link finds the leader)
 *   name = node01                 required; must equal the certificate CN
 *   spool = PATH                  required; task logs and state
 *   address = 127.0.0.1           how other nodes reach this one
 *                                 (MASTER_ADDR when it is rank 0);
 *                                 default: the name
 *   heartbeat_interval = 2s
 *   log_level = info              debug | info | warning | error
 *   kill_wait = 10s               SIGTERM → SIGKILL when stopping tasks
 *   spare = no                    a hot spare: the scheduler uses it
 *                                 only to replace a failed job's node
 *   user_map = alice:nobody,*:svc cluster user → local account; "*"
 *                                 matches any user
 *   min_uid = 1000                tasks never run as a lower uid ...
 *   allow_system_users = a,b      ... unless the account is listed
 *   numa_cpus = 0:0-3 1:4-7       NUMA node -> CPUs for --cpus-per-task;
 *                                 default: this machine's (sysfs)
 *   cgroup = auto | off | PATH    a cgroup v2 per job (cgroup.c);
 *                                 default auto
 *   hwloc_xml = PATH              the GPUs' NICs from this hwloc XML
 *                                 topology instead of this machine's
 *   slurm_commands = PATH | none  put first on every task's PATH: the
 *                                 directory of Slurm's commands (sbatch,
 *                                 squeue, scontrol...); default the
 *                                 installed one (SLURMBINDIR)
 *   cluster_name = cohort         SLURM_CLUSTER_NAME of the tasks
 *   [tls]
 *   ca = PATH  cert = PATH  key = PATH
 *   crl = PATH                    optional: CRLs of the CA, checked for
 *                                 the controller; re-read on SIGHUP
 *   [gpu]
 *   source = auto | nvml | simulated | none   default auto: NVML,
 *                                 and refuse to start when it finds no
 *                                 GPU
 *   nvml_library = PATH           default libnvidia-ml.so.1
 *   count, model, memory_mb, nvlink, numa_nodes, nics, cpus,
 *   memory_total_mb               the simulated inventory; nics = N
 *                                 (split evenly, unnamed) or
 *                                 NAME:GPUS ... (mlx5_0:0-3 mlx5_1:4-7)
 *   [health]
 *   program = PATH                optional NHC-style check
 *   interval = 30s  timeout = 60s
 *   drain_on_gpu_failure = yes    a FAILED GPU fails the whole node
 *   temperature_degraded = 90     °C (NVML); 0: never
 *   [xid]
 *   79 = drain                    NN = ignore | fail-job | drain, over
 *                                 the defaults (daemon/agent/health.c)
 */
#ifndef COHORT_AGENT_CONFIG_H
#define COHORT_AGENT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/agent/cpubind.h"
#include "daemon/agent/inventory.h"
#include "lib/addrlist.h"
#include "lib/conf.h"
#include "lib/err.h"

#define AGENT_USER_MAP_MAX 64
#define AGENT_ALLOW_USERS_MAX 64
#define AGENT_DEFAULT_MIN_UID 1000
/* XID codes the [xid] section may name: 1..AGENT_XID_MAX. */
#define AGENT_XID_MAX 999

/* Where the GPU inventory comes from ([gpu] source). */
enum agent_source {
	AGENT_SOURCE_AUTO = 0,	/* NVML, and refuse to start without GPUs */
	AGENT_SOURCE_NVML,	/* NVML, whatever it reports */
	AGENT_SOURCE_SIMULATED,	/* the [gpu] keys below */
	AGENT_SOURCE_NONE,	/* a CPU-only node: no GPUs */
};

/* Where the jobs' cgroups go ([agent] cgroup). */
enum agent_cgroup {
	AGENT_CGROUP_AUTO = 0,	/* under the agent's own cgroup v2, if any */
	AGENT_CGROUP_OFF,	/* none: tasks run as they would without */
	AGENT_CGROUP_PATH,	/* under cgroup_path (a cgroup v2 directory) */
};

struct user_map_entry {
	char *from;		/* cluster user, or "*" */
	char *to;		/* local account */
};

struct agent_config {
	struct addrlist controllers;	/* as configured, in order */
	/* The first of them (what one-address callers use). */
	char controller_host[CONF_HOST_MAX + 1];
	uint16_t controller_port;
	char *name;
	char *spool;
	char *address;
	uint64_t heartbeat_ms;
	int log_level;		/* LOG_LEVEL_*; default info */
	uint64_t kill_wait_ms;
	struct user_map_entry user_map[AGENT_USER_MAP_MAX];
	unsigned nuser_map;
	/* Accounts: no task runs as a uid below min_uid unless its account
	 * is in allow_system_users (uid 0 never, when the agent is root). */
	uint32_t min_uid;
	char *allow_users[AGENT_ALLOW_USERS_MAX];
	unsigned nallow_users;
	char *ca;
	char *cert;
	char *key;
	char *crl;		/* revocation; NULL: none */
	char *hwloc_xml;	/* [agent] hwloc_xml; NULL: this machine */
	/* Put first on the tasks' PATH; NULL: none ("none"). Absolute. */
	char *slurm_commands;
	bool slurm_commands_set;	/* the key was given */
	char *cluster_name;	/* SLURM_CLUSTER_NAME; set after load */
	enum agent_source source;	/* [gpu] source; default auto */
	char *nvml_library;	/* NULL: default */
	struct sim_gpus sim;
	char *health_program;	/* NULL: none */
	uint64_t health_interval_ms;
	uint64_t health_timeout_ms;
	bool drain_on_gpu_failure;
	bool spare;		/* a hot spare: used only for replacements */
	char *features;		/* [agent] features, validated
				 * (inventory_set_features); NULL: none */
	unsigned temperature_degraded;	/* °C; 0: never */
	/* CPUs and cgroups. */
	bool has_numa_map;	/* [agent] numa_cpus given */
	struct cpubind_map numa_map;
	enum agent_cgroup cgroup;
	char *cgroup_path;	/* AGENT_CGROUP_PATH: absolute */
	/* [xid] overrides: an enum xid_action (health.h), or -1 for the
	 * default. */
	signed char xid_policy[AGENT_XID_MAX + 1];
	/* [container]: jobs in images (container.h). */
	bool ctr_enabled;	/* enabled; default yes */
	char *ctr_runtime;	/* runtime: an absolute path, resolved at
				 * load; NULL: none found here */
	char *ctr_runtime_name;	/* as given (default "runc") */
	char *ctr_cache;	/* cache: absolute; NULL: SPOOL/images */
	uint64_t ctr_cache_max;	/* cache_size, bytes; default 50G */
	char *ctr_mounts;	/* mounts every container gets, as
				 * --container-mounts; NULL: none */
	uint64_t ctr_shm;	/* shm_size: /dev/shm's cap, bytes */
	/* prepare_timeout: a preparation still running past it is killed
	 * and answered as a transient failure; default 30m. */
	uint64_t ctr_prepare_timeout_ms;
	/* registries: the registry hosts (HOST[:PORT], comma-separated)
	 * docker:// images may come from; NULL: none. */
	char *ctr_registries;
	/* cdi_dirs: where CDI specs of kind nvidia.com/gpu are read (cdi.h),
	 * ':'-separated absolute directories; NULL: CDI_DEFAULT_DIRS. */
	char *ctr_cdi_dirs;
};

/* Load path into cfg (defaults first). 0, or -1 with err->text as one
 * line "PATH:LINE: what is wrong" or "PATH: ..." (missing keys). After a
 * failure cfg holds nothing allocated. */
int agent_config_load(struct agent_config *cfg, const char *path,
    struct cerr *err);
void agent_config_clear(struct agent_config *cfg);

/* The local account for a cluster user: the first matching map entry,
 * else the user's own name. Borrowed. */
const char *agent_config_map_user(const struct agent_config *cfg,
    const char *user);

/* Whether tasks may run as account (uid): uid >= min_uid, or the
 * account is listed in allow_system_users. account may be NULL (a uid
 * without a name: only min_uid applies). Root is the caller's to
 * refuse. */
bool agent_config_account_allowed(const struct agent_config *cfg,
    const char *account, uint32_t uid);

#endif
