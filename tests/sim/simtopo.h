/* A Slurm tree topology (topology.conf) for the simulated nodes, for
 * the controller's `topology =`. */
#ifndef COHORT_SIM_SIMTOPO_H
#define COHORT_SIM_SIMTOPO_H

/* Nodes prefix<first>..prefix<first+n-1> (width digits): leaves of
 * per_leaf nodes, spines of per_spine leaves, a core above when there
 * are several spines. Written to path.tmp, then renamed. 0, or -1
 * (logged). */
int simtopo_write(const char *path, const char *prefix, unsigned first,
    unsigned n, unsigned width, unsigned per_leaf, unsigned per_spine);

#endif
