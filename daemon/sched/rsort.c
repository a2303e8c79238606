/* The queue's sorts (sched.c, queue_order): records of up to RSORT_KEYS
 * 64-bit keys, compared as one number (k[0] first), with ties kept in
 * the order given, by a least significant digit radix sort on bytes.
 * A byte that is the same in every record is skipped: a queue's
 * priorities, submit times and ids share most of their bytes, so 100,000
 * jobs take a handful of counting passes instead of a comparison sort's
 * 17 rounds of calls. */
#include "config.h"

#include <string.h>

#include "daemon/sched/sched_int.h"

void
rsort(struct rrec *a, struct rrec *tmp, size_t n)
{
	uint64_t and[RSORT_KEYS], or[RSORT_KEYS], d;
	size_t cnt[256], sum, c, i;
	struct rrec *src = a, *dst = tmp, *sw;
	int k, byte, sh;

	if (n < 2)
		return;
	for (k = 0; k < RSORT_KEYS; k++) {
		and[k] = UINT64_MAX;
		or[k] = 0;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < RSORT_KEYS; k++) {
			and[k] &= a[i].k[k];
			or[k] |= a[i].k[k];
		}
	/* Least significant first: the last key's low byte to k[0]'s
	 * high byte; each pass is stable, so earlier passes break ties. */
	for (k = RSORT_KEYS - 1; k >= 0; k--) {
		d = and[k] ^ or[k];
		for (byte = 0; byte < 8; byte++) {
			sh = byte * 8;
			if ((d >> sh & 0xff) == 0)
				continue;
			memset(cnt, 0, sizeof(cnt));
			for (i = 0; i < n; i++)
				cnt[src[i].k[k] >> sh & 0xff]++;
			for (c = 0, sum = 0; c < 256; c++) {
				i = cnt[c];
				cnt[c] = sum;
				sum += i;
			}
			for (i = 0; i < n; i++)
				dst[cnt[src[i].k[k] >> sh & 0xff]++] = src[i];
			sw = src;
			src = dst;
			dst = sw;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}
