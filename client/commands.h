/* The CLI's commands, one file per group. Each takes the arguments after
 * the command name (argv[0] is the command) and the resolved connection
 * options, and returns the process exit code: 0 ok, 1 request refused or
 * failed, 2 usage error, 3 cannot reach or authenticate to the
 * controller. */
#ifndef COHORT_CLIENT_COMMANDS_H
#define COHORT_CLIENT_COMMANDS_H

#include "client/conn.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
};

int cmd_submit(int argc, char **argv, const struct cconn_opts *opts);
int cmd_jobs(int argc, char **argv, const struct cconn_opts *opts);
int cmd_show(int argc, char **argv, const struct cconn_opts *opts);
int cmd_cancel(int argc, char **argv, const struct cconn_opts *opts);
int cmd_wait(int argc, char **argv, const struct cconn_opts *opts);
int cmd_logs(int argc, char **argv, const struct cconn_opts *opts);
int cmd_nodes(int argc, char **argv, const struct cconn_opts *opts);
int cmd_node(int argc, char **argv, const struct cconn_opts *opts);
int cmd_drain(int argc, char **argv, const struct cconn_opts *opts);
int cmd_resume(int argc, char **argv, const struct cconn_opts *opts);
int cmd_admin(int argc, char **argv, const struct cconn_opts *opts);
int cmd_events(int argc, char **argv, const struct cconn_opts *opts);
int cmd_run(int argc, char **argv, const struct cconn_opts *opts);
int cmd_queues(int argc, char **argv, const struct cconn_opts *opts);
/* client/control.c */
int cmd_hold(int argc, char **argv, const struct cconn_opts *opts);
int cmd_release(int argc, char **argv, const struct cconn_opts *opts);
int cmd_requeue(int argc, char **argv, const struct cconn_opts *opts);
int cmd_update(int argc, char **argv, const struct cconn_opts *opts);
int cmd_usage(int argc, char **argv, const struct cconn_opts *opts);
/* client/slurm_submit.c */
int cmd_sbatch(int argc, char **argv, const struct cconn_opts *opts);
/* client/slurm_srun.c */
int cmd_srun(int argc, char **argv, const struct cconn_opts *opts);
/* cohort attach and sattach: join a running step's output (and input). */
int cmd_attach(int argc, char **argv, const struct cconn_opts *opts);
int cmd_sattach(int argc, char **argv, const struct cconn_opts *opts);
int cmd_attach_step(int argc, char **argv, const struct cconn_opts *opts,
    bool slurm);
/* client/slurm_salloc.c */
int cmd_salloc(int argc, char **argv, const struct cconn_opts *opts);

#endif
