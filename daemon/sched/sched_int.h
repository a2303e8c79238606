/* Private to the scheduler core: the per-pass state shared by its files,
 * grouped by the file that defines each function. The benchmark includes
 * it to time one placement alone; nothing else should. */
#ifndef COHORT_SCHED_INT_H
#define COHORT_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sched/sched.h"

/* Which nodes a count covers. ALL: eligible nodes, their GPUs free now.
 * UNRES: the same without the reserved nodes. STATIC: every node that
 * could ever take work, all its GPUs free (for "could this ever fit"). */
enum { SET_ALL = 0, SET_UNRES, SET_STATIC, NSETS };

/* pnode.flags */
#define PN_ELIGIBLE	0x01	/* up, not drained, not FAILED, <= 64 GPUs */
#define PN_DEGRADED	0x02
#define PN_RESERVED	0x04	/* in the reservation's node set */
#define PN_USABLE	0x08	/* <= SCHED_NODE_GPUS_MAX GPUs */
#define PN_SPARE	0x10	/* a hot spare: restarting jobs only */
#define PN_CPU		0x20	/* runs a CPU-only job: no exclusive job */
#define PN_EXCL		0x40	/* held by an exclusive job: no other job */
#define PN_SUSPECT	0x80	/* sched_node.suspect */

/* preq.kind */
enum { RQ_GPU = 0, RQ_CPU, RQ_EXCL };

/* preq.bk: how the topology's blocks (block.c) constrain a placement.
 * PLAIN: preferred (one best-fit block, else few blocks, else the tree);
 * SEG: segments of preq.seg nodes, each inside one block; ONE: the whole
 * gang in one block. */
enum { BK_NONE = 0, BK_PLAIN, BK_SEG, BK_ONE };
/* preq.torus: no torus placement, a compact box required (--topology
 * torus), boxes preferred with a nearest-nodes fallback (torus.c). */
enum { TQ_NONE = 0, TQ_REQUIRED, TQ_PREFER };

#define NO_INDEX UINT32_MAX

/* Nodes a leaf may hold before its nodes are split into chunks. */
#define SCHED_CHUNK 64

struct pnode {
	uint64_t free;		/* positions of free GPUs with health OK */
	uint64_t full;		/* all ngpus positions */
	uint32_t leaf;		/* pass switch index of its leaf */
	uint32_t ent;		/* its (leaf, model) count entry */
	uint32_t model;		/* model class */
	uint8_t ngpus;
	uint8_t flags;
};

/* The switch tree of one pass: the topology's switches, then a leaf for
 * the nodes the topology does not list, then a root above every top
 * switch (its level is one above the highest real level; only jobs
 * without a required level may use it), then chunks: leaves of at most
 * SCHED_CHUNK nodes below any bigger leaf (state.c, build_tree). */
struct ptopo {
	uint32_t nsw;
	uint32_t unlisted;
	uint32_t root;
	uint32_t rootlevel;
	int32_t *parent;	/* root: -1 */
	uint8_t *level;
	uint32_t *child_off, *child;	/* children, file order */
	uint32_t *node_off, *node;	/* nodes of leaves, index order */
	uint32_t *dom_off, *dom;	/* switches that are domains at level L:
					 * level <= L < their parent's level */
	uint32_t *order;		/* switches by level, bottom-up */
	uint32_t maxleaf;		/* most nodes under one leaf */
};

