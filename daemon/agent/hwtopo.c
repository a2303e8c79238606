/* GPUs' nearest NICs through hwloc: see hwtopo.h for the rule. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "daemon/agent/hwtopo.h"

/* How deep the PCI tree above a device may be (bridges, packages,
 * groups, the machine): far more than any machine has. */
#define HWTOPO_MAX_DEPTH 64

struct hwtopo_nic {
	hwloc_obj_t pci;		/* the PCI function */
	char name[INV_NIC_NAME_MAX];
	unsigned used;			/* GPUs that took it so far */
	int rail;			/* -1 until some GPU takes it */
};

struct hwtopo_best {
	int nic;			/* index into the NIC list; -1 */
	unsigned up_gpu, up_nic;	/* hops to the common ancestor */
	bool near;
};

static int
hwtopo_bus_cmp(const void *a, const void *b)
{
	const struct hwtopo_nic *x = a, *y = b;
	const struct hwloc_pcidev_attr_s *p = &x->pci->attr->pcidev,
	    *q = &y->pci->attr->pcidev;

	if (p->domain != q->domain)
		return p->domain < q->domain ? -1 : 1;
	if (p->bus != q->bus)
		return p->bus < q->bus ? -1 : 1;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return (p->func > q->func) - (p->func < q->func);
}

/* The NICs of type t, one per PCI function (the first name in name
 * order when a function has several devices of the type), by bus id. */
static unsigned
hwtopo_collect(hwloc_topology_t topo, hwloc_obj_osdev_type_t t,
    struct hwtopo_nic *nics)
{
	hwloc_obj_t os = NULL, pci;
	unsigned n = 0, i;

	while ((os = hwloc_get_next_osdev(topo, os)) != NULL) {
		if (os->attr->osdev.type != t || os->name == NULL ||
		    !inventory_nic_name_ok(os->name))
			continue;
		/* A NIC that is not a PCI function (a virtual one) has no
		 * place in the PCI tree to be near anything. */
		if ((pci = os->parent) == NULL ||
		    pci->type != HWLOC_OBJ_PCI_DEVICE)
			continue;
		for (i = 0; i < n; i++)
			if (nics[i].pci == pci)
				break;
		if (i < n) {
			if (strcmp(os->name, nics[i].name) < 0)
				snprintf(nics[i].name, sizeof(nics[i].name),
				    "%s", os->name);
			continue;
		}
		if (n == HWTOPO_MAX_NICS)
			break;
		nics[n].pci = pci;
		snprintf(nics[n].name, sizeof(nics[n].name), "%s", os->name);
		nics[n].used = 0;
		nics[n].rail = -1;
		n++;
	}
	qsort(nics, n, sizeof(*nics), hwtopo_bus_cmp);
	return n;
}

/* "00000000:18:00.0" (NVML, the simulated inventory) or "0000:18:00.0"
 * (the kernel): the PCI device hwloc has there, or NULL. */
static hwloc_obj_t
hwtopo_find(hwloc_topology_t topo, const char *busid)
{
	unsigned dom, bus, dev, fn;
	char end;

	if (sscanf(busid, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn,
	    &end) != 4 || bus > 0xff || dev > 0x1f || fn > 7)
		return NULL;
	return hwloc_get_pcidev_by_busid(topo, dom, bus, dev, fn);
}

/* The common ancestor of a and b, with the hops from each up to it; NULL
 * when there is none within HWTOPO_MAX_DEPTH. (hwloc's own
 * hwloc_get_common_ancestor_obj compares depths, which I/O objects do not
 * have.) */
static hwloc_obj_t
hwtopo_common(hwloc_obj_t a, hwloc_obj_t b, unsigned *up_a, unsigned *up_b)
{
	hwloc_obj_t chain[HWTOPO_MAX_DEPTH], o;
	unsigned n = 0, i, hb = 0;

	for (o = a; o != NULL && n < HWTOPO_MAX_DEPTH; o = o->parent)
		chain[n++] = o;
	for (o = b; o != NULL && hb < HWTOPO_MAX_DEPTH; o = o->parent, hb++)
		for (i = 0; i < n; i++)
			if (chain[i] == o) {
				*up_a = i;
				*up_b = hb;
				return o;
			}
	return NULL;
}

