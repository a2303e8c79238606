/* The node's inventory, simulated or read through NVML.
 *
 * The simulated inventory lets one machine run many agents that look like
 * real 8-GPU servers, so its shape follows an HGX board: two NUMA nodes,
 * a PCIe switch per pair of GPUs, NICs spread evenly, and NVLink either
 * through NVSwitches ("all") or as direct links within groups.
 *
 * From NVML, the NVLink picture is built from each active link's remote
 * end: a remote that is one of our GPUs is a direct peer; a remote that
 * is not (an NVSwitch) puts the GPU in the node's one NVSwitch domain.
 * GPUs without switches are grouped into domains of GPUs all linked to
 * each other (a quad, a pair), greedily in index order. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/hwtopo.h"
#include "daemon/agent/inventory.h"
#include "daemon/agent/nvml.h"
#include "lib/fnv.h"

#define SIM_DEFAULT_COUNT 8
#define SIM_DEFAULT_MODEL "NVIDIA H100 80GB HBM3"
#define SIM_DEFAULT_MEMORY_MB 81559
#define SIM_DEFAULT_NUMA 2
#define SIM_DEFAULT_CPUS 64
#define SIM_DEFAULT_MEMORY_TOTAL_MB (1024ULL * 1024)

/* Simulated PCI buses: spaced as on real boards and within 00..ff for
 * INV_MAX_GPUS GPUs. */
#define SIM_BUS_FIRST 0x18
#define SIM_BUS_STEP 3

void
inventory_sim_defaults(struct sim_gpus *sim)
{
	memset(sim, 0, sizeof(*sim));
	sim->count = SIM_DEFAULT_COUNT;
	snprintf(sim->model, sizeof(sim->model), "%s", SIM_DEFAULT_MODEL);
	sim->memory_mb = SIM_DEFAULT_MEMORY_MB;
	snprintf(sim->nvlink, sizeof(sim->nvlink), "all");
	sim->numa_nodes = SIM_DEFAULT_NUMA;
	sim->nics = SIM_DEFAULT_COUNT;
	sim->nics_named = false;
	sim->ncpus = SIM_DEFAULT_CPUS;
	sim->memory_total_mb = SIM_DEFAULT_MEMORY_TOTAL_MB;
}

/* One GPU index or range "N" / "N-M" of s[0..len) into *gpus; -1 with
 * err. */
static int
inv_sim_range(const char *nic, const char *s, size_t len, uint64_t *gpus,
    struct cerr *err)
{
	unsigned long lo, hi;
	char buf[24], *end;

	if (len == 0 || len >= sizeof(buf))
		return cerr_set(err, ERR_INVALID, "NIC %s: '%.*s' is not a GPU "
		    "index or range", nic, (int)(len > 20 ? 20 : len), s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!isdigit((unsigned char)buf[0]))
		goto bad;
	lo = hi = strtoul(buf, &end, 10);
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			goto bad;
		hi = strtoul(end + 1, &end, 10);
	}
	if (*end != '\0')
		goto bad;
	if (lo > hi || hi >= INV_MAX_GPUS)
		return cerr_set(err, ERR_INVALID, "NIC %s: GPUs '%s' out of "
		    "range (0 to %d, low to high)", nic, buf,
		    INV_MAX_GPUS - 1);
	for (; lo <= hi; lo++)
		*gpus |= 1ULL << lo;
	return 0;
bad:
	return cerr_set(err, ERR_INVALID, "NIC %s: '%s' is not a GPU index "
	    "or range", nic, buf);
}

int
inventory_sim_nics(struct sim_gpus *sim, const char *value,
    struct cerr *err)
{
	char names[INV_MAX_GPUS][INV_NIC_NAME_MAX];
	int of[INV_MAX_GPUS];
	const char *p = value, *tok, *colon, *q, *c;
	uint64_t gpus, all = 0;
	size_t len, nlen;
	unsigned n = 0, i;

