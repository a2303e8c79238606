/* What a node has, as the agent reports it and the controller keeps it:
 * CPUs, memory and, per GPU, the facts placement needs (model, memory,
 * NUMA node, PCIe location, NVLink connectivity, nearest NIC). */
#ifndef COHORT_INVENTORY_H
#define COHORT_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INV_MAX_GPUS 64
#define INV_MODEL_MAX 96
#define INV_UUID_MAX 80
/* Node features (the agent's features = key): as lib/constraint.h's
 * CONSTRAINT_FEATURES_MAX and CONSTRAINT_NAME_MAX. */
#define INV_MAX_FEATURES 32
#define INV_FEATURE_MAX 64
/* A NIC's device name ("mlx5_0"), with its NUL; as an RDMA device name
 * (IB_DEVICE_NAME_MAX in the kernel is 64, names in use are short). */
#define INV_NIC_NAME_MAX 32
/* NIC indices (rails) are below this ([gpu] nics of a simulated node is
 * at most this many). */
#define INV_MAX_NICS 1024

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
	int nic;			/* index of the nearest NIC, which
					 * is also its rail; -1: unknown */
	char nic_name[INV_NIC_NAME_MAX];	/* that NIC ("mlx5_0");
					 * "": unknown or unnamed */
	bool nic_near;			/* that NIC shares a PCIe switch
					 * with the GPU (placement prefers
					 * such GPUs) */
};

/* Whether s is a NIC name the inventory accepts: 1 to INV_NIC_NAME_MAX
 * - 1 letters, digits, '.', '_', '-' or ':' (it ends up in the task's
 * environment, NCCL_IB_HCA, so nothing else). */
bool	inventory_nic_name_ok(const char *s);

/* Health of a node or a GPU (docs/SPEC.md, "Health"). */
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
	int64_t checked_ms;
	unsigned ngpus;			/* entries used in gpus[] */
	/* Last, so that one kept for long is allocated to
	 * inventory_health_size(ngpus) (inventory_health_dup). */
	struct gpu_health gpus[INV_MAX_GPUS];
};

const char *health_name(enum health_state h);

/* The longest comma-joined feature list, with its NUL. */
#define INV_FEATURES_TEXT_MAX (INV_MAX_FEATURES * (INV_FEATURE_MAX + 1))

struct inventory {
	char source[16];		/* "simulated" or "nvml" */
	unsigned ncpus;
	uint64_t memory_mb;
	unsigned nfeatures;		/* entries used in features[] */
	char features[INV_MAX_FEATURES][INV_FEATURE_MAX + 1];
	unsigned ngpus;
	/* Last, so that one kept for long (a controller's node: 10,000 of
	 * them) is allocated to inventory_size(ngpus), a quarter of the
	 * whole struct at 8 GPUs (inventory_dup). */
	struct gpu_info gpus[INV_MAX_GPUS];
};

/* The bytes of an inventory, or of a health verdict, up to and with its
 * first ngpus (at most INV_MAX_GPUS) GPUs: what a copy that is only read
 * through its used entries needs. Such a copy is never assigned or
 * copied whole (that would read past its end). */
size_t	inventory_size(unsigned ngpus);
size_t	inventory_health_size(unsigned ngpus);
/* A malloc'd copy of that size (free with free()); NULL with ENOMEM,
 * or EINVAL for more than INV_MAX_GPUS GPUs. */
struct inventory *inventory_dup(const struct inventory *inv);
struct node_health *inventory_health_dup(const struct node_health *h);

/* Set inv's features from a comma-separated list ("fp64, ib"; "" for
 * none): names of letters, digits, '.', '_' and '-', at most
 * INV_FEATURE_MAX characters, at most INV_MAX_FEATURES of them; a name
 * given twice counts once. Returns 0; or -1 with errno EINVAL and one
 * line in err, inv unchanged. */
int	inventory_set_features(struct inventory *inv, const char *list,
	    char *err, size_t errlen);

/* Write inv's features comma-joined into buf (at least
 * INV_FEATURES_TEXT_MAX bytes for any inventory; truncated otherwise). */
void	inventory_features_format(const struct inventory *inv, char *buf,
	    size_t size);

#endif
