/* Each GPU's nearest NIC through hwloc (daemon/agent/hwtopo.c), on
 * topologies saved as XML rather than this machine's:
 * tests/unit/data/hwloc-dgx.xml (two PCIe switches with two GPUs and one
 * mlx5 each, a storage NIC and an Ethernet port elsewhere, a fifth GPU on
 * a root port of its own), variants of it, and a switch holding two GPUs
 * and two NICs.
 * The fixture is hand-made hwloc 2 XML: two packages, each one NUMA node
 * and a PCIe switch with two GPUs and one mlx5 NIC; package 0 also has a
 * storage NIC (mlx5_2) and an Ethernet port on a host bridge of their
 * own, and package 1 a fifth GPU on a root port of its own. GPU bus ids
 * are those of the simulated inventory (0x18 + 3 i). It holds no XML
 * comment: hwloc's built-in parser, used where libhwloc-plugins (its
 * libxml2 backend) is not installed, refuses one ("Failed to parse XML
 * input with the minimalistic parser"). t790-rails uses it too. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/hwtopo.h"
#include "daemon/agent/inventory.h"

#define DGX TOP_SRCDIR "/tests/unit/data/hwloc-dgx.xml"

static struct inventory inv;
static char tmpxml[PATH_MAX];

/* GPUs at the given bus ids, nothing else known. */
static void
gpus_at(const char *const *bus, unsigned n)
{
	unsigned i;

	memset(&inv, 0, sizeof(inv));
	inv.ngpus = n;
	for (i = 0; i < n; i++) {
		inv.gpus[i].index = i;
		snprintf(inv.gpus[i].pci_bus_id,
		    sizeof(inv.gpus[i].pci_bus_id), "%s", bus[i]);
		inv.gpus[i].nic = 7;	/* replaced, whatever it was */
	}
}

static void
expect(unsigned i, int nic, const char *name, bool near)
{
	ck_assert_msg(inv.gpus[i].nic == nic, "GPU %u: nic %d, want %d", i,
	    inv.gpus[i].nic, nic);
	ck_assert_str_eq(inv.gpus[i].nic_name, name);
	ck_assert_msg(inv.gpus[i].nic_near == near, "GPU %u: near %d", i,
	    inv.gpus[i].nic_near);
}

/* The fixture's text with every line holding drop removed, and with
 * from replaced by to, into tmpxml. */
