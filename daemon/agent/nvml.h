/* NVML (libnvidia-ml.so.1), loaded at run time with dlopen.
 *
 * Debian main has no nvml.h, and an agent linked against the library
 * would not start on a node without NVIDIA's driver, so the few types
 * and functions the agent uses are declared here by hand. The layouts
 * follow NVIDIA's nvml.h (API version 12); the static assertions below
 * pin the sizes a mistake would change, since a wrong layout would let
 * the library write past our buffers.
 *
 * nvml_create() loads the library, resolves every function and calls
 * nvmlInit_v2; callers then call NVML through the function pointers of
 * struct nvml, named exactly as in NVIDIA's header. The required ones
 * are always set; the optional ones are NULL when the driver is too old
 * to have them, and callers must check. The health checks (XID events,
 * ECC counters, temperature) use the optional ones. */
#ifndef COHORT_AGENT_NVML_H
#define COHORT_AGENT_NVML_H

#include "lib/err.h"

/* nvmlReturn_t: an enum in NVIDIA's header, so an int here. */
typedef int nvml_return_t;
/* Opaque handles. */
typedef struct nvml_device_st *nvml_device_t;
typedef struct nvml_event_set_st *nvml_event_set_t;

#define NVML_SUCCESS			0
#define NVML_ERROR_UNINITIALIZED	1
#define NVML_ERROR_INVALID_ARGUMENT	2
#define NVML_ERROR_NOT_SUPPORTED	3
#define NVML_ERROR_NO_PERMISSION	4
#define NVML_ERROR_NOT_FOUND		6
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_ERROR_DRIVER_NOT_LOADED	9
#define NVML_ERROR_TIMEOUT		10
#define NVML_ERROR_GPU_IS_LOST		15
#define NVML_ERROR_UNKNOWN		999

/* Buffer sizes NVIDIA documents as always large enough. */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE	96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE	96

/* nvmlEnableState_t */
#define NVML_FEATURE_DISABLED		0
#define NVML_FEATURE_ENABLED		1

/* Links a GPU may have (NVLink 4: 18). Asking for a link the GPU does
 * not have returns NVML_ERROR_INVALID_ARGUMENT. */
#define NVML_NVLINK_MAX_LINKS		18

/* nvmlGpuTopologyLevel_t: how far apart two GPUs are on PCIe. */
#define NVML_TOPOLOGY_INTERNAL		0	/* one board */
#define NVML_TOPOLOGY_SINGLE		10	/* one PCIe switch */
#define NVML_TOPOLOGY_MULTIPLE		20	/* switches, no host bridge */
#define NVML_TOPOLOGY_HOSTBRIDGE	30
#define NVML_TOPOLOGY_NODE		40	/* one NUMA node */
#define NVML_TOPOLOGY_SYSTEM		50

/* Event types (nvmlDeviceRegisterEvents). */
#define NVML_EVENT_TYPE_SINGLE_BIT_ECC		0x1ULL
#define NVML_EVENT_TYPE_DOUBLE_BIT_ECC		0x2ULL
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR	0x8ULL

/* nvmlTemperatureSensors_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t */
#define NVML_TEMPERATURE_GPU			0
#define NVML_MEMORY_ERROR_TYPE_CORRECTED	0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED	1
#define NVML_VOLATILE_ECC			0
#define NVML_AGGREGATE_ECC			1

/* nvmlMemory_t, in bytes. */
struct nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/* nvmlPciInfo_t (v3). busId is "DDDDDDDD:BB:DD.F", upper-case hex. */
struct nvml_pci_info {
	char busIdLegacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[32];
};

/* nvmlEventData_t as nvmlEventSetWait_v2 fills it. */
struct nvml_event_data {
	nvml_device_t device;
	unsigned long long eventType;
	unsigned long long eventData;	/* the XID for XID events */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

_Static_assert(sizeof(struct nvml_memory) == 24, "nvmlMemory_t");
_Static_assert(sizeof(struct nvml_pci_info) == 68, "nvmlPciInfo_t");
_Static_assert(sizeof(struct nvml_event_data) == 8 + 16 + 8,
    "nvmlEventData_t");

struct nvml {
	void *dl;		/* dlopen handle */
	int initialized;	/* nvmlInit_v2 succeeded */

	/* Required. */
	nvml_return_t (*nvmlInit_v2)(void);
	nvml_return_t (*nvmlShutdown)(void);
	const char *(*nvmlErrorString)(nvml_return_t);
	nvml_return_t (*nvmlDeviceGetCount_v2)(unsigned int *);
	nvml_return_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned int,
	    nvml_device_t *);
	nvml_return_t (*nvmlDeviceGetName)(nvml_device_t, char *,
	    unsigned int);
	nvml_return_t (*nvmlDeviceGetUUID)(nvml_device_t, char *,
	    unsigned int);
	nvml_return_t (*nvmlDeviceGetMemoryInfo)(nvml_device_t,
	    struct nvml_memory *);
	nvml_return_t (*nvmlDeviceGetPciInfo_v3)(nvml_device_t,
	    struct nvml_pci_info *);
	nvml_return_t (*nvmlDeviceGetNvLinkState)(nvml_device_t,
	    unsigned int, int *);
	nvml_return_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2)(nvml_device_t,
	    unsigned int, struct nvml_pci_info *);
	nvml_return_t (*nvmlDeviceGetTopologyCommonAncestor)(nvml_device_t,
	    nvml_device_t, int *);

	/* Optional: NULL when the library lacks them. */
	nvml_return_t (*nvmlDeviceGetNumaNodeId)(nvml_device_t,
	    unsigned int *);
	nvml_return_t (*nvmlEventSetCreate)(nvml_event_set_t *);
	nvml_return_t (*nvmlEventSetFree)(nvml_event_set_t);
	nvml_return_t (*nvmlDeviceRegisterEvents)(nvml_device_t,
	    unsigned long long, nvml_event_set_t);
	nvml_return_t (*nvmlEventSetWait_v2)(nvml_event_set_t,
	    struct nvml_event_data *, unsigned int);
	nvml_return_t (*nvmlDeviceGetTotalEccErrors)(nvml_device_t, int, int,
	    unsigned long long *);
	nvml_return_t (*nvmlDeviceGetTemperature)(nvml_device_t, int,
	    unsigned int *);
};

/* Load libpath (NULL: "libnvidia-ml.so.1", found on the library search
 * path), resolve the functions above and initialise NVML. Returns the
 * handle, owned by the caller, or NULL with err (ERR_UNAVAILABLE: the
 * library cannot be loaded, with dlerror's text, lacks a required
 * function, or nvmlInit_v2 fails, with NVML's error string;
 * ERR_INTERNAL: out of memory). */
struct nvml *nvml_create(const char *libpath, struct cerr *err);

/* Shut NVML down and unload it. Accepts NULL. */
void nvml_destroy(struct nvml *nv);

/* NVML's text for rc; never NULL. */
const char *nvml_strerror(const struct nvml *nv, nvml_return_t rc);

#endif
