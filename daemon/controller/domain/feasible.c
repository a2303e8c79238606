/* Refusing the impossible at submit (feasible.h): each check names the
 * flag that asks too much and what the cluster has instead. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/sched.h"
#include "daemon/sched/topo.h"
#include "daemon/controller/domain/feasible.h"
#include "lib/constraint.h"
#include "lib/hostlist.h"

/* Names a --nodelist may expand to before it is refused. */
#define FEASIBLE_LIST_MAX 65536

struct fname {
	const char *name;
	size_t idx;
};

struct fctx {
	const struct feasible_input *in;
	const struct job_spec *spec;
	uint32_t g;		/* GPUs a node must have */
	bool cpu;		/* takes no GPU: any node will do */
	uint8_t *fit;		/* per node: could ever hold the job */
	uint8_t *ok;		/* per node: the filter allows it */
	struct fname *byname;	/* nodes sorted by name */
};

static bool
type_ok(const struct fctx *x, size_t i)
{
	return sched_gpu_type_match(x->in->nodes[i].model, x->spec->gpu_type);
}

/* "no node has a GPU matching 'B300'; models here: H100, A100". */
static int
check_type(const struct fctx *x, struct cerr *err)
{
	const struct feasible_input *in = x->in;
	char models[300];
	size_t i, k, off = 0;
	int w;

	if (x->spec->gpu_type == NULL)
		return 0;
	for (i = 0; i < in->nnodes; i++)
		if (type_ok(x, i))
			return 0;
	models[0] = '\0';
	for (i = 0; i < in->nnodes && off < sizeof(models) - 1; i++) {
		if (in->nodes[i].model == NULL)
			continue;
		for (k = 0; k < i; k++)
			if (in->nodes[k].model != NULL &&
			    strcmp(in->nodes[k].model, in->nodes[i].model) == 0)
				break;
		if (k < i)
			continue;
		w = snprintf(models + off, sizeof(models) - off, "%s%s",
		    off > 0 ? ", " : "", in->nodes[i].model);
		off += w > 0 ? (size_t)w : 0;
	}
	if (models[0] == '\0')
		return cerr_set(err, ERR_INVALID, "--gpu-type %s: no node has "
		    "a GPU matching '%s'; no node here reports a GPU model",
		    x->spec->gpu_type, x->spec->gpu_type);
	return cerr_set(err, ERR_INVALID, "--gpu-type %s: no node has a GPU "
	    "matching '%s'; models here: %s", x->spec->gpu_type,
	    x->spec->gpu_type, models);
}

/* "--gpus-per-node 16: the largest node has 8 GPUs (H100)". */
static int
check_gpus(const struct fctx *x, struct cerr *err)
{
	const struct feasible_input *in = x->in;
	size_t i, big = 0;
	bool any = false;

	if (x->cpu || x->g == 0)
		return 0;
	for (i = 0; i < in->nnodes; i++)
		if (type_ok(x, i) && (!any ||
		    in->nodes[i].ngpus > in->nodes[big].ngpus)) {
			big = i;
			any = true;
		}
	if (in->nodes[big].ngpus >= x->g)
		return 0;
	if (x->spec->gpus_per_node == 0)
		return cerr_set(err, ERR_INVALID, "%s: no node%s%s has a "
		    "GPU; a job without GPUs takes --gpus-per-node 0",
		    x->spec->exclusive ? "--exclusive" : "whole nodes",
		    x->spec->gpu_type != NULL ? " of type " : "",
		    x->spec->gpu_type != NULL ? x->spec->gpu_type : "");
	return cerr_set(err, ERR_INVALID, "--gpus-per-node %u: the largest "
	    "node%s%s has %u GPUs (%s)", x->spec->gpus_per_node,
	    x->spec->gpu_type != NULL ? " of type " : "",
	    x->spec->gpu_type != NULL ? x->spec->gpu_type : "",
	    in->nodes[big].ngpus, in->nodes[big].model != NULL ?
	    in->nodes[big].model : "no model reported");
}

/* The level "block" on a topology with blocks: one block (block.c). */
static bool
block_level(const struct fctx *x)
{
	return x->spec->topo_mode != TOPO_ANY && x->spec->topo_level != NULL &&
	    topo_nblocks(x->in->topo) > 0 &&
	    strcasecmp(x->spec->topo_level, "block") == 0;
}

/* --topology torus: the topology must have a torus. */
static int
check_torus(const struct fctx *x, struct cerr *err)
{
	if (topo_torus(x->in->topo) == NULL)
		return cerr_set(err, ERR_INVALID, "--topology torus: the "
		    "controller's topology has no torus (a TorusName= line "
		    "in topology.conf)");
	return 0;
}

