/* Durations as users write them: "90s", "30m", "2h", "3d", Slurm's
 * "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS". A bare
 * number is minutes, as in Slurm's --time. */
#ifndef COHORT_DURATION_H
#define COHORT_DURATION_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define DURATION_MAX_S (366ULL * 24 * 3600 * 100) /* a hundred years */

/* Parse s into seconds. Returns 0, or -1 with errno EINVAL (malformed)
 * or ERANGE (above DURATION_MAX_S). */
int duration_parse(const char *s, uint64_t *secs);

/* Format secs as "D-HH:MM:SS" (days only when non-zero) into buf.
 * Returns buf. */
char *duration_format(uint64_t secs, char *buf, size_t len);

/* Slurm's --begin, in local time: "now", "now+N" with N seconds or
 * N followed by s, m, h, d or w (or seconds, minutes, hours, days,
 * weeks); "HH:MM[:SS]" (today, or tomorrow once that has passed);
 * "YYYY-MM-DD[THH:MM[:SS]]"; "today", "tomorrow", "midnight" (the next),
 * "noon", "elevenses", "fika", "teatime" (11:00, 15:00, 16:00: today's,
 * or tomorrow's once passed). now is the time it is. 0 with *at (seconds
 * since the epoch), or -1 with errno EINVAL. */
int duration_parse_begin(const char *s, time_t now, time_t *at);

#endif
