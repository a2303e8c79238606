/* cohort nodes, cohort node show and cohort node delete: the cluster's
 * nodes (all, or those a hostlist names, in some states, or summed up as
 * sinfo -s does), nodes with their GPUs and their topology, and removing
 * a node that is gone for good. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/nodes_view.h"
#include "client/output.h"
#include "lib/constraint.h"
#include "lib/features.h"
#include "lib/frame.h"
#include "lib/hostlist.h"
#include "lib/inventory.h"
#include "lib/wire.h"

enum { O_JSON = 0x100, O_STATE, O_SUMMARY, O_REASONS, O_ITERATE, O_HELP = 'h',
    O_LONG = 'l', O_CONSTRAINT = 'C' };

static const struct option nodes_longopts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "state", required_argument, NULL, O_STATE },
	{ "summary", no_argument, NULL, O_SUMMARY },
	{ "reasons", no_argument, NULL, O_REASONS },
	{ "long", no_argument, NULL, O_LONG },
	{ "constraint", required_argument, NULL, O_CONSTRAINT },
	{ "iterate", required_argument, NULL, O_ITERATE },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char nodes_usage[] =
    "usage: cohort nodes [NODES...] [--state S[,S...]] [-C EXPR] [--long]\n"
    "                    [--summary | --reasons] [--json] [--iterate SEC]\n"
    "  every node (or those NODES name: hostlists like node[01-08,12] or\n"
    "  comma lists; each must exist): state, health, GPUs free/total,\n"
    "  GPU model, switch, reason (for a drain: who and when).\n"
    "  STATE is UP or DOWN, or the drain state of an UP node (DRAINING:\n"
    "  jobs still running, DRAINED: empty), or both for a DOWN one\n"
    "  (DOWN+DRAINED); HEALTH is OK, DEGRADED or FAILED, UNKNOWN when DOWN.\n"
    "  GPUS free counts only GPUs new work can get.\n"
    "  --state S   only nodes in one of these states: UP, DOWN, DRAINING,\n"
    "              DRAINED, or for UP nodes in service IDLE (no job),\n"
    "              MIXED (some GPUs held), ALLOCATED (all GPUs held)\n"
    "  --summary   as sinfo -s: NODES(A/I/O/T) and GPUS(A/I/O/T) (allocated,\n"
    "              idle, other: DOWN, drained or failed, total), then each\n"
    "              state with its nodes as a hostlist\n"
    "  --reasons   as sinfo -R: REASON USER TIMESTAMP NODELIST of drained\n"
    "              and DOWN nodes\n"
    "  --iterate SEC  list again every SEC seconds (0.01 to 86400, as\n"
    "              sinfo -i) until interrupted; a round that fails says\n"
    "              why and the next one tries again\n"
    "  -C, --constraint EXPR\n"
    "              only nodes whose features meet EXPR, as submit's\n"
    "              --constraint judges them (fp64, 'h100&ib', 'a|b')\n"
    "  -l, --long  a FEATURES column: the agent's configured features, then\n"
    "              those derived from the inventory (GPU family and model,\n"
    "              nvlink); and SCORE: the failures attributed to the node\n"
    "              that count now (jobs that failed early there and ran\n"
    "              fine elsewhere, hardware failures)\n"
    "  --json      any of these as JSON (fields: docs/OPERATIONS.md)\n";
static const char node_usage[] =
    "usage: cohort node show NODES [--json]\n"
    "  nodes (a hostlist or comma list; each must exist): state, who\n"
    "  drained them and when, CPUs, memory, features (configured and\n"
    "  derived from the inventory), jobs, failures attributed to them\n"
    "  (suspect score, reason, evidence), and their GPUs with\n"
    "  model, memory, NUMA node, PCIe location, NVLink peers, NIC,\n"
    "  health, job. --json: one object for one node, else an array.\n"
    "usage: cohort node delete NODE\n"
    "  forget a node that is DOWN (its agent not connected) and that no\n"
    "  job holds: it leaves `cohort nodes` and the database. A node in\n"
    "  the topology or the 'nodes' list may register again. Admins only.\n";

/* A node from the controller: the message, and its inventory read
 * (and checked) by lib/wire.c. */
struct cnode {
	const Cohort__V1__Node *pb;
	struct inventory inv;
	const char *feat[INV_MAX_FEATURES];	/* inv.features */
};

/* What the node commands were asked. */
struct nodes_args {
	struct output_conn_flags conn;
	bool json;
	bool summary;		/* cohort nodes only, as the two below */
	bool reasons;
	bool longer;		/* --long: the FEATURES column */
	const char *constraint;	/* --constraint: parsed */
	unsigned states;	/* nodes_view bits; 0: any */
	unsigned iterate_ms;	/* --iterate; 0: once */
};

/* 0, -2 for --help, or EXIT_USAGE after printing why. Only a listing
 * (cohort nodes) takes --state, --summary and --reasons. */
