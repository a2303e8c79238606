/* The two clocks the project reads: wall time in milliseconds (what is
 * stored and shown), and a monotonic clock for measuring durations. */
#ifndef COHORT_CLOCK_H
#define COHORT_CLOCK_H

#include <stdint.h>

/* Milliseconds since the epoch. */
int64_t clock_now_ms(void);
/* Microseconds on CLOCK_MONOTONIC, for intervals only. */
uint64_t clock_mono_us(void);

#endif
