/* Placement on a 3D torus (sched.h, "Torus"): a gang goes into a compact
 * axis-aligned box, wrap-around counted. A box "holds" n nodes when at
 * least n of its cells carry a node that fits the job; box sums come
 * from a prefix-sum grid of fitting nodes, so trying one position costs
 * at most eight lookups per piece a wrapped box splits into. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sched/sched_int.h"
#include "daemon/sched/topo.h"

/* The most compact shapes tried per placement; the grid of fitting
 * nodes is remembered for the last (request, state) asked. */
#define TORUS_SHAPES_MAX 24
#define TORUS_GRIDS 4
#define TORUS_SHAPE_CACHE 16
#define TORUS_FAIL_CACHE 32

struct shape {
	uint32_t d[3];
	uint32_t diam;
	uint32_t vol;
};

struct shapes {
	uint32_t n;		/* 0: unused slot */
	uint32_t count;
	struct shape s[TORUS_SHAPES_MAX];
};

/* The request fields state_fits reads, with the state they were read
 * at: equal keys give equal grids. */
struct tkey {
	const uint8_t *match, *ok;
	uint64_t ver, fver;
	uint32_t g, gmin;
	int set, kind;
	bool valid;
};

struct torus {
	uint32_t X, Y, Z;
	bool wrap[3];
	uint32_t ncell;
	uint32_t *cell_node;	/* [ncell]: node index or NO_INDEX */
	uint32_t *node_cell;	/* [nnodes]: cell or NO_INDEX */
	uint32_t *pre;		/* [(X+1)(Y+1)(Z+1)] prefix sums of fit */
	uint8_t *fit;		/* [ncell] */
	/* The last grids made (pre and fit point into one); [TORUS_GRIDS]
	 * is the replay's, never looked up. */
	struct {
		struct tkey key;
		uint32_t *pre;
		uint8_t *fit;
	} g[TORUS_GRIDS + 1];
	uint32_t g_next;
	struct shapes sc[TORUS_SHAPE_CACHE];
	uint32_t sc_next;
	/* Searches that found no box: at key k no position of any of the
	 * shapes held n fitting nodes. */
	struct {
		struct tkey k;
		uint32_t n;	/* 0: unused slot */
		uint32_t count;
		uint32_t d[TORUS_SHAPES_MAX][3];
	} fail[TORUS_FAIL_CACHE];
	uint32_t fail_next;
	uint32_t *col;		/* [X + 1]: best_pos's column sums */
	struct cand *cand;	/* [nnodes] */
	uint32_t *dist;		/* [nnodes] scratch for the fallback */
};

int
torus_build(struct pass *ps)
{
	const struct topo_torus *tt = topo_torus(ps->in->topo);
	struct torus *T;
	uint32_t dims[3], c[3], i, cell;
	bool wrap[3];

	ps->tor = NULL;
	if (tt == NULL || topo_torus_dims(tt, dims, wrap) == 0)
		return 0;
	if ((T = state_alloc(ps, 1, sizeof(*T))) == NULL)
		return -1;
	T->X = dims[0];
	T->Y = dims[1];
	T->Z = dims[2];
	memcpy(T->wrap, wrap, sizeof(T->wrap));
	T->ncell = T->X * T->Y * T->Z;
	if ((T->cell_node = state_alloc(ps, T->ncell, 4)) == NULL ||
	    (T->node_cell = state_alloc(ps, ps->nnodes + 1, 4)) == NULL ||
	    (T->col = state_alloc(ps, T->X + 1, 4)) == NULL ||
	    (T->cand = state_alloc(ps, ps->nnodes + 1, sizeof(*T->cand))) ==
	    NULL || (T->dist = state_alloc(ps, ps->nnodes + 1, 4)) == NULL)
		return -1;
	for (i = 0; i <= TORUS_GRIDS; i++)
		if ((T->g[i].fit = state_alloc(ps, T->ncell, 1)) == NULL ||
		    (T->g[i].pre = state_alloc(ps, (size_t)(T->X + 1) *
		    (T->Y + 1) * (T->Z + 1), 4)) == NULL)
			return -1;
	for (cell = 0; cell < T->ncell; cell++)
		T->cell_node[cell] = NO_INDEX;
	for (i = 0; i < ps->nnodes; i++) {
		T->node_cell[i] = NO_INDEX;
		if (topo_torus_coord(tt, ps->in->nodes[i].name, c) == -1)
			continue;
		cell = (c[2] * T->Y + c[1]) * T->X + c[0];
		/* Two input nodes of one name: the first keeps the cell. */
		if (T->cell_node[cell] != NO_INDEX)
			continue;
		T->cell_node[cell] = i;
		T->node_cell[i] = cell;
	}
	ps->tor = T;
	return 0;
}