static int
nodes_parse(const char *cmd, bool listing, int argc, char **argv,
    struct nodes_args *a)
{
	char why[160];
	struct cerr err;
	int ch;

	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, listing ? ":hlC:" : ":h",
	    nodes_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error(cmd, ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(&a->conn, ch, optarg))
			continue;
		if (ch == O_JSON) {
			a->json = true;
			continue;
		}
		if (!listing) {
			output_error("%s: %s is an option of cohort nodes (see "
			    "cohort %s --help)", cmd, argv[optind - 1], cmd);
			return EXIT_USAGE;
		}
		if (ch == O_CONSTRAINT) {
			if (constraint_parse(optarg, why, sizeof(why)) == -1) {
				output_error("%s: --constraint '%.64s': %s", cmd,
				    optarg, why);
				return EXIT_USAGE;
			}
			a->constraint = optarg;
		} else if (ch == O_LONG)
			a->longer = true;
		else if (ch == O_SUMMARY)
			a->summary = true;
		else if (ch == O_REASONS)
			a->reasons = true;
		else if (ch == O_ITERATE) {
			if (output_iterate_parse(cmd, optarg,
			    &a->iterate_ms) != EXIT_OK)
				return EXIT_USAGE;
		} else if (nodes_view_states_parse(optarg, &a->states,
		    &err) == -1) {
			output_error("%s: %s", cmd, err.text);
			return EXIT_USAGE;
		}
	}
	if (a->summary && a->reasons) {
		output_error("%s: --summary or --reasons, not both", cmd);
		return EXIT_USAGE;
	}
	return 0;
}

/* The nodes argv[optind..argc) name (hostlists, comma lists), sorted,
 * each once, at most HOSTLIST_NODES_MAX. 0 (none given: *names NULL),
 * or EXIT_USAGE after printing why. */
static int
nodes_named(const char *cmd, int argc, char **argv, char ***names,
    size_t *n)
{
	char why[256];

	*names = NULL;
	*n = 0;
	if (optind >= argc)
		return 0;
	why[0] = '\0';
	if (hostlist_expand_args(argv + optind, (size_t)(argc - optind),
	    HOSTLIST_NODES_MAX, names, n, why, sizeof(why)) == -1) {
		if (errno == ENOMEM)
			output_error("%s: out of memory", cmd);
		else
			output_error("%s: %s (a node, a hostlist such as "
			    "node[01-08,12], or a comma list)", cmd, why[0] ?
			    why : "not a hostlist");
		return EXIT_USAGE;
	}
	return 0;
}

/* Read pb into n (which borrows it). 0, or -1 after printing why. */
static int
cnode_read(const char *cmd, const Cohort__V1__Node *pb, struct cnode *n)
{
	struct cerr err;

	size_t i;

	n->pb = pb;
	memset(&n->inv, 0, sizeof(n->inv));
	cerr_clear(&err);
	if (pb->inventory != NULL &&
	    wire_inventory_from_pb(pb->inventory, &n->inv, &err) == -1) {
		output_error("%s: the controller sent node %s, which we cannot "
		    "read: %s", cmd, pb->name, err.text);
		return -1;
	}
	for (i = 0; i < n->inv.nfeatures && i < INV_MAX_FEATURES; i++)
		n->feat[i] = n->inv.features[i];
	/* Derived features are printed and matched as the configured
	 * ones: held to the same names. */
	for (i = 0; i < pb->n_derived_features; i++)
		if (i >= FEATURES_DERIVED_MAX ||
		    !constraint_name_ok(pb->derived_features[i])) {
			output_error("%s: the controller sent node %s, which we "
			    "cannot read: %s", cmd, pb->name, i >=
			    FEATURES_DERIVED_MAX ? "too many derived features" :
			    "a derived feature that is not a feature name");
			return -1;
		}
	return 0;
}

/* Unset: the controller does not know (a DOWN node). */
static const char *
pb_health_name(protobuf_c_boolean has, Cohort__V1__Health h)
{
	if (!has)
		return "UNKNOWN";
	switch (h) {
	case COHORT__V1__HEALTH__HEALTH_OK:
		return "OK";
	case COHORT__V1__HEALTH__HEALTH_DEGRADED:
		return "DEGRADED";
	case COHORT__V1__HEALTH__HEALTH_FAILED:
		return "FAILED";
	default:
		return NULL;
	}
}

static const char *
str_or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* What nodes_view makes of pb (borrowing its strings). A controller
 * that does not send gpus_unavailable: the free GPUs of a DOWN or
 * drained node are unavailable. */
static void
cnode_view(const struct cnode *n, struct nodes_view_node *v)
{
	const Cohort__V1__Node *pb = n->pb;
	unsigned total = pb->has_gpus_total ? pb->gpus_total : n->inv.ngpus;
	unsigned free_gpus = pb->has_gpus_free && pb->gpus_free <= total ?
	    pb->gpus_free : total;

	memset(v, 0, sizeof(*v));
	v->name = pb->name;
	v->up = strcmp(pb->state, "UP") == 0;
	v->drain = str_or_null(pb->drain) != NULL ? pb->drain : "";
	v->busy = pb->n_jobs > 0;
	v->gpus_total = total;
	v->gpus_held = total - free_gpus;
	if (pb->has_gpus_unavailable)
		v->gpus_unavailable = pb->gpus_unavailable;
	else
		v->gpus_unavailable = !v->up || v->drain[0] ? free_gpus : 0;
	v->reason = str_or_null(pb->reason);
	if (v->drain[0] != '\0' && str_or_null(pb->drain_actor) != NULL) {
		v->drain_actor = pb->drain_actor;
		v->drain_ms = pb->has_drain_time_ms ? pb->drain_time_ms : 0;
	}
	v->since_ms = pb->has_since_ms ? pb->since_ms : 0;
	v->features = n->feat;
	v->nfeatures = n->inv.nfeatures;
	v->derived = (const char *const *)pb->derived_features;
	v->nderived = pb->n_derived_features;
}

/* UP, DOWN, DRAINING, DRAINED, or both ("DOWN+DRAINED") when a drained
 * node is also down. */
static void
node_state(const Cohort__V1__Node *pb, char *buf, size_t len)
{
	const char *drain = str_or_null(pb->drain);

	if (drain == NULL)
		snprintf(buf, len, "%s", pb->state);
	else if (strcmp(pb->state, "UP") == 0)
		snprintf(buf, len, "%s", drain);
	else
		snprintf(buf, len, "%s+%s", pb->state, drain);
}

