/* The topology file of the simulated nodes. */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "lib/log.h"
#include "tests/sim/sim.h"
#include "tests/sim/simtopo.h"

/* Slurm tree topology for the nodes: leaves of K nodes, spines of S
 * leaves, a core above when there are several spines. */
int
simtopo_write(const char *path, const char *prefix, unsigned first,
    unsigned n, unsigned width, unsigned per_leaf, unsigned per_spine)
{
	unsigned leaves = (n + per_leaf - 1) / per_leaf;
	unsigned spines = (leaves + per_spine - 1) / per_spine;
	unsigned l, sp, a, b;
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warn("%s", tmp);
		return -1;
	}
	fprintf(f, "# Written by %s: %u nodes, %u per leaf, %u leaves per "
	    "spine.\n", SIM_PROG, n, per_leaf, per_spine);
	for (l = 0; l < leaves; l++) {
		a = first + l * per_leaf;
		b = a + per_leaf - 1;
		if (b > first + n - 1)
			b = first + n - 1;
		if (a == b)
			fprintf(f, "SwitchName=leaf%u Nodes=%s%0*u\n", l,
			    prefix, (int)width, a);
		else
			fprintf(f, "SwitchName=leaf%u Nodes=%s[%0*u-%0*u]\n",
			    l, prefix, (int)width, a, (int)width, b);
	}
	for (sp = 0; sp < spines; sp++) {
		a = sp * per_spine;
		b = a + per_spine - 1;
		if (b > leaves - 1)
			b = leaves - 1;
		if (a == b)
			fprintf(f, "SwitchName=spine%u Switches=leaf%u\n", sp,
			    a);
		else
			fprintf(f, "SwitchName=spine%u Switches=leaf[%u-%u]\n",
			    sp, a, b);
	}
	if (spines > 1)
		fprintf(f, "SwitchName=core0 Switches=spine[0-%u]\n",
		    spines - 1);
	if (fclose(f) != 0 || rename(tmp, path) == -1) {
		log_warn("%s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}
