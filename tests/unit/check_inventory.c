/* The node inventory (daemon/agent/inventory.c): simulated layouts, and
 * NVML through the fake library tests/fake/fake_nvml.c (its path comes
 * from the FAKE_NVML macro), including the functions the health checks
 * will use (daemon/agent/nvml.c). */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/inventory.h"
#include "daemon/agent/nvml.h"

static struct inventory inv;

static struct sim_gpus
sim_with(unsigned count, const char *nvlink)
{
	struct sim_gpus sim;

	inventory_sim_defaults(&sim);
	sim.count = count;
	sim.nics = count;
	snprintf(sim.nvlink, sizeof(sim.nvlink), "%s", nvlink);
	return sim;
}

/* "GPU-" then 8-4-4-4-12 lower-case hex digits. */
static int
uuid_well_formed(const char *u)
{
	static const char shape[] = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	size_t i;

	if (strlen(u) != sizeof(shape) - 1)
		return 0;
	for (i = 0; shape[i] != '\0'; i++) {
		if (shape[i] == 'x') {
			if (!isxdigit((unsigned char)u[i]) ||
			    isupper((unsigned char)u[i]))
				return 0;
		} else if (u[i] != shape[i]) {
			return 0;
		}
	}
	return 1;
}

/* ---- simulated ---- */

START_TEST(test_sim_defaults)
{
	struct sim_gpus sim;
	struct cerr err;
	char bus[32];
	unsigned i;

	inventory_sim_defaults(&sim);
	ck_assert_uint_eq(sim.count, 8);
	ck_assert_str_eq(sim.model, "NVIDIA H100 80GB HBM3");
	ck_assert_uint_eq(sim.memory_mb, 81559);
	ck_assert_str_eq(sim.nvlink, "all");
	ck_assert_uint_eq(sim.numa_nodes, 2);
	ck_assert_uint_eq(sim.nics, 8);
	ck_assert_uint_eq(sim.ncpus, 64);
	ck_assert_uint_eq(sim.memory_total_mb, 1024 * 1024);

	ck_assert_int_eq(inventory_simulated(&sim, "node01", &inv, &err), 0);
	ck_assert_str_eq(inv.source, "simulated");
	ck_assert_uint_eq(inv.ncpus, 64);
	ck_assert_uint_eq(inv.memory_mb, 1024 * 1024);
	ck_assert_uint_eq(inv.ngpus, 8);
	for (i = 0; i < 8; i++) {
		const struct gpu_info *g = &inv.gpus[i];

		ck_assert_uint_eq(g->index, i);
		ck_assert_str_eq(g->model, "NVIDIA H100 80GB HBM3");
		ck_assert_uint_eq(g->memory_mb, 81559);
		ck_assert_int_eq(g->numa_node, i < 4 ? 0 : 1);
		ck_assert_int_eq(g->pcie_switch, (int)i / 2);
		ck_assert_int_eq(g->nic, (int)i);
		ck_assert_int_eq(g->nvlink_domain, 0);
		ck_assert_uint_eq(g->nvlink_peers, 0xffu & ~(1u << i));
		ck_assert_msg(uuid_well_formed(g->uuid), "%s", g->uuid);
		snprintf(bus, sizeof(bus), "00000000:%02x:00.0", 0x18 + 3 * i);
		ck_assert_str_eq(g->pci_bus_id, bus);
	}
}
END_TEST

START_TEST(test_sim_quads)
{
	struct sim_gpus sim = sim_with(8, "quads");
	struct cerr err;
	unsigned i;

	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	for (i = 0; i < 8; i++) {
		uint64_t quad = i < 4 ? 0x0f : 0xf0;

		ck_assert_int_eq(inv.gpus[i].nvlink_domain, (int)i / 4);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, quad & ~(1u << i));
	}
	/* A last quad cut short by the count is a smaller domain. */
	sim = sim_with(6, "quads");
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	ck_assert_int_eq(inv.gpus[5].nvlink_domain, 1);
	ck_assert_uint_eq(inv.gpus[5].nvlink_peers, 1u << 4);
	ck_assert_uint_eq(inv.gpus[3].nvlink_peers, 0x07);
}
END_TEST

