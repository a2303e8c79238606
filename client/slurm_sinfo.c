/* sinfo as Cohort answers it, and the cluster it and scontrol show
 * (slurm_query.h): a Cohort queue is a partition holding every node;
 * nodes are grouped into lines as sinfo groups them, by what the line
 * shows. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "client/slurm_format.h"
#include "client/slurm_query.h"
#include "lib/frame.h"
#include "lib/hostlist.h"

static void
slurm_node_read(const Cohort__V1__Node *pb, struct slurm_node *n)
{
	struct nodes_view_node *v = &n->view;
	unsigned total = pb->has_gpus_total ? pb->gpus_total :
	    pb->inventory != NULL ? (unsigned)pb->inventory->n_gpus : 0;
	unsigned free_gpus = pb->has_gpus_free && pb->gpus_free <= total ?
	    pb->gpus_free : total;

	memset(n, 0, sizeof(*n));
	n->pb = pb;
	v->name = pb->name;
	v->up = strcmp(pb->state, "UP") == 0;
	v->drain = pb->drain != NULL ? pb->drain : "";
	v->busy = pb->n_jobs > 0;
	v->gpus_total = total;
	v->gpus_held = total - free_gpus;
	v->gpus_unavailable = pb->has_gpus_unavailable ?
	    pb->gpus_unavailable : !v->up || v->drain[0] ? free_gpus : 0;
	v->reason = pb->reason != NULL && pb->reason[0] ? pb->reason : NULL;
	if (v->drain[0] != '\0' && pb->drain_actor != NULL &&
	    pb->drain_actor[0] != '\0') {
		v->drain_actor = pb->drain_actor;
		v->drain_ms = pb->has_drain_time_ms ? pb->drain_time_ms : 0;
	}
	v->since_ms = pb->has_since_ms ? pb->since_ms : 0;
	if (pb->inventory != NULL) {
		n->ncpus = pb->inventory->ncpus;
		n->memory_mb = pb->inventory->memory_mb;
	}
}

void
slurm_cluster_clear(struct slurm_cluster *cl)
{
	size_t i;

	for (i = 0; i < cl->nreplies; i++)
		frame_free(cl->replies[i]);
	free(cl->replies);
	for (i = 0; i < cl->nparts; i++)
		free(cl->parts[i]);
	free(cl->parts);
	free(cl->nodes);
	memset(cl, 0, sizeof(*cl));
}

/* Send req, keep the reply when it is want. EXIT_OK or an exit code. */
static int
slurm_call_keep(const char *cmd, struct cconn *c, Cohort__V1__Envelope *req,
    Cohort__V1__Envelope__BodyCase want, struct slurm_cluster *cl,
    Cohort__V1__Envelope **out)
{
	Cohort__V1__Envelope *rep, **v;
	int rc;

	if ((rc = slurm_call(cmd, c, req, want, &rep)) != EXIT_OK)
		return rc;
	if ((v = reallocarray(cl->replies, cl->nreplies + 1,
	    sizeof(*v))) == NULL) {
		frame_free(rep);
		slurm_error(cmd, "out of memory");
		return EXIT_FAILED;
	}
	cl->replies = v;
	v[cl->nreplies++] = rep;
	*out = rep;
	return EXIT_OK;
}

static int
slurm_parts_fetch(const char *cmd, struct cconn *c, struct slurm_cluster *cl)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__QueuesRequest qr = COHORT__V1__QUEUES_REQUEST__INIT;
	const Cohort__V1__QueuesReply *r;
	size_t i, k;
	bool parent;
	int rc;

	req.body_case = COHORT__V1__ENVELOPE__BODY_QUEUES;
	req.queues = &qr;
	if ((rc = slurm_call_keep(cmd, c, &req,
	    COHORT__V1__ENVELOPE__BODY_QUEUES_REPLY, cl, &rep)) != EXIT_OK)
		return rc;
	r = rep->queues_reply;
	if ((cl->parts = calloc(r->n_queues + 1, sizeof(*cl->parts))) ==
	    NULL)
		goto nomem;
	/* Only leaves take jobs: a queue that is some queue's parent is
	 * no partition. */
	for (i = 0; i < r->n_queues; i++) {
		for (k = 0, parent = false; k < r->n_queues && !parent; k++)
			parent = r->queues[k]->parent != NULL &&
			    strcmp(r->queues[k]->parent,
			    r->queues[i]->name) == 0;
		if (parent)
			continue;
		if (strcmp(r->queues[i]->name, "default") == 0)
			cl->default_part = cl->nparts;
		if ((cl->parts[cl->nparts++] = strdup(r->queues[i]->name)) ==
		    NULL)
			goto nomem;
	}
	return EXIT_OK;
