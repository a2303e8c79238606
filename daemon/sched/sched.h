/* The scheduler core: one pure function from a snapshot of the cluster to
 * scheduling decisions (docs/design/scheduling.md).
 *
 * No I/O, no clock, no globals: the caller passes `now` and owns every
 * input; the same input always gives the same output. The core only uses
 * libc, so the controller, the tests and the benchmark link it alike.
 *
 * Policy, in order:
 * - Queue order (sched_config.order): priority (higher first), then
 *   restarting jobs before others of the same priority, then
 *   - SCHED_ORDER_FIFO (the core's default): submit time, then id;
 *   - SCHED_ORDER_ESTIMATE (the controller's default): shortest estimate
 *     first with aging. The key is estimate - aging * waited, where the
 *     estimate is the job's order_hint when set, else its time limit
 *     (else the default limit), waited is now - submit (0 when submit is
 *     later than now) and aging is sched_config.aging / 1000 seconds of
 *     estimate per second waited; smaller keys first, then submit time,
 *     then id. Since now is common to every job, the order is that of
 *     estimate / aging + submit: a "virtual deadline" that does not move
 *     as time passes. So a job is never passed by one submitted more
 *     than its estimate / aging later: the wait of a long job (a big
 *     gang) is bounded, while short jobs go first among jobs of similar
 *     age. aging 0: pure shortest-estimate-first (can starve).
 *   Keys saturate instead of overflowing; every input is an integer, so
 *   the order is deterministic.
 * - A node can take a job when it is up, not drained, its health is not
 *   FAILED, its GPU model contains the job's --gpu-type (ignoring case)
 *   and it has gpus_per_node free GPUs of health OK (gpus_per_node 0: the
 *   whole node, every GPU free and OK). FAILED and DEGRADED GPUs are
 *   never given out; a DEGRADED node is used, after the OK nodes of the
 *   same leaf.
 * - Gangs are all or nothing: a start names every node and GPU at once.
 * - Placement: the lowest topology level with one switch that can hold
 *   the gang; inside it, a best-fit switch (the one with the fewest
 *   fitting nodes that still holds it), spreading over as few children
 *   as possible (largest first, best fit for the rest); on each node the
 *   best-connected GPUs (one NVLink domain, else one PCIe switch, else
 *   one NUMA node; then near a NIC); among equally connected nodes the
 *   one with the fewest free GPUs, so whole nodes stay free. The choice
 *   of switch looks at counts of fitting nodes only; GPU connection
 *   quality ranks nodes inside the chosen leaves.
 * - Rails: once a multi-node gang's nodes are chosen (above, unchanged),
 *   each node's GPUs are lined up on the same rails (sched_gpu.rail; the
 *   GPU index where the rail is unknown) as a reference node's: a node
 *   whose own choice differs takes GPUs on the reference's rails
 *   instead, preferring the reference's very indices, but only when
 *   they are as well connected (the quality above) and as near NICs as
 *   its own choice. The reference is the node whose rail set most of
 *   the gang already has or can give (among the first
 *   PLACE_ALIGN_REFS distinct sets in rank order; ties: the first), so
 *   one busy node's leftovers line up the idle nodes rather than the
 *   other way round. A node that cannot match keeps its own choice.
 * - SCHED_TOPO_REQUIRED: only switches at or below the named level; the
 *   job waits with reason Topology. SCHED_TOPO_PREFERRED places like
 *   SCHED_TOPO_ANY (lowest level first, then anywhere), so the preferred
 *   level is used whenever it can hold the gang; it never waits for it.
 * - EASY backfill (unless sched_config.no_backfill): the first job in
 *   queue order that cannot start gets a
 *   reservation: the earliest time at which it fits, found by releasing
 *   running jobs (and jobs started in this pass) at their expected end,
 *   on a specific node set chosen by the same placement. A later job
 *   starts now only if it ends (now + its limit) no later than the
 *   reservation starts, or uses none of the reserved nodes. At most
 *   bf_max_job_test jobs after the reserved one are tried (Slurm's
 *   bf_max_job_test); the rest get a reason from a cheap count.
 * - sched_config.no_backfill (strict queue order): the first job that
 *   cannot start still gets its reservation, but no later job is tried:
 *   each gets Priority or Resources from the cheap count. A job that can
 *   never run as asked (BadConstraints, GpuType, a required level that
 *   no switch could ever hold it at) blocks nothing.
 * - Elastic jobs (nodes_min < nodes_max) start with the largest size in
 *   [min, max] that fits now under the rules above; a blocked elastic job
 *   reserves its minimum.
 * - Hot spares (sched_node.spare) are never given to a job that is not
 *   restarting, nor reserved for one. A restarting job may use them:
 *   as replacements it prefers them (below); placed afresh, it takes a
 *   spare after the other OK nodes of the spare's leaf.
 * - Restarts keep what they can (keep.c): a job that names its previous
 *   gang (prev_nodes) keeps each of those nodes that can take it now
 *   (eligible as above, health OK: a DEGRADED node is not kept, the GPUs
 *   free) at its old rank, and gets replacements for the rest: first in
 *   the kept nodes' leaves, then their spines and so on up; equally
 *   close, OK nodes before DEGRADED ones, then spares before other
 *   nodes, then as placement ranks nodes. The
 *   freed ranks take the replacements, best first; when fewer nodes are
 *   found than the old gang had, the unfilled ranks close up (the kept
 *   nodes keep their order, so a kept rank 0 stays 0) and extra nodes of
 *   a grown elastic gang go last. With a required level the gang stays
 *   in one domain at that level: of those that can hold its minimum, the
 *   one with the most kept nodes (then the lowest old rank); the kept
 *   nodes outside it are let go. The size is the largest in [min, max]
 *   that the kept nodes' domain (the whole cluster without a required
 *   level) holds, so an elastic gang that lost a node and finds no
 *   replacement shrinks to its survivors if they are at least its
 *   minimum. When no previous node can be kept, or no domain holding
 *   kept nodes can hold the minimum, the job is placed afresh by the
 *   rules above (so a required-leaf gang whose leaf has no room moves
 *   whole); a reservation for it is always placed afresh.
 * - Node filters (sched_job.node_ok, from --nodelist and --exclude): a
 *   node the filter leaves out is never used for the job: not to start
 *   it, not for its reservation, not kept on restart, not counted for
 *   its reason or for BadConstraints (too few nodes left that could
 *   ever hold it). The filter only narrows: with more allowed nodes
 *   than the gang needs, any of them may be chosen; with exactly
 *   nodes_min allowed, the gang is exactly those nodes. (Slurm's -w
 *   instead makes every listed node part of the allocation, raising -N
 *   to the list's length; a gang's size is its rank count here, which
 *   the core never changes behind the user's back.)
 * - CPU-only jobs (sched_job.cpu_only) take no GPU: a node can take one
 *   when it is eligible as above and no exclusive job holds it; any
 *   number share a node and they hold nothing a GPU job needs, so they
 *   never block one (whole-node jobs included: those take every GPU,
 *   not the node). A node with no GPU can run them; among fitting
 *   nodes the fewest free GPUs first, so they keep off idle GPU nodes;
 *   a --gpu-type still narrows the nodes.
 *   Preemption never runs for them (stopping GPU jobs frees nothing
 *   they need).
 * - Exclusive jobs (sched_job.exclusive) take whole nodes as
 *   gpus_per_node 0 does (every GPU free and OK, at least gpus_per_node
 *   of them) and run alone: never on a node running a CPU-only job
 *   (sched_node.cpu_jobs) or held by another exclusive job
 *   (sched_node.exclusive), and nothing else lands on theirs. An
 *   exclusive GPU job is given every GPU of its nodes (as Slurm's
 *   --exclusive gives all the node's GRES); an exclusive CPU-only job
 *   is given none, and may use a node without GPUs. The reservation's
 *   replay does not know when CPU-only jobs (or an exclusive CPU-only
 *   job, whose GPUs nobody holds) end: it takes their nodes as held
 *   for good in those respects.
 * - A job with a filter, CPU-only or exclusive is judged node by node
 *   (its counts cost one test per node, per count), since the shared
 *   per-leaf counts cannot see these constraints; other jobs cost what
 *   they did.
 * - Blocks (topology BlockName=, see topo.h; block.c): multi-node NVLink
 *   domains (GB200 NVL72: 18 nodes). On a topology with blocks:
 *   - sched_job.segment N: the gang is cut into segments of N
 *     consecutive ranks, each segment's nodes inside one block (nodes in
 *     no block are never used); nodes_min and nodes_max must be
 *     multiples of N (else BadConstraints), an elastic gang grows in
 *     whole segments, and a required tree level with a segment is
 *     BadConstraints (submit refuses both);
 *   - topo_level "block" with SCHED_TOPO_REQUIRED: the whole gang in one
 *     block (its segments too); the job waits with reason Topology while
 *     no block can hold it, and blocks nothing when none ever could;
 *   - every other GPU job that names no tree level (SCHED_TOPO_ANY, or
 *     "block" with SCHED_TOPO_PREFERRED, which is therefore the same as
 *     no request; a job preferring a switch level is placed by the tree
 *     alone) prefers blocks: a gang that fits one block goes to the
 *     best-fit block (the fewest fitting nodes that still hold it), so
 *     whole blocks stay free for block jobs; a larger one (or a segment
 *     job no block holds) takes the smallest group of blocks that holds
 *     it (fewest fitting nodes, or segments) among the aggregated sizes
 *     of BlockSizes (consecutive blocks in file order), the blocks whose
 *     nodes are all under one switch of the tree (any level) and all
 *     blocks; inside the group the blocks with the most room first, the
 *     best fit for the rest (like the tree's children). Without a
 *     requirement a gang the blocks cannot hold is placed by the tree as
 *     above (on a topology with a torus too: in a torus box, see Torus).
 *     Inside a block nodes are ranked as in a leaf.
 *   A segment or block job waits with reason Topology when enough nodes
 *   are free but not in blocks that meet its rule. The reservation
 *   replays the releases counting fitting nodes per block (segments per
 *   block for segment jobs) and places the gang by the same rule on the
 *   future state; backfill keeps to it as above. A restart keeps its
 *   nodes as above only when the kept gang still meets its rule (a size
 *   in whole segments, each segment of ranks in one block; one block
 *   for "block"); otherwise it is placed afresh. A topology without
 *   blocks makes a segment job wait with reason Topology (submit
 *   refuses it), and "block" is then an unknown level. CPU-only jobs
 *   ignore blocks.
 * - Torus (topology TorusName=, torus.c): a gang of more than one node
 *   without --topology, or with --topology[-prefer] torus, goes into an
 *   axis-aligned box of the torus (with blocks in the topology too, a
 *   job without --topology tries the blocks first, as under Blocks, and
 *   only a gang no block or group of blocks holds goes into a box or the
 *   torus fallback below, never to the tree's placement; --topology
 *   [-prefer] torus ignores the blocks, --topology block ignores the
 *   torus, a segment job keeps to its blocks), wrap-around counted on
 *   wrapped dimensions (a box on a ring may run past the end). A box
 *   "holds" the gang when at least n of its cells carry a node that fits
 *   the job (the others may be busy). Candidate shapes (a, b, c) are the
 *   compact ones: volume from n to 2n - 1 (or, if no shape of the torus
 *   is that small, the smallest volume that holds n), ordered by hop
 *   diameter (sum over dimensions of a - 1, or floor(D / 2) when a
 *   wrapped side is longer than half the ring), then volume, then the
 *   longest side, then larger x, y first; only the first 24 are tried.
 *   The first shape with a position that holds n wins; among its
 *   positions, the one with the fewest fitting nodes in the box and its
 *   one-cell shell beyond the n used (best fit: it fills a hole rather
 *   than cutting into free space), then lowest z, y, x. Inside the box
 *   the best-ranked fitting nodes (as on a leaf) are taken, in rank
 *   order along x, then y, then z from the box's corner. "Compact" for
 *   --topology torus means exactly this: one of those shapes, or the
 *   job waits with reason Topology (a job larger than the torus, or
 *   --topology torus without a torus, can never run: Topology).
 *   Otherwise, when no shape holds it, the n fitting nodes fewest hops
 *   from a seed (the first fitting node of the most compact shape's
 *   fullest position), nodes off the torus last, in that order. A
 *   single node takes the usual placement (tree and GPU ranking),
 *   unless --topology torus requires a node on the torus. Within a
 *   pass, when no box of shape (a, b, c) held n nodes at a state and
 *   per-node requirement, no shape with every side no longer is searched
 *   for n or more at that same state (exact: each of its positions lies
 *   inside one of (a, b, c)); larger shapes, which a larger gang may
 *   use, are still searched. An elastic gang that
 *   requires a box takes the largest size in [min, max] a box holds. A
 *   restart of a required box is placed afresh (kept nodes would break
 *   the box). With queues, a job whose minimum GPUs already break its
 *   quota is not placed on the torus at all (QueueQuota); preemption
 *   plans a preferred box on the tree placement (it fits wherever the
 *   count fits) and tests a required box's victims at 1, 2, 4, ...
 *   then bisects for the smallest sufficient prefix of them, drops at once
 *   the victims on none of the box's nodes (one test), and tries at most
 *   SCHED_PREEMPT_BOX_DROPS single drops (most lost work first); every
 *   box test counts as one of the SCHED_PREEMPT_MAX_TRIES (a plan that
 *   starts is finished: about 2 log2(candidates) + 14 tests). The
 *   reservation of a required box replays the running jobs' ends to the
 *   end and bisects over them for the first time a box holds the gang.
 *   A pass makes at most SCHED_TORUS_SEARCHES_MAX box searches before
 *   it stops trying required boxes (stats.torus_searches counts them,
 *   the reservation's, preemption's and elastic bisections' included;
 *   the search under way finishes): later jobs that require a box get
 *   reason Priority (the cheap count of fitting nodes holds them) or
 *   Resources, without a search, like the tail past bf_max_job_test;
 *   the next pass tries them again in priority order.
 * - Dragonfly+ groups (GroupName=) are switches: routers as leaves,
 *   groups above, levels "router" and "group"; the tree rules above
 *   apply (the fewest groups: the largest free ones whole, best fit for
 *   the rest). */