	for (i = 0; i < INV_MAX_GPUS; i++)
		of[i] = -1;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		if ((colon = memchr(tok, ':', len)) == NULL)
			return cerr_set(err, ERR_INVALID, "'%.*s' is not "
			    "NAME:GPUS (e.g. mlx5_0:0-3)",
			    (int)(len > 40 ? 40 : len), tok);
		nlen = (size_t)(colon - tok);
		if (nlen == 0 || nlen >= INV_NIC_NAME_MAX)
			return cerr_set(err, ERR_INVALID, "'%.*s': a NIC name "
			    "has 1 to %d characters", (int)(len > 40 ? 40 :
			    len), tok, INV_NIC_NAME_MAX - 1);
		if (n == INV_MAX_GPUS)
			return cerr_set(err, ERR_INVALID, "more than %d NICs",
			    INV_MAX_GPUS);
		memcpy(names[n], tok, nlen);
		names[n][nlen] = '\0';
		/* ':' is a name character too (inventory_nic_name_ok), but
		 * here it is the separator. */
		if (!inventory_nic_name_ok(names[n]))
			return cerr_set(err, ERR_INVALID, "'%s' is not a NIC "
			    "name (letters, digits, '.', '_', '-')", names[n]);
		for (i = 0; i < n; i++)
			if (strcmp(names[i], names[n]) == 0)
				return cerr_set(err, ERR_INVALID, "NIC %s is "
				    "given twice", names[n]);
		gpus = 0;
		for (q = colon + 1; q <= p; q = c + 1) {
			for (c = q; c < p && *c != ','; c++)
				;
			if (inv_sim_range(names[n], q, (size_t)(c - q), &gpus,
			    err) == -1)
				return -1;
		}
		if (gpus & all)
			return cerr_set(err, ERR_INVALID, "NIC %s: GPU %d has "
			    "a NIC already", names[n],
			    __builtin_ctzll(gpus & all));
		all |= gpus;
		for (i = 0; i < INV_MAX_GPUS; i++)
			if (gpus & (1ULL << i))
				of[i] = (int)n;
		n++;
	}
	if (n == 0)
		return cerr_set(err, ERR_INVALID, "no NIC named (a number, "
		    "or NAME:GPUS ...)");
	memcpy(sim->nic_names, names, sizeof(names[0]) * n);
	memcpy(sim->nic_of, of, sizeof(of));
	sim->nics = n;
	sim->nics_named = true;
	return 0;
}

/* A final mix (splitmix64's), so that node names differing in one
 * letter give UUIDs that differ everywhere, as real ones do. */
static uint64_t
inv_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the node name and the
 * index: the same on every start of the node's agent, and different
 * from every other node's (two 64-bit hashes with different seeds). */