nomem:
	slurm_error(cmd, "out of memory");
	return EXIT_FAILED;
}

int
slurm_cluster_fetch(const char *cmd, struct cconn *c, bool parts,
    struct slurm_cluster *cl)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__ListNodesRequest ln = COHORT__V1__LIST_NODES_REQUEST__INIT;
	const Cohort__V1__ListNodesReply *r;
	struct slurm_node *v;
	const char *last = NULL;
	bool more;
	size_t i;
	int rc = EXIT_OK;

	memset(cl, 0, sizeof(*cl));
	if (parts && (rc = slurm_parts_fetch(cmd, c, cl)) != EXIT_OK)
		goto out;
	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_NODES;
	req.list_nodes = &ln;
	do {
		ln.after_name = (char *)last;
		if ((rc = slurm_call_keep(cmd, c, &req,
		    COHORT__V1__ENVELOPE__BODY_LIST_NODES_REPLY, cl,
		    &rep)) != EXIT_OK)
			goto out;
		r = rep->list_nodes_reply;
		for (i = 0; i < r->n_nodes; i++) {
			/* In name order, never a node twice. */
			if (last != NULL && strcmp(r->nodes[i]->name, last) <= 0)
				continue;
			if ((v = reallocarray(cl->nodes, cl->nnodes + 1,
			    sizeof(*v))) == NULL) {
				slurm_error(cmd, "out of memory");
				rc = EXIT_FAILED;
				goto out;
			}
			cl->nodes = v;
			slurm_node_read(r->nodes[i], &v[cl->nnodes++]);
			last = r->nodes[i]->name;
		}
		more = r->has_has_more && r->has_more;
		if (more && (ln.after_name == last || last == NULL)) {
			slurm_error(cmd, "the controller's pages do not "
			    "advance");
			rc = EXIT_FAILED;
			goto out;
		}
	} while (more);
out:
	if (rc != EXIT_OK)
		slurm_cluster_clear(cl);
	return rc;
}

/* ---- sinfo ---- */

enum {
	SI_PARTITION, SI_AVAIL, SI_LIMIT, SI_NODES, SI_STATE, SI_STATE_LONG,
	SI_NODELIST, SI_GRES, SI_CPUS, SI_MEMORY, SI_REASON, SI_TIMESTAMP,
	SI_USER, SI_AIOT, SI_FEATURES, SI_JOBSIZE, SI_ROOT, SI_OVERSUB,
	SI_GROUPS, SI_SCT, SI_TMPDISK, SI_WEIGHT,
};

static const struct sfmt_def sinfo_defs[] = {
	{ 'P', NULL, "PARTITION", 0, SI_PARTITION },
	{ 'a', NULL, "AVAIL", 0, SI_AVAIL },
	{ 'l', NULL, "TIMELIMIT", 0, SI_LIMIT },
	{ 'D', NULL, "NODES", 0, SI_NODES },
	{ 't', NULL, "STATE", 0, SI_STATE },
	{ 'T', NULL, "STATE", 0, SI_STATE_LONG },
	{ 'N', NULL, "NODELIST", 0, SI_NODELIST },
	{ 'G', NULL, "GRES", 0, SI_GRES },
	{ 'c', NULL, "CPUS", 0, SI_CPUS },
	{ 'm', NULL, "MEMORY", 0, SI_MEMORY },
	{ 'E', NULL, "REASON", 0, SI_REASON },
	{ 'H', NULL, "TIMESTAMP", 0, SI_TIMESTAMP },
	{ 'u', NULL, "USER", 0, SI_USER },
	{ 'F', NULL, "NODES(A/I/O/T)", 0, SI_AIOT },
	{ 'f', NULL, "AVAIL_FEATURES", 0, SI_FEATURES },
	{ 's', NULL, "JOB_SIZE", 0, SI_JOBSIZE },
	{ 'r', NULL, "ROOT", 0, SI_ROOT },
	{ 'h', NULL, "OVERSUBSCRIBE", 0, SI_OVERSUB },
	{ 'g', NULL, "GROUPS", 0, SI_GROUPS },
	{ 'z', NULL, "S:C:T", 0, SI_SCT },
	{ 'd', NULL, "TMP_DISK", 0, SI_TMPDISK },
	{ 'w', NULL, "WEIGHT", 0, SI_WEIGHT },
};
#define SINFO_NDEFS (sizeof(sinfo_defs) / sizeof(sinfo_defs[0]))