#ifndef COHORT_SCHED_H
#define COHORT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct topo;

/* GPUs a node may have; a node reporting more is never chosen. */
#define SCHED_NODE_GPUS_MAX 64

#define SCHED_DEFAULT_LIMIT_S (24 * 3600)
#define SCHED_BF_MAX_JOB_TEST 500

enum sched_health {
	SCHED_HEALTH_OK = 0,
	SCHED_HEALTH_DEGRADED,
	SCHED_HEALTH_FAILED,
};

enum sched_topo_mode {
	SCHED_TOPO_ANY = 0,
	SCHED_TOPO_REQUIRED,
	SCHED_TOPO_PREFERRED,
};

enum sched_reason {
	SCHED_REASON_NONE = 0,		/* started */
	SCHED_REASON_RESOURCES,		/* not enough free now */
	SCHED_REASON_PRIORITY,		/* would fit, but would delay the
					 * reservation, or was not tried */
	SCHED_REASON_TOPOLOGY,		/* no single switch at the required
					 * level can hold it (now or ever),
					 * or the level is unknown */
	SCHED_REASON_GPU_TYPE,		/* no node has a matching GPU model */
	SCHED_REASON_BAD_CONSTRAINTS,	/* the cluster could never hold it:
					 * too many nodes or GPUs per node
					 * (on the nodes its filter allows),
					 * or nodes_min is 0 or above max */
	SCHED_REASON_QUEUE_QUOTA,	/* its queue (or an ancestor) is at
					 * its limit, and it may not reclaim
					 * or preempt enough to go under it;
					 * sched_result.quota_queue names
					 * the queue */
	SCHED_REASON_PREEMPTING,	/* victims chosen (now or in an
					 * earlier pass: sched_job.preempting)
					 * are checkpointing and stopping */
};

