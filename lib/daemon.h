/* Going into the background without losing start-up errors: the parent
 * waits until the child says it is ready (or dies) and exits with that
 * verdict, so `cohortd -c FILE` still fails visibly on a bad start. */
#ifndef COHORT_DAEMON_H
#define COHORT_DAEMON_H

/* Fork; the parent exits 0 once the child calls daemon_ready, 1 if the
 * child exits first. In the child returns 0 with *ready_fd set; -1 with
 * errno if the fork failed. */
int daemon_detach(int *ready_fd);

/* In the child: point stdio at /dev/null and release the parent. A
 * negative ready_fd (foreground) is a no-op. */
void daemon_ready(int ready_fd);

#endif
