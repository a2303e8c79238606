#include "config.h"

#include <stddef.h>

#include "lib/ratelim.h"

bool
ratelim_allow(struct ratelim *rl, int64_t now_ms, unsigned burst,
    int64_t window_ms, unsigned long *suppressed)
{
	/* The first use opens a window; a clock that went back starts a
	 * new one too. */
	if (rl->start_ms == 0 || now_ms - rl->start_ms >= window_ms ||
	    now_ms < rl->start_ms) {
		rl->start_ms = now_ms;
		rl->used = 0;
	}
	if (rl->used >= burst) {
		rl->suppressed++;
		return false;
	}
	rl->used++;
	if (suppressed != NULL)
		*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}