/* ---- Queues, quotas and preemption ----
 *
 * Without queues (sched_input.nqueues 0) nothing below applies: every job
 * is in one unlimited queue and nothing is preempted.
 *
 * Queues form a tree (sched_queue.parent). Quotas are counted in GPUs, per
 * flavor: flavor 0 is every GPU; flavor k > 0 (sched_input.flavors[k],
 * matched as --gpu-type matches a node's model) counts the GPUs of nodes
 * whose model matches it. A queue's usage U(q, f) is the GPUs held by the
 * running jobs (sched_running.queue) of q and of every queue below it,
 * in flavor f. For each flavor f and queue q:
 *   nominal N(q, f): sched_queue.nominal[f]; SCHED_UNLIMITED: no quota in
 *     that flavor (never over it, never counted as borrowing, lends
 *     nothing); an inner queue whose nominal is SCHED_UNLIMITED while a
 *     child's is not takes the sum of its children's nominals;
 *   cap C(q, f) = N + borrow_limit (SCHED_UNLIMITED: no cap);
 *   guarantee G(q, f) = N - lend_limit when lend_limit is set (>= 0),
 *     else 0: what q keeps for itself and never lends.
 * The top-level queues sit under a virtual root whose cap is the GPUs of
 * every eligible node in that flavor.
 * Admission: job j of queue L needing g GPUs (g(f) in flavor f, known
 * once it is placed) fits the quota when, after adding g along the path
 * from L to the root, for every queue q on the path and every flavor:
 *   U'(q, f) <= C(q, f), and at q's parent P (the root included):
 *   sum over P's children c of max(U'(c, f), G(c, f)) (+ P's own jobs)
 *     <= C(P, f).
 * So a queue borrows its siblings' and ancestors' unused nominal within
 * the limits, and a sibling's guarantee is never lent. A job of a queue
 * whose U' stays within N (on every queue of its path, flavor 0) is
 * "within nominal"; the GPUs a queue uses beyond N are "borrowed".
 *
 * Order: priority (higher first); then preempting jobs; then restarting
 * jobs; then, with queues, jobs within nominal before borrowing ones,
 * decided in the order below by adding each queue's jobs up in turn; the
 * borrowing ones by their queue's sched_queue.share, then
 * sched_job.user_share (smaller first: decayed usage over weight, as the
 * caller computes it); then the queue order's key (FIFO or ESTIMATE).
 * A job that has waited longer than sched_config.starve_s (0: never) is
 * ordered before every job of its priority that has not (with or without
 * queues; only jobs of at least sched_config.starve_min_gpus GPUs when
 * set), oldest first,
 * so the wait of a big gang is bounded: it becomes the top blocked job
 * and gets the reservation, which backfill respects.
 *
 * Preemption: a job that cannot start (no placement now, or over quota)
 * and whose queue's policy allows it (sched_queue.preempt), and that is
 * not already preempting, may name victims: running jobs with
 * sched_running.preemptible set, not victims of another job in this
 * pass, and
 *   LOWER:     of the same queue, with a lower priority;
 *   BORROWERS: of another queue that is borrowing (its queue, or one of
 *              its ancestors below the lowest queue the two share, uses
 *              more than its nominal), when j itself stays within
 *              nominal with its GPUs added (on every queue of its path
 *              below that shared one).
 * Victims are whole jobs; they are taken in order of least lost work
 * (sched_running.lost, then fewer GPUs, then the newest start, then id),
 * only those holding GPUs j could use, until j fits both placement (its
 * topology constraint included, on the GPUs the victims would free plus
 * those free now) and quota (the victims' usage removed); then victims
 * that are not needed are dropped again (most lost work first). When j
 * would still not fit with every candidate gone, nothing is preempted.
 * At most sched_config.preempt_max_jobs jobs (0: SCHED_PREEMPT_MAX_JOBS)
 * plan preemptions per pass, and at most SCHED_PREEMPT_MAX_TRIES look
 * for victims (a search that could not succeed with every candidate
 * gone costs one placement); for a required torus box each box test
 * counts as one more try (see "Torus"). The GPUs free now that a planned placement
 * counts on are held for the rest of the pass, so no later job of the
 * pass takes them. The result lists each preemption; the
 * caller checkpoints and stops the victims, then passes the preemptor
 * with preempting set until it starts (it is ordered first, so it gets
 * the freed GPUs) and the victims with preemptible false. */
