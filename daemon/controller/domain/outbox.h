/* The controller domain's way out: the commands it sends to agents, its
 * wish for a scheduling pass and its mail. The daemon fills it with
 * agentcmd.c (protobuf over TLS), driver.c (libevent timers) and
 * mailer.c (the site's mail program); unit tests and the
 * goodput simulator (tests/bench/goodput.c) fill it with recorders and a
 * virtual clock. Nothing here sees the network, a clock or an event
 * loop: `now` comes in with every call. */
#ifndef COHORT_CONTROLLER_OUTBOX_H
#define COHORT_CONTROLLER_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/job.h"

/* A command's answer: err is NULL on success; now_ms is when it came. */
typedef void (*outbox_done)(void *arg, const struct cerr *err,
    int64_t now_ms);
typedef void (*outbox_log_done)(void *arg, const uint8_t *data, size_t len,
    const struct cerr *err);
/* A stdin write's answer: the bytes the task's pipe took (0: full). */
typedef void (*outbox_input_done)(void *arg, uint32_t accepted,
    const struct cerr *err);

/* A node's container image is ready: how long it took there, whether
 * its cache had it, and what it is known by ("sha256:HEX"; "": not
 * known). */
struct image_ready {
	int64_t ms;
	bool cached;
	char digest[CTR_DIGEST_LEN + 1];
};
/* A preparation's answer: r on success (err NULL), else err. */
typedef void (*outbox_prepared)(void *arg, const struct image_ready *r,
    const struct cerr *err, int64_t now_ms);

struct step;
struct step_node;

/* Bytes for task 0 of a step (srun's input, or an attached terminal's
 * keys), and its window when it runs on a pty. */
struct step_input {
	uint64_t offset;		/* where data starts in the input */
	const uint8_t *data;
	size_t len;
	bool eof;			/* the input ends after data */
	bool append;			/* offset ignored: after what it had */
	uint16_t rows, cols;		/* both set: the pty's new window */
};

/* One node's share of a gang's launch, or of a job step's. */
struct launch_cmd {
	const struct job *job;		/* spec, user, attempt, restarts */
	const struct placement *place;	/* this node's share */
	const char *const *nodelist;	/* rank order */
	size_t nnodes;
	const char *master_addr;
	unsigned master_port;
	/* A step's launch (steps.h): the step, this node's part of it and
	 * the part's index; step NULL: the job's own tasks. */
	const struct step *step;
	const struct step_node *snode;
	unsigned snode_index;
	const char *step_master_addr;
};

struct outbox_ops {
	/* Launch on the agent of conn_id: 0 and done(arg, ...) later,
	 * exactly once; or -1 and done never runs. */
	int (*launch)(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
	    int64_t now_ms, outbox_done done, void *arg);
	/* Prepare the job's container image on the agent of conn_id for
	 * its user, starting nothing: 0 and done(arg, ...) later, exactly
	 * once (when the image is ready, or cannot be, or the node is
	 * gone: no time limit, an unpack takes what it takes), or -1 and
	 * done never runs. May be NULL: the launch prepares it itself. */
	int (*prepare)(void *ctx, uint64_t conn_id, const struct launch_cmd *l,
	    int64_t now_ms, outbox_prepared done, void *arg);
	/* Fire and forget: idempotent, re-sent on reconcile. 0 or -1. */
	int (*stop)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, const char *reason);
	/* scope: enum job_signal_scope (which of a batch job's tasks). */
	int (*signal)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, int sig, int scope);
	/* Fire and forget: the checkpoint interval now advised to a
	 * running attempt (its agent rewrites the advice file). May be
	 * NULL. 0 or -1. */
	int (*advise)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, uint32_t advice_s);
	/* The same for one job step's tasks only. */
	int (*stop_step)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, uint32_t step, const char *reason);
	int (*signal_step)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, uint32_t step, int sig);
	/* Like launch: 0 and done later exactly once, or -1. step < 0: the
	 * job's own task of that rank, else task rank of that step. */
	int (*read_log)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, int64_t step, unsigned rank, bool is_stderr,
	    uint64_t offset, uint32_t max, int64_t now_ms,
	    outbox_log_done done, void *arg);
	/* Like read_log: bytes offset.. of the input of task rank of the
	 * step, into its pipe on the agent; done gets how many it took.
	 * May be NULL (no input is forwarded: ERR_UNAVAILABLE). */
	int (*write_stdin)(void *ctx, uint64_t conn_id, uint64_t job_id,
	    uint32_t attempt, uint32_t step, unsigned rank,
	    const struct step_input *in, int64_t now_ms,
	    outbox_input_done done, void *arg);
	/* Something changed: call cluster_pass soon (many calls before it
	 * runs cost one pass). */
	void (*pass_wanted)(void *ctx);
	/* A job step ended (whoever waits for it may be told). May be
	 * NULL. */
	void (*step_ended)(void *ctx, uint64_t job_id, uint32_t step);
	/* Mail about job_id to `to` with subject (mail.c decides which and
	 * words it): handed over and forgotten, never answered, never a
	 * reason to delay or undo a change; the strings are copied. NULL:
	 * no mail (an outbox that records nothing of it). */
	void (*mail)(void *ctx, uint64_t job_id, const char *to,
	    const char *subject);
};

struct outbox {
	const struct outbox_ops *ops;
	void *ctx;
};

#endif