static void
inv_sim_uuid(const char *node, unsigned index, char *buf, size_t len)
{
	unsigned char idx[4] = { (unsigned char)(index >> 24),
		(unsigned char)(index >> 16), (unsigned char)(index >> 8),
		(unsigned char)index };
	uint64_t a, b;

	a = fnv64(FNV64_BASIS, node, strlen(node) + 1);
	b = fnv64(0x84222325cbf29ce4ULL, "cohort", 6);
	b = fnv64(b, node, strlen(node) + 1);
	a = inv_mix(fnv64(a, idx, sizeof(idx)));
	b = inv_mix(fnv64(b, idx, sizeof(idx)));
	snprintf(buf, len, "GPU-%08x-%04x-%04x-%04x-%012llx",
	    (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
	    (unsigned)a & 0xffff, (unsigned)(b >> 48),
	    (unsigned long long)(b & 0xffffffffffffULL));
}

/* Group size of a simulated NVLink layout: 0 for "all" (one NVSwitch
 * domain), 1 for "none"; -1 for an unknown name. */
static int
inv_sim_group(const char *layout)
{
	if (strcmp(layout, "all") == 0)
		return 0;
	if (strcmp(layout, "quads") == 0)
		return 4;
	if (strcmp(layout, "pairs") == 0)
		return 2;
	if (strcmp(layout, "none") == 0)
		return 1;
	return -1;
}

int
inventory_simulated(const struct sim_gpus *sim, const char *node,
    struct inventory *inv, struct cerr *err)
{
	struct gpu_info *g;
	uint64_t all;
	unsigned i, first, last, j;
	int group;

	if (node == NULL || node[0] == '\0')
		return cerr_set(err, ERR_INVALID,
		    "simulated GPUs need a node name");
	if (sim->count > INV_MAX_GPUS)
		return cerr_set(err, ERR_INVALID,
		    "%u simulated GPUs: at most %d are supported", sim->count,
		    INV_MAX_GPUS);
	if ((group = inv_sim_group(sim->nvlink)) == -1)
		return cerr_set(err, ERR_INVALID,
		    "unknown NVLink layout '%.16s' (all, quads, pairs or none)",
		    sim->nvlink);
	if (sim->model[0] == '\0' || memchr(sim->model, '\0',
	    sizeof(sim->model)) == NULL)
		return cerr_set(err, ERR_INVALID,
		    "simulated GPUs need a model name");
	if (sim->count > 0 && (sim->memory_mb == 0 || sim->numa_nodes == 0))
		return cerr_set(err, ERR_INVALID,
		    "simulated GPUs need memory and at least one NUMA node");
	if (sim->ncpus == 0 || sim->memory_total_mb == 0)
		return cerr_set(err, ERR_INVALID,
		    "a simulated node needs CPUs and memory");
	if (sim->nics_named)
		for (i = sim->count; i < INV_MAX_GPUS; i++)
			if (sim->nic_of[i] != -1)
				return cerr_set(err, ERR_INVALID,
				    "nics: NIC %s names GPU %u, but there are "
				    "%u GPUs", sim->nic_names[sim->nic_of[i]],
				    i, sim->count);

	memset(inv, 0, sizeof(*inv));
	snprintf(inv->source, sizeof(inv->source), "simulated");
	inv->ncpus = sim->ncpus;
	inv->memory_mb = sim->memory_total_mb;
	inv->ngpus = sim->count;
	all = sim->count == INV_MAX_GPUS ? UINT64_MAX :
	    (1ULL << sim->count) - 1;
	for (i = 0; i < sim->count; i++) {
		g = &inv->gpus[i];
		g->index = i;
		inv_sim_uuid(node, i, g->uuid, sizeof(g->uuid));
		snprintf(g->model, sizeof(g->model), "%s", sim->model);
		g->memory_mb = sim->memory_mb;
		/* Even splits: the first count/n GPUs on the first NUMA node
		 * (or NIC), and so on; uneven counts give the remainder to
		 * the later ones. */
		g->numa_node = (int)((uint64_t)i * sim->numa_nodes /
		    sim->count);
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id),
		    "00000000:%02x:00.0", SIM_BUS_FIRST + SIM_BUS_STEP * i);
		g->pcie_switch = (int)(i / 2);
		if (sim->nics_named) {
			g->nic = sim->nic_of[i];
			if (g->nic >= 0)
				snprintf(g->nic_name, sizeof(g->nic_name),
				    "%s", sim->nic_names[g->nic]);
		} else {
			g->nic = sim->nics == 0 ? -1 :
			    (int)((uint64_t)i * sim->nics / sim->count);
		}
		/* A simulated NIC sits on its GPUs' switch, as on an HGX
		 * board. */
		g->nic_near = g->nic >= 0;
		if (group == 0) {
			g->nvlink_domain = 0;
			g->nvlink_peers = all & ~(1ULL << i);
		} else if (group == 1) {
			g->nvlink_domain = -1;
			g->nvlink_peers = 0;
		} else {
			/* A last group cut short by the count is still a
			 * domain, of fewer GPUs. */
			first = i - i % (unsigned)group;
			last = first + (unsigned)group;
			if (last > sim->count)
				last = sim->count;
			g->nvlink_domain = (int)(i / (unsigned)group);
			for (j = first; j < last; j++)
				if (j != i)
					g->nvlink_peers |= 1ULL << j;
			if (g->nvlink_peers == 0)
				g->nvlink_domain = -1;
		}
	}
	return 0;
}

/* ---- NVML ---- */