#define SCHED_UNLIMITED UINT32_MAX
#define SCHED_FLAVORS_MAX 8
#define SCHED_PREEMPT_MAX_JOBS 8
#define SCHED_PREEMPT_MAX_TRIES 64
#define SCHED_PREEMPT_BOX_DROPS 8
#define SCHED_TORUS_SEARCHES_MAX 64

enum sched_preempt {
	SCHED_PREEMPT_NEVER = 0,
	SCHED_PREEMPT_LOWER = 1,	/* lower-priority jobs of its queue */
	SCHED_PREEMPT_BORROWERS = 2,	/* reclaim nominal from borrowers */
	SCHED_PREEMPT_BOTH = 3,
};

struct sched_queue {
	int32_t parent;		/* index into sched_input.queues; -1: top */
	uint32_t nominal[SCHED_FLAVORS_MAX];	/* [nflavors] used */
	uint32_t borrow_limit;	/* SCHED_UNLIMITED: none */
	uint32_t lend_limit;	/* SCHED_UNLIMITED: none */
	uint64_t share;		/* fair-share key; smaller goes first */
	enum sched_preempt preempt;
};

struct sched_gpu {
	uint32_t index;		/* node-local index (CUDA_VISIBLE_DEVICES) */
	enum sched_health health;
	uint64_t job;		/* job holding it, 0: free */
	int32_t nvlink;		/* NVLink/NVSwitch domain; -1: none */
	int32_t pcie;		/* PCIe switch; -1: unknown */
	int32_t numa;		/* NUMA node; -1: unknown */
	bool near_nic;		/* shares a PCIe switch with a NIC */
	int32_t rail;		/* its NIC's index on the node, which is
				 * its rail; -1: unknown */
};