bool
torus_is_level(const char *name)
{
	return name != NULL && strcasecmp(name, "torus") == 0;
}

static uint32_t
side_diam(uint32_t a, uint32_t D, bool wrap)
{
	if (wrap && a - 1 > D / 2)
		return D / 2;
	return a - 1;
}

static int
shape_cmp(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;
	uint32_t mx, my;
	int k;

	if (x->diam != y->diam)
		return x->diam < y->diam ? -1 : 1;
	if (x->vol != y->vol)
		return x->vol < y->vol ? -1 : 1;
	mx = x->d[0] > x->d[1] ? x->d[0] : x->d[1];
	mx = mx > x->d[2] ? mx : x->d[2];
	my = y->d[0] > y->d[1] ? y->d[0] : y->d[1];
	my = my > y->d[2] ? my : y->d[2];
	if (mx != my)
		return mx < my ? -1 : 1;
	for (k = 0; k < 3; k++)
		if (x->d[k] != y->d[k])
			return x->d[k] > y->d[k] ? -1 : 1;
	return 0;
}

/* The compact shapes for n (sched.h): volume in [n, 2n), or the
 * smallest volume holding n when no shape is below 2n; the most compact
 * TORUS_SHAPES_MAX of them, best first. Sorting keeps only the best
 * TORUS_SHAPES_MAX by a bounded insertion. */
static const struct shapes *
shapes_for(struct torus *T, uint32_t n)
{
	struct shapes *S;
	struct shape sh, *s;
	uint64_t v, vmax, vmin = UINT64_MAX;
	uint32_t a, b, c, k, i;

	for (k = 0; k < TORUS_SHAPE_CACHE; k++)
		if (T->sc[k].n == n)
			return &T->sc[k];
	S = &T->sc[T->sc_next];
	T->sc_next = (T->sc_next + 1) % TORUS_SHAPE_CACHE;
	S->n = n;
	S->count = 0;
	for (a = 1; a <= T->X; a++)
		for (b = 1; b <= T->Y; b++) {
			c = (uint32_t)(((uint64_t)n + (uint64_t)a * b - 1) /
			    ((uint64_t)a * b));
			if (c <= T->Z && (v = (uint64_t)a * b * c) < vmin)
				vmin = v;
		}
	vmax = (uint64_t)2 * n - 1;
	if (vmin > vmax)
		vmax = vmin;
	for (a = 1; a <= T->X; a++)
		for (b = 1; b <= T->Y; b++) {
			c = (uint32_t)(((uint64_t)n + (uint64_t)a * b - 1) /
			    ((uint64_t)a * b));
			for (; c <= T->Z; c++) {
				v = (uint64_t)a * b * c;
				if (v > vmax)
					break;
				sh.d[0] = a;
				sh.d[1] = b;
				sh.d[2] = c;
				sh.vol = (uint32_t)v;
				sh.diam = side_diam(a, T->X, T->wrap[0]) +
				    side_diam(b, T->Y, T->wrap[1]) +
				    side_diam(c, T->Z, T->wrap[2]);
				if (S->count == TORUS_SHAPES_MAX &&
				    shape_cmp(&sh, &S->s[S->count - 1]) >= 0)
					continue;
				i = S->count < TORUS_SHAPES_MAX ? S->count++ :
				    S->count - 1;
				for (; i > 0 && shape_cmp(&sh, &S->s[i - 1]) <
				    0; i--)
					S->s[i] = S->s[i - 1];
				s = &S->s[i];
				*s = sh;
			}
		}
	return S;
}

static bool
key_eq(const struct tkey *a, const struct tkey *b)
{
	return a->valid && b->valid && a->match == b->match &&
	    a->ok == b->ok && a->ver == b->ver && a->fver == b->fver &&
	    a->g == b->g && a->gmin == b->gmin && a->set == b->set &&
	    a->kind == b->kind;
}

