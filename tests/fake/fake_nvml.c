/* A fake libnvidia-ml.so.1 for the tests: the NVML functions the agent
 * uses, answering for a machine described by the environment, read at
 * nvmlInit:
 *
 *   FAKE_NVML_GPUS=8          number of GPUs (0..128)
 *   FAKE_NVML_MODEL=NAME      default "NVIDIA H100 80GB HBM3"
 *   FAKE_NVML_TOPO=nvswitch   NVLink: every GPU's 18 links go to 4
 *                             NVSwitches (HGX H100); "quads" and
 *                             "pairs": links to each other GPU of the
 *                             group; "none": no NVLink at all
 *   FAKE_NVML_FAIL_INIT=1     nvmlInit fails: Driver Not Loaded
 *   FAKE_NVML_XID=I:X[,I:X]   XID X events on GPU I (up to 16), each
 *                             returned once by nvmlEventSetWait_v2 of
 *                             an event set, in order, once GPU I has
 *                             registered for XID events
 *   FAKE_NVML_ECC=I:N         N uncorrected ECC errors on GPU I
 *   FAKE_NVML_TEMP=I:T        GPU I at T degrees (others at 30 + index)
 *
 * It behaves as NVML does where the agent could notice: calls before
 * nvmlInit (or after the last nvmlShutdown) fail with UNINITIALIZED,
 * init and shutdown are counted, bad handles and NULL pointers are
 * INVALID_ARGUMENT, short buffers INSUFFICIENT_SIZE, links past the
 * GPU's last are INVALID_ARGUMENT, a GPU without NVLink answers
 * NOT_SUPPORTED.
 *
 * The PCI domain is 0xfa4e, which no real machine the tests run on has,
 * so that the agent's look into /sys/bus/pci for a GPU's NUMA node finds
 * nothing and the answer comes from the fake's nvmlDeviceGetNumaNodeId
 * (first half of the GPUs on node 0, second half on node 1). GPUs pair
 * up under PCIe switches; the halves are two NUMA nodes.
 *
 * Deliberately self-contained: it declares NVML's layouts itself rather
 * than sharing the agent's nvml.h, as the real library would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

/* The prototypes of the exported functions are NVML's, in a header we do
 * not have. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

typedef int nvmlReturn_t;
typedef struct fake_gpu *nvmlDevice_t;
typedef struct fake_set *nvmlEventSet_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType, eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

enum {
	SUCCESS = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2,
	NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9,
	TIMEOUT = 10, UNKNOWN = 999
};

#define FAKE_MAX_GPUS 128
#define FAKE_LINKS 18
#define FAKE_DOMAIN 0xfa4eu
#define FAKE_SWITCH_BUS 0xc0u	/* NVSwitches at c0..c3 */
#define FAKE_NSWITCHES 4
#define XID_EVENT 0x8ULL
#define FAKE_MAX_XIDS 16

struct fake_gpu {
	unsigned index;
	unsigned long long events;	/* registered event types */
};

struct fake_set {
	int delivered[FAKE_MAX_XIDS];
};

static struct {
	int inits;		/* nvmlInit minus nvmlShutdown */
	unsigned ngpus;
	char model[96];
	int group;		/* 0: NVSwitch, 1: none, else group size */
	int nxid;
	int xid_gpu[FAKE_MAX_XIDS], xid[FAKE_MAX_XIDS];
	int ecc_gpu;
	unsigned long long ecc;
	int temp_gpu;
	unsigned temp;
	struct fake_gpu gpu[FAKE_MAX_GPUS];
	struct fake_set set;
	int set_used;
} fake;

/* "I:V" from the environment into *idx and *v; 0 when absent or
 * malformed. */
static int
env_pair(const char *name, int *idx, unsigned long long *v)
{
	const char *s = getenv(name);
	int i;

	if (s == NULL || sscanf(s, "%d:%llu", &i, v) != 2)
		return 0;
	*idx = i;
	return 1;
}

/* FAKE_NVML_XID: "I:X" pairs separated by commas. */
static void
env_xids(void)
{
	const char *s = getenv("FAKE_NVML_XID");
	int i, x, n;

	fake.nxid = 0;
	while (s != NULL && fake.nxid < FAKE_MAX_XIDS &&
	    sscanf(s, "%d:%d%n", &i, &x, &n) == 2) {
		fake.xid_gpu[fake.nxid] = i;
		fake.xid[fake.nxid] = x;
		fake.nxid++;
		s += n;
		if (*s != ',')
			break;
		s++;
	}
}

