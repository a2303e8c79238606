/* What a node has, as the agent reports it and the controller keeps it:
 * CPUs, memory and, per GPU, the facts placement needs (model, memory,
 * NUMA node, PCIe location, NVLink connectivity, nearest NIC). */
#ifndef COHORT_INVENTORY_H
#define COHORT_INVENTORY_H

#include <stdint.h>

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

/* Health of a node or a GPU (SPEC.md, "Health"). */
enum health_state {
	HEALTH_OK = 0,
	HEALTH_DEGRADED,
	HEALTH_FAILED,
};

#define HEALTH_REASON_MAX 160

struct gpu_health {
	unsigned index;
	enum health_state health;
	char reason[HEALTH_REASON_MAX];	/* e.g. "xid=79" */
};

/* The latest verdict on a node: the node as a whole and each GPU that is
 * not OK. */
struct node_health {
	enum health_state health;
	char reason[HEALTH_REASON_MAX];
	unsigned ngpus;			/* entries used in gpus[] */
	struct gpu_health gpus[INV_MAX_GPUS];
	int64_t checked_ms;
};

const char *health_name(enum health_state h);

struct inventory {
	char source[16];		/* "simulated" or "nvml" */
	unsigned ncpus;
	uint64_t memory_mb;
	unsigned ngpus;
	struct gpu_info gpus[INV_MAX_GPUS];
};

#endif
