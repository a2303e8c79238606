/* Going into the background without losing start-up errors: the parent
 * waits until the child says it is ready (or dies) and exits with that
 * verdict, so `cohortd -c FILE` still fails visibly on a bad start. */
#ifndef COHORT_DAEMON_H
#define COHORT_DAEMON_H

#include <stdbool.h>

/* The command line both daemons share: -c FILE [-f] [-v], --version,
 * --help. */
struct daemon_args {
	const char *config;
	bool foreground;	/* -f: stay attached, log to stderr */
	bool verbose;		/* -v: debug messages too */
};

/* Parse argv for the daemon called name. Returns -1 to go on with *a
 * filled, or the exit code to return at once: 0 after --version or
 * --help (printed), 2 on a usage error (usage on stderr). */
int daemon_args(int argc, char **argv, const char *name,
    struct daemon_args *a);

/* Fork; the parent exits 0 once the child calls daemon_ready, 1 if the
 * child exits first. In the child returns 0 with *ready_fd set; -1 with
 * errno if the fork failed. */
int daemon_detach(int *ready_fd);

/* In the child: point stdio at /dev/null and release the parent. A
 * negative ready_fd (foreground) is a no-op. */
void daemon_ready(int ready_fd);

#endif
