#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/arrays.h"
#include "client/jobref.h"
#include "lib/array.h"

static bool
arrays_foldable(const struct job *j)
{
	return j->array_id != 0 && j->state == JOB_PENDING && j->nplace == 0;
}

/* Sort key of foldable jobs: array, reason, then id. */
struct arrays_key {
	const struct job *job;
	size_t at;		/* its position in the listing */
};

static int
arrays_key_cmp(const void *a, const void *b)
{
	const struct arrays_key *x = a, *y = b;
	int c;

	if (x->job->array_id != y->job->array_id)
		return x->job->array_id < y->job->array_id ? -1 : 1;
	if ((c = strcmp(x->job->reason ? x->job->reason : "",
	    y->job->reason ? y->job->reason : "")) != 0)
		return c;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* The id of a fold of k[0..n): "12_7" or "12_[8-99%2]". */
static char *
arrays_fold_id(const struct arrays_key *k, size_t n)
{
	uint32_t *idx;
	char *text = NULL, *id;
	size_t i, len;
	char pct[16] = "";

	if ((idx = calloc(n, sizeof(*idx))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		idx[i] = k[i].job->array_task;
	len = array_format(idx, n, NULL, 0) + 1;
	if ((text = malloc(len)) != NULL) {
		array_format(idx, n, text, len);
		if (k[0].job->array_max > 0)
			snprintf(pct, sizeof(pct), "%%%u", k[0].job->array_max);
	}
	free(idx);
	if (text == NULL)
		return NULL;
	if ((n == 1 ? asprintf(&id, "%" PRIu64 "_%s", k[0].job->array_id,
	    text) : asprintf(&id, "%" PRIu64 "_[%s%s]", k[0].job->array_id,
	    text, pct)) == -1)
		id = NULL;
	free(text);
	return id;
}

int
arrays_fold(const struct job *const *jobs, size_t n,
    struct arrays_row **rows, size_t *nrows)
{
	struct arrays_key *k = NULL;
	struct arrays_row *r = NULL;
	char **fold = NULL, buf[JOBREF_LEN];
	size_t *size = NULL, i, j, nk = 0, nr = 0;
	bool *skip = NULL;

	*rows = NULL;
	*nrows = 0;
	if (n == 0)
		return 0;
	if ((k = calloc(n, sizeof(*k))) == NULL ||
	    (fold = calloc(n, sizeof(*fold))) == NULL ||
	    (size = calloc(n, sizeof(*size))) == NULL ||
	    (skip = calloc(n, sizeof(*skip))) == NULL ||
	    (r = calloc(n, sizeof(*r))) == NULL)
		goto fail;
	for (i = 0; i < n; i++)
		if (arrays_foldable(jobs[i]))
			k[nk++] = (struct arrays_key){ jobs[i], i };
	if (nk > 1)
		qsort(k, nk, sizeof(*k), arrays_key_cmp);
	/* Each run of the same array and reason: its id goes to its first
	 * task's place, the others are left out. */
	for (i = 0; i < nk; i = j) {
		for (j = i + 1; j < nk &&
		    k[j].job->array_id == k[i].job->array_id &&
		    strcmp(k[j].job->reason ? k[j].job->reason : "",
		    k[i].job->reason ? k[i].job->reason : "") == 0; j++)
			skip[k[j].at] = true;
		if ((fold[k[i].at] = arrays_fold_id(&k[i], j - i)) == NULL)
			goto fail;
		size[k[i].at] = j - i;
	}
	for (i = 0; i < n; i++) {
		if (skip[i])
			continue;
		r[nr].job = jobs[i];
		r[nr].ntasks = fold[i] != NULL ? size[i] : 1;
		r[nr].id = fold[i] != NULL ? fold[i] :
		    strdup(jobref_format(jobs[i], buf, sizeof(buf)));
		fold[i] = NULL;
		if (r[nr++].id == NULL)
			goto fail;
	}
	free(k);
	free(fold);
	free(size);
	free(skip);
	*rows = r;
	*nrows = nr;
	return 0;
fail:
	for (i = 0; fold != NULL && i < n; i++)
		free(fold[i]);
	arrays_rows_free(r, nr);
	free(k);
	free(fold);
	free(size);
	free(skip);
	return -1;
}

void
arrays_rows_free(struct arrays_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows != NULL && i < n; i++)
		free(rows[i].id);
	free(rows);
}