/* The NUMA node the kernel puts the device on: the CPU side of it, which
 * is what placement wants. On coherent platforms (Grace Hopper) NVML's
 * own NUMA id names the GPU's memory node instead, so the kernel is
 * asked first and NVML only when the kernel does not know (-1, as on a
 * single-node machine, or no such device, as with the fake NVML). */
static int
inv_numa_node(struct nvml *nv, nvml_device_t dev,
    const struct nvml_pci_info *pci)
{
	char path[96];
	FILE *fp;
	unsigned int node;
	int v = -1;

	snprintf(path, sizeof(path),
	    "/sys/bus/pci/devices/%04x:%02x:%02x.0/numa_node",
	    pci->domain, pci->bus, pci->device);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fscanf(fp, "%d", &v) != 1)
			v = -1;
		fclose(fp);
	}
	if (v >= 0)
		return v;
	if (nv->nvmlDeviceGetNumaNodeId != NULL &&
	    nv->nvmlDeviceGetNumaNodeId(dev, &node) == NVML_SUCCESS &&
	    node < 1024)
		return (int)node;
	return -1;
}

/* Index of the GPU at the remote end of a link, or -1 (not a GPU of this
 * node: an NVSwitch). */
static int
inv_gpu_at(const struct nvml_pci_info *pci, unsigned n,
    const struct nvml_pci_info *remote)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (pci[i].domain == remote->domain &&
		    pci[i].bus == remote->bus &&
		    pci[i].device == remote->device)
			return (int)i;
	}
	return -1;
}

/* Read GPU i's active links: direct peers into *peers, and whether any
 * link ends at an NVSwitch. A GPU without NVLink answers NOT_SUPPORTED;
 * asking past its last link, INVALID_ARGUMENT: both end the walk. */
static void
inv_links(struct nvml *nv, nvml_device_t dev, unsigned i,
    const struct nvml_pci_info *pci, unsigned n, uint64_t *peers,
    int *nvswitch)
{
	struct nvml_pci_info remote;
	unsigned link;
	int active, j;
	nvml_return_t rc;

	*peers = 0;
	*nvswitch = 0;
	for (link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
		active = NVML_FEATURE_DISABLED;
		rc = nv->nvmlDeviceGetNvLinkState(dev, link, &active);
		if (rc == NVML_ERROR_NOT_SUPPORTED ||
		    rc == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (rc != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
			continue;
		memset(&remote, 0, sizeof(remote));
		if (nv->nvmlDeviceGetNvLinkRemotePciInfo_v2(dev, link,
		    &remote) != NVML_SUCCESS)
			continue;
		if ((j = inv_gpu_at(pci, n, &remote)) == -1)
			*nvswitch = 1;
		else if ((unsigned)j != i)
			*peers |= 1ULL << j;
	}
}

/* NVLink domains from the links: see the comment at the top. */
static void
inv_domains(struct inventory *inv, uint64_t switched)
{
	struct gpu_info *g = inv->gpus;
	uint64_t members;
	unsigned n = inv->ngpus, i, j, m;
	int next = 0, all;

	/* Links are symmetric; one side failing to answer must not make
	 * the other side's view lopsided. */
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (g[i].nvlink_peers & (1ULL << j))
				g[j].nvlink_peers |= 1ULL << i;
	for (i = 0; i < n; i++)
		g[i].nvlink_domain = -1;
	if (switched != 0) {
		for (i = 0; i < n; i++) {
			if (!(switched & (1ULL << i)))
				continue;
			g[i].nvlink_domain = next;
			g[i].nvlink_peers |= switched & ~(1ULL << i);
		}
		next++;
	}
	for (i = 0; i < n; i++) {
		if (g[i].nvlink_domain != -1 || g[i].nvlink_peers == 0)
			continue;
		members = 1ULL << i;
		for (j = i + 1; j < n; j++) {
			if (g[j].nvlink_domain != -1 ||
			    (switched & (1ULL << j)))
				continue;
			all = 1;
			for (m = 0; m < n && all; m++)
				if ((members & (1ULL << m)) &&
				    !(g[m].nvlink_peers & (1ULL << j)))
					all = 0;
			if (all)
				members |= 1ULL << j;
		}
		/* A GPU linked only to GPUs already taken by other domains
		 * keeps its peers but belongs to no domain. */
		if (members == (1ULL << i))
			continue;
		for (m = 0; m < n; m++)
			if (members & (1ULL << m))
				g[m].nvlink_domain = next;
		next++;
	}
}

/* PCIe switches: GPUs whose common ancestor is at most a PCIe switch
 * hierarchy (NVML_TOPOLOGY_MULTIPLE: no host bridge in between) share a
 * switch id. A GPU that shares none gets an id of its own, as it hangs
 * off a root port or a switch of its own; we cannot tell which, and
 * placement only compares ids. When NVML cannot answer at all, -1. */
static void
inv_switches(struct nvml *nv, nvml_device_t *dev, struct inventory *inv)
{
	struct gpu_info *g = inv->gpus;
	unsigned n = inv->ngpus, i, j;
	int level, next = 0, answered = 0;

	for (i = 0; i < n; i++)
		g[i].pcie_switch = -1;
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (nv->nvmlDeviceGetTopologyCommonAncestor(dev[i],
			    dev[j], &level) != NVML_SUCCESS)
				continue;
			answered = 1;
			if (level > NVML_TOPOLOGY_MULTIPLE)
				continue;
			if (g[i].pcie_switch == -1)
				g[i].pcie_switch = next++;
			g[j].pcie_switch = g[i].pcie_switch;
		}
	}
	if (!answered && n > 1) {
		for (i = 0; i < n; i++)
			g[i].pcie_switch = -1;
		return;
	}
	for (i = 0; i < n; i++)
		if (g[i].pcie_switch == -1)
			g[i].pcie_switch = next++;
}