/* The GPU models of a node, each once: "NVIDIA H100 80GB HBM3"; NULL
 * when it has no GPUs. malloc'd; NULL also on ENOMEM (*nomem set). */
static char *
node_models(const struct inventory *inv, bool *nomem)
{
	char *buf = NULL;
	size_t len, i, k;
	FILE *fp;
	bool seen;

	*nomem = false;
	if (inv->ngpus == 0)
		return NULL;
	if ((fp = open_memstream(&buf, &len)) == NULL) {
		*nomem = true;
		return NULL;
	}
	for (i = 0; i < inv->ngpus; i++) {
		for (seen = false, k = 0; k < i && !seen; k++)
			seen = strcmp(inv->gpus[k].model,
			    inv->gpus[i].model) == 0;
		if (!seen)
			fprintf(fp, "%s%s", i ? "," : "", inv->gpus[i].model[0] ?
			    inv->gpus[i].model : "?");
	}
	if (fclose(fp) != 0) {
		free(buf);
		*nomem = true;
		return NULL;
	}
	return buf;
}

/* The job ids as "12,15", or NULL for none. malloc'd; *nomem on ENOMEM. */
static char *
node_jobs(const Cohort__V1__Node *pb, bool *nomem)
{
	char *buf = NULL;
	size_t len, i;
	FILE *fp;

	*nomem = false;
	if (pb->n_jobs == 0)
		return NULL;
	if ((fp = open_memstream(&buf, &len)) == NULL) {
		*nomem = true;
		return NULL;
	}
	for (i = 0; i < pb->n_jobs; i++)
		fprintf(fp, "%s%" PRIu64, i ? "," : "", pb->jobs[i]);
	if (fclose(fp) != 0) {
		free(buf);
		*nomem = true;
		return NULL;
	}
	return buf;
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
json_time(protobuf_c_boolean has, int64_t ms)
{
	char buf[OUTPUT_TIME_LEN];

	return has && ms > 0 ? json_string(output_time_utc(ms, buf,
	    sizeof(buf))) : json_null();
}

static json_t *
json_opt_int(bool has, json_int_t v)
{
	return has ? json_integer(v) : json_null();
}

/* {"index": 0, "uuid": ..., "nvlink_peers": [1, 2, 3], ...} */
static json_t *
gpu_json(const struct gpu_info *g, const Cohort__V1__Gpu *pb)
{
	json_t *peers;
	unsigned i;

	if ((peers = json_array()) == NULL)
		return NULL;
	for (i = 0; i < 64; i++)
		if ((g->nvlink_peers >> i & 1) &&
		    json_array_append_new(peers, json_integer(i)) == -1) {
			json_decref(peers);
			return NULL;
		}
	return json_pack("{s:I, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o,"
	    " s:o, s:b, s:o, s:o}",
	    "index", (json_int_t)g->index,
	    "uuid", json_str_or_null(str_or_null(g->uuid)),
	    "model", json_str_or_null(str_or_null(g->model)),
	    "memory_mb", (json_int_t)g->memory_mb,
	    "numa_node", json_opt_int(g->numa_node >= 0, g->numa_node),
	    "pci_bus_id", json_str_or_null(str_or_null(g->pci_bus_id)),
	    "pcie_switch", json_opt_int(g->pcie_switch >= 0, g->pcie_switch),
	    "nvlink_domain", json_opt_int(g->nvlink_domain >= 0,
	    g->nvlink_domain),
	    "nvlink_peers", peers,
	    "nic", json_opt_int(g->nic >= 0, g->nic),
	    "nic_name", json_str_or_null(g->nic_name[0] != '\0' ?
	    g->nic_name : NULL),
	    "nic_near", g->nic_near,
	    "health", json_str_or_null(pb_health_name(pb->has_health,
	    pb->health)),
	    "job_id", json_opt_int(pb->has_job_id && pb->job_id != 0,
	    (json_int_t)pb->job_id));
}

/* The node as JSON; with_gpus adds the inventory (node show). New
 * reference, NULL on ENOMEM. */
static json_t *
node_json(const struct cnode *n, bool with_gpus)
{
	const Cohort__V1__Node *pb = n->pb;
	json_t *doc, *jobs, *gpus, *feats;
	struct nodes_view_node v;
	unsigned alloc, idle, other;
	char *models;
	bool nomem;
	size_t i;

	if ((jobs = json_array()) == NULL)
		return NULL;
	for (i = 0; i < pb->n_jobs; i++)
		if (json_array_append_new(jobs,
		    json_integer((json_int_t)pb->jobs[i])) == -1) {
			json_decref(jobs);
			return NULL;
		}
	models = node_models(&n->inv, &nomem);
	if (nomem) {
		json_decref(jobs);
		return NULL;
	}
	cnode_view(n, &v);
	nodes_view_gpus(&v, &alloc, &idle, &other);
	doc = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o,"
	    " s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:s}",
	    "name", pb->name,
	    "state", pb->state,
	    "drain", json_str_or_null(str_or_null(pb->drain)),
	    "health", json_str_or_null(pb_health_name(pb->has_health,
	    pb->health)),
	    "gpus_free", (json_int_t)idle,
	    "gpus_alloc", (json_int_t)alloc,
	    "gpus_unavailable", (json_int_t)other,
	    "gpus_total", (json_int_t)v.gpus_total,
	    "model", json_str_or_null(models),
	    "switch", json_str_or_null(str_or_null(pb->switch_name)),
	    "reason", pb->reason ? pb->reason : "",
	    "address", json_str_or_null(str_or_null(pb->address)),
	    "last_heartbeat", json_time(pb->has_last_heartbeat_ms,
	    pb->last_heartbeat_ms),
	    "since", json_time(pb->has_since_ms, pb->since_ms),
	    "jobs", jobs,
	    "drained_by", json_str_or_null(v.drain_actor),
	    "drained_at", json_time(v.drain_actor != NULL, v.drain_ms),
	    "drain_health", v.drain_actor != NULL && pb->has_drain_health &&
	    pb->drain_health,
	    "summary_state", nodes_view_state_name(nodes_view_state(&v)));
	free(models);
	if (doc == NULL)
		return NULL;
	if (json_object_set_new(doc, "block",
	    json_str_or_null(str_or_null(pb->block))) == -1 ||
	    json_object_set_new(doc, "torus", pb->has_torus_x ?
	    json_pack("[I, I, I]", (json_int_t)pb->torus_x,
	    (json_int_t)pb->torus_y, (json_int_t)pb->torus_z) :
	    json_null()) == -1)
		goto nomem;
	if (pb->has_suspect_score && (json_object_set_new(doc,
	    "suspect_score", json_integer(pb->suspect_score)) == -1 ||
	    json_object_set_new(doc, "suspect_reason", json_str_or_null(
	    str_or_null(pb->suspect_reason))) == -1 ||
	    json_object_set_new(doc, "suspect_exempt", json_boolean(
	    pb->has_suspect_exempt && pb->suspect_exempt)) == -1 ||
	    json_object_set_new(doc, "suspect_evidence", json_str_or_null(
	    str_or_null(pb->suspect_evidence))) == -1))
		goto nomem;
	if ((feats = json_array()) == NULL ||
	    json_object_set_new(doc, "features", feats) == -1)
		goto nomem;
	for (i = 0; i < n->inv.nfeatures; i++)
		if (json_array_append_new(feats,
		    json_string(n->inv.features[i])) == -1)
			goto nomem;
	if ((feats = json_array()) == NULL ||
	    json_object_set_new(doc, "derived_features", feats) == -1)
		goto nomem;
	for (i = 0; i < pb->n_derived_features; i++)
		if (json_array_append_new(feats,
		    json_string(pb->derived_features[i])) == -1)
			goto nomem;
	if (!with_gpus)
		return doc;
	if ((gpus = json_array()) == NULL)
		goto nomem;
	for (i = 0; i < n->inv.ngpus; i++)
		if (json_array_append_new(gpus, gpu_json(&n->inv.gpus[i],
		    pb->inventory->gpus[i])) == -1) {
			json_decref(gpus);
			goto nomem;
		}
	if (json_object_set_new(doc, "cpus", json_opt_int(n->inv.ncpus > 0,
	    n->inv.ncpus)) == -1 ||
	    json_object_set_new(doc, "memory_mb", json_opt_int(
	    n->inv.memory_mb > 0, (json_int_t)n->inv.memory_mb)) == -1 ||
	    json_object_set_new(doc, "inventory_source", json_str_or_null(
	    str_or_null(n->inv.source))) == -1 ||
	    json_object_set_new(doc, "gpus", gpus) == -1)
		goto nomem;
	return doc;
nomem:
	json_decref(doc);
	return NULL;
}

