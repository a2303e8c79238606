/* Fuzz target: the whole topology.conf parser (the tree, LevelNames=,
 * BlockName= and BlockSizes=; the torus and dragonfly statements when
 * they are merged), then one scheduling pass on whatever it accepted.
 * The input is the file's text. A refusal must be one line
 * "fuzz:LINE: ..."; an accepted topology must keep its promises (levels
 * below TOPO_LEVELS_MAX, a base block size no block exceeds, aggregated
 * sizes that are multiples of it), and the pass over sixteen nodes named
 * as the seeds name them must place segment and block jobs by the rules
 * (each segment, each --topology block gang, inside one block) and
 * --topology torus gangs by the torus rules (every node on the torus,
 * all inside a box no larger than the largest candidate volume: 2n - 1,
 * or the smallest volume that holds n). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sched/sched.h"
#include "daemon/sched/topo.h"
#include "tests/fuzz/fuzz.h"

#define FN 16
#define FG 4

static void
check_topo(const struct topo *t)
{
	size_t i, n, nb = topo_nblocks(t);
	uint32_t base;

	for (i = 0; i < topo_nswitches(t); i++) {
		if (topo_switch_level(t, i) >= TOPO_LEVELS_MAX ||
		    topo_switch_name(t, i) == NULL)
			abort();
		if (topo_switch_parent(t, i) >= (int32_t)topo_nswitches(t))
			abort();
	}
	if (topo_height(t) > TOPO_LEVELS_MAX)
		abort();
	for (i = 0; i < topo_height(t); i++)
		if (topo_level_index(t, topo_level_name(t, (unsigned)i)) !=
		    (int)i)
			abort();
	if (nb == 0) {
		if (topo_nblock_sizes(t) != 0)
			abort();
		return;
	}
	if ((n = topo_nblock_sizes(t)) == 0 || n > TOPO_BLOCK_SIZES_MAX)
		abort();
	base = topo_block_size(t, 0);
	for (i = 1; i < n; i++)
		if (topo_block_size(t, i) % base != 0 ||
		    topo_block_size(t, i) <= topo_block_size(t, i - 1))
			abort();
	for (i = 0; i < nb; i++)
		if (topo_block_nnodes(t, i) > base ||
		    topo_block_name(t, i) == NULL)
			abort();
}

/* The torus's promises: dimensions of at least one cell, no more cells
 * than TOPO_NODES_MAX, no more nodes than cells. */
