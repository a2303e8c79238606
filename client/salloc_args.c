/* salloc's options and its shell's environment (salloc_args.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/salloc_args.h"
#include "lib/job.h"

/* sbatch's options that salloc has not: sbatch's own, and those about a
 * script or its output (the shell runs here, on this terminal). */
static const struct {
	const char *name;	/* script_sbatch_opt's name */
	const char *why;
} salloc_not[] = {
	{ "parsable", "sbatch's: salloc prints Slurm's lines on stderr" },
	{ "wait", "salloc waits for the allocation itself" },
	{ "wrap", "give the command itself: salloc [OPTIONS] COMMAND" },
	{ "array", "an allocation is one job" },
	{ "output", "the shell writes to this terminal" },
	{ "error", "the shell writes to this terminal" },
	{ "requeue", "an interactive allocation is never started again" },
};

int
salloc_self_parse(const struct script_sbatch_opt *v, size_t n,
    struct salloc_self *s, struct cerr *err)
{
	unsigned long long u;
	char *end;
	size_t i, k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		if (v[i].kind == SBATCH_REFUSE)
			return cerr_set(err, ERR_INVALID, "%s", v[i].text);
		if (v[i].kind == SBATCH_WARN)
			continue;
		for (k = 0; k < sizeof(salloc_not) / sizeof(*salloc_not); k++)
			if (strcmp(v[i].name, salloc_not[k].name) == 0)
				return cerr_set(err, ERR_INVALID, "%s: not an "
				    "salloc option (%s)", v[i].orig,
				    salloc_not[k].why);
		if (v[i].kind == SBATCH_MAP) {
			if (strcmp(v[i].name, "ntasks") == 0 &&
			    v[i].value != NULL) {
				errno = 0;
				u = strtoull(v[i].value, &end, 10);
				/* A bad count is the submit parser's to
				 * refuse; only a good one is told. */
				s->ntasks = errno == 0 && *end == '\0' &&
				    u <= UINT32_MAX ? (uint32_t)u : 0;
			}
			continue;
		}
		if (strcmp(v[i].name, "help") == 0 ||
		    strcmp(v[i].name, "usage") == 0)
			s->help = true;
		else if (strcmp(v[i].name, "version") == 0)
			s->version = true;
		else if (strcmp(v[i].name, "quiet") == 0)
			s->quiet = true;
		else if (strcmp(v[i].name, "no-shell") == 0)
			s->no_shell = true;
		/* --verbose: no chatter to add. */
	}
	return 0;
}

/* Is entry "NAME=..." one salloc sets or clears? */
static bool
salloc_env_ours(const char *entry)
{
	static const char *const names[] = {
		"SLURM_JOB_ID=", "SLURM_JOBID=", "SLURM_JOB_NODELIST=",
		"SLURM_NODELIST=", "SLURM_NNODES=", "SLURM_JOB_NUM_NODES=",
		"SLURM_TASKS_PER_NODE=", "SLURM_NTASKS=", "SLURM_NPROCS=",
		"SLURM_JOB_PARTITION=", "SLURM_SUBMIT_DIR=",
		"SLURM_SUBMIT_HOST=", "SLURM_CLUSTER_NAME=", "SLURM_JOB_NAME=",
		"COHORT_STEP_CRED=", "PATH=",
	};
	size_t i;

	if (strncmp(entry, "SLURM_JOB_", 10) == 0 ||
	    strncmp(entry, "SLURM_STEP_", 11) == 0)
		return true;
	for (i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strncmp(entry, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

static int
salloc_setenv(char ***v, size_t *n, const char *name, const char *value)
{
	char *e;
	int rc;

	if (asprintf(&e, "%s=%s", name, value) == -1)
		return -1;
	rc = strv_append(v, n, e);
	free(e);
	return rc;
}

static int
salloc_setenvu(char ***v, size_t *n, const char *name, uint64_t value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return salloc_setenv(v, n, name, buf);
}

int
salloc_env(char *const *base, const struct salloc_env_in *in, char ***out,
    size_t *n)
{
	const char *path = NULL;
	char tasks[48], *newpath = NULL;
	char **v = NULL;
	size_t nv = 0, i;

	for (i = 0; base != NULL && base[i] != NULL; i++) {
		if (strncmp(base[i], "PATH=", 5) == 0)
			path = base[i] + 5;
		if (!salloc_env_ours(base[i]) &&
		    strv_append(&v, &nv, base[i]) == -1)
			goto fail;
	}
	if (in->nnodes > 1)
		snprintf(tasks, sizeof(tasks), "%u(x%u)", in->tasks_per_node,
		    in->nnodes);
	else
		snprintf(tasks, sizeof(tasks), "%u", in->tasks_per_node);
	if (in->slurm_dir != NULL)
		newpath = path != NULL && path[0] != '\0' ?
		    (asprintf(&newpath, "%s:%s", in->slurm_dir, path) == -1 ?
		    NULL : newpath) : strdup(in->slurm_dir);
	else if (path != NULL)
		newpath = strdup(path);
	if ((path != NULL || in->slurm_dir != NULL) && newpath == NULL)
		goto fail;
	if ((newpath != NULL && salloc_setenv(&v, &nv, "PATH", newpath) == -1) ||
	    salloc_setenvu(&v, &nv, "SLURM_JOB_ID", in->job_id) == -1 ||
	    salloc_setenvu(&v, &nv, "SLURM_JOBID", in->job_id) == -1 ||
	    salloc_setenv(&v, &nv, "SLURM_JOB_NODELIST", in->nodelist) == -1 ||
	    salloc_setenv(&v, &nv, "SLURM_NODELIST", in->nodelist) == -1 ||
	    salloc_setenvu(&v, &nv, "SLURM_NNODES", in->nnodes) == -1 ||
	    salloc_setenvu(&v, &nv, "SLURM_JOB_NUM_NODES", in->nnodes) == -1 ||
	    salloc_setenv(&v, &nv, "SLURM_TASKS_PER_NODE", tasks) == -1 ||
	    (in->ntasks > 0 && (salloc_setenvu(&v, &nv, "SLURM_NTASKS",
	    in->ntasks) == -1 || salloc_setenvu(&v, &nv, "SLURM_NPROCS",
	    in->ntasks) == -1)) ||
	    (in->job_name != NULL && salloc_setenv(&v, &nv, "SLURM_JOB_NAME",
	    in->job_name) == -1) ||
	    (in->partition != NULL && salloc_setenv(&v, &nv,
	    "SLURM_JOB_PARTITION", in->partition) == -1) ||
	    salloc_setenv(&v, &nv, "SLURM_SUBMIT_DIR", in->submit_dir) == -1 ||
	    (in->submit_host != NULL && salloc_setenv(&v, &nv,
	    "SLURM_SUBMIT_HOST", in->submit_host) == -1) ||
	    salloc_setenv(&v, &nv, "SLURM_CLUSTER_NAME", in->cluster) == -1 ||
	    salloc_setenv(&v, &nv, "COHORT_STEP_CRED", in->cred_path) == -1)
		goto fail;
	free(newpath);
	if (v == NULL && (v = calloc(1, sizeof(*v))) == NULL)
		return -1;
	*out = v;
	*n = nv;
	return 0;
fail:
	free(newpath);
	strv_free(v, nv);
	errno = ENOMEM;
	return -1;
}