struct sched_node {
	const char *name;	/* matched against the topology */
	bool up;		/* heartbeats arrive */
	bool drained;		/* DRAINING or DRAINED: no new work */
	enum sched_health health;
	const char *gpu_model;	/* NULL: unknown, matches no --gpu-type */
	const struct sched_gpu *gpus;
	uint32_t ngpus;
	bool spare;		/* hot spare: restarting jobs only */
	uint32_t cpu_jobs;	/* CPU-only jobs running on it (no
				 * exclusive job may start here) */
	bool exclusive;		/* held by a running exclusive job: no
				 * other job may start here */
	bool suspect;		/* failures attributed to it lately: last
				 * for restarts and large gangs */
};

/* A job holding GPUs (sched_gpu.job) and when it is expected to end: its
 * start plus its time limit (or plus the default limit). A GPU held by a
 * job id that has no entry here is taken to stay held forever. */
struct sched_running {
	uint64_t id;
	int64_t end;
	/* With queues: */
	uint32_t queue;		/* index into sched_input.queues */
	int32_t priority;
	bool preemptible;	/* may be a victim (past its queue's
				 * min_runtime, not already stopping) */
	int64_t lost;		/* seconds of work a preemption now would
				 * lose (since its last checkpoint) */
	int64_t start;		/* when it started (ties: newest first) */
};