/* What a placement asks for. */
struct preq {
	uint32_t n;		/* nodes */
	uint32_t g;		/* GPUs per node; 0: whole nodes */
	const uint8_t *match;	/* per model class: may this job use it */
	uint32_t cap;		/* highest level a domain may have */
	int set;		/* SET_ALL or SET_UNRES */
	/* Node-level constraints (sched_job.node_ok, cpu_only, exclusive):
	 * the per-(leaf, model) counts cannot see them, so a job with any
	 * is judged node by node (walk). */
	const uint8_t *ok;	/* per node: may it be used; NULL: all */
	int kind;		/* RQ_GPU, RQ_CPU (no GPU) or RQ_EXCL */
	uint32_t gmin;		/* RQ_EXCL: GPUs a node must have */
	bool cpu;		/* CPU-only: the placement names no GPU */
	uint32_t out;		/* nodes ok leaves out (job_req counts) */
	bool walk;		/* ok, RQ_CPU or RQ_EXCL */
	int bk;			/* BK_*: block constraint */
	uint32_t seg;		/* nodes per segment (BK_SEG); 1 otherwise */
	int torus;		/* TQ_NONE, TQ_REQUIRED or TQ_PREFER */
	bool clean;		/* a restart or a large gang: suspect nodes
				 * last */
};

/* A chosen node and the GPU positions chosen on it. */
struct pick {
	uint32_t node;
	uint64_t mask;
};

/* A node that could take a job, with its rank among such nodes. */
struct cand {
	uint64_t key;		/* smaller is better; unique */
	uint64_t mask;
	uint32_t node;
};

/* A start decided in this pass: picks[first .. first + n). */
struct srec {
	size_t pending;
	int64_t end;
	bool backfill;
	uint32_t first;
	uint32_t n;
};

struct alloc_hdr;
struct blocks;
struct torus;

/* A listed running job (squota.c): its GPUs per flavor are
 * squota.rg[k * nf ..], its held GPUs squota.held[off .. off + ngpu) as
 * node << 8 | position. */
struct srun {
	uint32_t in;		/* index into sched_input.running */
	uint32_t queue;
	uint32_t ngpu;
	uint32_t off;
};

/* Quota state of a pass with queues (squota.c); the root is index nq. */
enum { SQ_N = 0, SQ_C, SQ_G, SQ_U, SQ_S, SQ_NV };
struct squota {
	uint32_t nq, nf;
	uint32_t *par;		/* [nq + 1]: parent, the root for a top
				 * queue, NO_INDEX for the root */
	uint32_t *depth;	/* root 0, top queues 1, ... */
	uint64_t *v;		/* [SQ_NV][nq + 1][nf]; UINT64_MAX:
				 * unlimited */
	uint8_t *fl;		/* per model class: flavor bits */
	uint64_t *tally;	/* [nq]: the order's running sums */
	struct srun *run;
	uint32_t nrun;
	uint32_t *rg;		/* [nrun][nf] */
	uint64_t *held;
	/* Per flavor: GPUs listed jobs hold outside the eligible OK ones
	 * (a draining or down node, a failed GPU): counted in U, so the
	 * root's cap counts them too. */
	uint64_t stuck[SCHED_FLAVORS_MAX];
};

#define SQ(sq, w, q, f) ((sq)->v[((size_t)SQ_##w * ((sq)->nq + 1) +	\
	(size_t)(q)) * (sq)->nf + (size_t)(f)])

/* A preemption planned in this pass: victims[first .. first + n). */
struct prec {
	size_t pending;
	uint32_t first;
	uint32_t n;
};

struct preempt;

/* Node-by-node counts (state_quick of a walking preq) remembered for the
 * pass: jobs with the same constraints (CPU-only jobs, exclusive ones,
 * the tasks of an array sharing one filter) ask the same count, which
 * stays true until a start or the reservation changes the state (ver);
 * the static counts never change. */
#define QCACHE_N 128
struct qcache {
	const uint8_t *ok, *match;
	uint64_t ver;
	uint32_t g, gmin, n;
	int kind, set;
	bool cpu, used;
};

struct pass {
	const struct sched_input *in;
	int64_t now;
	int64_t default_limit;
	uint32_t bf_max;
	enum sched_order order;
	uint32_t aging;
	bool no_backfill;

	struct ptopo t;
	struct pnode *nodes;
	uint32_t nnodes;
	uint32_t stride;	/* most GPUs on a node, plus one */