static void
check_torus(const struct topo *t)
{
	const struct topo_torus *tt = topo_torus(t);
	uint32_t d[3];
	bool w[3];
	unsigned nd;

	if (tt == NULL)
		return;
	if ((nd = topo_torus_dims(tt, d, w)) < 1 || nd > 3 || d[0] == 0 ||
	    d[1] == 0 || d[2] == 0 || (uint64_t)d[0] * d[1] * d[2] >
	    TOPO_NODES_MAX || topo_torus_nnodes(tt) >
	    (uint64_t)d[0] * d[1] * d[2] || topo_torus_name(tt) == NULL)
		abort();
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The shortest side (wrap-around counted on a ring) covering c[0..n). */
static uint64_t
extent(uint32_t *c, size_t n, uint32_t D, bool wrap)
{
	uint32_t gap, maxgap;
	size_t i;

	qsort(c, n, sizeof(*c), u32_cmp);
	if (!wrap)
		return (uint64_t)c[n - 1] - c[0] + 1;
	maxgap = c[0] + D - c[n - 1];
	for (i = 1; i < n; i++)
		if ((gap = c[i] - c[i - 1]) > maxgap)
			maxgap = gap;
	return (uint64_t)D - maxgap + 1;
}

/* A --topology torus gang of n: every node on the torus, inside a box
 * of at most the largest candidate volume. */
static void
check_box(const struct topo *t, const struct sched_node *nodes,
    const struct sched_start *st)
{
	const struct topo_torus *tt = topo_torus(t);
	uint32_t d[3], c[3], co[3][FN], a, b, z;
	uint64_t vol = 1, vmin = UINT64_MAX, v, n = st->nnodes;
	bool w[3];
	size_t i, k;

	if (tt == NULL || topo_torus_dims(tt, d, w) == 0 || n > FN)
		abort();
	for (i = 0; i < n; i++) {
		if (topo_torus_coord(tt, nodes[st->nodes[i].node].name, c) ==
		    -1)
			abort();
		for (k = 0; k < 3; k++) {
			if (c[k] >= d[k])
				abort();
			co[k][i] = c[k];
		}
	}
	for (k = 0; k < 3; k++)
		vol *= extent(co[k], n, d[k], w[k]);
	for (a = 1; a <= d[0] && a <= 2 * n; a++)
		for (b = 1; b <= d[1] && (uint64_t)a * b <= 2 * n; b++) {
			z = (uint32_t)((n + (uint64_t)a * b - 1) /
			    ((uint64_t)a * b));
			if (z <= d[2] && (v = (uint64_t)a * b * z) < vmin)
				vmin = v;
		}
	if (vol > (vmin > 2 * n - 1 ? vmin : 2 * n - 1))
		abort();
}

/* Each run of seg ranks of a start in one block. */
static void
check_start(const struct topo *t, const struct sched_node *nodes,
    const struct sched_start *st, uint32_t seg)
{
	uint32_t k;
	int32_t b = -1;

	if (seg == 0)
		return;
	for (k = 0; k < st->nnodes; k++) {
		if (k % seg == 0)
			b = topo_node_block(t, nodes[st->nodes[k].node].name);
		if (b < 0 || topo_node_block(t,
		    nodes[st->nodes[k].node].name) != b)
			abort();
	}
}

static void
run_pass(const struct topo *t)
{
	static const char *const names[FN] = {
		"n1", "n2", "n3", "n4", "n5", "n6", "node01", "node02",
		"node03", "node04", "node05", "node06", "gpu001", "gpu002",
		"gpu003", "gpu004",
	};
	static struct sched_gpu gpus[FN][FG];
	struct sched_node nodes[FN];
	struct sched_job jobs[8];
	struct sched_input in;
	struct sched_result *res;
	uint32_t seg[8];
	size_t i, k;

	memset(nodes, 0, sizeof(nodes));
	for (i = 0; i < FN; i++) {
		for (k = 0; k < FG; k++) {
			gpus[i][k].index = (uint32_t)k;
			gpus[i][k].nvlink = 0;
			gpus[i][k].pcie = (int32_t)(k / 2);
			gpus[i][k].numa = 0;
			/* Some nodes half busy, held forever. */
			gpus[i][k].job = i % 3 == 0 && k < 2 ? 99 : 0;
		}
		nodes[i].name = names[i];
		nodes[i].up = true;
		nodes[i].gpu_model = "H100";
		nodes[i].gpus = gpus[i];
		nodes[i].ngpus = FG;
	}
	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < 8; i++) {
		jobs[i].id = i + 1;
		jobs[i].submit = (int64_t)i;
		jobs[i].time_limit = 100;
		jobs[i].gpus_per_node = i % 2 == 0 ? 4 : 1;
	}
	jobs[0].nodes_min = jobs[0].nodes_max = 4;
	jobs[0].segment = 2;
	jobs[1].nodes_min = jobs[1].nodes_max = 2;
	jobs[1].topo_mode = SCHED_TOPO_REQUIRED;
	jobs[1].topo_level = "block";
	jobs[2].nodes_min = jobs[2].nodes_max = 3;
	jobs[3].nodes_min = 2;
	jobs[3].nodes_max = 6;
	jobs[3].segment = 2;
	jobs[4].nodes_min = jobs[4].nodes_max = 2;
	jobs[4].topo_mode = SCHED_TOPO_PREFERRED;
	jobs[4].topo_level = "block";
	jobs[5].nodes_min = jobs[5].nodes_max = 1;
	jobs[5].topo_mode = SCHED_TOPO_REQUIRED;
	jobs[5].topo_level = "leaf";
	jobs[6].nodes_min = jobs[6].nodes_max = 3;
	jobs[6].topo_mode = SCHED_TOPO_REQUIRED;
	jobs[6].topo_level = "torus";
	jobs[7].nodes_min = 2;
	jobs[7].nodes_max = 5;
	jobs[7].topo_mode = SCHED_TOPO_REQUIRED;
	jobs[7].topo_level = "torus";
	memset(seg, 0, sizeof(seg));
	seg[0] = 2;
	seg[3] = 2;
	if (topo_nblocks(t) > 0)
		seg[1] = 2;
	memset(&in, 0, sizeof(in));
	in.topo = t;
	in.nodes = nodes;
	in.nnodes = FN;
	in.pending = jobs;
	in.npending = 8;
	if ((res = sched_run(&in)) == NULL)
		abort();
	for (i = 0; i < res->nstarts; i++) {
		check_start(t, nodes, &res->starts[i],
		    seg[res->starts[i].pending]);
		if (res->starts[i].pending >= 6)
			check_box(t, nodes, &res->starts[i]);
	}
	sched_result_free(res);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct topo *t;

	err[0] = 'x';
	if ((t = topo_parse((const char *)data, size, "fuzz", err,
	    sizeof(err))) == NULL) {
		if (strncmp(err, "fuzz:", 5) != 0 ||
		    strchr(err, '\n') != NULL)
			abort();
		return 0;
	}
	check_topo(t);
	check_torus(t);
	run_pass(t);
	topo_destroy(t);
	return 0;
}