static void
key_of(const struct pass *ps, const struct preq *rq, struct tkey *k)
{
	memset(k, 0, sizeof(*k));
	k->match = rq->match;
	k->ok = rq->ok;
	k->ver = ps->ver;
	k->fver = ps->fver;
	k->g = rq->g;
	k->gmin = rq->gmin;
	k->set = rq->set;
	k->kind = rq->kind;
	k->valid = true;
}

static uint64_t
node_free(const struct pass *ps, const struct preq *rq,
    const uint64_t *freev, uint32_t i)
{
	if (freev != NULL)
		return freev[i];
	return rq->set == SET_STATIC ? ps->nodes[i].full : ps->nodes[i].free;
}

static bool
node_fits(const struct pass *ps, const struct preq *rq,
    const uint64_t *freev, uint32_t i)
{
	if (rq->ok != NULL && rq->ok[i] == 0)
		return false;
	return state_fits(ps, i, rq, node_free(ps, rq, freev, i));
}

#define PRE(T, x, y, z) ((T)->pre[((size_t)(z) * ((T)->Y + 1) + (y)) *	\
	((T)->X + 1) + (x)])

/* Fill fit and pre for rq on freev (NULL: the pass's state, cached by
 * key; a replay's vector is never cached). */
static void
grid(struct pass *ps, const struct preq *rq, const uint64_t *freev)
{
	struct torus *T = ps->tor;
	struct tkey k;
	uint32_t x, y, z, cell, v, i;

	if (freev == NULL) {
		key_of(ps, rq, &k);
		for (i = 0; i < TORUS_GRIDS; i++)
			if (key_eq(&k, &T->g[i].key)) {
				T->fit = T->g[i].fit;
				T->pre = T->g[i].pre;
				return;
			}
		i = T->g_next;
		T->g_next = (T->g_next + 1) % TORUS_GRIDS;
		T->g[i].key = k;
	} else
		i = TORUS_GRIDS;
	T->fit = T->g[i].fit;
	T->pre = T->g[i].pre;
	for (cell = 0; cell < T->ncell; cell++)
		T->fit[cell] = T->cell_node[cell] != NO_INDEX &&
		    node_fits(ps, rq, freev, T->cell_node[cell]);
	/* Plane 0, row 0 and column 0 stay 0 (state_alloc zeroes them and
	 * nothing writes them); each row adds its running sum to the cell
	 * below and behind, less their overlap. */
	for (z = 1; z <= T->Z; z++)
		for (y = 1; y <= T->Y; y++) {
			v = 0;
			cell = ((z - 1) * T->Y + (y - 1)) * T->X;
			for (x = 1; x <= T->X; x++) {
				v += T->fit[cell + x - 1];
				PRE(T, x, y, z) = v + PRE(T, x, y - 1, z) +
				    PRE(T, x, y, z - 1) -
				    PRE(T, x, y - 1, z - 1);
			}
		}
}

/* Sum over [x0, x1) x [y0, y1) x [z0, z1), no wrap. */
static inline uint32_t
box(const struct torus *T, uint32_t x0, uint32_t x1, uint32_t y0,
    uint32_t y1, uint32_t z0, uint32_t z1)
{
	return PRE(T, x1, y1, z1) - PRE(T, x0, y1, z1) - PRE(T, x1, y0, z1) -
	    PRE(T, x1, y1, z0) + PRE(T, x0, y0, z1) + PRE(T, x0, y1, z0) +
	    PRE(T, x1, y0, z0) - PRE(T, x0, y0, z0);
}

/* A dimension's interval from p of length a, split at the wrap: up to
 * two [lo, hi) pieces. */
static int
pieces(uint32_t p, uint32_t a, uint32_t D, uint32_t lo[2], uint32_t hi[2])
{
	if (p + a <= D) {
		lo[0] = p;
		hi[0] = p + a;
		return 1;
	}
	lo[0] = p;
	hi[0] = D;
	lo[1] = 0;
	hi[1] = p + a - D;
	return 2;
}