/* Slurm 22.05's defaults: sinfo, -s, -N, -R, -l, -N -l. With -N its
 * node and partition columns are at least 9 wide, the partition's
 * right-justified, and the CPUs left-justified. */
#define SINFO_FORMAT "%#P %.5a %.10l %.6D %.6t %N"
#define SINFO_SUMMARY "%#P %.5a %.10l %.16F %N"
#define SINFO_NODE "%#9N %.6D %.#9P %6t"
#define SINFO_REASONS "%20E %9u %19H %N"
#define SINFO_LONG "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
#define SINFO_NODE_LONG \
    "%#9N %.6D %.#9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"

#define SI_CELL 256

/* A line: a partition (NULL with -R) and its nodes. */
struct sinfo_line {
	const char *part;
	bool dflt;
	char *key;		/* the cells but counts and lists, joined */
	size_t *nodes;		/* indices into the cluster's nodes */
	size_t n;
};

struct sinfo_out {
	struct sfmt fmt;
	const struct slurm_cluster *cl;
	struct sinfo_line *lines;
	size_t nlines;
	bool by_node;		/* -N: a line per node and partition */
};

/* Fields that describe a group rather than one node. */
static bool
sinfo_group_field(int id)
{
	return id == SI_NODES || id == SI_NODELIST || id == SI_AIOT;
}

/* The cell of field id for line l (n: its first node). */
static const char *
sinfo_cell(const struct sinfo_out *o, const struct sinfo_line *l, int id,
    char *buf, size_t len)
{
	const struct slurm_node *n = &o->cl->nodes[l->nodes[0]];
	unsigned a = 0, idle = 0, other = 0;
	enum nodes_view_state st;
	char **names, *list;
	size_t i;

	switch (id) {
	case SI_PARTITION:
		snprintf(buf, len, "%s%s", l->part != NULL ? l->part : "",
		    l->dflt ? "*" : "");
		return buf;
	case SI_AVAIL:
		return "up";
	case SI_LIMIT:
		return "infinite";
	case SI_NODES:
		snprintf(buf, len, "%zu", l->n);
		return buf;
	case SI_STATE:
		return slurm_node_state(&n->view, false);
	case SI_STATE_LONG:
		return slurm_node_state(&n->view, true);
	case SI_NODELIST:
		if ((names = calloc(l->n, sizeof(*names))) == NULL)
			return "";
		for (i = 0; i < l->n; i++)
			names[i] = (char *)o->cl->nodes[l->nodes[i]].view.name;
		list = hostlist_compress(names, l->n);
		snprintf(buf, len, "%s", list != NULL ? list : names[0]);
		free(list);
		free(names);
		return buf;
	case SI_GRES:
		if (n->view.gpus_total == 0)
			return "(null)";
		snprintf(buf, len, "gpu:%u", n->view.gpus_total);
		return buf;
	case SI_CPUS:
		snprintf(buf, len, "%u", n->ncpus);
		return buf;
	case SI_MEMORY:
		snprintf(buf, len, "%" PRIu64, n->memory_mb);
		return buf;
	case SI_REASON:
		return n->view.reason != NULL ? n->view.reason : "none";
	case SI_TIMESTAMP:
		return slurm_time(n->view.drain_actor != NULL ?
		    n->view.drain_ms : !n->view.up ? n->view.since_ms : 0,
		    "Unknown", buf, len);
	case SI_USER:
		return n->view.drain_actor != NULL ? n->view.drain_actor :
		    "Unknown";
	case SI_AIOT:
		for (i = 0; i < l->n; i++) {
			st = nodes_view_state(&o->cl->nodes[l->nodes[i]].view);
			if (st == NODES_VIEW_IDLE)
				idle++;
			else if (st == NODES_VIEW_MIXED ||
			    st == NODES_VIEW_ALLOCATED)
				a++;
			else
				other++;
		}
		snprintf(buf, len, "%u/%u/%u/%zu", a, idle, other, l->n);
		return buf;
	case SI_FEATURES:
		return nodes_view_features_cell(&n->view, buf, len) != NULL ?
		    buf : "(null)";
	case SI_JOBSIZE:
		return "1-infinite";
	case SI_ROOT:
		return "no";
	case SI_OVERSUB:
		return "NO";
	case SI_GROUPS:
		return "all";
	case SI_SCT:
		/* Cohort counts CPUs, not sockets: a core per socket, as
		 * Slurm shows a node configured with CPUs= alone. */
		snprintf(buf, len, "%u:1:1", n->ncpus);
		return buf;
	case SI_TMPDISK:
		return "0";
	case SI_WEIGHT:
		return "1";
	}
	return "";
}