/* CPUs and memory of this machine. */
static void
inv_host(struct inventory *inv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);

	inv->ncpus = cpus > 0 ? (unsigned)cpus : 1;
	inv->memory_mb = pages > 0 && psize > 0 ?
	    (uint64_t)pages * (uint64_t)psize / (1024 * 1024) : 0;
}

/* One GPU's own facts. */
static int
inv_nvml_gpu(struct nvml *nv, nvml_device_t dev, unsigned i,
    struct gpu_info *g, struct nvml_pci_info *pci, struct cerr *err)
{
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	struct nvml_memory mem;
	const char *call;
	size_t k;
	nvml_return_t rc;

	memset(&mem, 0, sizeof(mem));
	memset(pci, 0, sizeof(*pci));
	call = "nvmlDeviceGetName";
	if ((rc = nv->nvmlDeviceGetName(dev, name, sizeof(name))) !=
	    NVML_SUCCESS)
		goto fail;
	call = "nvmlDeviceGetUUID";
	if ((rc = nv->nvmlDeviceGetUUID(dev, uuid, sizeof(uuid))) !=
	    NVML_SUCCESS)
		goto fail;
	call = "nvmlDeviceGetMemoryInfo";
	if ((rc = nv->nvmlDeviceGetMemoryInfo(dev, &mem)) !=
	    NVML_SUCCESS)
		goto fail;
	call = "nvmlDeviceGetPciInfo";
	if ((rc = nv->nvmlDeviceGetPciInfo_v3(dev, pci)) !=
	    NVML_SUCCESS)
		goto fail;
	/* The library fills fixed buffers; make sure of the ends before
	 * copying. */
	name[sizeof(name) - 1] = '\0';
	uuid[sizeof(uuid) - 1] = '\0';
	pci->busId[sizeof(pci->busId) - 1] = '\0';
	if (strlen(uuid) >= sizeof(g->uuid))
		return cerr_set(err, ERR_UNAVAILABLE,
		    "GPU %u: UUID '%.96s' is too long", i, uuid);