static uint32_t
wbox(const struct torus *T, const uint32_t p[3], const uint32_t d[3])
{
	uint32_t xl[2], xh[2], yl[2], yh[2], zl[2], zh[2], s = 0;
	int nx, ny, nz, i, j, k;

	/* Most boxes do not wrap: one lookup of eight corners. */
	if (p[0] + d[0] <= T->X && p[1] + d[1] <= T->Y && p[2] + d[2] <= T->Z)
		return box(T, p[0], p[0] + d[0], p[1], p[1] + d[1], p[2],
		    p[2] + d[2]);
	nx = pieces(p[0], d[0], T->X, xl, xh);
	ny = pieces(p[1], d[1], T->Y, yl, yh);
	nz = pieces(p[2], d[2], T->Z, zl, zh);
	for (k = 0; k < nz; k++)
		for (j = 0; j < ny; j++)
			for (i = 0; i < nx; i++)
				s += box(T, xl[i], xh[i], yl[j], yh[j], zl[k],
				    zh[k]);
	return s;
}

/* Positions along one dimension for a side a: all of them on a ring
 * (when the side is shorter than it), the non-wrapping ones otherwise,
 * one when the side is the whole dimension. */
static uint32_t
npos(uint32_t a, uint32_t D, bool wrap)
{
	if (a >= D)
		return 1;
	return wrap ? D : D - a + 1;
}

/* The box of shape sh at p grown by one cell on every side (clamped to
 * the torus): the cells a placement there would leave fragmented. */
static uint32_t
shell(const struct torus *T, const uint32_t p[3], const struct shape *sh)
{
	uint32_t D[3] = { T->X, T->Y, T->Z }, q[3], d[3], hi;
	int k;

	for (k = 0; k < 3; k++) {
		if (sh->d[k] + 2 >= D[k]) {
			q[k] = 0;
			d[k] = D[k];
		} else if (T->wrap[k]) {
			q[k] = (p[k] + D[k] - 1) % D[k];
			d[k] = sh->d[k] + 2;
		} else {
			q[k] = p[k] > 0 ? p[k] - 1 : 0;
			hi = p[k] + sh->d[k] + 1 < D[k] ? p[k] + sh->d[k] + 1 :
			    D[k];
			d[k] = hi - q[k];
		}
	}
	return wbox(T, q, d);
}

/* Column sums for a row of boxes: col[x] = fitting nodes at x' < x in
 * the y and z ranges of a box at p of shape d (wrapped), so a box's sum
 * along the row costs two lookups. */
static void
row_cols(const struct torus *T, const uint32_t p[3], const uint32_t d[3],
    uint32_t *col)
{
	uint32_t yl[2], yh[2], zl[2], zh[2], x, v;
	int ny, nz, j, k;

	ny = pieces(p[1], d[1], T->Y, yl, yh);
	nz = pieces(p[2], d[2], T->Z, zl, zh);
	for (x = 0; x <= T->X; x++) {
		v = 0;
		for (k = 0; k < nz; k++)
			for (j = 0; j < ny; j++)
				v += PRE(T, x, yh[j], zh[k]) -
				    PRE(T, x, yl[j], zh[k]) -
				    PRE(T, x, yh[j], zl[k]) +
				    PRE(T, x, yl[j], zl[k]);
		col[x] = v;
	}
}

/* The best position of shape sh holding n: the fewest fitting nodes in
 * the box and its one-cell shell beyond the n used (best fit: the gang
 * fills a hole rather than cutting into free space), then lowest z, y,
 * x; false if none. With most, the position with the most fitting nodes
 * instead (for the fallback's seed). */
static bool
best_pos(const struct torus *T, const struct shape *sh, uint32_t n,
    bool most, uint32_t out[3])
{
	uint32_t p[3], q[3], e[3], nx, ny, nz, s, best = UINT32_MAX, a;
	uint32_t bests = 0, *col = T->col;
	bool found = false;

	a = sh->d[0];
	nx = npos(sh->d[0], T->X, T->wrap[0]);
	ny = npos(sh->d[1], T->Y, T->wrap[1]);
	nz = npos(sh->d[2], T->Z, T->wrap[2]);
	for (p[2] = 0; p[2] < nz; p[2]++) {
		/* The slab of the box's planes, then its rows, must hold n
		 * before any position in them can: on a busy torus most
		 * are skipped whole. */
		q[0] = q[1] = 0;
		q[2] = p[2];
		e[0] = T->X;
		e[1] = T->Y;
		e[2] = sh->d[2];
		if (!most && wbox(T, q, e) < n)
			continue;
		for (p[1] = 0; p[1] < ny; p[1]++) {
			q[1] = p[1];
			e[1] = sh->d[1];
			if (!most && wbox(T, q, e) < n)
				continue;
			row_cols(T, p, sh->d, col);
			for (p[0] = 0; p[0] < nx; p[0]++) {
				s = p[0] + a <= T->X ? col[p[0] + a] - col[p[0]] :
				    col[T->X] - col[p[0]] + col[p[0] + a - T->X];
				if (most) {
					if (s > bests || !found) {
						bests = s;
						memcpy(out, p, 3 * 4);
						found = true;
					}
					continue;
				}
				if (s < n)
					continue;
				s = shell(T, p, sh) - n;
				if (s >= best)
					continue;
				best = s;
				memcpy(out, p, 3 * 4);
				found = true;
				if (best == 0)
					return true;
			}
		}
	}
	return found;
}

