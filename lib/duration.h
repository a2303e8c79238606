/* Durations as users write them: "90s", "30m", "2h", "3d", Slurm's
 * "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS". A bare
 * number is minutes, as in Slurm's --time. */
#ifndef COHORT_DURATION_H
#define COHORT_DURATION_H

#include <stddef.h>
#include <stdint.h>

#define DURATION_MAX_S (366ULL * 24 * 3600 * 100) /* a hundred years */

/* Parse s into seconds. Returns 0, or -1 with errno EINVAL (malformed)
 * or ERANGE (above DURATION_MAX_S). */
int duration_parse(const char *s, uint64_t *secs);

/* Format secs as "D-HH:MM:SS" (days only when non-zero) into buf.
 * Returns buf. */
char *duration_format(uint64_t secs, char *buf, size_t len);

#endif
