/* Inter-node topology: Slurm's tree topology.conf, parsed into switches
 * with parents and levels, and a map from node name to its leaf switch.
 *
 * Syntax (one statement per line; '#' starts a comment; keys ignore case):
 *
 *	LevelNames=leaf,spine,core		# optional, bottom-up, once
 *	SwitchName=leaf0 Nodes=gpu[001-032]	# a leaf switch
 *	SwitchName=spine0 Switches=leaf[0-3]	# a switch above switches
 *	SwitchName=leaf1 Nodes=gpu[033-064] LinkSpeed=400	# ignored key
 *
 * A switch has either Nodes= or Switches=. Levels are counted as Slurm
 * does: a switch with nodes is level 0, any other is one above the
 * highest of its children. Without LevelNames the levels are called
 * "leaf", "spine", "core", then "level3", "level4" …; those names mean
 * their level even above the top of the tree (a "spine" request on a
 * tree of leaves alone is held by any one leaf). With LevelNames only the
 * given names are known; they must name at least every level the tree
 * has, and may name more.
 *
 * Nodes the file does not list belong to no switch here; the scheduler
 * puts them together in one domain of their own.
 *
 * Blocks (Slurm 24.05's topology/block): a block is a set of nodes that
 * share one fast domain across nodes (a GB200 NVL72 rack: 18 nodes in
 * one NVLink domain). They may be given with or without the tree; a
 * block's nodes may also sit under leaf switches.
 *
 *	BlockName=nvl0 Nodes=gpu[001-018]
 *	BlockName=nvl1 Nodes=gpu[019-036]
 *	BlockSizes=18,36		# optional, once, alone on its line
 *
 * BlockSizes' first size is the base block size: no block may list more
 * nodes (one with fewer is a block with nodes missing). The others are
 * aggregated sizes, each a multiple of the base and larger than the one
 * before: size k * base groups k consecutive blocks in file order
 * (blocks 0..k-1, k..2k-1, ...). Without BlockSizes the base is the
 * largest block's node count and the aggregated sizes its power-of-two
 * multiples up to the number of blocks. Refused besides the tree's
 * errors: a block without Nodes=, a block defined twice, a node in two
 * blocks (or twice in one), a key other than BlockName=/Nodes= on a
 * block line, a bad or repeated BlockSizes=, BlockSizes= without any
 * block, a block above the base size.
 *
 * A 3D torus (TorusName=, NodeCoord=) and Dragonfly+ groups
 * (GroupName=) are described in topo_torus.h. Groups become switches:
 * routers as leaves, each group above its routers, the levels named
 * "router" and "group" (unless LevelNames= names them); a file has
 * either GroupName= or SwitchName= lines, not both. A torus may sit next
 * to either; a node may be on the torus and under a switch. */
#ifndef COHORT_SCHED_TOPO_H
#define COHORT_SCHED_TOPO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds that keep a bad file from costing unbounded memory. */
#define TOPO_NODES_MAX 1000000	/* nodes in the whole file */
#define TOPO_SWITCHES_MAX 100000
#define TOPO_LEVELS_MAX 16
#define TOPO_BLOCKS_MAX 100000
#define TOPO_BLOCK_NODES_MAX 65536	/* nodes in one block */
#define TOPO_BLOCK_SIZES_MAX 16

struct topo;

/* Parse the topology text [text, text + len) (need not be NUL
 * terminated); file names it in messages. Returns a new topology the
 * caller frees with topo_destroy; or NULL with errno EINVAL and one line
 * "FILE:LINE: what is wrong" in err (which may be NULL), or ENOMEM.
 * Refused: unknown keys, a token without '=', a repeated key on a line,
 * a line without SwitchName=, a duplicate switch, a switch with both or
 * neither of Nodes= and Switches=, a bad hostlist, a node under two
 * switches, an unknown switch in Switches=, a switch under two parents,
 * a cycle, more than TOPO_LEVELS_MAX levels, a bad LevelNames= line. */
struct topo	*topo_parse(const char *text, size_t len, const char *file,
		    char *err, size_t errlen);

/* Read and parse a file: the one function here that does I/O, so the
 * controller has a single call at its edge. Same contract as topo_parse;
 * errno is the open/read error when the file cannot be read. */
struct topo	*topo_load_file(const char *path, char *err, size_t errlen);

/* For the statement parsers (topo.c, topo_block.c, topo_torus.c):
 * write "FILE:LINE: what" to err (which may be NULL) and return -1 with
 * errno EINVAL. */
int		 topo_verrf(const char *file, unsigned line, char *err,
		    size_t errlen, const char *fmt, va_list ap)
		    __attribute__((format(printf, 5, 0)));

/* Free a topology; NULL is fine. */
void		 topo_destroy(struct topo *);

/* Switches are numbered 0 .. topo_nswitches() - 1 in file order. */
size_t		 topo_nswitches(const struct topo *);
const char	*topo_switch_name(const struct topo *, size_t sw);
/* The parent switch, or -1 for a top switch. */
int32_t		 topo_switch_parent(const struct topo *, size_t sw);
unsigned	 topo_switch_level(const struct topo *, size_t sw);

/* Levels the tree has (1 + the highest switch level; 0 when empty). */
unsigned	 topo_height(const struct topo *);

/* The level a name means, or -1 when the name is unknown. */
int		 topo_level_index(const struct topo *, const char *name);

/* The name of a level (LevelNames= or the default); borrowed. */
const char	*topo_level_name(const struct topo *, unsigned level);

/* The leaf switch a node sits under, or -1 when the file does not list
 * it. */
int32_t		 topo_node_leaf(const struct topo *, const char *node);

/* Blocks, numbered 0 .. topo_nblocks() - 1 in file order (0: the file
 * has none). */
size_t		 topo_nblocks(const struct topo *);
const char	*topo_block_name(const struct topo *, size_t b);
/* Nodes the block lists. */
size_t		 topo_block_nnodes(const struct topo *, size_t b);
/* The block a node is in, or -1. */
int32_t		 topo_node_block(const struct topo *, const char *node);
/* BlockSizes (given or default): topo_block_sizes(t, 0) is the base
 * block size; 0 sizes without blocks. */
size_t		 topo_nblock_sizes(const struct topo *);
uint32_t	 topo_block_size(const struct topo *, size_t i);
/* The torus of the file (TorusName=, see topo_torus.h), or NULL. */
struct topo_torus;
const struct topo_torus *topo_torus(const struct topo *);
/* Its dimensions (unused ones are 1, not wrapped) and wrap-around per
 * dimension; returns the number of dimensions given (1-3), 0 for NULL. */
unsigned	 topo_torus_dims(const struct topo_torus *, uint32_t dims[3],
		    bool wrap[3]);
const char	*topo_torus_name(const struct topo_torus *);
size_t		 topo_torus_nnodes(const struct topo_torus *);
/* A node's coordinate (unused dimensions 0): 0, or -1 with errno ENOENT
 * when the torus does not place it. */
int		 topo_torus_coord(const struct topo_torus *, const char *node,
		    uint32_t c[3]);

/* Nodes listed, and the bytes the topology holds (for the benchmark). */
size_t		 topo_nnodes(const struct topo *);
size_t		 topo_bytes(const struct topo *);

#endif