	/* Model classes: one per (GPU model, spare) pair present; a spare
	 * node is in a class of its own, so the counts and the match rows
	 * keep spares from jobs that are not restarting. */
	uint32_t nmodels;
	const char **model_name;	/* NULL: no model reported */
	uint8_t *model_spare;
	uint32_t nent;
	uint32_t *leaf_ent_off;	/* [nsw + 1]: entries of each switch */
	uint32_t *ent_model;
	uint32_t *ent_cnt;	/* [nent][NSETS][stride]: [0] whole nodes,
				 * [f] nodes with at least f free GPUs */
	uint32_t *model_cnt;	/* [NSETS][nmodels][stride], summed */

	uint32_t ntypes;
	uint32_t *jtype;	/* pending job -> type class */
	uint8_t *match;		/* [ntypes][restarting][nmodels] */

	int32_t *cnt;		/* scratch: fitting nodes per switch */
	uint8_t *used;		/* scratch: switches taken by a placement */
	struct cand *cand;	/* scratch: candidates in one leaf */
	struct keep *keep;	/* scratch of keep.c, made on first use */

	/* Decisions so far: starts, then the reservation's picks. */
	struct srec *starts;
	size_t nstarts, capstarts;
	struct pick *picks;
	size_t npicks, cappicks;

	/* The reservation, once made. */
	bool has_resv;
	int64_t resv_start;
	/* no_backfill: a job waits for resources; the rest are not tried. */
	bool blocked;

	/* Queues (NULL without): quota state, preemption scratch and the
	 * preemptions planned so far (victims as running ids). */
	struct squota *sq;
	struct preempt *pre;
	uint32_t qhit;		/* try_start: the queue at its limit */
	uint32_t preempt_max;
	size_t preempt_tried;
	size_t preempt_boxes;	/* box searches of required torus boxes */
	size_t torus_searches;	/* torus box searches (any state) */
	struct prec *precs;
	size_t nprecs, capprecs;
	uint64_t *victims;
	size_t nvictims, capvictims;

	struct blocks *blk;	/* block.c; NULL: the topology has none */

	struct qcache *qc;	/* [QCACHE_N] */
	uint32_t qnext[2];	/* the entry to replace next: without,
				 * with a filter */
	uint64_t ver;		/* bumped by every change of the counts */
	uint64_t fver;		/* bumped by changes of node flags only
				 * (PN_EXCL, PN_RESERVED): all a CPU-only
				 * job's count depends on */

	struct torus *tor;	/* torus.c; NULL without a torus */

	struct alloc_hdr *allocs;
	size_t bytes;
};

/* The counts of entry ent in set: [0] whole nodes, [f] >= f free. */
static inline uint32_t *
state_row(const struct pass *ps, uint32_t ent, int set)
{
	return ps->ent_cnt + ((size_t)ent * NSETS + (size_t)set) * ps->stride;
}

/* state.c */
void	*state_alloc(struct pass *, size_t n, size_t size);
int	 state_build(struct pass *, const struct sched_input *);
void	 state_free(struct pass *);
bool	 state_fits(const struct pass *, uint32_t node, const struct preq *,
	    uint64_t freemask);
void	 state_take(struct pass *, uint32_t node, uint64_t mask);
/* state_take for a start of job jb: an exclusive job takes the node
 * whole, a CPU-only one marks it (PN_EXCL, PN_CPU). */
void	 state_take_job(struct pass *, uint32_t node, uint64_t mask,
	    const struct sched_job *jb);
void	 state_reserve(struct pass *, uint32_t node);
uint32_t state_quick(struct pass *, const struct preq *);
/* The nodes of model class m that fit rq (one that does not walk) in
 * rq->set, as state_quick counts them. */
uint32_t state_model_fits(const struct pass *, const struct preq *,
	    uint32_t m);
/* How many nodes a filter (sched_job.node_ok) leaves out. */
uint32_t state_filter_out(const struct pass *, const uint8_t *ok);

/* sched.c */
int	 sched_grow_picks(struct pass *, size_t more);
/* The GPUs job j asks at least: nodes_min x gpus_per_node, a whole node
 * counting the largest node's. */