/* Add node ni of partition p (index pi) to its line. 0 or -1. */
static int
sinfo_add(struct sinfo_out *o, size_t pi, size_t ni, bool reasons)
{
	static char buf[SI_CELL];
	const struct slurm_cluster *cl = o->cl;
	struct sinfo_line one, *l, *v;
	char *key = NULL;
	size_t klen = 0, i, *nn;
	FILE *fp;

	memset(&one, 0, sizeof(one));
	one.part = reasons ? NULL : cl->parts[pi];
	one.dflt = !reasons && pi == cl->default_part;
	one.nodes = &ni;
	one.n = 1;
	if ((fp = open_memstream(&key, &klen)) == NULL)
		return -1;
	for (i = 0; i < o->fmt.n; i++)
		if (o->fmt.v[i].def != NULL &&
		    !sinfo_group_field(o->fmt.v[i].def->id))
			fprintf(fp, "%s\x1f", sinfo_cell(o, &one,
			    o->fmt.v[i].def->id, buf, sizeof(buf)));
	/* The partition keeps lines apart even when not shown. */
	fprintf(fp, "%s", one.part != NULL ? one.part : "");
	if (fclose(fp) != 0)
		return -1;
	for (i = 0, l = NULL; !o->by_node && i < o->nlines && l == NULL; i++)
		if (strcmp(o->lines[i].key, key) == 0)
			l = &o->lines[i];
	if (l == NULL) {
		if ((v = reallocarray(o->lines, o->nlines + 1,
		    sizeof(*v))) == NULL) {
			free(key);
			return -1;
		}
		o->lines = v;
		l = &v[o->nlines++];
		*l = one;
		l->nodes = NULL;
		l->n = 0;
		l->key = key;
	} else
		free(key);
	if ((nn = reallocarray(l->nodes, l->n + 1, sizeof(*nn))) == NULL)
		return -1;
	l->nodes = nn;
	nn[l->n++] = ni;
	return 0;
}

static void
sinfo_out_clear(struct sinfo_out *o)
{
	size_t i;

	for (i = 0; i < o->nlines; i++) {
		free(o->lines[i].key);
		free(o->lines[i].nodes);
	}
	free(o->lines);
	sfmt_clear(&o->fmt);
}

static const struct option sinfo_longopts[] = {
	{ "Node", no_argument, NULL, 'N' },
	{ "noheader", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, 'o' },
	{ "list-reasons", no_argument, NULL, 'R' },
	{ "summarize", no_argument, NULL, 's' },
	{ "partition", required_argument, NULL, 'p' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "long", no_argument, NULL, 'l' },
	{ "all", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'H' },
	{ NULL, 0, NULL, 0 },
};

static const char sinfo_usage[] =
    "Usage: sinfo [-a] [-h] [-l] [-N] [-R | -s] [-p PARTITIONS]\n"
    "             [-n NODES] [-o FORMAT]\n"
    "  Cohort's sinfo (cohort(1), SLURM COMMANDS): each Cohort queue that\n"
    "  takes jobs is a partition holding every node; TIMELIMIT shows\n"
    "  infinite. -o letters: %P %a %l %D %t %T %N %G %c %m %E %H %u %F %f\n"
    "  %s %r %h %g %z %d %w.\n";

