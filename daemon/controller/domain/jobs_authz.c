/* Who may change what of a job: one table of rules, each naming the
 * rights the caller needs on the job as it is and on the job as the
 * change would make it. Today "as it would be" differs only in the queue
 * (an update moving a pending job): the queue admins who count there are
 * the target queue's, so an admin of one queue cannot carry a job, or
 * his rights, into another. Domain code: pure. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/jobs_int.h"
#include "daemon/controller/domain/queues.h"

/* The rights a caller can hold on a job. */
#define R_OWNER 1u	/* the job's user */
#define R_QADMIN 2u	/* an admin of the job's queue */
#define R_ADMIN 4u	/* a cluster admin */
#define R_ANY (R_OWNER | R_QADMIN | R_ADMIN | 8u)	/* anyone */

static const struct jobs_rule {
	const char *what;	/* for the refusal: "only WHO may WHAT" */
	unsigned now;		/* rights needed on the job as it is */
	unsigned then;		/* and on the job as it would be */
	const char *who;	/* who may, for the refusal */
	const char *opt;	/* the option that asks it, if one does */
} jobs_rules[JOBS_ACT_N] = {
	[JOBS_ACT_CANCEL] = { "cancel it", R_OWNER | R_QADMIN | R_ADMIN, R_ANY,
	    "its owner, an admin or an admin of its queue" },
	[JOBS_ACT_HOLD] = { "hold it", R_OWNER | R_ADMIN, R_ANY,
	    "its owner or an admin" },
	[JOBS_ACT_RELEASE] = { "release it", R_OWNER | R_ADMIN, R_ANY,
	    "its owner or an admin" },
	[JOBS_ACT_RELEASE_ADMIN] = { "release an admin's hold on it", R_ADMIN,
	    R_ANY, "an admin" },
	[JOBS_ACT_REQUEUE] = { "requeue it", R_OWNER | R_QADMIN | R_ADMIN,
	    R_ANY, "its owner, an admin or an admin of its queue" },
	[JOBS_ACT_UPDATE] = { "update it", R_OWNER | R_QADMIN | R_ADMIN,
	    R_OWNER | R_QADMIN | R_ADMIN, "its owner, an admin, or an admin "
	    "of its queue (of both queues, when it moves)" },
	[JOBS_ACT_RAISE_PRIORITY] = { "raise its priority", R_ANY,
	    R_QADMIN | R_ADMIN, "an admin, or an admin of the queue it is "
	    "to run in,", "--priority: " },
	[JOBS_ACT_RAISE_TIME] = { "raise its time limit", R_QADMIN |
	    R_ADMIN, R_QADMIN | R_ADMIN, "an admin or an admin of its queue",
	    "--time: " },
	[JOBS_ACT_PASS_QUEUE_LIMITS] = { "set it above its queue's limits",
	    R_ADMIN, R_ADMIN, "an admin", "--time: " },
	[JOBS_ACT_DEPEND_ON] = { "make a job depend on it",
	    R_OWNER | R_ADMIN, R_ANY, "its owner or an admin" },
};

/* who's rights on a job of user in queue (NULL: the default queue). */
static unsigned
jobs_rights(const struct jobs *js, const struct peer *who, const char *user,
    const char *queue)
{
	unsigned r = 0;
	int q;

	if (strcmp(user, who->name) == 0)
		r |= R_OWNER;
	if (who->role == ROLE_ADMIN)
		r |= R_ADMIN;
	if (js->queues != NULL && queues_configured(js->queues) &&
	    (q = queues_find(js->queues, queue != NULL ? queue :
	    QUEUE_DEFAULT_NAME)) >= 0 &&
	    queues_is_admin(js->queues, (size_t)q, who->name))
		r |= R_QADMIN;
	return r;
}

bool
jobs_may(const struct jobs *js, const struct peer *who,
    const struct job *job, enum jobs_act act, const char *to_queue)
{
	const struct jobs_rule *rule = &jobs_rules[act];
	const char *from = job->spec.queue;

	if (!(jobs_rights(js, who, job->user, from) & rule->now) &&
	    rule->now != R_ANY)
		return false;
	if (rule->then == R_ANY)
		return true;
	return (jobs_rights(js, who, job->user, to_queue != NULL ? to_queue :
	    from) & rule->then) != 0;
}

int
jobs_authorize(const struct jobs *js, const struct peer *who,
    const struct job *job, enum jobs_act act, const char *to_queue,
    struct cerr *err)
{
	const struct jobs_rule *rule = &jobs_rules[act];
	const char *opt = rule->opt != NULL ? rule->opt : "";
	char into[JOB_QUEUE_MAX + 16] = "";

	if (jobs_may(js, who, job, act, to_queue))
		return 0;
	if (to_queue != NULL && (job->spec.queue == NULL ||
	    strcmp(to_queue, job->spec.queue) != 0)) {
		snprintf(into, sizeof(into), " in queue %s", to_queue);
		if (rule->opt == NULL)
			opt = "--queue: ";
	}
	return cerr_set(err, ERR_DENIED, "%sjob %" PRIu64 " belongs to %s; "
	    "only %s may %s%s (%s may not)", opt, job->id, job->user,
	    rule->who, rule->what, into, who->name);
}