/* One row; with features (--long) two more cells, FEATURES and SCORE
 * (the failures attributed to the node that count now; "-": the
 * controller keeps none). */
static int
nodes_row(struct output_table *t, const struct cnode *n, bool features)
{
	const Cohort__V1__Node *pb = n->pb;
	char state[64], gpus[32], reason[512], score[16], *models;
	char feat[INV_FEATURES_TEXT_MAX + FEATURES_DERIVED_MAX *
	    (INV_FEATURE_MAX + 1)];
	struct nodes_view_node v;
	unsigned alloc, idle, other;
	const char *cells[9];
	bool nomem;
	int rc;

	models = node_models(&n->inv, &nomem);
	if (nomem)
		return -1;
	cnode_view(n, &v);
	nodes_view_gpus(&v, &alloc, &idle, &other);
	node_state(pb, state, sizeof(state));
	snprintf(gpus, sizeof(gpus), "%u/%u", idle, v.gpus_total);
	cells[0] = pb->name;
	cells[1] = state;
	cells[2] = pb_health_name(pb->has_health, pb->health);
	cells[3] = gpus;
	cells[4] = models;
	cells[5] = str_or_null(pb->switch_name);
	cells[6] = nodes_view_reason_cell(&v, reason, sizeof(reason));
	/* FEATURES before REASON, the one cell of any length. */
	if (features) {
		cells[8] = cells[6];
		cells[6] = nodes_view_features_cell(&v, feat, sizeof(feat));
		if (pb->has_suspect_score)
			snprintf(score, sizeof(score), "%u",
			    pb->suspect_score);
		else
			snprintf(score, sizeof(score), "-");
		cells[7] = score;
	}
	rc = output_table_add(t, cells);
	free(models);
	return rc;
}

enum nodes_mode {
	NODES_TABLE,
	NODES_SUMMARY,
	NODES_REASONS,
	NODES_SHOW,		/* node show of several nodes */
};

/* The listing being built, page by page: a table, a JSON array, a
 * summary, the reasons, or the nodes shown in full; only the nodes
 * named (names[], seen[] once listed) and in one of the states asked. */