/* GPU gpu's nearest of the n NICs (see hwtopo.h). */
static struct hwtopo_best
hwtopo_nearest(hwloc_obj_t gpu, const struct hwtopo_nic *nics, unsigned n)
{
	struct hwtopo_best best = { -1, 0, 0, false };
	hwloc_obj_t anc;
	unsigned i, ug, un;

	for (i = 0; i < n; i++) {
		if ((anc = hwtopo_common(gpu, nics[i].pci, &ug, &un)) == NULL)
			continue;
		if (best.nic != -1 && (ug > best.up_gpu ||
		    (ug == best.up_gpu && (un > best.up_nic ||
		    (un == best.up_nic &&
		    nics[i].used >= nics[best.nic].used)))))
			continue;
		best.nic = (int)i;
		best.up_gpu = ug;
		best.up_nic = un;
		best.near = anc->type == HWLOC_OBJ_BRIDGE &&
		    anc->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
	}
	return best;
}

int
hwtopo_nics(struct inventory *inv, const char *xml, struct cerr *err)
{
	hwloc_topology_t topo;
	struct hwtopo_nic *nics;
	struct hwtopo_best best[INV_MAX_GPUS];
	hwloc_obj_t gpu;
	unsigned n, i, rails = 0;
	struct gpu_info *g;

	if ((nics = calloc(HWTOPO_MAX_NICS, sizeof(*nics))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	if (hwloc_topology_init(&topo) == -1) {
		free(nics);
		return cerr_set(err, ERR_UNAVAILABLE, "hwloc: %s",
		    strerror(errno));
	}
	/* PCI devices and bridges are filtered out by default. */
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml != NULL && hwloc_topology_set_xml(topo, xml) == -1) {
		cerr_set(err, ERR_UNAVAILABLE, "hwloc: cannot read %s: %s",
		    xml, strerror(errno));
		goto fail;
	}
	if (hwloc_topology_load(topo) == -1) {
		cerr_set(err, ERR_UNAVAILABLE, "hwloc: cannot load the "
		    "topology%s%s: %s", xml != NULL ? " of " : "",
		    xml != NULL ? xml : "", strerror(errno));
		goto fail;
	}
	if ((n = hwtopo_collect(topo, HWLOC_OBJ_OSDEV_OPENFABRICS,
	    nics)) == 0)
		n = hwtopo_collect(topo, HWLOC_OBJ_OSDEV_NETWORK, nics);

	/* In GPU order, so that the "fewest GPUs before it" tie-break
	 * pairs GPU 0 with the first NIC of a switch, GPU 1 with the
	 * second. */
	for (i = 0; i < inv->ngpus; i++) {
		best[i].nic = -1;
		if ((gpu = hwtopo_find(topo, inv->gpus[i].pci_bus_id)) == NULL)
			continue;
		best[i] = hwtopo_nearest(gpu, nics, n);
		if (best[i].nic != -1)
			nics[best[i].nic].used++;
	}
	/* Rails: the NICs some GPU took, in bus id order. */
	for (i = 0; i < n; i++)
		if (nics[i].used > 0)
			nics[i].rail = (int)rails++;
	for (i = 0; i < inv->ngpus; i++) {
		g = &inv->gpus[i];
		if (best[i].nic == -1) {
			g->nic = -1;
			g->nic_name[0] = '\0';
			g->nic_near = false;
			continue;
		}
		g->nic = nics[best[i].nic].rail;
		snprintf(g->nic_name, sizeof(g->nic_name), "%s",
		    nics[best[i].nic].name);
		g->nic_near = best[i].near;
	}
	hwloc_topology_destroy(topo);
	free(nics);
	return 0;

fail:
	hwloc_topology_destroy(topo);
	free(nics);
	return -1;
}
