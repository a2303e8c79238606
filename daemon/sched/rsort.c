/* The queue's sorts (sched.c, queue_order): records of up to RSORT_KEYS
 * 64-bit keys, compared as one number (k[0] first), with ties kept in
 * the order given, by a least significant digit radix sort.
 *
 * A queue's keys vary over few bits (a handful of priorities, submit
 * times within hours, ids within a range): each key is taken relative to
 * its smallest value and, when the varying bits of all keys fit 64, they
 * are packed into one word, sorted on 11-bit digits whose counts are
 * taken while packing (44 bits: 4 passes); wider keys are sorted key by
 * key on their varying bytes. The sort moves 8-byte words holding the
 * packed keys above the position where both fit (100,000 jobs leave 47
 * bits for keys), else 16-byte (key, position) pairs, never the
 * records, and gives the order as positions: 100,000 jobs take a few
 * linear passes instead of a comparison sort's 17 rounds of calls. */
#include "config.h"

#include <string.h>

#include "daemon/sched/sched_int.h"

/* One stable counting pass on the byte at bit sh of the keys. */
static void
pass(const struct rpair *src, struct rpair *dst, size_t n, int sh)
{
	size_t cnt[256], sum = 0, c, i, x;

	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < n; i++)
		cnt[src[i].key >> sh & 0xff]++;
	for (c = 0; c < 256; c++) {
		x = cnt[c];
		cnt[c] = sum;
		sum += x;
	}
	for (i = 0; i < n; i++)
		dst[cnt[src[i].key >> sh & 0xff]++] = src[i];
}

/* The packed word's digits: 11 bits, so 44 varying bits take 4 passes
 * (counts of 2,048 buckets stay in the cache). */
#define RSORT_MASK ((1u << RSORT_DIGIT) - 1)

/* A digit's counts into the first slot of each digit's run. */
static void
offsets(size_t *cnt)
{
	size_t sum = 0, c, x;

	for (c = 0; c <= RSORT_MASK; c++) {
		x = cnt[c];
		cnt[c] = sum;
		sum += x;
	}
}

/* A stable pass on the digit at bit sh whose counts are cnt. */
static void
scatter(const struct rpair *src, struct rpair *dst, size_t n, int sh,
    size_t *cnt)
{
	size_t i;

	offsets(cnt);
	for (i = 0; i < n; i++)
		dst[cnt[src[i].key >> sh & RSORT_MASK]++] = src[i];
}

static int
bits(uint64_t v)
{
	return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

/* A stable pass on the digit at bit sh of words that carry their
 * position in their low bits. */
static void
scatter_w(const uint64_t *src, uint64_t *dst, size_t n, int sh,
    size_t *cnt)
{
	size_t i;

	offsets(cnt);
	for (i = 0; i < n; i++)
		dst[cnt[src[i] >> sh & RSORT_MASK]++] = src[i];
}

/* The keys' varying bits (nb[k] each, total in all) and the position
 * fit one word: sort 8-byte words, not 16-byte pairs, so each scatter
 * moves half the memory (the sort's largest cost at 100,000 jobs). The
 * position below the digits changes no order: the digits alone are
 * sorted, stably, from the positions' own order. */
static void
rsort_words(const struct rrec *a, size_t n, size_t *out, uint64_t *w,
    size_t (*hist)[RSORT_MASK + 1], const uint64_t *lo, const int *nb,
    int total, int pb)
{
	uint64_t *p = w, *q = w + n, *sw, key;
	int k, d, nd = (total + RSORT_DIGIT - 1) / RSORT_DIGIT;
	size_t i;

	memset(hist, 0, (size_t)nd * sizeof(hist[0]));
	for (i = 0; i < n; i++) {
		key = 0;
		for (k = 0; k < RSORT_KEYS; k++)
			if (nb[k] > 0)
				key = key << nb[k] | (a[i].k[k] - lo[k]);
		for (d = 0; d < nd; d++)
			hist[d][key >> d * RSORT_DIGIT & RSORT_MASK]++;
		p[i] = key << pb | i;
	}
	for (d = 0; d < nd; d++) {
		scatter_w(p, q, n, pb + d * RSORT_DIGIT, hist[d]);
		sw = p;
		p = q;
		q = sw;
	}
	for (i = 0; i < n; i++)
		out[i] = (size_t)(p[i] & ((UINT64_C(1) << pb) - 1));
}

void
rsort(const struct rrec *a, size_t n, size_t *out, struct rpair *scratch)
{
	size_t (*hist)[RSORT_MASK + 1] = (void *)(scratch + 2 * n);
	uint64_t lo[RSORT_KEYS], hi[RSORT_KEYS];
	struct rpair *p = scratch, *q = scratch + n, *sw;
	int k, sh, d, nd, nb[RSORT_KEYS], total = 0, pb;
	size_t i;

	for (k = 0; k < RSORT_KEYS; k++) {
		lo[k] = UINT64_MAX;
		hi[k] = 0;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < RSORT_KEYS; k++) {
			if (a[i].k[k] < lo[k])
				lo[k] = a[i].k[k];
			if (a[i].k[k] > hi[k])
				hi[k] = a[i].k[k];
		}
	for (k = 0; k < RSORT_KEYS; k++)
		total += nb[k] = bits(hi[k] - lo[k]);
	pb = n > 1 ? bits(n - 1) : 1;
	if (total > 0 && total + pb <= 64) {
		rsort_words(a, n, out, (uint64_t *)scratch, hist, lo, nb,
		    total, pb);
		return;
	}
	for (i = 0; i < n; i++) {
		p[i].key = 0;
		p[i].pos = i;
	}
	if (total <= 64) {
		/* One word: the keys' varying bits side by side, sorted on
		 * digits of RSORT_DIGIT bits, whose counts are all taken
		 * while packing. */
		nd = (total + RSORT_DIGIT - 1) / RSORT_DIGIT;
		memset(hist, 0, (size_t)nd * sizeof(hist[0]));
		for (i = 0; i < n; i++) {
			for (k = 0; k < RSORT_KEYS; k++)
				if (nb[k] > 0)
					p[i].key = (nb[k] < 64 ?
					    p[i].key << nb[k] : 0) |
					    (a[i].k[k] - lo[k]);
			for (d = 0; d < nd; d++)
				hist[d][p[i].key >> d * RSORT_DIGIT &
				    RSORT_MASK]++;
		}
		for (d = 0; d < nd; d++) {
			scatter(p, q, n, d * RSORT_DIGIT, hist[d]);
			sw = p;
			p = q;
			q = sw;
		}
	} else {
		/* Key by key, least significant first; each pass is
		 * stable, so the earlier ones break ties. */
		for (k = RSORT_KEYS - 1; k >= 0; k--) {
			if (nb[k] == 0)
				continue;
			for (i = 0; i < n; i++)
				p[i].key = a[p[i].pos].k[k] - lo[k];
			for (sh = 0; sh < nb[k]; sh += 8) {
				pass(p, q, n, sh);
				sw = p;
				p = q;
				q = sw;
			}
		}
	}
	for (i = 0; i < n; i++)
		out[i] = p[i].pos;
}