	g->index = i;
	snprintf(g->model, sizeof(g->model), "%s", name);
	snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
	g->memory_mb = mem.total / (1024 * 1024);
	/* Lower case, as the kernel writes bus ids (and as the simulated
	 * inventory does), so ids from both sources compare equal. */
	for (k = 0; pci->busId[k] != '\0' && k < sizeof(g->pci_bus_id) - 1;
	    k++)
		g->pci_bus_id[k] = (char)tolower((unsigned char)pci->busId[k]);
	g->pci_bus_id[k] = '\0';
	g->nic = -1;
	return 0;

fail:
	return cerr_set(err, ERR_UNAVAILABLE, "%s (GPU %u): %s", call, i,
	    nvml_strerror(nv, rc));
}

int
inventory_nvml(const char *libpath, struct inventory *inv,
    struct cerr *err)
{
	struct nvml *nv;
	struct nvml_pci_info pci[INV_MAX_GPUS];
	nvml_device_t dev[INV_MAX_GPUS];
	uint64_t switched = 0;
	unsigned n, i;
	int nvswitch;
	nvml_return_t rc;

	if ((nv = nvml_create(libpath, err)) == NULL)
		return -1;
	memset(inv, 0, sizeof(*inv));
	if ((rc = nv->nvmlDeviceGetCount_v2(&n)) != NVML_SUCCESS) {
		cerr_set(err, ERR_UNAVAILABLE, "nvmlDeviceGetCount: %s",
		    nvml_strerror(nv, rc));
		goto fail;
	}
	if (n > INV_MAX_GPUS) {
		cerr_set(err, ERR_UNAVAILABLE,
		    "NVML reports %u GPUs: at most %d are supported", n,
		    INV_MAX_GPUS);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if ((rc = nv->nvmlDeviceGetHandleByIndex_v2(i, &dev[i])) !=
		    NVML_SUCCESS) {
			cerr_set(err, ERR_UNAVAILABLE,
			    "nvmlDeviceGetHandleByIndex (GPU %u): %s", i,
			    nvml_strerror(nv, rc));
			goto fail;
		}
		if (inv_nvml_gpu(nv, dev[i], i, &inv->gpus[i], &pci[i],
		    err) == -1)
			goto fail;
		inv->gpus[i].numa_node = inv_numa_node(nv, dev[i], &pci[i]);
	}
	inv->ngpus = n;
	for (i = 0; i < n; i++) {
		inv_links(nv, dev[i], i, pci, n, &inv->gpus[i].nvlink_peers,
		    &nvswitch);
		if (nvswitch)
			switched |= 1ULL << i;
	}
	inv_domains(inv, switched);
	inv_switches(nv, dev, inv);
	nvml_destroy(nv);

	snprintf(inv->source, sizeof(inv->source), "nvml");
	inv_host(inv);
	return 0;

fail:
	nvml_destroy(nv);
	memset(inv, 0, sizeof(*inv));
	return -1;
}

int
inventory_auto(const char *libpath, struct inventory *inv,
    struct cerr *err)
{
	const char *lib = libpath != NULL ? libpath : "libnvidia-ml.so.1";
	struct cerr why;

	if (inventory_nvml(libpath, inv, &why) == -1)
		return cerr_set(err, ERR_UNAVAILABLE, "source = auto: no GPUs "
		    "found through NVML (%s): %s; on a GPU server install "
		    "NVIDIA's driver (or set nvml_library), for testing set "
		    "'source = simulated', for a CPU-only node 'source = none' "
		    "in [gpu]", lib, why.text);
	if (inv->ngpus == 0) {
		memset(inv, 0, sizeof(*inv));
		return cerr_set(err, ERR_UNAVAILABLE, "source = auto: NVML "
		    "(%s) reports no GPU; for testing set 'source = "
		    "simulated', for a CPU-only node 'source = none' in [gpu]",
		    lib);
	}
	snprintf(inv->source, sizeof(inv->source), "nvml");
	return 0;
}

int
inventory_nics(struct inventory *inv, const char *xml, struct cerr *err)
{
	return hwtopo_nics(inv, xml, err);
}

int
inventory_none(struct inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	snprintf(inv->source, sizeof(inv->source), "none");
	inv_host(inv);
	return 0;
}
