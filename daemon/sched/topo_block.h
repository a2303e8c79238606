/* Private to the topology parser (topo.c): the BlockName= / BlockSizes=
 * statements of Slurm's topology/block (see topo.h for the syntax). The
 * public accessors are in topo.h; topo.c dispatches a block statement
 * here and calls topo_block_finish once every line is read. */
#ifndef COHORT_SCHED_TOPO_BLOCK_H
#define COHORT_SCHED_TOPO_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct topo_blocks;

/* Does line s (cut at its comment) hold a BlockName= or BlockSizes= key,
 * so that it is a block statement? */
bool	 topo_block_is(const char *s);

/* Parse block statement s (modified) of line `line` into *bp, creating it
 * on first use. Returns 0, or -1 with errno EINVAL and "FILE:LINE: what"
 * in err, or ENOMEM. */
int	 topo_block_line(struct topo_blocks **bp, const char *file,
	    unsigned line, char *s, char *err, size_t errlen);

/* Expand the blocks' node lists and check them (a node in two blocks, a
 * block above the base size, bad sizes). NULL is fine (no blocks).
 * Same return as topo_block_line. */
int	 topo_block_finish(struct topo_blocks *, const char *file, char *err,
	    size_t errlen);

void	 topo_block_free(struct topo_blocks *);
size_t	 topo_block_bytes(const struct topo_blocks *);

size_t	 topo_block_count(const struct topo_blocks *);
const char *topo_block_name_of(const struct topo_blocks *, size_t b);
size_t	 topo_block_nnodes_of(const struct topo_blocks *, size_t b);
int32_t	 topo_block_of(const struct topo_blocks *, const char *node);
uint32_t topo_block_sizes_of(const struct topo_blocks *, size_t i);
size_t	 topo_block_nsizes_of(const struct topo_blocks *);

#endif
