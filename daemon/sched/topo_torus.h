/* The torus and Dragonfly+ statements of the topology file, for topo.c's
 * parser (the accessors are in topo.h). Syntax:
 *
 *	TorusName=t0 Dims=16x16x40 Wrap=yes Nodes=gpu[00001-10240]
 *	NodeCoord=gpu10241 Coord=3,0,7
 *	GroupName=g0 Nodes=n[001-064] NodesPerRouter=16
 *
 * One torus per file: Dims= gives 1 to 3 sizes ("8" is a ring, "4x2" a
 * 2D torus); Wrap= is yes, no, or one yes/no per dimension
 * ("yes,yes,no"; default yes). Nodes= (optional) places nodes in
 * hostlist order, x fastest, then y, then z, on the cells NodeCoord=
 * lines leave free; NodeCoord= places one node at Coord= (one number per
 * dimension). A GroupName= line is a Dragonfly+ group: its nodes split
 * in hostlist order into routers of NodesPerRouter nodes (default: all
 * of them on one router); topo.c turns it into switches, the routers
 * (named GROUP-rK) as leaves with the group above them, at the levels
 * "router" and "group". */
#ifndef COHORT_SCHED_TOPO_TORUS_H
#define COHORT_SCHED_TOPO_TORUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct topo_torus;

/* The statement kind of a line, from its first key. */
enum topo_torus_stmt {
	TOPO_TORUS_NONE = 0,	/* not one of ours */
	TOPO_TORUS_TORUS,	/* TorusName= or NodeCoord= */
	TOPO_TORUS_GROUP,	/* GroupName= */
};
enum topo_torus_stmt topo_torus_kind(const char *line);

/* Parse a TorusName= or NodeCoord= line (s is modified) into *tp,
 * created on first use. Returns 0, or -1 with errno EINVAL and
 * "FILE:LINE: what is wrong" in err, or ENOMEM. */
int	 topo_torus_line(struct topo_torus **tp, const char *file,
	    unsigned line, char *s, char *err, size_t errlen);

/* A parsed GroupName= line: routers[k] holds the nodes of router k as a
 * hostlist. At most max nodes (what is left of the file's
 * TOPO_NODES_MAX: the caller keeps the running total) are expanded; more
 * is refused ("more than TOPO_NODES_MAX nodes in the file") without
 * expanding them. The caller frees with topo_torus_group_free. */
struct topo_torus_group {
	char *name;
	char **rname;		/* router switch names */
	char **rnodes;		/* their Nodes= hostlists */
	size_t nrouters;
	size_t nnodes;		/* nodes in all */
};
int	 topo_torus_group(const char *file, unsigned line, char *s,
	    size_t max, struct topo_torus_group *g, char *err,
	    size_t errlen);
void	 topo_torus_group_free(struct topo_torus_group *g);

/* Check the torus once every line is read: place Nodes=, refuse a node
 * given twice, a coordinate outside Dims, two nodes on one cell, more
 * nodes than cells, NodeCoord= without TorusName=. Same returns as
 * topo_torus_line. NULL tp is fine (no torus). */
int	 topo_torus_finish(struct topo_torus *tp, const char *file,
	    char *err, size_t errlen);

void	 topo_torus_free(struct topo_torus *tp);
size_t	 topo_torus_bytes(const struct topo_torus *tp);

#endif
