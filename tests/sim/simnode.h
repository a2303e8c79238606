/* One simulated node: a link (daemon/agent/link.c) to the controller,
 * as the real agent's, whose operations are simulated tasks. A launched
 * task is a timer of the simulated length (the job's SIM_SECONDS, else
 * --task-seconds); when it fires the task exits with status 0 (SIM_EXIT,
 * --fail-rate), reported until acknowledged. Stop ends the ranks as
 * killed by SIGTERM; Signal and ReadLog are answered (no log data). */
#ifndef COHORT_SIM_SIMNODE_H
#define COHORT_SIM_SIMNODE_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "lib/err.h"

#define SIMNODE_NAME_MAX 64
#define SIMNODE_MAX_TASKS 64

struct sim;
struct simnode;

/* A node named name, not connected yet; takes key and cert (also on
 * failure). NULL with err. */
struct simnode *simnode_create(struct sim *s, const char *name,
    EVP_PKEY *key, X509 *cert, struct cerr *err);
/* Drops the connection and the tasks. Accepts NULL. */
void simnode_destroy(struct simnode *nd);

/* Connect after delay_ms (0: now). */
void simnode_start(struct simnode *nd, uint64_t delay_ms);
/* A simulated crash: the connection drops, heartbeats stop, the tasks
 * are lost; prints "crash NAME time_ms T jobs J1,J2" (or "jobs -"). */
void simnode_crash(struct simnode *nd);
/* Back as a fresh agent after a crash (prints "revive NAME time_ms T");
 * false if it had not crashed. */
bool simnode_revive(struct simnode *nd);

bool simnode_ready(const struct simnode *nd);
unsigned simnode_running(const struct simnode *nd);

#endif