static void
fake_configure(void)
{
	const char *s;
	unsigned long long v;
	long n;

	n = (s = getenv("FAKE_NVML_GPUS")) != NULL ? strtol(s, NULL, 10) : 8;
	fake.ngpus = n < 0 ? 0 : n > FAKE_MAX_GPUS ? FAKE_MAX_GPUS :
	    (unsigned)n;
	s = getenv("FAKE_NVML_MODEL");
	snprintf(fake.model, sizeof(fake.model), "%s",
	    s != NULL ? s : "NVIDIA H100 80GB HBM3");
	s = getenv("FAKE_NVML_TOPO");
	if (s == NULL || strcmp(s, "nvswitch") == 0)
		fake.group = 0;
	else if (strcmp(s, "quads") == 0)
		fake.group = 4;
	else if (strcmp(s, "pairs") == 0)
		fake.group = 2;
	else
		fake.group = 1;
	fake.ecc_gpu = fake.temp_gpu = -1;
	env_xids();
	if (!env_pair("FAKE_NVML_ECC", &fake.ecc_gpu, &fake.ecc))
		fake.ecc_gpu = -1;
	if (env_pair("FAKE_NVML_TEMP", &fake.temp_gpu, &v))
		fake.temp = (unsigned)v;
	memset(fake.gpu, 0, sizeof(fake.gpu));
	for (n = 0; n < FAKE_MAX_GPUS; n++)
		fake.gpu[n].index = (unsigned)n;
	fake.set_used = 0;
}

static int
valid(nvmlDevice_t d)
{
	return d != NULL && d >= &fake.gpu[0] && d < &fake.gpu[fake.ngpus];
}

static unsigned
gpu_bus(unsigned index)
{
	return 0x18 + 3 * index;
}

static void
fill_pci(nvmlPciInfo_t *p, unsigned bus)
{
	memset(p, 0, sizeof(*p));
	p->domain = FAKE_DOMAIN;
	p->bus = bus;
	p->device = 0;
	p->pciDeviceId = 0x233010de;
	p->pciSubSystemId = 0x16c110de;
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:00.0", FAKE_DOMAIN,
	    bus);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:00.0",
	    FAKE_DOMAIN, bus);
}

/* A string into a caller's buffer, as NVML does it. */
static nvmlReturn_t
put_str(char *buf, unsigned len, const char *s)
{
	if (buf == NULL)
		return INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return SUCCESS;
}

#define CHECK_INIT()                                                           \
	do {                                                                   \
		if (fake.inits == 0)                                           \
			return UNINITIALIZED;                                  \
	} while (0)
#define CHECK_DEV(d)                                                           \
	do {                                                                   \
		CHECK_INIT();                                                  \
		if (!valid(d))                                                 \
			return INVALID_ARGUMENT;                               \
	} while (0)

API nvmlReturn_t
nvmlInit_v2(void)
{
	const char *s = getenv("FAKE_NVML_FAIL_INIT");

	if (s != NULL && strcmp(s, "1") == 0)
		return DRIVER_NOT_LOADED;
	if (fake.inits++ == 0)
		fake_configure();
	return SUCCESS;
}

API nvmlReturn_t
nvmlShutdown(void)
{
	CHECK_INIT();
	fake.inits--;
	return SUCCESS;
}

API const char *
nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case SUCCESS: return "Success";
	case UNINITIALIZED: return "Uninitialized";
	case INVALID_ARGUMENT: return "Invalid Argument";
	case NOT_SUPPORTED: return "Not Supported";
	case INSUFFICIENT_SIZE: return "Insufficient Size";
	case DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case TIMEOUT: return "Timeout";
	default: return "Unknown Error";
	}
}

API nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *count)
{
	CHECK_INIT();
	if (count == NULL)
		return INVALID_ARGUMENT;
	*count = fake.ngpus;
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
	CHECK_INIT();
	if (dev == NULL || index >= fake.ngpus)
		return INVALID_ARGUMENT;
	*dev = &fake.gpu[index];
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	CHECK_DEV(d);
	return put_str(name, len, fake.model);
}

API nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
	char buf[64];

	CHECK_DEV(d);
	snprintf(buf, sizeof(buf), "GPU-fa4e0000-0000-4000-8000-%012x",
	    d->index);
	return put_str(uuid, len, buf);
}

API nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *mem)
{
	CHECK_DEV(d);
	if (mem == NULL)
		return INVALID_ARGUMENT;
	mem->total = 81559ULL << 20;
	mem->used = 1ULL << 20;
	mem->free = mem->total - mem->used;
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	CHECK_DEV(d);
	if (pci == NULL)
		return INVALID_ARGUMENT;
	fill_pci(pci, gpu_bus(d->index));
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	CHECK_DEV(d);
	if (node == NULL)
		return INVALID_ARGUMENT;
	*node = d->index * 2 / fake.ngpus;
	return SUCCESS;
}

/* Link l of GPU i in a group topology: to the l-th other member of its
 * group, while there is one. -1: the link exists but is not trained. */
