#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/jobref.h"
#include "client/output.h"
#include "lib/array.h"
#include "lib/frame.h"
#include "lib/wire.h"

int
jobref_parse(const char *s, struct jobref *r, struct cerr *err)
{
	struct array_spec a;
	const char *p = s, *sel;
	char *inner;
	uint64_t v = 0;
	size_t len;

	memset(r, 0, sizeof(*r));
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s || v == 0 || (*p != '\0' && *p != '_'))
		goto bad;
	r->id = v;
	if (*p == '\0')
		return 0;
	sel = p + 1;
	len = strlen(sel);
	/* "12_7", or "12_[1-5,9]" (brackets: the --array syntax, without
	 * a throttle). */
	if (len >= 2 && sel[0] == '[' && sel[len - 1] == ']') {
		sel++;
		len -= 2;
	} else if (strspn(sel, "0123456789") != len)
		goto bad;
	if (len == 0 || memchr(sel, '%', len) != NULL ||
	    (inner = strndup(sel, len)) == NULL)
		goto bad;
	if (array_parse(inner, &a, err) == -1) {
		free(inner);
		goto bad;
	}
	free(inner);
	r->has_tasks = true;
	r->tasks = a.idx;
	r->ntasks = a.n;
	return 0;
bad:
	return cerr_set(err, ERR_INVALID, "invalid job '%s' (a job id such as "
	    "12, an array's task such as 12_7, or tasks such as 12_[1-5])",
	    s);
}

void
jobref_clear(struct jobref *r)
{
	free(r->tasks);
	memset(r, 0, sizeof(*r));
}

void
jobref_ids_clear(struct jobref_ids *ids)
{
	free(ids->ids);
	free(ids->live);
	memset(ids, 0, sizeof(*ids));
}

/* An array's tasks, as listed. */
struct jobref_task {
	uint64_t id;
	uint32_t task;
	bool ended;
};

struct jobref_tasks {
	struct jobref_task *v;
	size_t n;
};

static int
jobref_add_task(struct jobref_tasks *t, const Cohort__V1__Job *pb,
    uint64_t array_id)
{
	struct jobref_task *v;

	if (!pb->has_array_id || pb->array_id != array_id)
		return 0;
	if (t->n > 0 && pb->id <= t->v[t->n - 1].id)
		return 0;
	if ((v = reallocarray(t->v, t->n + 1, sizeof(*v))) == NULL)
		return -1;
	t->v = v;
	v[t->n].id = pb->id;
	v[t->n].task = pb->has_array_task ? pb->array_task : 0;
	v[t->n].ended = pb->state == COHORT__V1__JOB_STATE__COMPLETED ||
	    pb->state == COHORT__V1__JOB_STATE__FAILED ||
	    pb->state == COHORT__V1__JOB_STATE__CANCELLED ||
	    pb->state == COHORT__V1__JOB_STATE__TIMEOUT;
	t->n++;
	return 0;
}

/* Every task of array_id (none: not an array), page by page. */
static int
jobref_list(struct cconn *c, uint64_t array_id, struct jobref_tasks *t,
    struct cerr *err)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__ListJobsRequest lj = COHORT__V1__LIST_JOBS_REQUEST__INIT;
	const Cohort__V1__ListJobsReply *r;
	uint64_t after = 0;
	size_t i;
	bool more;

	lj.has_all = lj.all = 1;
	lj.has_array_id = 1;
	lj.array_id = array_id;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_JOBS;
	req.list_jobs = &lj;
	do {
		lj.has_after_id = after > 0;
		lj.after_id = after;
		if ((rep = cconn_call(c, &req, err)) == NULL)
			return -1;
		if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
			cerr_set(err, wire_err_from_pb(rep->error->code), "%s",
			    rep->error->text);
			frame_free(rep);
			return -1;
		}
		if (rep->body_case !=
		    COHORT__V1__ENVELOPE__BODY_LIST_JOBS_REPLY) {
			frame_free(rep);
			return cerr_set(err, ERR_PROTOCOL, "unexpected reply "
			    "to a listing");
		}
		r = rep->list_jobs_reply;
		for (i = 0; i < r->n_jobs; i++)
			if (jobref_add_task(t, r->jobs[i], array_id) == -1) {
				frame_free(rep);
				return cerr_set(err, ERR_INTERNAL,
				    "out of memory");
			}
		more = r->has_has_more && r->has_more && r->has_next_after &&
		    r->next_after > after;
		if (more)
			after = r->next_after;
		frame_free(rep);
	} while (more);
	return 0;
}