/* "no topology level 'rack'; levels: switch, spine". */
static int
check_level(const struct fctx *x, int *level, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	char names[256];
	size_t off = 0;
	unsigned L, h;
	int w;

	*level = -1;
	if (spec->topo_mode == TOPO_ANY || spec->topo_level == NULL ||
	    block_level(x))
		return 0;
	if (strcasecmp(spec->topo_level, "torus") == 0)
		return check_torus(x, err);
	if ((*level = topo_level_index(x->in->topo, spec->topo_level)) >= 0)
		return 0;
	h = x->in->topo != NULL ? topo_height(x->in->topo) : 0;
	if (h == 0)
		return cerr_set(err, ERR_INVALID, "--topology %s: no topology "
		    "level '%s'; the controller has no topology",
		    spec->topo_level, spec->topo_level);
	names[0] = '\0';
	for (L = 0; L < h && off < sizeof(names) - 1; L++) {
		w = snprintf(names + off, sizeof(names) - off, "%s%s",
		    L > 0 ? ", " : "", topo_level_name(x->in->topo, L));
		off += w > 0 ? (size_t)w : 0;
	}
	return cerr_set(err, ERR_INVALID, "--topology %s: no topology level "
	    "'%s'; levels: %s", spec->topo_level, spec->topo_level, names);
}

static int
fname_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fname *)a)->name,
	    ((const struct fname *)b)->name);
}