START_TEST(test_sim_pairs)
{
	struct sim_gpus sim = sim_with(5, "pairs");
	struct cerr err;
	unsigned i;

	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(inv.gpus[i].nvlink_domain, (int)i / 2);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, 1u << (i ^ 1));
	}
	/* The odd one out has nobody to pair with. */
	ck_assert_int_eq(inv.gpus[4].nvlink_domain, -1);
	ck_assert_uint_eq(inv.gpus[4].nvlink_peers, 0);
}
END_TEST

START_TEST(test_sim_none)
{
	struct sim_gpus sim = sim_with(8, "none");
	struct cerr err;
	unsigned i;

	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(inv.gpus[i].nvlink_domain, -1);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, 0);
	}
}
END_TEST

START_TEST(test_sim_splits)
{
	static const int numa3[8] = { 0, 0, 0, 1, 1, 1, 2, 2 };
	struct sim_gpus sim = sim_with(8, "all");
	struct cerr err;
	unsigned i;

	sim.numa_nodes = 3;
	sim.nics = 2;
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(inv.gpus[i].numa_node, numa3[i]);
		ck_assert_int_eq(inv.gpus[i].nic, i < 4 ? 0 : 1);
	}
	sim.nics = 0;
	sim.numa_nodes = 1;
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(inv.gpus[i].numa_node, 0);
		ck_assert_int_eq(inv.gpus[i].nic, -1);
	}
	/* A CPU-only node. */
	sim = sim_with(0, "all");
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	ck_assert_uint_eq(inv.ngpus, 0);
	ck_assert_uint_eq(inv.ncpus, 64);
}
END_TEST

START_TEST(test_sim_uuids)
{
	static struct inventory other;
	static char seen[100 * 8][INV_UUID_MAX];
	struct sim_gpus sim = sim_with(8, "all");
	struct cerr err;
	char node[16];
	unsigned n, i, j, k = 0;

	/* Stable: the same node gets the same UUIDs on every start. */
	ck_assert_int_eq(inventory_simulated(&sim, "gpu001", &inv, &err), 0);
	ck_assert_int_eq(inventory_simulated(&sim, "gpu001", &other, &err),
	    0);
	for (i = 0; i < 8; i++)
		ck_assert_str_eq(inv.gpus[i].uuid, other.gpus[i].uuid);
	/* Unique across GPUs and nodes, even for names one letter apart. */
	for (n = 0; n < 100; n++) {
		snprintf(node, sizeof(node), "gpu%03u", n);
		ck_assert_int_eq(inventory_simulated(&sim, node, &inv, &err),
		    0);
		for (i = 0; i < 8; i++) {
			ck_assert(uuid_well_formed(inv.gpus[i].uuid));
			memcpy(seen[k++], inv.gpus[i].uuid, INV_UUID_MAX);
		}
	}
	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++)
			ck_assert_str_ne(seen[i], seen[j]);
}
END_TEST

/* Named NICs (nics = mlx5_0:0,1 mlx5_1:2,3): each GPU's index and name
 * as listed, near its GPU; an unlisted GPU has none; a GPU past the
 * count is refused. */
START_TEST(test_sim_named_nics)
{
	struct sim_gpus sim = sim_with(4, "all");
	struct cerr err;

	ck_assert_int_eq(inventory_sim_nics(&sim, "mlx5_1:2-3  mlx5_0:0",
	    &err), 0);
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	ck_assert_int_eq(inv.gpus[0].nic, 1);
	ck_assert_str_eq(inv.gpus[0].nic_name, "mlx5_0");
	ck_assert(inv.gpus[0].nic_near);
	ck_assert_int_eq(inv.gpus[1].nic, -1);
	ck_assert_str_eq(inv.gpus[1].nic_name, "");
	ck_assert(!inv.gpus[1].nic_near);
	ck_assert_int_eq(inv.gpus[2].nic, 0);
	ck_assert_str_eq(inv.gpus[3].nic_name, "mlx5_1");
	/* Unnamed NICs stay unnamed. */
	sim = sim_with(4, "all");
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	ck_assert_int_eq(inv.gpus[3].nic, 3);
	ck_assert_str_eq(inv.gpus[3].nic_name, "");
	ck_assert(inv.gpus[3].nic_near);
	ck_assert_int_eq(inventory_sim_nics(&sim, "a:0 b:4", &err), 0);
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), -1);
	ck_assert_str_eq(err.text, "nics: NIC b names GPU 4, but there are 4 "
	    "GPUs");
	/* A bad list leaves sim as it was. */
	sim = sim_with(4, "all");
	ck_assert_int_eq(inventory_sim_nics(&sim, "a:0 a:1", &err), -1);
	ck_assert(!sim.nics_named);
	ck_assert_uint_eq(sim.nics, 4);
}
END_TEST