uint64_t sched_min_gpus(const struct pass *, const struct sched_job *);

/* place.c */
void	 place_counts(struct pass *, const struct preq *, int32_t *cnt);
uint32_t place_capacity(const struct pass *, const struct preq *,
	    const int32_t *cnt);
uint32_t place_domain(const struct pass *, uint32_t leaf, uint32_t cap);
int	 place_select(struct pass *, const struct preq *, const int32_t *cnt,
	    const uint64_t *freev, struct pick *out);
/* freev: free masks per node, or NULL for the masks of now. */
uint64_t place_gpus(const struct pass *, uint32_t node, uint64_t freemask,
	    uint32_t g, unsigned *quality);
uint64_t place_rank(const struct pass *, uint32_t node, uint64_t freemask,
	    const struct preq *, uint64_t *mask);
/* The want best-ranked nodes of nodes[0 .. n) that fit rq in the state of
 * freev (NULL: now), appended to out[*k] in node order; cand has room for
 * n. -1 with EAGAIN when fewer fit. */
int	 place_take(struct pass *, const struct preq *, const uint64_t *freev,
	    const uint32_t *nodes, uint32_t n, struct cand *cand, uint32_t want,
	    struct pick *out, uint32_t *k);
/* Line the GPUs of the n picks of a gang up on the same rails (sched.h,
 * "Rails"): changes masks only, each to GPUs free in freev (NULL: now)
 * and as well placed as the pick's own. For every path that chooses a
 * gang's nodes. */
void	 place_align(const struct pass *, const struct preq *,
	    const uint64_t *freev, struct pick *out, uint32_t n);

/* rsort.c: the order of records a[0 .. n) by k[0], then k[1], ... as
 * unsigned numbers, equal records in the order given: out[x] is the
 * position in a of the x-th; scratch has room for RSORT_SCRATCH(n)
 * pairs. */
#define RSORT_KEYS 4
#define RSORT_DIGIT 11
#define RSORT_NDIGITS ((64 + RSORT_DIGIT - 1) / RSORT_DIGIT)
#define RSORT_SCRATCH(n) (2 * (size_t)(n) + RSORT_NDIGITS *		\
	((size_t)1 << RSORT_DIGIT) * sizeof(size_t) /			\
	sizeof(struct rpair) + 1)
struct rrec {
	uint64_t k[RSORT_KEYS];
};
struct rpair {
	uint64_t key;
	size_t pos;
};
void	 rsort(const struct rrec *a, size_t n, size_t *out,
	    struct rpair *scratch);

/* resv.c */
int	 resv_find(struct pass *, const struct preq *, int64_t *start,
	    struct pick *out);

/* keep.c: place restarting job j keeping its previous nodes (rq->set
 * and ps->cnt as place_counts left them for rq; neither is changed).
 * Returns 1 with the gang appended at ps->picks[ps->npicks ..] and its
 * size in *n, 0 when the job has no previous node that still fits or
 * keeping cannot meet its constraint (place it afresh), -1 on error. */
int	 keep_place(struct pass *, size_t j, const struct preq *,
	    uint32_t *n);

/* block.c */
/* Before the pass tree: map nodes to the topology's blocks and move the
 * nodes of every leaf that has nodes of several blocks (or of a block
 * and none) to its pieces, *npieces new level-0 switches unlisted + 1 +
 * k under their leaves; ps->blk stays NULL without blocks. */
int	 block_map(struct pass *, uint32_t ntopo, uint32_t *npieces);
uint32_t block_npieces(const struct pass *);
/* The leaf above piece p. */
uint32_t block_piece_parent(const struct pass *, uint32_t p);
/* After the pass tree: each block's nodes and pieces, the groups. */
int	 block_build(struct pass *);
/* Set rq->bk and rq->seg for job jb; a reason when it can never run. */
enum sched_reason block_req(struct pass *, const struct sched_job *,
	    struct preq *);