static int
cand_key_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* cand.node holds the rank position while sorting back. */
static int
cand_pos_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->mask < y->mask ? -1 : x->mask > y->mask;
}

/* Emit n picks from the fitting nodes of the box at p of shape sh: the
 * best ranked (place_rank) when the box holds more, in rank order along
 * x, then y, then z from the box's corner. */
static void
take_box(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    const uint32_t p[3], const struct shape *sh, struct pick *out)
{
	struct torus *T = ps->tor;
	uint32_t i, j, k, x, y, z, node, nc = 0;
	uint64_t m, F;

	for (k = 0; k < sh->d[2]; k++)
		for (j = 0; j < sh->d[1]; j++)
			for (i = 0; i < sh->d[0]; i++) {
				x = (p[0] + i) % T->X;
				y = (p[1] + j) % T->Y;
				z = (p[2] + k) % T->Z;
				if (!T->fit[(z * T->Y + y) * T->X + x])
					continue;
				node = T->cell_node[(z * T->Y + y) * T->X + x];
				F = node_free(ps, rq, freev, node);
				T->cand[nc].node = node;
				T->cand[nc].key = place_rank(ps, node, F, rq,
				    &m);
				/* The rank position, for sorting back. */
				T->cand[nc].mask = ((uint64_t)k * sh->d[1] +
				    j) * sh->d[0] + i;
				nc++;
			}
	if (nc > rq->n)
		qsort(T->cand, nc, sizeof(*T->cand), cand_key_cmp);
	qsort(T->cand, rq->n, sizeof(*T->cand), cand_pos_cmp);
	for (i = 0; i < rq->n; i++) {
		node = T->cand[i].node;
		out[i].node = node;
		place_rank(ps, node, node_free(ps, rq, freev, node), rq,
		    &out[i].mask);
	}
}

static uint32_t
hops(const struct torus *T, uint32_t a, uint32_t b)
{
	uint32_t ca[3], cb[3], D[3] = { T->X, T->Y, T->Z }, d, s = 0;
	int k;

	ca[0] = a % T->X;
	ca[1] = a / T->X % T->Y;
	ca[2] = a / T->X / T->Y;
	cb[0] = b % T->X;
	cb[1] = b / T->X % T->Y;
	cb[2] = b / T->X / T->Y;
	for (k = 0; k < 3; k++) {
		d = ca[k] > cb[k] ? ca[k] - cb[k] : cb[k] - ca[k];
		if (T->wrap[k] && D[k] - d < d)
			d = D[k] - d;
		s += d;
	}
	return s;
}

/* No compact box holds the gang: the n fitting nodes nearest (fewest
 * hops) a seed, the first fitting node of the most compact shape's
 * fullest position; nodes off the torus last. Rank order: nearest
 * first. */
