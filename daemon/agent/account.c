/* Who a job's tasks run as, and this node's policy on it (account.h). */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/account.h"
#include "daemon/agent/agent_config.h"
#include "daemon/agent/watch.h"

int
account_groups(const char *name, gid_t gid, gid_t **groups, size_t *n)
{
	gid_t *g = NULL, *ng;
	int cnt = 16;

	*groups = NULL;
	*n = 0;
	if (name == NULL)
		return 0;
	for (;;) {
		if ((ng = reallocarray(g, (size_t)cnt, sizeof(*g))) == NULL) {
			free(g);
			return -1;
		}
		g = ng;
		if (getgrouplist(name, gid, g, &cnt) != -1)
			break;
		if (cnt > 65536) {
			free(g);
			errno = ENOMEM;
			return -1;
		}
	}
	*groups = g;
	*n = (size_t)cnt;
	return 0;
}

/* The passwd strings acc keeps (pw NULL: none). -1 when out of memory. */
static int
account_strings(struct account *acc, const struct passwd *pw)
{
	if (pw == NULL)
		return 0;
	if ((acc->name = strdup(pw->pw_name)) == NULL ||
	    (acc->home = strdup(pw->pw_dir)) == NULL ||
	    (acc->shell = strdup(pw->pw_shell)) == NULL)
		return -1;
	return 0;
}

int
account_resolve(const struct agent_config *cfg, const char *account,
    struct account *acc, struct cerr *err)
{
	struct watch_cred *c = &acc->cred;
	struct passwd pw, *res = NULL;
	char buf[ACCOUNT_BUF];
	const char *name;

	memset(acc, 0, sizeof(*acc));
	if (geteuid() != 0) {
		/* Tasks run as the agent itself, whoever asked. */
		c->uid = geteuid();
		c->gid = getegid();
		getpwuid_r(c->uid, &pw, buf, sizeof(buf), &res);
		name = res != NULL ? pw.pw_name : NULL;
	} else {
		if (account == NULL || account[0] == '\0')
			return cerr_set(err, ERR_INVALID,
			    "no user to run the task as");
		if (account_lookup(account, &pw, buf, sizeof(buf), err) == -1)
			return -1;
		if (pw.pw_uid == 0)
			return cerr_set(err, ERR_DENIED, "refusing to run a "
			    "task as root (user '%s')", account);
		res = &pw;
		c->uid = pw.pw_uid;
		c->gid = pw.pw_gid;
		name = pw.pw_name;
	}
	if (!agent_config_account_allowed(cfg, name, (uint32_t)c->uid))
		return cerr_set(err, ERR_DENIED, "refusing to run tasks as "
		    "'%s' (uid %u): below this node's min_uid %u, and not "
		    "in allow_system_users", name != NULL ? name : "?",
		    (unsigned)c->uid, (unsigned)cfg->min_uid);
	if (geteuid() == 0 && account_groups(name, c->gid, &c->groups,
	    &c->ngroups) == -1)
		return cerr_set(err, ERR_INTERNAL, "cannot list the groups "
		    "of user '%s'", name);
	if (account_strings(acc, res) == -1)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

void
account_clear(struct account *acc)
{
	free(acc->cred.groups);
	free(acc->name);
	free(acc->home);
	free(acc->shell);
	memset(acc, 0, sizeof(*acc));
}

int
account_lookup(const char *account, struct passwd *pw, char *buf,
    size_t len, struct cerr *err)
{
	struct passwd *res = NULL;
	int rc;

	rc = getpwnam_r(account, pw, buf, len, &res);
	/* getpwnam_r(3): ENOENT, ESRCH, EBADF and EPERM are among the ways
	 * of saying "no such user"; anything else is the lookup failing. */
	if (res == NULL && rc != 0 && rc != ENOENT && rc != ESRCH &&
	    rc != EBADF && rc != EPERM)
		return cerr_set(err, ERR_INTERNAL, "cannot look up user '%s': "
		    "%s", account, strerror(rc));
	if (res == NULL)
		return cerr_set(err, ERR_INVALID,
		    "user '%s' does not exist on this node", account);
	return 0;
}

int
account_from_ids(const char *line, struct watch_cred *c)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	unsigned uid, gid;

	memset(c, 0, sizeof(*c));
	if (geteuid() != 0) {
		c->uid = geteuid();
		c->gid = getegid();
		return 0;
	}
	if (line == NULL || sscanf(line, "%u %u", &uid, &gid) != 2 ||
	    uid == 0)
		return -1;
	c->uid = uid;
	c->gid = gid;
	getpwuid_r(c->uid, &pw, buf, sizeof(buf), &res);
	return account_groups(res != NULL ? pw.pw_name : NULL, c->gid,
	    &c->groups, &c->ngroups);
}

