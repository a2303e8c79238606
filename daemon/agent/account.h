/* Who a job's tasks run as on this node, and whether this node lets
 * them: the account a cluster user maps to when the agent is root, the
 * agent itself otherwise; never root, and no system account (a uid
 * below min_uid) unless allow_system_users lists it. The identity found
 * here is also the one the agent reads the job's files as (watch.h). */
#ifndef COHORT_AGENT_ACCOUNT_H
#define COHORT_AGENT_ACCOUNT_H

#include <stddef.h>
#include <sys/types.h>

#include "daemon/agent/watch.h"
#include "lib/err.h"

struct agent_config;

/* Who a start's tasks run as, looked up once for all its ranks: the
 * user database is asked at most twice (the passwd entry, the group
 * list) per start on a node, however many tasks it has. */
struct account {
	struct watch_cred cred;	/* cred.groups malloc'd */
	char *name;		/* NULL: the agent's uid has no entry */
	char *home;		/* NULL: none known */
	char *shell;		/* NULL: none known */
};

/* The account tasks of a job run as: account (already mapped) when the
 * agent is root, the agent itself otherwise. *acc is filled (release it
 * with account_clear, also after a failure), its groups none when the
 * agent is not root (it reads as itself). 0, or -1 with err:
 * ERR_INVALID when the account does not exist here, ERR_DENIED when the
 * policy refuses it (root; a uid below min_uid whose account
 * allow_system_users does not list) — both permanent for the controller
 * — or ERR_INTERNAL. */
int account_resolve(const struct agent_config *cfg, const char *account,
    struct account *acc, struct cerr *err);

/* Free what acc holds and zero it; fine on a zeroed one. */
void account_clear(struct account *acc);

/* Look account up (buf of len bytes holds its strings: ACCOUNT_BUF is
 * enough for any sane entry). 0 with *pw filled, or -1 with err:
 * ERR_INVALID when the account does not exist here, ERR_INTERNAL when
 * the lookup itself failed (an NSS service down, a buffer too small):
 * that may pass, so it must not fail a job for good. */
#define ACCOUNT_BUF 16384
struct passwd;
int account_lookup(const char *account, struct passwd *pw, char *buf,
    size_t len, struct cerr *err);

/* The identity "UID GID" that the spool recorded for a start (line may
 * be NULL: none recorded), with the account's groups looked up again.
 * An agent that is not root is itself whatever the line says. 0, or -1
 * when unknown (or uid 0): then the start's files are not read. */
int account_from_ids(const char *line, struct watch_cred *c);

/* The supplementary groups of account name with primary group gid (none
 * when name is NULL), *groups malloc'd. 0, or -1 (ENOMEM). */
int account_groups(const char *name, gid_t gid, gid_t **groups, size_t *n);

#endif
