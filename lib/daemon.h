/* Going into the background without losing start-up errors: the parent
 * waits until the child says it is ready (or dies) and exits with that
 * verdict, so `cohortd -c FILE` still fails visibly on a bad start. */
#ifndef COHORT_DAEMON_H
#define COHORT_DAEMON_H

#include <stdbool.h>

/* The command line both daemons share: [-c FILE] [-f] [-v], --version,
 * --help; and the one-shot commands a daemon may take besides
 * (daemon_args_opts). */
struct daemon_args {
	const char *config;	/* -c, else the default path */
	bool config_default;	/* no -c given */
	bool foreground;	/* -f: stay attached, log to stderr */
	bool verbose;		/* -v: debug messages too */
	const char *backup;	/* --backup FILE (DAEMON_OPT_BACKUP) */
	bool force;		/* --force, with --backup only */
	bool bootstrap;		/* --bootstrap (DAEMON_OPT_BACKUP too) */
	const char *join;	/* --join HOST:PORT (the same) */
	const char *restore;	/* --restore FILE, with --bootstrap */
};

/* The extra options of daemon_args_opts. */
#define DAEMON_OPT_BACKUP 0x1	/* --backup FILE [--force] */

/* Parse argv for the daemon called name, whose configuration is
 * def_config without -c (SYSCONFDIR/cohort/NAME.conf). Returns -1 to go
 * on with *a filled, or the exit code to return at once: 0 after
 * --version or --help (printed), 2 on a usage error (usage on stderr),
 * 1 when there is no -c and no file at def_config (a line naming the
 * path and -c on stderr). */
int daemon_args(int argc, char **argv, const char *name,
    const char *def_config, struct daemon_args *a);
/* daemon_args with the extra options of opts (DAEMON_OPT_*) accepted
 * too; --force without --backup is a usage error. */
int daemon_args_opts(int argc, char **argv, const char *name,
    const char *def_config, unsigned opts, struct daemon_args *a);

/* Fork; the parent exits 0 once the child calls daemon_ready, 1 if the
 * child exits first. In the child returns 0 with *ready_fd set; -1 with
 * errno if the fork failed. */
int daemon_detach(int *ready_fd);

/* In the child: point stdio at /dev/null and release the parent. A
 * negative ready_fd (foreground) is a no-op. */
void daemon_ready(int ready_fd);

#endif