static int
nearest(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    const struct shape *sh, struct pick *out)
{
	struct torus *T = ps->tor;
	uint32_t p[3], seed = NO_INDEX, i, j, k, cell, nc = 0, d;

	if (best_pos(T, sh, rq->n, true, p))
		for (k = 0; k < sh->d[2] && seed == NO_INDEX; k++)
			for (j = 0; j < sh->d[1] && seed == NO_INDEX; j++)
				for (i = 0; i < sh->d[0]; i++) {
					cell = (((p[2] + k) % T->Z) * T->Y +
					    (p[1] + j) % T->Y) * T->X +
					    (p[0] + i) % T->X;
					if (T->fit[cell]) {
						seed = cell;
						break;
					}
				}
	for (i = 0; i < ps->nnodes; i++) {
		if (!node_fits(ps, rq, freev, i))
			continue;
		cell = T->node_cell[i];
		d = cell == NO_INDEX || seed == NO_INDEX ? 0xfffff :
		    hops(T, seed, cell);
		/* Distance first, then the node's index. */
		T->cand[nc].key = (uint64_t)d << 40 | (uint64_t)i;
		T->cand[nc].node = i;
		nc++;
	}
	if (nc < rq->n) {
		errno = EAGAIN;
		return -1;
	}
	if (out == NULL)
		return 0;
	qsort(T->cand, nc, sizeof(*T->cand), cand_key_cmp);
	for (i = 0; i < rq->n; i++) {
		out[i].node = T->cand[i].node;
		place_rank(ps, out[i].node, node_free(ps, rq, freev,
		    out[i].node), rq, &out[i].mask);
	}
	return 0;
}

/* The failed searches at key k (the same state and per-node
 * requirement) for a size n' <= n, into idx; their count. */
static uint32_t
failed_at(const struct torus *T, const struct tkey *k, uint32_t n,
    uint32_t idx[TORUS_FAIL_CACHE])
{
	uint32_t i, c = 0;

	for (i = 0; i < TORUS_FAIL_CACHE; i++)
		if (T->fail[i].n != 0 && T->fail[i].n <= n &&
		    key_eq(&T->fail[i].k, k))
			idx[c++] = i;
	return c;
}

/* Can no position of shape sh hold n, by an earlier failure? If no box
 * of shape d held n' <= n, no box of a shape that fits inside d (each
 * side no longer) holds n: every position of it lies inside a position
 * of d (on a line: clamp the corner; on a ring: the same corner; a side
 * of the whole dimension covers all), whose count is below n' <= n.
 * Exact, not an approximation: a larger box is still searched. */
static bool
dominated(const struct torus *T, const uint32_t *idx, uint32_t nidx,
    const struct shape *sh)
{
	uint32_t i, k;

	for (i = 0; i < nidx; i++)
		for (k = 0; k < T->fail[idx[i]].count; k++) {
			const uint32_t *d = T->fail[idx[i]].d[k];

			if (sh->d[0] <= d[0] && sh->d[1] <= d[1] &&
			    sh->d[2] <= d[2])
				return true;
		}
	return false;
}

int
torus_select(struct pass *ps, const struct preq *rq, const uint64_t *freev,
    struct pick *out)
{
	struct torus *T = ps->tor;
	const struct shapes *S;
	struct tkey k;
	uint32_t p[3], i, f, idx[TORUS_FAIL_CACHE], nidx;
	bool searched = false;

	if (T == NULL || rq->n == 0 || (rq->torus == TQ_REQUIRED &&
	    rq->n > T->ncell)) {
		errno = EAGAIN;
		return -1;
	}
	key_of(ps, rq, &k);
	grid(ps, rq, freev);
	S = shapes_for(T, rq->n > T->ncell ? T->ncell : rq->n);
	nidx = freev == NULL ? failed_at(T, &k, rq->n, idx) : 0;
	for (i = 0; i < S->count; i++) {
		if (nidx > 0 && dominated(T, idx, nidx, &S->s[i]))
			continue;
		if (!searched)
			ps->torus_searches++;
		searched = true;
		if (best_pos(T, &S->s[i], rq->n, false, p)) {
			if (out != NULL)
				take_box(ps, rq, freev, p, &S->s[i], out);
			return 0;
		}
	}
	/* Remember the shapes that failed (all of them: the skipped ones
	 * failed too), unless nothing new was searched. */
	if (freev == NULL && searched) {
		f = T->fail_next;
		T->fail_next = (T->fail_next + 1) % TORUS_FAIL_CACHE;
		T->fail[f].k = k;
		T->fail[f].n = rq->n;
		T->fail[f].count = S->count;
		for (i = 0; i < S->count; i++)
			memcpy(T->fail[f].d[i], S->s[i].d, sizeof(S->s[i].d));
	}
	if (rq->torus == TQ_REQUIRED) {
		errno = EAGAIN;
		return -1;
	}
	return nearest(ps, rq, freev, &S->s[0], out);
}