int
cmd_sinfo(int argc, char **argv, const struct cconn_opts *opts)
{
	static char bufs[SLURM_FIELDS_MAX][SI_CELL];
	const char *cells[SLURM_FIELDS_MAX], *format = NULL, *parts = NULL;
	const char *nodes = NULL;
	struct sinfo_out o;
	struct slurm_cluster cl;
	struct cerr err;
	struct cconn *c;
	char **names = NULL, why[256];
	size_t nnames = 0, pi, ni, i, k, f;
	bool noheader = false, by_node = false, reasons = false;
	bool summary = false, longer = false, named;
	int ch, rc, pass;

	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ahln:No:p:Rs", sinfo_longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'a':
			break;	/* no queue is hidden */
		case 'h':
			noheader = true;
			break;
		case 'l':
			longer = true;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 'N':
			by_node = true;
			break;
		case 'o':
			format = optarg;
			break;
		case 'p':
			parts = optarg;
			break;
		case 'R':
			reasons = true;
			break;
		case 's':
			summary = true;
			break;
		case 'H':
			fputs(sinfo_usage, stdout);
			return EXIT_OK;
		default:
			return slurm_option_error("sinfo", ch, argv);
		}
	}
	if ((rc = slurm_no_operands("sinfo", argc, argv)) != 0)
		return rc;
	if (format == NULL)
		format = reasons ? SINFO_REASONS : summary ? SINFO_SUMMARY :
		    by_node ? (longer ? SINFO_NODE_LONG : SINFO_NODE) :
		    longer ? SINFO_LONG : SINFO_FORMAT;
	memset(&o, 0, sizeof(o));
	cerr_clear(&err);
	if (sfmt_parse_letters(format, sinfo_defs, SINFO_NDEFS, &o.fmt,
	    &err) == -1) {
		slurm_error("sinfo", "%s", err.text);
		return EXIT_FAILED;
	}
	if (slurm_fields_check("sinfo", &o.fmt) != EXIT_OK) {
		sfmt_clear(&o.fmt);
		return EXIT_FAILED;
	}
	if (nodes != NULL && hostlist_expand_args((char *const *)&nodes, 1,
	    HOSTLIST_NODES_MAX, &names, &nnames, why, sizeof(why)) == -1) {
		slurm_error("sinfo", "Invalid node name specified: %s", why);
		sfmt_clear(&o.fmt);
		return EXIT_FAILED;
	}
	o.by_node = by_node && !summary && !reasons;
	if ((rc = slurm_connect(opts, &c)) != EXIT_OK)
		goto out;
	rc = slurm_cluster_fetch("sinfo", c, true, &cl);
	cconn_close(c);
	if (rc != EXIT_OK)
		goto out;
	o.cl = &cl;
	/* -N: node by node, each in every partition; else partition by
	 * partition. -R: the drained and DOWN nodes, whatever partition. */
	for (k = 0; k < (o.by_node ? cl.nnodes : reasons ? 1 : cl.nparts) &&
	    rc == EXIT_OK; k++)
		for (i = 0; i < (o.by_node ? cl.nparts : cl.nnodes) &&
		    rc == EXIT_OK; i++) {
			pi = o.by_node ? i : k;
			ni = o.by_node ? k : i;
			if (!reasons && parts != NULL &&
			    !slurm_word_in(parts, cl.parts[pi]))
				continue;
			named = names == NULL;
			for (f = 0; f < nnames && !named; f++)
				named = strcmp(names[f],
				    cl.nodes[ni].view.name) == 0;
			if (!named || (reasons && !(cl.nodes[ni].view.drain[0] ||
			    !cl.nodes[ni].view.up)))
				continue;
			if (sinfo_add(&o, pi, ni, reasons) == -1) {
				slurm_error("sinfo", "out of memory");
				rc = EXIT_FAILED;
			}
		}
	if (rc == EXIT_OK) {
		/* "%#" widths hold every cell, the header's too. */
		sfmt_fit(&o.fmt, NULL);
		for (pass = 0; pass < 2; pass++) {
			if (pass == 1 && !noheader && longer)
				slurm_print_date(stdout);
			if (pass == 1 && !noheader)
				sfmt_print(&o.fmt, NULL, stdout);
			for (i = 0; i < o.nlines; i++) {
				for (k = 0, f = 0; k < o.fmt.n; k++)
					if (o.fmt.v[k].def != NULL) {
						cells[f] = sinfo_cell(&o,
						    &o.lines[i],
						    o.fmt.v[k].def->id,
						    bufs[f], sizeof(bufs[f]));
						f++;
					}
				if (pass == 0)
					sfmt_fit(&o.fmt, cells);
				else
					sfmt_print(&o.fmt, cells, stdout);
			}
		}
		rc = fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
	}
	slurm_cluster_clear(&cl);
out:
	hostlist_free(names, nnames);
	sinfo_out_clear(&o);
	return rc;
}
