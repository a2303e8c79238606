/* Each GPU's nearest NIC, from the PCI hierarchy as hwloc sees it (this
 * machine, or a topology saved as XML for tests and offline diagnosis).
 * NVML says nothing about NICs; NCCL finds its own, but the scheduler
 * needs the rail (the NIC's index) to line GPUs up across nodes, and the
 * agent the NIC's name for the task's environment. */
#ifndef COHORT_AGENT_HWTOPO_H
#define COHORT_AGENT_HWTOPO_H

#include "lib/err.h"
#include "lib/inventory.h"

/* The most NICs of one node considered (PCI functions with an RDMA or a
 * network device). */
#define HWTOPO_MAX_NICS 256

/* Set nic, nic_name and nic_near of every GPU of inv, matched to hwloc's
 * PCI devices by pci_bus_id ("00000000:18:00.0" or "0000:18:00.0").
 *
 * The NICs are the PCI devices with an OpenFabrics (RDMA) device, named
 * by it ("mlx5_0"); on a node that has none, those with a network device
 * ("eth0"). A GPU's NIC is the one whose common ancestor with the GPU is
 * the fewest hops above the GPU, then above the NIC; among equals, the
 * one fewest GPUs before it took (so that two GPUs and two NICs under
 * one switch pair off), then the lowest PCI bus id. Its rail (nic) is
 * its index among the NICs that are some GPU's nearest, in PCI bus id
 * order: NICs no GPU is near (a storage NIC) get no rail, so identical
 * servers number their rails alike. nic_near: the common ancestor is a
 * PCI-to-PCI bridge (a PCIe switch, or one root port), not a host bridge
 * or the CPU package. A GPU hwloc does not list gets nic -1, "", false.
 *
 * xml: a hwloc XML file to read instead of this machine (NULL: this
 * machine, or what hwloc's own HWLOC_XMLFILE names). 0, or -1 with err
 * (ERR_UNAVAILABLE: the topology cannot be loaded), inv unchanged. */
int hwtopo_nics(struct inventory *inv, const char *xml, struct cerr *err);

#endif