static int
link_peer(unsigned i, unsigned link)
{
	unsigned first = i - i % (unsigned)fake.group, j, k = 0;

	for (j = first; j < first + (unsigned)fake.group && j < fake.ngpus;
	    j++) {
		if (j == i)
			continue;
		if (k++ == link)
			return (int)j;
	}
	return -1;
}

API nvmlReturn_t
nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active)
{
	CHECK_DEV(d);
	if (fake.group == 1)
		return NOT_SUPPORTED;
	if (active == NULL || link >= FAKE_LINKS)
		return INVALID_ARGUMENT;
	*active = fake.group == 0 || link_peer(d->index, link) != -1;
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
    nvmlPciInfo_t *pci)
{
	int peer;

	CHECK_DEV(d);
	if (fake.group == 1)
		return NOT_SUPPORTED;
	if (pci == NULL || link >= FAKE_LINKS)
		return INVALID_ARGUMENT;
	if (fake.group == 0) {
		fill_pci(pci, FAKE_SWITCH_BUS + link % FAKE_NSWITCHES);
		return SUCCESS;
	}
	if ((peer = link_peer(d->index, link)) == -1)
		return NOT_SUPPORTED;
	fill_pci(pci, gpu_bus((unsigned)peer));
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
    int *level)
{
	CHECK_DEV(a);
	CHECK_DEV(b);
	if (level == NULL)
		return INVALID_ARGUMENT;
	if (a == b)
		*level = 0;			/* INTERNAL */
	else if (a->index / 2 == b->index / 2)
		*level = 10;			/* SINGLE: one switch */
	else if (a->index * 2 / fake.ngpus == b->index * 2 / fake.ngpus)
		*level = 40;			/* NODE */
	else
		*level = 50;			/* SYSTEM */
	return SUCCESS;
}

/* ---- what the health checks use ---- */

API nvmlReturn_t
nvmlEventSetCreate(nvmlEventSet_t *set)
{
	CHECK_INIT();
	/* One set at a time is all the agent needs. */
	if (set == NULL || fake.set_used)
		return INVALID_ARGUMENT;
	fake.set_used = 1;
	memset(fake.set.delivered, 0, sizeof(fake.set.delivered));
	*set = &fake.set;
	return SUCCESS;
}

API nvmlReturn_t
nvmlEventSetFree(nvmlEventSet_t set)
{
	CHECK_INIT();
	if (set != &fake.set || !fake.set_used)
		return INVALID_ARGUMENT;
	fake.set_used = 0;
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
    nvmlEventSet_t set)
{
	CHECK_DEV(d);
	if (set != &fake.set || !fake.set_used)
		return INVALID_ARGUMENT;
	if (types & ~(XID_EVENT | 0x3ULL))
		return NOT_SUPPORTED;
	d->events |= types;
	return SUCCESS;
}

/* The first XID not yet delivered whose GPU registered for it;
 * otherwise wait (at most 50 ms, to keep tests quick) and time out. */
API nvmlReturn_t
nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
    unsigned int timeout_ms)
{
	struct timespec ts;
	struct fake_gpu *g;
	int i;

	CHECK_INIT();
	if (set != &fake.set || !fake.set_used || data == NULL)
		return INVALID_ARGUMENT;
	for (i = 0; i < fake.nxid; i++) {
		if (set->delivered[i] || fake.xid_gpu[i] < 0 ||
		    (unsigned)fake.xid_gpu[i] >= fake.ngpus)
			continue;
		g = &fake.gpu[fake.xid_gpu[i]];
		if (!(g->events & XID_EVENT))
			continue;
		set->delivered[i] = 1;
		memset(data, 0, sizeof(*data));
		data->device = g;
		data->eventType = XID_EVENT;
		data->eventData = (unsigned long long)fake.xid[i];
		data->gpuInstanceId = 0xffffffffu;
		data->computeInstanceId = 0xffffffffu;
		return SUCCESS;
	}
	if (timeout_ms > 50)
		timeout_ms = 50;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)timeout_ms * 1000000;
	nanosleep(&ts, NULL);
	return TIMEOUT;
}

API nvmlReturn_t
nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
    unsigned long long *count)
{
	CHECK_DEV(d);
	if (count == NULL || type < 0 || type > 1 || counter < 0 ||
	    counter > 1)
		return INVALID_ARGUMENT;
	*count = type == 1 && (int)d->index == fake.ecc_gpu ? fake.ecc : 0;
	return SUCCESS;
}

API nvmlReturn_t
nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *temp)
{
	CHECK_DEV(d);
	if (temp == NULL || sensor != 0)
		return INVALID_ARGUMENT;
	*temp = (int)d->index == fake.temp_gpu ? fake.temp : 30 + d->index;
	return SUCCESS;
}