/* The most nodes (a multiple of the segment) rq's block rule can place,
 * given rq's per-switch counts cnt; UINT32_MAX for BK_NONE and
 * BK_PLAIN, whose capacity is the tree's. */
uint32_t block_capacity(struct pass *, const struct preq *,
	    const int32_t *cnt);
/* Place rq->n nodes by rq's block rule (place_select calls it) in the
 * state of freev (NULL: now) whose counts are cnt; -1 with EAGAIN when
 * the rule cannot. */
int	 block_select(struct pass *, const struct preq *, const int32_t *cnt,
	    const uint64_t *freev, struct pick *out);
/* Would block_select place rq (BK_SEG, BK_ONE) given the counts cnt?
 * Exactly when it finds a block or a group for it: the nodes are then
 * taken as counted. */
bool	 block_fits(struct pass *, const struct preq *, const int32_t *cnt);
/* The reservation's replay (BK_SEG, BK_ONE): start from the counts cnt,
 * then add one fitting node; each returns whether rq now fits. */
bool	 block_feas_reset(struct pass *, const struct preq *,
	    const int32_t *cnt);
bool	 block_feas_add(struct pass *, const struct preq *, uint32_t node);
/* Does a kept gang p[0 .. n) meet rq's block rule? */
bool	 block_keep_ok(const struct pass *, const struct preq *,
	    const struct pick *, uint32_t n);
/* torus.c */
/* Map the input's nodes onto the topology's torus (ps->tor stays NULL
 * without one). */
int	 torus_build(struct pass *);
/* Is a --topology level name the torus ("torus", any case)? */
bool	 torus_is_level(const char *name);
/* Place rq->n nodes on the torus (sched.h, "Torus"): rq->torus is
 * TQ_REQUIRED (a compact box or nothing) or TQ_PREFER (else the nodes
 * nearest a seed). freev: free masks per node, NULL for now's. out NULL:
 * only whether it fits. Returns 0 or -1 with errno EAGAIN. */
int	 torus_select(struct pass *, const struct preq *, const uint64_t *freev,
	    struct pick *out);

/* squota.c */
/* Validate the queue input (EINVAL) and build the quota state, or leave
 * ps->sq NULL without queues. */
int	 squota_build(struct pass *);
/* GPUs per flavor of a placement. */
void	 squota_gpus(const struct pass *, const struct pick *, uint32_t n,
	    uint64_t *g);
/* NO_INDEX when a job of queue with g GPUs per flavor fits the quota,
 * else the queue whose limit it hits (a top queue for the root's). */
uint32_t squota_check(const struct squota *, uint32_t queue,
	    const uint64_t *g);
/* Add (sign 1) or remove (-1) g GPUs of a job of queue. */
void	 squota_add(struct squota *, uint32_t queue, const uint64_t *g,
	    int sign);
void	 squota_run_gpus(const struct squota *, uint32_t run, uint64_t *g);
/* Does queue stay within nominal (flavor 0) with g0 more, on every
 * queue of its path below stop (NO_INDEX: all)? */
bool	 squota_within(const struct squota *, uint32_t queue, uint64_t g0,
	    uint32_t stop);
/* Does a queue of the path from queue up to below stop use more than its
 * nominal in some flavor? */
bool	 squota_borrowing(const struct squota *, uint32_t queue,
	    uint32_t stop);
uint32_t squota_lca(const struct squota *, uint32_t a, uint32_t b);
/* The order's within-nominal test: tallies start at the usage; each job
 * adds its minimum along its path and is within while no nominal is
 * passed. */
void	 squota_tally_reset(struct squota *);
bool	 squota_tally(struct squota *, uint32_t queue, uint64_t g0);

/* preempt.c: plan victims for job j that cannot start (rq as try_start
 * left it). Returns 1 with a preemption appended to ps->precs, 0 when
 * none is possible, -1 on error. */
int	 preempt_plan(struct pass *, size_t j, const struct preq *);

#endif