struct nodes_out {
	enum nodes_mode mode;
	bool json;
	struct output_table *t;
	json_t *arr;
	struct nodes_view_summary *sum;
	struct nodes_view_reasons *why;
	FILE *text;		/* NODES_SHOW without --json */
	char **names;		/* sorted; NULL: every node */
	size_t nnames;
	char **exprs;		/* as given (argv), sent as the filter */
	size_t nexprs;
	bool *seen;
	unsigned states;	/* 0: any */
	const char *constraint;	/* NULL: any */
	bool longer;		/* the FEATURES column */
	struct cnode *n;	/* an inventory is large: one serves each row */
	char last[PEER_NAME_MAX + 1];	/* the last name added */
};

static int show_print(const struct cnode *n, FILE *fp);

static int
name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* Is o->n asked for? Marks a named node seen whatever its state. */
static bool
nodes_wanted(struct nodes_out *o)
{
	struct nodes_view_node v;
	char **hit;

	if (o->names != NULL) {
		if ((hit = bsearch(o->n->pb->name, o->names, o->nnames,
		    sizeof(*o->names), name_cmp)) == NULL)
			return false;
		o->seen[hit - o->names] = true;
	}
	cnode_view(o->n, &v);
	if (o->constraint != NULL && !nodes_view_matches(&v, o->constraint))
		return false;
	return o->states == 0 || (nodes_view_bits(&v) & o->states) != 0;
}

/* Add o->n to what is being built. 0, or -1 (ENOMEM). */
static int
nodes_add(struct nodes_out *o)
{
	struct nodes_view_node v;

	cnode_view(o->n, &v);
	switch (o->mode) {
	case NODES_SUMMARY:
		return nodes_view_summary_add(o->sum, &v);
	case NODES_REASONS:
		return nodes_view_reasons_add(o->why, &v);
	case NODES_SHOW:
		if (o->json)
			return json_array_append_new(o->arr, node_json(o->n,
			    true));
		if (ftell(o->text) > 0)
			fputc('\n', o->text);
		return show_print(o->n, o->text);
	case NODES_TABLE:
		break;
	}
	return o->json ? json_array_append_new(o->arr, node_json(o->n,
	    false)) : nodes_row(o->t, o->n, o->longer);
}

/* Add one page's nodes; any that does not sort after the last one added
 * (which a correct controller never sends) is skipped, so no node shows
 * twice. 0, or an exit code after printing why. */
static int
nodes_add_page(struct nodes_out *o, const Cohort__V1__ListNodesReply *r)
{
	const Cohort__V1__Node *pb;
	size_t i;

	for (i = 0; i < r->n_nodes; i++) {
		pb = r->nodes[i];
		if (strlen(pb->name) > PEER_NAME_MAX) {
			output_error("nodes: the controller sent a node name "
			    "of %zu bytes", strlen(pb->name));
			return EXIT_FAILED;
		}
		if (o->last[0] != '\0' && strcmp(pb->name, o->last) <= 0)
			continue;
		if (cnode_read("nodes", pb, o->n) == -1)
			return EXIT_FAILED;
		if (nodes_wanted(o) && nodes_add(o) == -1) {
			output_error("nodes: out of memory");
			return EXIT_FAILED;
		}
		snprintf(o->last, sizeof(o->last), "%s", pb->name);
	}
	return 0;
}

/* A named node the controller did not list: an error naming them all
 * (as a hostlist), EXIT_FAILED; else EXIT_OK. */
static int
nodes_unseen(const char *cmd, const struct nodes_out *o)
{
	char **missing, *list;
	size_t i, k = 0;

	if (o->names == NULL)
		return EXIT_OK;
	if ((missing = calloc(o->nnames, sizeof(*missing))) == NULL) {
		output_error("%s: out of memory", cmd);
		return EXIT_FAILED;
	}
	for (i = 0; i < o->nnames; i++)
		if (!o->seen[i])
			missing[k++] = o->names[i];
	if (k > 0) {
		list = hostlist_compress(missing, k);
		output_error("%s: no such node%s: %.400s", cmd, k == 1 ? "" :
		    "s", list != NULL ? list : missing[0]);
		free(list);
	}
	free(missing);
	return k > 0 ? EXIT_FAILED : EXIT_OK;
}

/* Every page of the node listing on one connection, into o. EXIT_OK, or
 * an exit code after printing why. */
static int
nodes_fetch(struct cconn *c, struct nodes_out *o)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__ListNodesRequest ln = COHORT__V1__LIST_NODES_REQUEST__INIT;
	char after[PEER_NAME_MAX + 1] = "";
	struct cerr err;
	bool more;
	int rc;

	req.body_case = COHORT__V1__ENVELOPE__BODY_LIST_NODES;
	req.list_nodes = &ln;
	/* The controller picks the named nodes (a controller from before
	 * this filter sends them all: nodes_wanted picks them here too). */
	ln.n_names = o->nexprs;
	ln.names = o->exprs;
	do {
		ln.after_name = after[0] != '\0' ? after : NULL;
		cerr_clear(&err);
		if ((rep = cconn_call(c, &req, &err)) == NULL)
			return output_call_error(&err);
		if (rep->body_case !=
		    COHORT__V1__ENVELOPE__BODY_LIST_NODES_REPLY) {
			rc = output_reply_error("nodes", rep);
			frame_free(rep);
			return rc;
		}
		rc = nodes_add_page(o, rep->list_nodes_reply);
		/* A controller without pages sends every node at once. */
		more = rep->list_nodes_reply->has_has_more &&
		    rep->list_nodes_reply->has_more;
		frame_free(rep);
		if (rc != 0)
			return rc;
		if (more && strcmp(o->last, after) <= 0) {
			output_error("nodes: the controller's pages do not "
			    "advance (after node '%s')", after);
			return EXIT_FAILED;
		}
		memcpy(after, o->last, sizeof(after));
	} while (more);
	return EXIT_OK;
}

