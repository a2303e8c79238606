/* srun --pty's end of the terminal: the user's terminal in raw mode
 * while the step runs, so that every key (Ctrl-C, Ctrl-Z, Ctrl-\ too)
 * goes to the remote terminal's line discipline and from there to its
 * foreground processes, not to srun; put back as it was on every way
 * out (srun_pty_restore is also registered with atexit). Window changes
 * are noticed through SIGWINCH. */
#ifndef COHORT_CLIENT_SRUN_PTY_H
#define COHORT_CLIENT_SRUN_PTY_H

#include <stdbool.h>
#include <stdint.h>

/* Raw mode on fd when it is a terminal (nothing to do otherwise: 0),
 * and SIGWINCH watched. -1 with errno when the terminal refuses. */
int srun_pty_start(int fd);
/* The terminal as it was. Idempotent; safe after a failed start. */
void srun_pty_restore(void);
/* fd's window, when it is a terminal's: true with *rows, *cols. */
bool srun_pty_size(int fd, uint16_t *rows, uint16_t *cols);
/* Whether the window changed since the last call. */
bool srun_pty_resized(void);

#endif