struct sched_job {
	uint64_t id;		/* unique among pending jobs */
	int32_t priority;
	int64_t submit;
	bool restarting;
	uint32_t nodes_min;
	uint32_t nodes_max;	/* == nodes_min unless elastic */
	uint32_t gpus_per_node;	/* 0: whole nodes */
	const char *gpu_type;	/* NULL: any model */
	enum sched_topo_mode topo_mode;
	const char *topo_level;	/* level name; unused for SCHED_TOPO_ANY */
	int64_t time_limit;	/* seconds; 0: the default limit */
	/* The previous gang, in rank order, as indices into
	 * sched_input.nodes (out of range or repeated entries are skipped):
	 * its nodes are kept where they still fit (see the policy). Read
	 * whenever nprev > 0, restarting or not; only restarting jobs may
	 * get spares. NULL / 0: none. */
	const uint32_t *prev_nodes;
	uint32_t nprev;
	/* SCHED_ORDER_ESTIMATE: the estimate (seconds) the queue is ordered
	 * by; 0: the time limit. Not a limit: backfill and the reservation
	 * still use time_limit. (The trace replay's oracle passes the true
	 * run time here; the controller leaves it 0.) */
	int64_t order_hint;
	/* With queues: */
	uint32_t queue;		/* index into sched_input.queues */
	uint64_t user_share;	/* fair share of its user in the queue */
	bool preempting;	/* its victims are stopping: ordered first,
				 * plans no new preemption */
	/* Node constraints (see the policy): node_ok[i] non-zero allows
	 * sched_input.nodes[i] (nnodes bytes); NULL: every node. */
	const uint8_t *node_ok;
	bool cpu_only;		/* takes no GPU; gpus_per_node unused */
	bool exclusive;		/* whole nodes, no other job on them */
	/* Blocks (see the policy): nodes per segment, each segment inside
	 * one block of the topology; 0: none. topo_level "block" (with
	 * SCHED_TOPO_REQUIRED or _PREFERRED) names one whole block. */
	uint32_t segment;
};