static void
nodes_out_free(struct nodes_out *o)
{
	json_decref(o->arr);
	output_table_free(o->t);
	nodes_view_summary_free(o->sum);
	nodes_view_reasons_free(o->why);
	if (o->text != NULL)
		fclose(o->text);
	hostlist_free(o->names, o->nnames);
	free(o->seen);
	free(o->n);
}

/* Fetch the listing into o (set up by the caller) and print it. */
static int
nodes_run(const char *cmd, struct nodes_out *o, const struct nodes_args *a,
    const struct cconn_opts *opts, char **textbuf)
{
	struct cconn *c;
	json_t *doc;
	int rc;

	if ((rc = output_connect(opts, &a->conn, &c)) != EXIT_OK)
		return rc;
	rc = nodes_fetch(c, o);
	cconn_close(c);
	if (rc == EXIT_OK)
		rc = nodes_unseen(cmd, o);
	if (rc != EXIT_OK)
		return rc;
	switch (o->mode) {
	case NODES_TABLE:
		rc = output_listing(o->json, "nodes", o->arr, o->t);
		o->arr = NULL;
		return rc;
	case NODES_SUMMARY:
		if (o->json)
			return output_json_print(nodes_view_summary_json(
			    o->sum)) == 0 ? EXIT_OK : EXIT_FAILED;
		return nodes_view_summary_print(o->sum, stdout) == 0 &&
		    fflush(stdout) != EOF ? EXIT_OK : EXIT_FAILED;
	case NODES_REASONS:
		if (o->json) {
			doc = nodes_view_reasons_json(o->why);
			return output_json_print(doc != NULL ? json_pack(
			    "{s:o}", "reasons", doc) : NULL) == 0 ? EXIT_OK :
			    EXIT_FAILED;
		}
		return nodes_view_reasons_print(o->why, stdout) == 0 &&
		    fflush(stdout) != EOF ? EXIT_OK : EXIT_FAILED;
	case NODES_SHOW:
		break;
	}
	if (o->json) {
		rc = output_json_print(o->arr) == 0 ? EXIT_OK : EXIT_FAILED;
		o->arr = NULL;
		return rc;
	}
	if (fclose(o->text) != 0) {
		o->text = NULL;
		output_error("%s: out of memory", cmd);
		return EXIT_FAILED;
	}
	o->text = NULL;
	fputs(*textbuf != NULL ? *textbuf : "", stdout);
	return fflush(stdout) == EOF ? EXIT_FAILED : EXIT_OK;
}

/* What one round of cohort nodes needs. */
struct nodes_round {
	int argc;
	char **argv;
	const struct cconn_opts *opts;
	struct nodes_args a;
};

/* List the nodes once: a fresh output each round. */
static int
nodes_round(void *arg)
{
	static const char *const head[7] = { "NODE", "STATE", "HEALTH",
	    "GPUS", "MODEL", "SWITCH", "REASON" };
	static const char *const head_long[9] = { "NODE", "STATE", "HEALTH",
	    "GPUS", "MODEL", "SWITCH", "FEATURES", "SCORE", "REASON" };
	struct nodes_round *r = arg;
	struct nodes_args *a = &r->a;
	struct nodes_out o;
	int rc;

	memset(&o, 0, sizeof(o));
	if ((rc = nodes_named("nodes", r->argc, r->argv, &o.names,
	    &o.nnames)) != 0)
		return rc;
	o.exprs = r->argv + optind;
	o.nexprs = (size_t)(r->argc - optind);
	o.json = a->json;
	o.states = a->states;
	o.constraint = a->constraint;
	o.longer = a->longer;
	o.mode = a->summary ? NODES_SUMMARY : a->reasons ? NODES_REASONS :
	    NODES_TABLE;
	if ((o.n = malloc(sizeof(*o.n))) == NULL ||
	    (o.names != NULL && (o.seen = calloc(o.nnames,
	    sizeof(*o.seen))) == NULL) ||
	    (o.mode == NODES_SUMMARY && (o.sum = nodes_view_summary_new()) ==
	    NULL) ||
	    (o.mode == NODES_REASONS && (o.why = nodes_view_reasons_new()) ==
	    NULL) ||
	    (o.mode == NODES_TABLE && (a->json ? (o.arr = json_array()) ==
	    NULL : (o.t = a->longer ? output_table_new(9, head_long) :
	    output_table_new(7, head)) == NULL))) {
		output_error("nodes: out of memory");
		rc = EXIT_FAILED;
	} else
		rc = nodes_run("nodes", &o, a, r->opts, NULL);
	nodes_out_free(&o);
	return rc;
}