/* The task ids r selects of t. */
static int
jobref_select(const struct jobref *r, const struct jobref_tasks *t,
    struct jobref_ids *out, struct cerr *err)
{
	size_t i, k = 0;

	if ((out->ids = calloc(r->ntasks, sizeof(*out->ids))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	/* Both ascending: one merge. */
	for (i = 0; i < r->ntasks; i++) {
		while (k < t->n && t->v[k].task < r->tasks[i])
			k++;
		if (k == t->n || t->v[k].task != r->tasks[i]) {
			jobref_ids_clear(out);
			return cerr_set(err, ERR_NOT_FOUND, "array %" PRIu64
			    " has no task %u", r->id, r->tasks[i]);
		}
		out->ids[out->n++] = t->v[k].id;
	}
	return 0;
}

int
jobref_resolve(struct cconn *c, const char *arg, struct jobref_ids *out,
    struct cerr *err)
{
	struct jobref r;
	struct jobref_tasks t = { 0 };
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (jobref_parse(arg, &r, err) == -1)
		return -1;
	if (jobref_list(c, r.id, &t, err) == -1)
		goto out;
	if (t.n == 0) {
		if (r.has_tasks) {
			cerr_set(err, ERR_NOT_FOUND, "no array %" PRIu64
			    " (job '%s')", r.id, arg);
			goto out;
		}
		if ((out->ids = calloc(1, sizeof(*out->ids))) == NULL) {
			cerr_set(err, ERR_INTERNAL, "out of memory");
			goto out;
		}
		out->ids[out->n++] = r.id;
		rc = 0;
		goto out;
	}
	if (r.has_tasks) {
		rc = jobref_select(&r, &t, out, err);
		goto out;
	}
	if ((out->ids = calloc(t.n, sizeof(*out->ids))) == NULL ||
	    (out->live = calloc(t.n, sizeof(*out->live))) == NULL) {
		jobref_ids_clear(out);
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	for (i = 0; i < t.n; i++) {
		out->ids[out->n++] = t.v[i].id;
		if (!t.v[i].ended)
			out->live[out->nlive++] = t.v[i].id;
	}
	out->array_id = r.id;
	rc = 0;
out:
	free(t.v);
	jobref_clear(&r);
	return rc;
}

int
jobref_check(const char *cmd, const char *arg, bool *plain)
{
	struct jobref r;
	struct cerr err;

	if (jobref_parse(arg, &r, &err) == -1) {
		output_error("%s: %s", cmd, err.text);
		return EXIT_USAGE;
	}
	if (plain != NULL)
		*plain = !r.has_tasks;
	jobref_clear(&r);
	return EXIT_OK;
}

int
jobref_resolve_one(const char *cmd, struct cconn *c, const char *arg,
    uint64_t *id)
{
	struct jobref_ids ids;
	struct cerr err;

	cerr_clear(&err);
	if (jobref_resolve(c, arg, &ids, &err) == -1) {
		if (err.code == ERR_INVALID) {
			output_error("%s: %s", cmd, err.text);
			return EXIT_USAGE;
		}
		if (err.code == ERR_UNAVAILABLE || err.code == ERR_PROTOCOL)
			return output_call_error(&err);
		output_error("%s: %s", cmd, err.text);
		return EXIT_FAILED;
	}
	if (ids.n != 1) {
		output_error("%s: '%s' names %zu jobs (an array); name one "
		    "task, such as %s_%s", cmd, arg, ids.n, arg,
		    ids.array_id != 0 ? "0" : "N");
		jobref_ids_clear(&ids);
		return EXIT_USAGE;
	}
	*id = ids.ids[0];
	jobref_ids_clear(&ids);
	return EXIT_OK;
}

char *
jobref_format(const struct job *j, char *buf, size_t len)
{
	if (j->array_id != 0)
		snprintf(buf, len, "%" PRIu64 "_%u", j->array_id,
		    j->array_task);
	else
		snprintf(buf, len, "%" PRIu64, j->id);
	return buf;
}
