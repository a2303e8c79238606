/* What a node has: CPUs, memory and, per GPU, the facts placement needs
 * (model, memory, NUMA node, PCIe location, NVLink connectivity, nearest
 * NIC). Two sources: a simulated inventory described in the agent's
 * configuration, and NVML loaded at run time (daemon/agent/nvml.c). */
#ifndef COHORT_AGENT_INVENTORY_H
#define COHORT_AGENT_INVENTORY_H

#include <stdint.h>

#include "lib/err.h"
#include "lib/inventory.h"

/* How a simulated node looks ([gpu] section of the agent config). */
struct sim_gpus {
	unsigned count;			/* default 8 */
	char model[INV_MODEL_MAX];	/* default "NVIDIA H100 80GB HBM3" */
	uint64_t memory_mb;		/* default 81559 */
	char nvlink[16];		/* "all" (one NVSwitch domain),
					 * "quads", "pairs" or "none";
					 * default "all" */
	unsigned numa_nodes;		/* GPUs split evenly; default 2 */
	unsigned nics;			/* NICs split evenly, unnamed;
					 * default = count; with names, how
					 * many are named */
	/* nics = NAME:GPUS ...: named NICs in the order given (which is
	 * their rail), nic_of[i] the index of GPU i's, -1 for none. 0 named:
	 * the even split above. */
	bool nics_named;
	char nic_names[INV_MAX_GPUS][INV_NIC_NAME_MAX];
	int nic_of[INV_MAX_GPUS];
	unsigned ncpus;			/* default 64 */
	uint64_t memory_total_mb;	/* default 1 TiB */
};

/* Defaults above. */
void inventory_sim_defaults(struct sim_gpus *sim);

/* Read the named form of [gpu] nics into sim: entries NAME:GPUS
 * separated by blanks, GPUS a comma-separated list of indices and
 * ranges ("mlx5_0:0-3 mlx5_1:4-7", "mlx5_0:0,2 mlx5_1:1,3"); a NIC name
 * as inventory_nic_name_ok, each NIC and each GPU at most once. 0, or -1
 * with err (ERR_INVALID, in words for the config's FILE:LINE), sim
 * unchanged. */
int inventory_sim_nics(struct sim_gpus *sim, const char *value,
    struct cerr *err);

/* The GPUs' NICs from hwloc (daemon/agent/hwtopo.h): from the XML file
 * xml when given (over any source's, simulated included: for tests and
 * offline diagnosis), else from this machine. 0, or -1 with err, inv
 * unchanged. */
int inventory_nics(struct inventory *inv, const char *xml,
    struct cerr *err);

/* Build a simulated inventory. UUIDs are derived from node (stable across
 * restarts, unique across nodes). 0, or -1 with err (ERR_INVALID: count
 * above INV_MAX_GPUS, unknown nvlink layout, ...). */
int inventory_simulated(const struct sim_gpus *sim, const char *node,
    struct inventory *inv, struct cerr *err);

/* Read the real GPUs through NVML, loading libpath (NULL:
 * "libnvidia-ml.so.1") with dlopen. CPUs and memory come from sysconf.
 * 0, or -1 with err (ERR_UNAVAILABLE: the library cannot be loaded or
 * nvmlInit fails, with NVML's own error string). */
int inventory_nvml(const char *libpath, struct inventory *inv,
    struct cerr *err);

/* source = auto: the GPUs NVML reports, as inventory_nvml; -1 with err
 * (ERR_UNAVAILABLE) when NVML cannot be loaded or finds no GPU, in words
 * that name the library and the other sources: an agent on a server
 * without NVIDIA's driver must not register a node with no GPUs (or
 * made-up ones) by accident. */
int inventory_auto(const char *libpath, struct inventory *inv,
    struct cerr *err);

/* source = none: a CPU-only node (no GPUs; this machine's CPUs and
 * memory). Always 0. */
int inventory_none(struct inventory *inv);

#endif