static void
variant(const char *drop, const char *from, const char *to)
{
	FILE *in, *out;
	char line[4096], *p;
	int fd;

	snprintf(tmpxml, sizeof(tmpxml), "/tmp/check_hwtopo.XXXXXX");
	ck_assert_int_ge(fd = mkstemp(tmpxml), 0);
	ck_assert_ptr_nonnull(out = fdopen(fd, "w"));
	ck_assert_ptr_nonnull(in = fopen(DGX, "r"));
	while (fgets(line, sizeof(line), in) != NULL) {
		if (drop != NULL && strstr(line, drop) != NULL)
			continue;
		if (from != NULL && (p = strstr(line, from)) != NULL) {
			fprintf(out, "%.*s%s%s", (int)(p - line), line, to,
			    p + strlen(from));
			continue;
		}
		fputs(line, out);
	}
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

/* GPU i of the simulated inventory is at bus 0x18 + 3 i: the fixture
 * has GPUs 0-3 there, and GPU 4 at 0x24. */
static const char *const dgx_bus[] = { "00000000:18:00.0",
	"00000000:1b:00.0", "0000:1e:00.0", "00000000:21:00.0",
	"00000000:24:00.0", "00000000:30:00.0" };

/* The map the brief asks for: GPUs 0 and 1 on mlx5_0 (rail 0), 2 and 3
 * on mlx5_1 (rail 1), all on their NIC's switch; GPU 4's nearest is
 * mlx5_1 across the host bridge (not near); a GPU hwloc does not list
 * gets nothing. The storage NIC mlx5_2 has the lowest bus id but is no
 * GPU's nearest: it gets no rail, so rails are 0 and 1. */
START_TEST(test_dgx)
{
	struct cerr err;

	gpus_at(dgx_bus, 6);
	ck_assert_msg(hwtopo_nics(&inv, DGX, &err) == 0, "%s", err.text);
	expect(0, 0, "mlx5_0", true);
	expect(1, 0, "mlx5_0", true);
	expect(2, 1, "mlx5_1", true);
	expect(3, 1, "mlx5_1", true);
	expect(4, 1, "mlx5_1", false);
	expect(5, -1, "", false);
}
END_TEST

/* Through the inventory: a simulated 4-GPU node with hwloc_xml gets the
 * fixture's NICs over its own unnamed ones. */
START_TEST(test_simulated_with_xml)
{
	struct sim_gpus sim;
	struct cerr err;

	inventory_sim_defaults(&sim);
	sim.count = 4;
	sim.nics = 4;
	ck_assert_int_eq(inventory_simulated(&sim, "n1", &inv, &err), 0);
	ck_assert_int_eq(inv.gpus[3].nic, 3);
	ck_assert_msg(inventory_nics(&inv, DGX, &err) == 0, "%s", err.text);
	expect(0, 0, "mlx5_0", true);
	expect(1, 0, "mlx5_0", true);
	expect(2, 1, "mlx5_1", true);
	expect(3, 1, "mlx5_1", true);
}
END_TEST

/* Rails follow the NICs' PCI bus ids, not their names: with the names
 * of the two GPU NICs swapped, rail 0 is still the one at bus 0x1a. */
START_TEST(test_rails_by_bus)
{
	struct cerr err;

	variant(NULL, "name=\"mlx5_0\"", "name=\"mlx5_9\"");
	gpus_at(dgx_bus, 4);
	ck_assert_msg(hwtopo_nics(&inv, tmpxml, &err) == 0, "%s", err.text);
	unlink(tmpxml);
	expect(0, 0, "mlx5_9", true);
	expect(2, 1, "mlx5_1", true);
}
END_TEST

/* A node without RDMA devices: the network devices stand in (the first
 * name in name order when a function has several). */
START_TEST(test_network_fallback)
{
	struct cerr err;

	variant("osdev_type=\"3\"", NULL, NULL);
	gpus_at(dgx_bus, 5);
	ck_assert_msg(hwtopo_nics(&inv, tmpxml, &err) == 0, "%s", err.text);
	unlink(tmpxml);
	expect(0, 0, "ibp26s0", true);
	expect(1, 0, "ibp26s0", true);
	expect(3, 1, "ibp32s0", true);
	expect(4, 1, "ibp32s0", false);
}
END_TEST

/* Two GPUs and two NICs under one switch, each on a port of its own:
 * both NICs are as near to either GPU, and they pair off (the second GPU
 * takes the NIC the first did not), as on boards with a NIC per GPU.
 * The fixture gets a second NIC, mlx5_7 at bus 0x19, on switch 0. */
START_TEST(test_pairs_off)
{
	static const char *const bus[] = { "0000:18:00.0", "0000:1b:00.0" };
	struct cerr err;

	variant(NULL, "<object type=\"Bridge\" gp_index=\"116\"",
	    "<object type=\"Bridge\" gp_index=\"950\" bridge_type=\"1-1\" "
	    "depth=\"3\" bridge_pci=\"0000:[19-19]\" "
	    "pci_busid=\"0000:12:03.0\" pci_type=\"0604 [10b5:c010] "
	    "[0000:0000] 00\" pci_link_speed=\"0.000000\">"
	    "<object type=\"PCIDev\" gp_index=\"951\" "
	    "pci_busid=\"0000:19:00.0\" pci_type=\"0207 [15b3:101e] "
	    "[15b3:0051] [0000:0000] 00\" pci_link_speed=\"0.000000\">"
	    "<object type=\"OSDev\" gp_index=\"952\" name=\"mlx5_7\" "
	    "osdev_type=\"3\"/></object></object>"
	    "<object type=\"Bridge\" gp_index=\"116\"");
	gpus_at(bus, 2);
	ck_assert_msg(hwtopo_nics(&inv, tmpxml, &err) == 0, "%s", err.text);
	unlink(tmpxml);
	/* Bus order: 0x19 (mlx5_7) is rail 0, 0x1a (mlx5_0) rail 1. */
	expect(0, 0, "mlx5_7", true);
	expect(1, 1, "mlx5_0", true);
}
END_TEST

/* A file that is not there, or not a topology: an error, and the
 * inventory as it was. */
START_TEST(test_bad_file)
{
	struct cerr err;

	gpus_at(dgx_bus, 2);
	ck_assert_int_eq(hwtopo_nics(&inv, "/nonexistent/topo.xml", &err),
	    -1);
	ck_assert_msg(strstr(err.text, "/nonexistent/topo.xml") != NULL, "%s",
	    err.text);
	ck_assert_int_eq(inv.gpus[0].nic, 7);
	variant(NULL, "<topology version=\"2.0\">", "<notatopology>");
	ck_assert_int_eq(hwtopo_nics(&inv, tmpxml, &err), -1);
	unlink(tmpxml);
	ck_assert_int_eq(inv.gpus[1].nic, 7);
}
END_TEST

/* NVML's GPUs (the fake library's: domain fa4e, buses as simulated)
 * with this machine's topology, which hwloc's HWLOC_XMLFILE makes the
 * fixture moved to domain fa4e: NVML's upper-case bus ids match. */
START_TEST(test_nvml_this_machine)
{
	struct cerr err;

	variant(NULL, "pci_busid=\"0000:", "pci_busid=\"fa4e:");
	setenv("FAKE_NVML_GPUS", "4", 1);
	setenv("FAKE_NVML_TOPO", "nvswitch", 1);
	ck_assert_msg(inventory_nvml(FAKE_NVML, &inv, &err) == 0, "%s",
	    err.text);
	ck_assert_str_eq(inv.gpus[0].pci_bus_id, "0000fa4e:18:00.0");
	ck_assert_int_eq(inv.gpus[0].nic, -1);
	setenv("HWLOC_XMLFILE", tmpxml, 1);
	ck_assert_msg(inventory_nics(&inv, NULL, &err) == 0, "%s", err.text);
	unsetenv("HWLOC_XMLFILE");
	unlink(tmpxml);
	expect(0, 0, "mlx5_0", true);
	expect(1, 0, "mlx5_0", true);
	expect(2, 1, "mlx5_1", true);
	expect(3, 1, "mlx5_1", true);
}
END_TEST

static Suite *
hwtopo_suite(void)
{
	Suite *s = suite_create("hwtopo");
	TCase *tc = tcase_create("xml");

	tcase_add_test(tc, test_dgx);
	tcase_add_test(tc, test_simulated_with_xml);
	tcase_add_test(tc, test_rails_by_bus);
	tcase_add_test(tc, test_network_fallback);
	tcase_add_test(tc, test_pairs_off);
	tcase_add_test(tc, test_bad_file);
	tcase_add_test(tc, test_nvml_this_machine);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(hwtopo_suite());
	int failed;

	/* hwloc complains about bad XML on stderr: expected here. */
	setenv("HWLOC_XML_VERBOSE", "0", 1);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