START_TEST(test_sim_refused)
{
	struct sim_gpus sim = sim_with(INV_MAX_GPUS, "all");
	struct cerr err;

	/* The largest count works, and its peer masks fill 64 bits. */
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), 0);
	ck_assert_uint_eq(inv.gpus[0].nvlink_peers, UINT64_MAX - 1);
	ck_assert_uint_eq(inv.gpus[63].nvlink_peers, UINT64_MAX >> 1);

	sim.count = INV_MAX_GPUS + 1;
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text,
	    "65 simulated GPUs: at most 64 are supported");

	sim = sim_with(8, "ring");
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_str_eq(err.text,
	    "unknown NVLink layout 'ring' (all, quads, pairs or none)");

	sim = sim_with(8, "all");
	ck_assert_int_eq(inventory_simulated(&sim, "", &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	sim.numa_nodes = 0;
	ck_assert_int_eq(inventory_simulated(&sim, "n", &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
}
END_TEST

/* ---- NVML, through the fake library ---- */

static void
fake_env(const char *gpus, const char *topo)
{
	setenv("FAKE_NVML_GPUS", gpus, 1);
	setenv("FAKE_NVML_TOPO", topo, 1);
	unsetenv("FAKE_NVML_MODEL");
	unsetenv("FAKE_NVML_FAIL_INIT");
	unsetenv("FAKE_NVML_XID");
	unsetenv("FAKE_NVML_ECC");
	unsetenv("FAKE_NVML_TEMP");
}

START_TEST(test_nvml_nvswitch)
{
	struct cerr err;
	char want[48];
	unsigned i;

	fake_env("8", "nvswitch");
	setenv("FAKE_NVML_MODEL", "NVIDIA H200", 1);
	ck_assert_msg(inventory_nvml(FAKE_NVML, &inv, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(inv.source, "nvml");
	ck_assert_uint_gt(inv.ncpus, 0);
	ck_assert_uint_gt(inv.memory_mb, 0);
	ck_assert_uint_eq(inv.ngpus, 8);
	for (i = 0; i < 8; i++) {
		const struct gpu_info *g = &inv.gpus[i];

		ck_assert_uint_eq(g->index, i);
		ck_assert_str_eq(g->model, "NVIDIA H200");
		ck_assert_uint_eq(g->memory_mb, 81559);
		snprintf(want, sizeof(want),
		    "GPU-fa4e0000-0000-4000-8000-%012x", i);
		ck_assert_str_eq(g->uuid, want);
		/* Lower case, whatever case NVML writes. */
		snprintf(want, sizeof(want), "0000fa4e:%02x:00.0",
		    0x18 + 3 * i);
		ck_assert_str_eq(g->pci_bus_id, want);
		ck_assert_int_eq(g->numa_node, i < 4 ? 0 : 1);
		ck_assert_int_eq(g->pcie_switch, (int)i / 2);
		ck_assert_int_eq(g->nvlink_domain, 0);
		ck_assert_uint_eq(g->nvlink_peers, 0xffu & ~(1u << i));
		ck_assert_int_eq(g->nic, -1);
	}
}
END_TEST

START_TEST(test_nvml_quads)
{
	struct cerr err;
	unsigned i;

	fake_env("8", "quads");
	ck_assert_msg(inventory_nvml(FAKE_NVML, &inv, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(inv.ngpus, 8);
	for (i = 0; i < 8; i++) {
		uint64_t quad = i < 4 ? 0x0f : 0xf0;

		ck_assert_int_eq(inv.gpus[i].nvlink_domain, (int)i / 4);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, quad & ~(1u << i));
	}
	fake_env("6", "pairs");
	ck_assert_int_eq(inventory_nvml(FAKE_NVML, &inv, &err), 0);
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(inv.gpus[i].nvlink_domain, (int)i / 2);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, 1u << (i ^ 1));
	}
}
END_TEST

START_TEST(test_nvml_none)
{
	struct cerr err;
	unsigned i;

	fake_env("4", "none");
	ck_assert_int_eq(inventory_nvml(FAKE_NVML, &inv, &err), 0);
	ck_assert_uint_eq(inv.ngpus, 4);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(inv.gpus[i].nvlink_domain, -1);
		ck_assert_uint_eq(inv.gpus[i].nvlink_peers, 0);
		ck_assert_int_eq(inv.gpus[i].pcie_switch, (int)i / 2);
	}
	/* A machine whose driver sees no GPU is not an error. */
	fake_env("0", "none");
	ck_assert_int_eq(inventory_nvml(FAKE_NVML, &inv, &err), 0);
	ck_assert_uint_eq(inv.ngpus, 0);
	ck_assert_str_eq(inv.source, "nvml");
}
END_TEST

START_TEST(test_nvml_init_fails)
{
	struct cerr err;

	fake_env("8", "nvswitch");
	setenv("FAKE_NVML_FAIL_INIT", "1", 1);
	ck_assert_int_eq(inventory_nvml(FAKE_NVML, &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_UNAVAILABLE);
	ck_assert_str_eq(err.text, "nvmlInit: Driver Not Loaded");
	ck_assert_uint_eq(inv.ngpus, 0);
}
END_TEST

START_TEST(test_nvml_no_library)
{
	struct cerr err;

	ck_assert_int_eq(inventory_nvml("/nonexistent/libnvidia-ml.so.1",
	    &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_UNAVAILABLE);
	ck_assert_msg(strncmp(err.text, "cannot load NVML: ", 18) == 0,
	    "%s", err.text);
	/* dlerror's own text: the path and why. */
	ck_assert_msg(strstr(err.text, "/nonexistent/libnvidia-ml.so.1") !=
	    NULL && strstr(err.text, "No such file") != NULL, "%s", err.text);
}
END_TEST

/* source = auto (the default): the GPUs NVML reports, or a refusal that
 * names the library and the sources to use instead. */
START_TEST(test_auto)
{
	struct cerr err;

	fake_env("4", "none");
	ck_assert_msg(inventory_auto(FAKE_NVML, &inv, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(inv.ngpus, 4);
	ck_assert_str_eq(inv.source, "nvml");
	/* A driver that sees no GPU: refused, not an empty node. */
	fake_env("0", "none");
	ck_assert_int_eq(inventory_auto(FAKE_NVML, &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_UNAVAILABLE);
	ck_assert_msg(strstr(err.text, "reports no GPU") != NULL &&
	    strstr(err.text, FAKE_NVML) != NULL &&
	    strstr(err.text, "'source = simulated'") != NULL &&
	    strstr(err.text, "'source = none'") != NULL, "%s", err.text);
	ck_assert_uint_eq(inv.ngpus, 0);
	/* No library at all (a server without NVIDIA's driver). */
	ck_assert_int_eq(inventory_auto("/nonexistent/libnvidia-ml.so.1",
	    &inv, &err), -1);
	ck_assert_msg(strstr(err.text, "no GPUs found through NVML "
	    "(/nonexistent/libnvidia-ml.so.1): cannot load NVML") != NULL &&
	    strstr(err.text, "'source = simulated'") != NULL, "%s",
	    err.text);
	/* NULL: the default library's name is in the text. */
	if (inventory_auto(NULL, &inv, &err) == -1)
		ck_assert_msg(strstr(err.text, "libnvidia-ml.so.1") != NULL,
		    "%s", err.text);
	ck_assert_int_eq(inventory_none(&inv), 0);
	ck_assert_uint_eq(inv.ngpus, 0);
	ck_assert_str_eq(inv.source, "none");
	ck_assert_uint_gt(inv.ncpus, 0);
}
END_TEST

START_TEST(test_nvml_not_nvml)
{
	struct cerr err;

	/* A library that loads but is not NVML. */
	ck_assert_int_eq(inventory_nvml("libm.so.6", &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_UNAVAILABLE);
	ck_assert_msg(strncmp(err.text,
	    "libm.so.6 is not a usable NVML (no nvmlInit_v2): ", 49) == 0,
	    "%s", err.text);
}
END_TEST

START_TEST(test_nvml_too_many)
{
	struct cerr err;

	fake_env("65", "none");
	ck_assert_int_eq(inventory_nvml(FAKE_NVML, &inv, &err), -1);
	ck_assert_int_eq(err.code, ERR_UNAVAILABLE);
	ck_assert_str_eq(err.text,
	    "NVML reports 65 GPUs: at most 64 are supported");
}
END_TEST

/* The functions the health checks will use resolve, and the layouts of
 * nvml.h survive a round trip through the library. */
START_TEST(test_nvml_health_calls)
{
	struct nvml *nv;
	struct nvml_event_data ev;
	nvml_event_set_t set;
	nvml_device_t dev[4];
	unsigned long long ecc;
	unsigned int temp, count, i;
	struct cerr err;

	fake_env("4", "nvswitch");
	setenv("FAKE_NVML_XID", "2:79", 1);
	setenv("FAKE_NVML_ECC", "1:3", 1);
	setenv("FAKE_NVML_TEMP", "3:91", 1);
	ck_assert_ptr_nonnull(nv = nvml_create(FAKE_NVML, &err));
	ck_assert_ptr_nonnull(nv->nvmlEventSetCreate);
	ck_assert_ptr_nonnull(nv->nvmlDeviceRegisterEvents);
	ck_assert_ptr_nonnull(nv->nvmlEventSetWait_v2);
	ck_assert_ptr_nonnull(nv->nvmlEventSetFree);
	ck_assert_ptr_nonnull(nv->nvmlDeviceGetTotalEccErrors);
	ck_assert_ptr_nonnull(nv->nvmlDeviceGetTemperature);

	ck_assert_int_eq(nv->nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	ck_assert_uint_eq(count, 4);
	ck_assert_int_eq(nv->nvmlEventSetCreate(&set), NVML_SUCCESS);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(nv->nvmlDeviceGetHandleByIndex_v2(i, &dev[i]),
		    NVML_SUCCESS);
		ck_assert_int_eq(nv->nvmlDeviceRegisterEvents(dev[i],
		    NVML_EVENT_TYPE_XID_CRITICAL_ERROR, set), NVML_SUCCESS);
	}
	memset(&ev, 0xa5, sizeof(ev));
	ck_assert_int_eq(nv->nvmlEventSetWait_v2(set, &ev, 1000),
	    NVML_SUCCESS);
	ck_assert_ptr_eq(ev.device, dev[2]);
	ck_assert_uint_eq(ev.eventType, NVML_EVENT_TYPE_XID_CRITICAL_ERROR);
	ck_assert_uint_eq(ev.eventData, 79);
	ck_assert_uint_eq(ev.gpuInstanceId, 0xffffffffu);
	ck_assert_uint_eq(ev.computeInstanceId, 0xffffffffu);
	ck_assert_int_eq(nv->nvmlEventSetWait_v2(set, &ev, 10),
	    NVML_ERROR_TIMEOUT);
	ck_assert_str_eq(nvml_strerror(nv, NVML_ERROR_TIMEOUT), "Timeout");
	ck_assert_int_eq(nv->nvmlEventSetFree(set), NVML_SUCCESS);

	ck_assert_int_eq(nv->nvmlDeviceGetTotalEccErrors(dev[1],
	    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc),
	    NVML_SUCCESS);
	ck_assert_uint_eq(ecc, 3);
	ck_assert_int_eq(nv->nvmlDeviceGetTotalEccErrors(dev[0],
	    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc),
	    NVML_SUCCESS);
	ck_assert_uint_eq(ecc, 0);
	ck_assert_int_eq(nv->nvmlDeviceGetTemperature(dev[3],
	    NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
	ck_assert_uint_eq(temp, 91);
	nvml_destroy(nv);
}
END_TEST

/* The fake refuses what NVML refuses, so the agent's error paths are
 * exercised as they would be on a real machine. */
START_TEST(test_fake_is_strict)
{
	struct nvml *nv;
	nvml_device_t dev;
	unsigned int count;
	char name[8];
	int active;
	struct cerr err;

	fake_env("2", "none");
	ck_assert_ptr_nonnull(nv = nvml_create(FAKE_NVML, &err));
	ck_assert_int_eq(nv->nvmlDeviceGetHandleByIndex_v2(2, &dev),
	    NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(nv->nvmlDeviceGetHandleByIndex_v2(0, &dev),
	    NVML_SUCCESS);
	ck_assert_int_eq(nv->nvmlDeviceGetName(dev, name, sizeof(name)),
	    NVML_ERROR_INSUFFICIENT_SIZE);
	ck_assert_int_eq(nv->nvmlDeviceGetNvLinkState(dev, 0, &active),
	    NVML_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(nv->nvmlDeviceGetName((nvml_device_t)name, name,
	    sizeof(name)), NVML_ERROR_INVALID_ARGUMENT);
	/* After the last shutdown, calls fail. */
	ck_assert_int_eq(nv->nvmlShutdown(), NVML_SUCCESS);
	ck_assert_int_eq(nv->nvmlDeviceGetCount_v2(&count),
	    NVML_ERROR_UNINITIALIZED);
	nv->initialized = 0;
	nvml_destroy(nv);
}
END_TEST

/* The sized copies (lib/inventory.c): the header and the used GPUs and
 * entries, nothing past; more than INV_MAX_GPUS is refused. */
START_TEST(test_sized_copies)
{
	static struct inventory one;
	static struct node_health h;
	struct inventory *di;
	struct node_health *dh;

	ck_assert_uint_eq(inventory_size(0), offsetof(struct inventory, gpus));
	ck_assert_uint_eq(inventory_size(8), inventory_size(0) +
	    8 * sizeof(struct gpu_info));
	ck_assert_uint_le(inventory_size(INV_MAX_GPUS),
	    sizeof(struct inventory));
	ck_assert_uint_eq(inventory_size(INV_MAX_GPUS + 1),
	    inventory_size(INV_MAX_GPUS));
	ck_assert_uint_eq(inventory_health_size(1),
	    offsetof(struct node_health, gpus) + sizeof(struct gpu_health));
	memset(&one, 0, sizeof(one));
	one.ngpus = 3;
	one.ncpus = 12;
	one.nfeatures = 1;
	snprintf(one.features[0], sizeof(one.features[0]), "fp64");
	snprintf(one.gpus[2].uuid, sizeof(one.gpus[2].uuid), "GPU-2");
	ck_assert_ptr_nonnull(di = inventory_dup(&one));
	ck_assert_int_eq(memcmp(di, &one, inventory_size(3)), 0);
	ck_assert_str_eq(di->gpus[2].uuid, "GPU-2");
	ck_assert_str_eq(di->features[0], "fp64");
	free(di);
	memset(&h, 0, sizeof(h));
	h.health = HEALTH_DEGRADED;
	h.checked_ms = 77;
	h.ngpus = 1;
	snprintf(h.gpus[0].reason, sizeof(h.gpus[0].reason), "ecc");
	ck_assert_ptr_nonnull(dh = inventory_health_dup(&h));
	ck_assert_int_eq(dh->checked_ms, 77);
	ck_assert_str_eq(dh->gpus[0].reason, "ecc");
	free(dh);
	one.ngpus = INV_MAX_GPUS + 1;
	errno = 0;
	ck_assert_ptr_null(inventory_dup(&one));
	ck_assert_int_eq(errno, EINVAL);
	h.ngpus = INV_MAX_GPUS + 1;
	errno = 0;
	ck_assert_ptr_null(inventory_health_dup(&h));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static Suite *
inventory_suite(void)
{
	Suite *s = suite_create("inventory");
	TCase *tc;

	tc = tcase_create("simulated");
	tcase_add_test(tc, test_sim_defaults);
	tcase_add_test(tc, test_sim_quads);
	tcase_add_test(tc, test_sim_pairs);
	tcase_add_test(tc, test_sim_none);
	tcase_add_test(tc, test_sim_splits);
	tcase_add_test(tc, test_sim_uuids);
	tcase_add_test(tc, test_sim_refused);
	tcase_add_test(tc, test_sim_named_nics);
	suite_add_tcase(s, tc);

	tc = tcase_create("nvml");
	tcase_add_test(tc, test_nvml_nvswitch);
	tcase_add_test(tc, test_nvml_quads);
	tcase_add_test(tc, test_nvml_none);
	tcase_add_test(tc, test_nvml_init_fails);
	tcase_add_test(tc, test_nvml_no_library);
	tcase_add_test(tc, test_nvml_not_nvml);
	tcase_add_test(tc, test_nvml_too_many);
	tcase_add_test(tc, test_nvml_health_calls);
	tcase_add_test(tc, test_fake_is_strict);
	tcase_add_test(tc, test_auto);
	tcase_add_test(tc, test_sized_copies);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(inventory_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