int
cmd_nodes(int argc, char **argv, const struct cconn_opts *opts)
{
	struct nodes_round r;
	int rc;

	if ((rc = nodes_parse("nodes", true, argc, argv, &r.a)) == -2) {
		fputs(nodes_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	r.argc = argc;
	r.argv = argv;
	r.opts = opts;
	return output_iterate(r.a.iterate_ms, nodes_round, &r);
}

static const char *
int_cell(int v, char *buf, size_t len)
{
	if (v < 0)
		return NULL;
	snprintf(buf, len, "%d", v);
	return buf;
}

/* INDEX MODEL MEMORY NUMA PCI SWITCH NVLINK RAIL NIC HEALTH JOB: RAIL
 * is the NIC's index on the node, NIC its name (with a '*' when it does
 * not share the GPU's PCIe switch). */
static int
show_gpus(const struct cnode *n, FILE *fp)
{
	static const char *const head[11] = { "INDEX", "MODEL", "MEMORY",
	    "NUMA", "PCI", "SWITCH", "NVLINK", "RAIL", "NIC", "HEALTH",
	    "JOB" };
	char idx[16], mem[32], numa[16], sw[16], nv[OUTPUT_PEERS_LEN + 16];
	char nic[16], nicname[INV_NIC_NAME_MAX + 2], job[24];
	const struct gpu_info *g;
	const Cohort__V1__Gpu *pb;
	struct output_table *t;
	const char *cells[11];
	unsigned i;
	int rc = 0;

	if ((t = output_table_new(11, head)) == NULL)
		return -1;
	for (i = 0; i < n->inv.ngpus && rc == 0; i++) {
		g = &n->inv.gpus[i];
		pb = n->pb->inventory->gpus[i];
		snprintf(idx, sizeof(idx), "%u", g->index);
		snprintf(job, sizeof(job), "%" PRIu64, pb->job_id);
		cells[0] = idx;
		cells[1] = str_or_null(g->model);
		cells[2] = output_mib(g->memory_mb, mem, sizeof(mem));
		cells[3] = int_cell(g->numa_node, numa, sizeof(numa));
		cells[4] = str_or_null(g->pci_bus_id);
		cells[5] = int_cell(g->pcie_switch, sw, sizeof(sw));
		cells[6] = output_nvlink(g->nvlink_domain, g->nvlink_peers, nv,
		    sizeof(nv));
		cells[7] = int_cell(g->nic, nic, sizeof(nic));
		snprintf(nicname, sizeof(nicname), "%s%s", g->nic_name,
		    g->nic_near ? "" : "*");
		cells[8] = g->nic_name[0] != '\0' ? nicname : NULL;
		cells[9] = pb_health_name(pb->has_health, pb->health);
		cells[10] = pb->has_job_id && pb->job_id != 0 ? job : NULL;
		rc = output_table_add(t, cells);
	}
	if (rc == 0)
		output_table_print(t, fp);
	output_table_free(t);
	return rc;
}

/* The derived features comma-joined, "-" for none. */
static const char *
derived_text(const Cohort__V1__Node *pb, char *buf, size_t len)
{
	size_t i, at = 0;

	if (pb->n_derived_features == 0)
		return "-";
	buf[0] = '\0';
	for (i = 0; i < pb->n_derived_features && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," :
		    "", pb->derived_features[i]);
	return buf;
}

static int
show_print(const struct cnode *n, FILE *fp)
{
	const Cohort__V1__Node *pb = n->pb;
	struct output_table *t;
	char b[OUTPUT_TIME_LEN], state[64], mem[32], *jobs;
	char feat[INV_FEATURES_TEXT_MAX];
	struct nodes_view_node v;
	unsigned alloc, idle, other;
	const char *h;
	bool nomem;
	int rc;

	if ((jobs = node_jobs(pb, &nomem)) == NULL && nomem)
		return -1;
	if ((t = output_fields_new()) == NULL) {
		free(jobs);
		return -1;
	}
	cnode_view(n, &v);
	nodes_view_gpus(&v, &alloc, &idle, &other);
	node_state(pb, state, sizeof(state));
	h = pb_health_name(pb->has_health, pb->health);
	rc = output_fields_addf(t, "Node", "%s", pb->name);
	rc |= output_fields_addf(t, "State", "%s", state);
	rc |= output_fields_addf(t, "Health", "%s", h);
	rc |= output_fields_addf(t, "Since", "%s", output_time_local(
	    pb->has_since_ms ? pb->since_ms : 0, b, sizeof(b)));
	rc |= output_fields_addf(t, "Reason", "%s", str_or_null(pb->reason) ?
	    pb->reason : "-");
	if (v.drain_actor != NULL) {
		rc |= output_fields_addf(t, "Drained by", "%s", v.drain_actor);
		rc |= output_fields_addf(t, "Drained at", "%s",
		    output_time_local(v.drain_ms, b, sizeof(b)));
		if (pb->has_drain_health && pb->drain_health)
			rc |= output_fields_addf(t, "Drain", "for its health: "
			    "resume waits for a healthy report");
	}
	rc |= output_fields_addf(t, "Address", "%s", str_or_null(pb->address) ?
	    pb->address : "-");
	rc |= output_fields_addf(t, "Last heartbeat", "%s", output_time_local(
	    pb->has_last_heartbeat_ms ? pb->last_heartbeat_ms : 0, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Switch", "%s", str_or_null(
	    pb->switch_name) ? pb->switch_name : "-");
	if (str_or_null(pb->block))
		rc |= output_fields_addf(t, "Block", "%s", pb->block);
	if (pb->has_torus_x)
		rc |= output_fields_addf(t, "Torus", "(%u,%u,%u)",
		    pb->torus_x, pb->torus_y, pb->torus_z);
	if (n->inv.ncpus > 0)
		rc |= output_fields_addf(t, "CPUs", "%u", n->inv.ncpus);
	else
		rc |= output_fields_addf(t, "CPUs", "-");
	rc |= output_fields_addf(t, "Memory", "%s", output_mib(
	    n->inv.memory_mb, mem, sizeof(mem)));
	rc |= output_fields_addf(t, "GPUs", "%u (%u free, %u held by jobs, "
	    "%u unavailable)", v.gpus_total, idle, alloc, other);
	rc |= output_fields_addf(t, "Inventory", "%s", str_or_null(
	    n->inv.source) ? n->inv.source : "-");
	inventory_features_format(&n->inv, feat, sizeof(feat));
	rc |= output_fields_addf(t, "Features", "%s", feat[0] != '\0' ?
	    feat : "-");
	rc |= output_fields_addf(t, "Derived features", "%s",
	    derived_text(pb, feat, sizeof(feat)));
	rc |= output_fields_addf(t, "Jobs", "%s", jobs ? jobs : "-");
	if (pb->has_suspect_score) {
		rc |= output_fields_addf(t, "Suspect score", "%u%s",
		    pb->suspect_score, pb->has_suspect_exempt &&
		    pb->suspect_exempt ? " (exempt from suspect drains)" : "");
		if (str_or_null(pb->suspect_reason))
			rc |= output_fields_addf(t, "Suspect", "%s",
			    pb->suspect_reason);
		rc |= output_fields_addf(t, "Failures", "%s",
		    str_or_null(pb->suspect_evidence) ?
		    pb->suspect_evidence : "-");
	}
	if (rc == 0)
		output_table_print(t, fp);
	output_table_free(t);
	free(jobs);
	if (rc == 0 && n->inv.ngpus > 0) {
		fputc('\n', fp);
		rc = show_gpus(n, fp);
	}
	return rc == 0 ? 0 : -1;
}

/* node show of several nodes: the listing, shown in full. */
static int
node_show_many(const struct nodes_args *a, char **names, size_t nnames,
    char **exprs, size_t nexprs, const struct cconn_opts *opts)
{
	struct nodes_out o;
	char *buf = NULL;
	size_t len;
	int rc;

	memset(&o, 0, sizeof(o));
	o.mode = NODES_SHOW;
	o.json = a->json;
	o.names = names;
	o.nnames = nnames;
	o.exprs = exprs;
	o.nexprs = nexprs;
	if ((o.n = malloc(sizeof(*o.n))) == NULL ||
	    (o.seen = calloc(nnames, sizeof(*o.seen))) == NULL ||
	    (a->json ? (o.arr = json_array()) == NULL :
	    (o.text = open_memstream(&buf, &len)) == NULL)) {
		output_error("node show: out of memory");
		rc = EXIT_FAILED;
	} else
		rc = nodes_run("node show", &o, a, opts, &buf);
	nodes_out_free(&o);
	free(buf);
	return rc;
}

static int
node_show(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetNodeRequest gn = COHORT__V1__GET_NODE_REQUEST__INIT;
	struct nodes_args a;
	struct cnode *n;
	char prefix[96], **names;
	size_t nnames;
	int rc;

	if ((rc = nodes_parse("node show", false, argc, argv, &a)) == -2) {
		fputs(node_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (optind == argc) {
		output_error("node show: missing NODE (see cohort node show "
		    "--help)");
		return EXIT_USAGE;
	}
	if ((rc = nodes_named("node show", argc, argv, &names, &nnames)) != 0)
		return rc;
	if (nnames != 1)
		return node_show_many(&a, names, nnames, argv + optind,
		    (size_t)(argc - optind), opts);
	gn.name = names[0];
	snprintf(prefix, sizeof(prefix), "node show %.64s", gn.name);
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_NODE;
	req.get_node = &gn;
	rc = output_request(prefix, opts, &a.conn, &req,
	    COHORT__V1__ENVELOPE__BODY_GET_NODE_REPLY, &rep);
	hostlist_free(names, nnames);
	if (rc != EXIT_OK)
		return rc;
	if ((n = malloc(sizeof(*n))) == NULL) {
		output_error("node show: out of memory");
		rc = EXIT_FAILED;
	} else if (cnode_read("node show", rep->get_node_reply->node, n) ==
	    -1)
		rc = EXIT_FAILED;
	else if (a.json)
		rc = output_json_print(node_json(n, true)) == 0 ? EXIT_OK :
		    EXIT_FAILED;
	else if (show_print(n, stdout) == -1 || fflush(stdout) == EOF) {
		output_error("node show: cannot print the node");
		rc = EXIT_FAILED;
	}
	free(n);
	frame_free(rep);
	return rc;
}

/* One node at a time: forgetting nodes is not undone, and a hostlist
 * typed wrong would forget many. */
static int
node_delete(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DeleteNodeRequest dn = COHORT__V1__DELETE_NODE_REQUEST__INIT;
	struct nodes_args a;
	char prefix[96];
	int rc;

	if ((rc = nodes_parse("node delete", false, argc, argv, &a)) == -2) {
		fputs(node_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (argc - optind != 1) {
		output_error("node delete: %s (see cohort node --help)",
		    optind < argc ? "one node at a time" : "missing NODE");
		return EXIT_USAGE;
	}
	if (strpbrk(argv[optind], "[],") != NULL) {
		output_error("node delete: '%.64s' is a list; deleting nodes "
		    "is not undone, so name one node at a time", argv[optind]);
		return EXIT_USAGE;
	}
	dn.name = argv[optind];
	snprintf(prefix, sizeof(prefix), "node delete %.64s", dn.name);
	req.body_case = COHORT__V1__ENVELOPE__BODY_DELETE_NODE;
	req.delete_node = &dn;
	return output_request(prefix, opts, &a.conn, &req,
	    COHORT__V1__ENVELOPE__BODY_DELETE_NODE_REPLY, NULL);
}

int
cmd_node(int argc, char **argv, const struct cconn_opts *opts)
{
	if (argc < 2) {
		output_error("node: missing subcommand (see cohort node "
		    "--help)");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(node_usage, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "show") == 0)
		return node_show(argc - 1, argv + 1, opts);
	if (strcmp(argv[1], "delete") == 0)
		return node_delete(argc - 1, argv + 1, opts);
	output_error("node: unknown subcommand '%s' (see cohort node --help)",
	    argv[1]);
	return EXIT_USAGE;
}
