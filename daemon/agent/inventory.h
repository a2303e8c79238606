/* What a node has: CPUs, memory and, per GPU, the facts placement needs
 * (model, memory, NUMA node, PCIe location, NVLink connectivity, nearest
 * NIC). Two sources: a simulated inventory described in the agent's
 * configuration, and NVML loaded at run time (daemon/agent/nvml.c). */
#ifndef COHORT_AGENT_INVENTORY_H
#define COHORT_AGENT_INVENTORY_H

#include <stdint.h>

#include "lib/err.h"

#define INV_MAX_GPUS 64
#define INV_MODEL_MAX 96
#define INV_UUID_MAX 80

struct gpu_info {
	unsigned index;			/* node-local, as CUDA numbers them */
	char uuid[INV_UUID_MAX];	/* "GPU-…" */
	char model[INV_MODEL_MAX];	/* "NVIDIA H100 80GB HBM3" */
	uint64_t memory_mb;
	int numa_node;			/* -1: unknown */
	char pci_bus_id[32];		/* "00000000:18:00.0" */
	int pcie_switch;		/* id of the PCIe switch above it; -1 */
	int nvlink_domain;		/* GPUs with the same id are all
					 * NVLinked to each other (one
					 * NVSwitch, a quad...); -1: none */
	uint64_t nvlink_peers;		/* bit i: an NVLink to GPU index i */
	int nic;			/* index of the nearest NIC; -1 */
};

struct inventory {
	char source[16];		/* "simulated" or "nvml" */
	unsigned ncpus;
	uint64_t memory_mb;
	unsigned ngpus;
	struct gpu_info gpus[INV_MAX_GPUS];
};

/* How a simulated node looks ([gpu] section of the agent config). */
struct sim_gpus {
	unsigned count;			/* default 8 */
	char model[INV_MODEL_MAX];	/* default "NVIDIA H100 80GB HBM3" */
	uint64_t memory_mb;		/* default 81559 */
	char nvlink[16];		/* "all" (one NVSwitch domain),
					 * "quads", "pairs" or "none";
					 * default "all" */
	unsigned numa_nodes;		/* GPUs split evenly; default 2 */
	unsigned nics;			/* NICs split evenly; default = count */
	unsigned ncpus;			/* default 64 */
	uint64_t memory_total_mb;	/* default 1 TiB */
};

/* Defaults above. */
void inventory_sim_defaults(struct sim_gpus *sim);

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

#endif
