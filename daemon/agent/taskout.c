/* The output files of one task (taskout.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "daemon/agent/taskout.h"
#include "lib/outpat.h"

static void
vars_of(const struct launch *l, unsigned rank, struct outpat_vars *v)
{
	unsigned tpn = l->spec->tasks_per_node ? l->spec->tasks_per_node : 1;

	memset(v, 0, sizeof(*v));
	v->job_id = l->job_id;
	v->array_id = l->array_id;
	v->array_task = l->array_task;
	v->rank = rank;
	v->node_rank = rank / tpn;
	v->node = v->node_rank < l->nnodes ? l->nodelist[v->node_rank] : NULL;
	v->name = l->spec->name;
	v->user = l->user;
}

/* The lowest rank whose file of pat is rank's: the pattern's variables
 * say which ranks share a name (outpat_varies), so no other rank's name
 * is expanded. A name of several variables ("%N%n") could in principle
 * spell another rank's too; that rank is not looked for, as its search
 * grew with the square of the ranks inside the agent's event loop. */
static unsigned
first_rank(const struct launch *l, const char *pat, unsigned rank)
{
	unsigned tpn = l->spec->tasks_per_node ? l->spec->tasks_per_node : 1;
	unsigned by = outpat_varies(pat);

	if (by & OUTPAT_BY_RANK)
		return rank;
	if (by & OUTPAT_BY_NODE)
		return rank - rank % tpn;
	return 0;
}

static int
one_file(const struct launch *l, const char *pat, unsigned rank, char *path,
    bool *trunc, struct cerr *err)
{
	struct outpat_vars v;

	path[0] = '\0';
	*trunc = false;
	if (pat == NULL)
		return 0;
	vars_of(l, rank, &v);
	if (outpat_expand(pat, &v, path, PATH_MAX) == -1)
		return cerr_set(err, ERR_INVALID, "job %" PRIu64 ": the file "
		    "pattern '%s' %s", l->job_id, pat, errno == ENAMETOOLONG ?
		    "gives too long a path" : "gives an empty name");
	*trunc = l->restart <= 1 && first_rank(l, pat, rank) == rank;
	return 0;
}

int
taskout_files(const struct launch *l, unsigned rank, struct taskout *o,
    struct cerr *err)
{
	const struct job_spec *s = l->spec;

	memset(o, 0, sizeof(*o));
	if (one_file(l, outpat_for(s->output, s->error, false), rank, o->out,
	    &o->out_trunc, err) == -1 ||
	    one_file(l, outpat_for(s->output, s->error, true), rank, o->err,
	    &o->err_trunc, err) == -1)
		return -1;
	return 0;
}