enum sched_order {
	SCHED_ORDER_FIFO = 0,	/* priority, restarting, submit, id */
	SCHED_ORDER_ESTIMATE,	/* priority, restarting, estimate aged by
				 * the wait, submit, id */
};

/* sched_config.aging is in thousandths: 1000 takes one second off a
 * job's key per second it has waited. The controller's default, tuned on
 * the Philly trace replay (docs/BENCHMARKS.md, "Trace replay"): */
#define SCHED_AGING_UNIT 1000
#define SCHED_DEFAULT_AGING 250

struct sched_config {
	int64_t default_limit;	/* seconds; 0: SCHED_DEFAULT_LIMIT_S */
	uint32_t bf_max_job_test; /* 0: SCHED_BF_MAX_JOB_TEST */
	enum sched_order order;	/* 0: SCHED_ORDER_FIFO */
	uint32_t aging;		/* SCHED_ORDER_ESTIMATE; thousandths */
	bool no_backfill;	/* strict queue order: nothing passes the
				 * first blocked job */
	int64_t starve_s;	/* waited longer: ordered first; 0: off */
	uint32_t starve_min_gpus; /* only jobs asking at least this many
				 * GPUs (nodes_min x gpus_per_node, a
				 * whole node counting the largest
				 * node's) starve; 0: every job */
	uint32_t preempt_max_jobs; /* 0: SCHED_PREEMPT_MAX_JOBS */
	/* Gangs of at least this many nodes, and restarts, take suspect
	 * nodes (sched_node.suspect) last; 0: only restarts do. */
	uint32_t suspect_gang_nodes;
};

struct sched_input {
	int64_t now;
	const struct topo *topo;	/* NULL: one flat domain */
	const struct sched_node *nodes;
	size_t nnodes;
	const struct sched_running *running;
	size_t nrunning;
	const struct sched_job *pending;
	size_t npending;
	struct sched_config config;
	/* Queues (see above); NULL / 0: none. Every queue, running and
	 * pending index must be below nqueues and the parents must form a
	 * tree (sched_run fails with EINVAL otherwise). */
	const struct sched_queue *queues;
	size_t nqueues;
	/* Flavor k's model pattern; [0] is unused (every GPU). 0 or 1:
	 * flavor 0 only. At most SCHED_FLAVORS_MAX. */
	const char *const *flavors;
	size_t nflavors;
};

/* One node of a placement. */
struct sched_place {
	uint32_t node;		/* index into sched_input.nodes */
	uint32_t ngpus;
	const uint32_t *gpus;	/* sched_gpu.index values, ascending */
};

