/* See slot.h. */
#include "config.h"

#include <string.h>

#include "lib/slot.h"

size_t
slot_find(const void *base, size_t n,
    const char *(*name)(const void *base, size_t i), const char *key,
    bool *found)
{
	size_t lo = 0, hi = n, mid;
	int c;

	*found = false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(name(base, mid), key)) == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