/* The index of node name, or -1. */
static int64_t
find_node(const struct fctx *x, const char *name)
{
	size_t lo = 0, hi = x->in->nnodes, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(name, x->byname[mid].name);
		if (c == 0)
			return (int64_t)x->byname[mid].idx;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Mark the filter: the --nodelist nodes (each must exist), less the
 * --exclude ones (a name not known is nothing to keep off). */
static int
mark(const struct fctx *x, const char *flag, const char *expr, uint8_t v,
    struct cerr *err)
{
	char **names, why[200];
	size_t n, k;
	int64_t idx;

	if (hostlist_expand(expr, FEASIBLE_LIST_MAX, &names, &n, why,
	    sizeof(why)) == -1) {
		if (errno == ENOMEM)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		if (errno == E2BIG)
			return cerr_set(err, ERR_INVALID, "%s: names more than "
			    "%d nodes", flag, FEASIBLE_LIST_MAX);
		return cerr_set(err, ERR_INVALID, "%s %s: %s", flag, expr,
		    why);
	}
	for (k = 0; k < n; k++) {
		if ((idx = find_node(x, names[k])) >= 0) {
			x->ok[idx] = v;
			continue;
		}
		if (v == 0)
			continue;
		cerr_set(err, ERR_INVALID, "--nodelist: no node named '%s' "
		    "(the controller knows %zu node%s)", names[k],
		    x->in->nnodes, x->in->nnodes == 1 ? "" : "s");
		hostlist_free(names, n);
		return -1;
	}
	hostlist_free(names, n);
	return 0;
}

static int
check_filter(struct fctx *x, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	size_t i;

	memset(x->ok, spec->nodelist != NULL ? 0 : 1, x->in->nnodes);
	if (spec->nodelist == NULL && spec->exclude == NULL)
		return 0;
	if ((x->byname = calloc(x->in->nnodes, sizeof(*x->byname))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < x->in->nnodes; i++) {
		x->byname[i].name = x->in->nodes[i].name;
		x->byname[i].idx = i;
	}
	qsort(x->byname, x->in->nnodes, sizeof(*x->byname), fname_cmp);
	if (spec->nodelist != NULL &&
	    mark(x, "--nodelist", spec->nodelist, 1, err) == -1)
		return -1;
	if (spec->exclude != NULL &&
	    mark(x, "--exclude", spec->exclude, 0, err) == -1)
		return -1;
	return 0;
}

/* --constraint and --gpu-memory take the nodes without the features or
 * the memory out of the filter; each is refused alone when no known node
 * meets it at all ("--constraint fp64: no node has feature fp64"). */
static int
check_constraints(struct fctx *x, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	const struct feasible_node *nd;
	uint64_t most = 0;
	size_t i, nfeat = 0, nmem = 0;
	char why[200];

	if (spec->constraint == NULL && spec->gpu_memory_mb == 0)
		return 0;
	if (spec->constraint != NULL &&
	    constraint_parse(spec->constraint, why, sizeof(why)) == -1)
		return cerr_set(err, ERR_INVALID, "--constraint '%.64s%s': "
		    "%s", spec->constraint, strlen(spec->constraint) > 64 ?
		    "..." : "", why);
	for (i = 0; i < x->in->nnodes; i++) {
		nd = &x->in->nodes[i];
		if (nd->gpu_memory_mb > most)
			most = nd->gpu_memory_mb;
		if (spec->gpu_memory_mb > 0 && (nd->ngpus == 0 ||
		    !job_gpu_memory_ok(nd->gpu_memory_mb,
		    spec->gpu_memory_mb)))
			x->ok[i] = 0;
		else
			nmem++;
		if (spec->constraint != NULL &&
		    constraint_match(spec->constraint, nd->features,
		    nd->nfeatures) != 1)
			x->ok[i] = 0;
		else
			nfeat++;
	}
	if (nfeat == 0)
		return cerr_set(err, ERR_INVALID, "--constraint %s: no node "
		    "has feature%s %s", spec->constraint,
		    strpbrk(spec->constraint, "&|") != NULL ? "s" : "",
		    spec->constraint);
	if (nmem == 0)
		return cerr_set(err, ERR_INVALID, "--gpu-memory %llu GiB: no "
		    "node has that much on every GPU (at most %llu GiB)",
		    (unsigned long long)(spec->gpu_memory_mb / 1024),
		    (unsigned long long)((most + 512) / 1024));
	return 0;
}

/* --cpus-per-task and --mem-per-node, as check_constraints: nodes
 * without the CPUs (x --tasks-per-node) or the memory leave the filter,
 * and each is refused alone when no node has that much ("--cpus-per-task
 * 16: 2 tasks per node need 32 CPUs; the largest node has 16"). */
static int
check_cpus_mem(struct fctx *x, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	const struct feasible_node *nd;
	uint64_t most_mem = 0, tpn;
	uint32_t most_cpus = 0;
	size_t i, ncpu = 0, nmem = 0;

	if (spec->cpus_per_task == 0 && spec->mem_per_node_mb == 0)
		return 0;
	tpn = spec->tasks_per_node > 0 ? spec->tasks_per_node : 1;
	for (i = 0; i < x->in->nnodes; i++) {
		nd = &x->in->nodes[i];
		if (nd->ncpus > most_cpus)
			most_cpus = nd->ncpus;
		if (nd->memory_mb > most_mem)
			most_mem = nd->memory_mb;
		if (!job_node_cpus_ok(spec, nd->ncpus))
			x->ok[i] = 0;
		else
			ncpu++;
		if (!job_node_mem_ok(spec, nd->memory_mb))
			x->ok[i] = 0;
		else
			nmem++;
	}
	if (ncpu == 0)
		return cerr_set(err, ERR_INVALID, "--cpus-per-task %u: %llu "
		    "task%s per node need%s %llu CPUs; no node has that many "
		    "(at most %u)", spec->cpus_per_task, (unsigned long long)tpn,
		    tpn == 1 ? "" : "s", tpn == 1 ? "s" : "",
		    (unsigned long long)(tpn * spec->cpus_per_task), most_cpus);
	if (nmem == 0)
		return cerr_set(err, ERR_INVALID, "--mem-per-node %llu MiB: no "
		    "node has that much memory (at most %llu MiB)",
		    (unsigned long long)spec->mem_per_node_mb,
		    (unsigned long long)most_mem);
	return 0;
}

/* n nodes that could hold the job, for messages: "2 nodes with 8 or
 * more GPUs of type H100". */
static void
what_fits(const struct fctx *x, size_t n, char *buf, size_t len)
{
	const struct job_spec *spec = x->spec;
	const char *ty = spec->gpu_type, *s = n == 1 ? "" : "s";

	if (x->cpu)
		snprintf(buf, len, "%zu node%s", n, s);
	else if (x->g == 0)
		snprintf(buf, len, "%zu node%s that can be had whole", n, s);
	else if (spec->gpus_per_node == 0)
		snprintf(buf, len, "%zu node%s with GPUs%s%s", n, s,
		    ty != NULL ? " of type " : "", ty != NULL ? ty : "");
	else
		snprintf(buf, len, "%zu %snode%s with %u or more GPUs%s%s", n,
		    spec->exclusive ? "whole " : "", s, x->g,
		    ty != NULL ? " of type " : "", ty != NULL ? ty : "");
}

/* Enough nodes that could hold it, and enough left by the filter. */
static int
check_count(const struct fctx *x, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	size_t i, nall = 0, nok = 0, nflags;
	const char *flags[6];
	char what[160], list[120];

	for (i = 0; i < x->in->nnodes; i++) {
		nall += x->fit[i];
		nok += x->fit[i] && x->ok[i];
	}
	if (nall < spec->nodes_min) {
		what_fits(x, nall, what, sizeof(what));
		return cerr_set(err, ERR_INVALID, "--nodes %u: the cluster has "
		    "only %s", spec->nodes_min, what);
	}
	what_fits(x, nok, what, sizeof(what));
	if (nok >= spec->nodes_min)
		return 0;
	nflags = 0;
	if (spec->nodelist != NULL)
		flags[nflags++] = "--nodelist";
	if (spec->exclude != NULL)
		flags[nflags++] = "--exclude";
	if (spec->constraint != NULL)
		flags[nflags++] = "--constraint";
	if (spec->gpu_memory_mb > 0)
		flags[nflags++] = "--gpu-memory";
	if (spec->cpus_per_task > 0)
		flags[nflags++] = "--cpus-per-task";
	if (spec->mem_per_node_mb > 0)
		flags[nflags++] = "--mem-per-node";
	list[0] = '\0';
	for (i = 0; i < nflags; i++) {
		strcat(list, i == 0 ? "" : i + 1 == nflags ? " and " : ", ");
		strcat(list, flags[i]);
	}
	return cerr_set(err, ERR_INVALID, "--nodes %u: %s leave%s only %s",
	    spec->nodes_min, list, nflags == 1 ? "s" : "", what);
}

/* A required torus box must fit on the torus: nodes it places that
 * could take the job. */
static int
check_torus_nodes(const struct fctx *x, struct cerr *err)
{
	const struct topo_torus *tt = topo_torus(x->in->topo);
	uint32_t c[3];
	size_t i, n = 0;
	char what[160];

	for (i = 0; i < x->in->nnodes; i++)
		if (x->fit[i] && x->ok[i] &&
		    topo_torus_coord(tt, x->in->nodes[i].name, c) == 0)
			n++;
	if (n >= x->spec->nodes_min)
		return 0;
	what_fits(x, n, what, sizeof(what));
	return cerr_set(err, ERR_INVALID, "--nodes %u with --topology "
	    "torus:required: the torus %s holds only %s",
	    x->spec->nodes_min, topo_torus_name(tt), what);
}

/* A required level: one domain at it must hold the gang. Nodes the
 * topology does not list share one domain, as in the core. */
static int
check_domains(const struct fctx *x, int level, struct cerr *err)
{
	const struct topo *t = x->in->topo;
	size_t ns = topo_nswitches(t), i, best = 0;
	uint32_t *cnt;
	int32_t s, p;
	char what[160];

	if (x->spec->topo_mode == TOPO_REQUIRED && level < 0 &&
	    x->spec->topo_level != NULL && topo_torus(t) != NULL &&
	    strcasecmp(x->spec->topo_level, "torus") == 0)
		return check_torus_nodes(x, err);
	if (x->spec->topo_mode != TOPO_REQUIRED || level < 0)
		return 0;
	if ((cnt = calloc(ns + 1, sizeof(*cnt))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < x->in->nnodes; i++) {
		if (!x->fit[i] || !x->ok[i])
			continue;
		if ((s = topo_node_leaf(t, x->in->nodes[i].name)) < 0) {
			cnt[ns]++;
			continue;
		}
		while ((p = topo_switch_parent(t, (size_t)s)) >= 0 &&
		    topo_switch_level(t, (size_t)p) <= (unsigned)level)
			s = p;
		cnt[s]++;
	}
	for (i = 0; i <= ns; i++)
		if (cnt[i] > best)
			best = cnt[i];
	free(cnt);
	if (best >= x->spec->nodes_min)
		return 0;
	what_fits(x, best, what, sizeof(what));
	return cerr_set(err, ERR_INVALID, "--nodes %u with --topology "
	    "%s:required: the largest %s holds only %s%s",
	    x->spec->nodes_min, x->spec->topo_level, x->spec->topo_level,
	    what, x->spec->nodelist != NULL || x->spec->exclude != NULL ?
	    " that --nodelist/--exclude allow" : "");
}

/* Blocks: --segment N needs blocks holding nodes_min / N segments of N
 * such nodes; --topology block one block holding the gang. */
static int
check_blocks(const struct fctx *x, struct cerr *err)
{
	const struct job_spec *spec = x->spec;
	const struct topo *t = x->in->topo;
	size_t nb = topo_nblocks(t), i, best = 0, segs = 0;
	uint32_t *cnt;
	int32_t b;
	char what[160];
	bool one = block_level(x) && spec->topo_mode == TOPO_REQUIRED;

	if (spec->segment == 0 && !one)
		return 0;
	if (nb == 0)
		return cerr_set(err, ERR_INVALID, "--segment %u: the topology "
		    "has no blocks (BlockName= in topology.conf)",
		    spec->segment);
	if ((cnt = calloc(nb, sizeof(*cnt))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < x->in->nnodes; i++)
		if (x->fit[i] && x->ok[i] &&
		    (b = topo_node_block(t, x->in->nodes[i].name)) >= 0)
			cnt[b]++;
	for (i = 0; i < nb; i++) {
		if (cnt[i] > best)
			best = cnt[i];
		if (spec->segment > 0)
			segs += cnt[i] / spec->segment;
	}
	free(cnt);
	what_fits(x, best, what, sizeof(what));
	if (one && best < spec->nodes_min)
		return cerr_set(err, ERR_INVALID, "--nodes %u with --topology "
		    "block: the largest block holds only %s",
		    spec->nodes_min, what);
	if (spec->segment > 0 && segs * spec->segment < spec->nodes_min)
		return cerr_set(err, ERR_INVALID, "--nodes %u with --segment "
		    "%u: the blocks hold only %zu such segment%s (the largest "
		    "block %s)", spec->nodes_min, spec->segment, segs,
		    segs == 1 ? "" : "s", what);
	return 0;
}

/* Does the topology name nodes that have never registered (a cluster
 * being brought up)? Their GPUs are not known, so they might hold the
 * job: nothing is judged until each has registered once. */
static bool
topo_unregistered(const struct feasible_input *in)
{
	size_t i, k = 0, kb = 0, nb = 0;

	const struct topo_torus *tt;
	uint32_t c[3];

	if (in->topo == NULL)
		return false;
	for (i = 0; i < in->nnodes; i++) {
		k += topo_node_leaf(in->topo, in->nodes[i].name) >= 0;
		kb += topo_node_block(in->topo, in->nodes[i].name) >= 0;
	}
	for (i = 0; i < topo_nblocks(in->topo); i++)
		nb += topo_block_nnodes(in->topo, i);
	if (k < topo_nnodes(in->topo) || kb < nb)
		return true;
	/* The torus's nodes likewise. */
	if ((tt = topo_torus(in->topo)) == NULL)
		return false;
	for (i = 0, k = 0; i < in->nnodes; i++)
		k += topo_torus_coord(tt, in->nodes[i].name, c) == 0;
	return k < topo_torus_nnodes(tt);
}

int
feasible_check(const struct feasible_input *in, const struct job_spec *spec,
    struct cerr *err)
{
	struct fctx x;
	size_t i;
	int level, rc = -1;

	/* Nothing known: nothing to judge by. A spec the validation will
	 * refuse anyway is left to it. */
	if (in == NULL || in->nnodes == 0 || spec->nodes_min == 0 ||
	    topo_unregistered(in))
		return 0;
	memset(&x, 0, sizeof(x));
	x.in = in;
	x.spec = spec;
	x.cpu = spec->cpu_only && !spec->exclusive;
	if (spec->exclusive)
		x.g = spec->cpu_only ? 0 : spec->gpus_per_node > 0 ?
		    spec->gpus_per_node : 1;
	else if (!x.cpu)
		x.g = spec->gpus_per_node > 0 ? spec->gpus_per_node : 1;
	if ((x.fit = calloc(in->nnodes, 1)) == NULL ||
	    (x.ok = calloc(in->nnodes, 1)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	for (i = 0; i < in->nnodes; i++)
		x.fit[i] = type_ok(&x, i) && in->nodes[i].ngpus >= x.g &&
		    in->nodes[i].ngpus <= SCHED_NODE_GPUS_MAX;
	if (check_type(&x, err) == -1 || check_gpus(&x, err) == -1 ||
	    check_level(&x, &level, err) == -1 ||
	    check_filter(&x, err) == -1 || check_constraints(&x, err) == -1 ||
	    check_cpus_mem(&x, err) == -1 ||
	    check_count(&x, err) == -1 ||
	    check_domains(&x, level, err) == -1 ||
	    check_blocks(&x, err) == -1)
		goto out;
	rc = 0;
out:
	free(x.fit);
	free(x.ok);
	free(x.byname);
	return rc;
}