struct sched_start {
	uint64_t job;
	size_t pending;		/* index into sched_input.pending */
	int64_t end;		/* now + limit: what later passes should pass
				 * as sched_running.end */
	bool backfill;		/* started after the reservation was made */
	uint32_t nnodes;	/* the size chosen (elastic jobs) */
	const struct sched_place *nodes;	/* rank order */
};

struct sched_resv {
	uint64_t job;
	size_t pending;
	int64_t start;		/* >= now */
	uint32_t nnodes;
	const struct sched_place *nodes;
};

/* Job `job` (pending index `pending`) will start once victims[0 .. n)
 * have stopped. */
struct sched_preemption {
	uint64_t job;
	size_t pending;
	const uint64_t *victims;	/* running job ids */
	size_t nvictims;
};

struct sched_stats {
	size_t tried;		/* jobs placement was attempted for */
	size_t preempt_tried;	/* jobs victims were looked for */
	size_t backfilled;	/* starts after the reservation */
	size_t torus_searches;	/* torus box searches (any state) */
	size_t scratch_bytes;	/* peak memory the pass allocated */
};

struct sched_result {
	struct sched_start *starts;	/* in decision order */
	size_t nstarts;
	bool has_resv;
	struct sched_resv resv;
	enum sched_reason *reasons;	/* [npending]: NONE when started */
	/* [npending] with queues: for QUEUE_QUOTA, the queue at its limit;
	 * NULL without queues. */
	uint32_t *quota_queue;
	struct sched_preemption *preempts;
	size_t npreempts;
	struct sched_stats stats;
	/* Storage behind the pointers above. */
	struct sched_place *places_;
	uint32_t *gpus_;
	uint64_t *victims_;
};

/* Run one scheduling pass over in. Returns a result the caller frees with
 * sched_result_free; or NULL with errno EINVAL (in is NULL, an array is
 * NULL with a non-zero count, more than UINT32_MAX / 2 nodes) or ENOMEM.
 * The result does not point into in; in is not modified. Bad job specs
 * are not errors: those jobs get a reason (BadConstraints, …). The cost
 * is linear in nodes, GPUs and pending jobs (plus sorting the queue),
 * with placement work bounded by the starts and bf_max_job_test; a
 * restart that keeps nodes walks only the region (leaf, spine, …) around
 * its kept nodes that holds its replacements. A job with node constraints
 * (node_ok, cpu_only, exclusive) adds a walk over the nodes per distinct
 * constraint and state (counts are remembered within the pass), and one
 * per placement tried. On a topology with blocks the pass tree has a
 * piece (a level-0 leaf) per (leaf, block) pair, so the counts cover
 * blocks too; each placement adds a sum over the pieces and one over the
 * groups of blocks (blocks times the tree's height plus the aggregated
 * sizes), and ranks nodes only in the blocks it takes; building the
 * state adds one name lookup per node.
 * On a torus of C cells, a placement there builds a
 * grid of fitting nodes and its prefix sums (O(nodes + C); the last four
 * are kept per request and state) and tries up to 24 shapes at up to C
 * positions each (O(1) per position, slabs and rows that cannot hold the
 * gang skipped whole); a shape that held no box for a size is not
 * searched again at that state for that size or more, nor any shape
 * inside it; the fallback sorts the fitting nodes; a pass makes at most
 * SCHED_TORUS_SEARCHES_MAX searches for required boxes. A required box's
 * reservation costs one replay plus a grid and search per bisection
 * step (log of the running jobs' end times). */
struct sched_result	*sched_run(const struct sched_input *in);

/* Free a result; NULL is fine. */
void			 sched_result_free(struct sched_result *);

/* The reason's name as users see it ("Resources", …); static storage. */
const char		*sched_reason_name(enum sched_reason);

/* Does a node with GPU model `model` satisfy --gpu-type `type`? (NULL type:
 * any model; a substring, ignoring case.) */
bool			 sched_gpu_type_match(const char *model,
			    const char *type);

#endif
