/* cohort nodes, cohort node show and cohort node delete: the cluster's
 * nodes, one node with its GPUs and their topology, and removing a node
 * that is gone for good. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/output.h"
#include "lib/frame.h"
#include "lib/inventory.h"
#include "lib/wire.h"

enum { O_JSON = 0x100, O_HELP = 'h' };

static const struct option nodes_longopts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	OUTPUT_CONN_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const char nodes_usage[] =
    "usage: cohort nodes [--json]\n"
    "  every node: state, health, GPUs free/total, GPU model, switch,\n"
    "  reason. STATE is UP or DOWN, or the drain state of an UP node\n"
    "  (DRAINING: jobs still running, DRAINED: empty), or both for a\n"
    "  DOWN one (DOWN+DRAINED); HEALTH is OK, DEGRADED or FAILED\n";
static const char node_usage[] =
    "usage: cohort node show NODE [--json]\n"
    "  one node: state, CPUs, memory, jobs, and its GPUs with model,\n"
    "  memory, NUMA node, PCIe location, NVLink peers, NIC, health, job\n"
    "usage: cohort node delete NODE\n"
    "  forget a node that is DOWN (its agent not connected) and that no\n"
    "  job holds: it leaves `cohort nodes` and the database. A node in\n"
    "  the topology or the 'nodes' list may register again. Admins only.\n";

/* A node from the controller: the message, and its inventory read
 * (and checked) by lib/wire.c. */
struct cnode {
	const Cohort__V1__Node *pb;
	struct inventory inv;
};

/* 0, -2 for --help, or EXIT_USAGE after printing why. */
static int
nodes_parse(const char *cmd, int argc, char **argv,
    struct output_conn_flags *conn, bool *json)
{
	int ch;

	memset(conn, 0, sizeof(*conn));
	*json = false;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", nodes_longopts, NULL)) !=
	    -1) {
		if (ch == '?' || ch == ':')
			return output_usage_error(cmd, ch, argv);
		if (ch == O_HELP)
			return -2;
		if (output_conn_flag(conn, ch, optarg))
			continue;
		*json = true;
	}
	return 0;
}

/* Read pb into n (which borrows it). 0, or -1 after printing why. */
static int
cnode_read(const char *cmd, const Cohort__V1__Node *pb, struct cnode *n)
{
	struct cerr err;

	n->pb = pb;
	memset(&n->inv, 0, sizeof(n->inv));
	cerr_clear(&err);
	if (pb->inventory != NULL &&
	    wire_inventory_from_pb(pb->inventory, &n->inv, &err) == -1) {
		output_error("%s: the controller sent node %s, which we cannot "
		    "read: %s", cmd, pb->name, err.text);
		return -1;
	}
	return 0;
}

static const char *
pb_health_name(protobuf_c_boolean has, Cohort__V1__Health h)
{
	if (!has)
		return NULL;
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
	    " s:o, s:o}",
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
	json_t *doc, *jobs, *gpus;
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
	doc = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o, s:s, s:o,"
	    " s:o, s:o, s:o}",
	    "name", pb->name,
	    "state", pb->state,
	    "drain", json_str_or_null(str_or_null(pb->drain)),
	    "health", json_str_or_null(pb_health_name(pb->has_health,
	    pb->health)),
	    "gpus_free", (json_int_t)pb->gpus_free,
	    "gpus_total", (json_int_t)(pb->has_gpus_total ? pb->gpus_total :
	    n->inv.ngpus),
	    "model", json_str_or_null(models),
	    "switch", json_str_or_null(str_or_null(pb->switch_name)),
	    "reason", pb->reason ? pb->reason : "",
	    "address", json_str_or_null(str_or_null(pb->address)),
	    "last_heartbeat", json_time(pb->has_last_heartbeat_ms,
	    pb->last_heartbeat_ms),
	    "since", json_time(pb->has_since_ms, pb->since_ms),
	    "jobs", jobs);
	free(models);
	if (doc == NULL || !with_gpus)
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

static int
nodes_row(struct output_table *t, const struct cnode *n)
{
	const Cohort__V1__Node *pb = n->pb;
	char state[64], gpus[32], *models;
	const char *cells[7];
	bool nomem;
	int rc;

	models = node_models(&n->inv, &nomem);
	if (nomem)
		return -1;
	node_state(pb, state, sizeof(state));
	snprintf(gpus, sizeof(gpus), "%u/%u", pb->gpus_free,
	    pb->has_gpus_total ? pb->gpus_total : n->inv.ngpus);
	cells[0] = pb->name;
	cells[1] = state;
	cells[2] = pb_health_name(pb->has_health, pb->health);
	cells[3] = gpus;
	cells[4] = models;
	cells[5] = str_or_null(pb->switch_name);
	cells[6] = str_or_null(pb->reason);
	rc = output_table_add(t, cells);
	free(models);
	return rc;
}

/* The listing being built, page by page: a table or a JSON array. */
struct nodes_out {
	bool json;
	struct output_table *t;
	json_t *arr;
	struct cnode *n;	/* an inventory is large: one serves each row */
	char last[PEER_NAME_MAX + 1];	/* the last name added */
};

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
		if (o->json ? json_array_append_new(o->arr,
		    node_json(o->n, false)) : nodes_row(o->t, o->n)) {
			output_error("nodes: out of memory");
			return EXIT_FAILED;
		}
		snprintf(o->last, sizeof(o->last), "%s", pb->name);
	}
	return 0;
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

int
cmd_nodes(int argc, char **argv, const struct cconn_opts *opts)
{
	static const char *const head[7] = { "NODE", "STATE", "HEALTH",
	    "GPUS", "MODEL", "SWITCH", "REASON" };
	struct output_conn_flags conn;
	struct nodes_out o;
	struct cconn *c;
	bool json;
	int rc;

	if ((rc = nodes_parse("nodes", argc, argv, &conn, &json)) == -2) {
		fputs(nodes_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (optind < argc) {
		output_error("nodes: unexpected argument '%s' (see cohort "
		    "nodes --help)", argv[optind]);
		return EXIT_USAGE;
	}
	memset(&o, 0, sizeof(o));
	o.json = json;
	if ((o.n = malloc(sizeof(*o.n))) == NULL ||
	    (json ? (o.arr = json_array()) == NULL :
	    (o.t = output_table_new(7, head)) == NULL)) {
		output_error("nodes: out of memory");
		rc = EXIT_FAILED;
		goto out;
	}
	if ((rc = output_connect(opts, &conn, &c)) == EXIT_OK) {
		rc = nodes_fetch(c, &o);
		cconn_close(c);
	}
	if (rc == EXIT_OK) {
		rc = output_listing(json, "nodes", o.arr, o.t);
		o.arr = NULL;
	}
out:
	json_decref(o.arr);
	output_table_free(o.t);
	free(o.n);
	return rc;
}

static const char *
int_cell(int v, char *buf, size_t len)
{
	if (v < 0)
		return NULL;
	snprintf(buf, len, "%d", v);
	return buf;
}

/* INDEX MODEL MEMORY NUMA PCI SWITCH NVLINK NIC HEALTH JOB */
static int
show_gpus(const struct cnode *n)
{
	static const char *const head[10] = { "INDEX", "MODEL", "MEMORY",
	    "NUMA", "PCI", "SWITCH", "NVLINK", "NIC", "HEALTH", "JOB" };
	char idx[16], mem[32], numa[16], sw[16], nv[OUTPUT_PEERS_LEN + 16];
	char nic[16], job[24];
	const struct gpu_info *g;
	const Cohort__V1__Gpu *pb;
	struct output_table *t;
	const char *cells[10];
	unsigned i;
	int rc = 0;

	if ((t = output_table_new(10, head)) == NULL)
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
		cells[8] = pb_health_name(pb->has_health, pb->health);
		cells[9] = pb->has_job_id && pb->job_id != 0 ? job : NULL;
		rc = output_table_add(t, cells);
	}
	if (rc == 0)
		output_table_print(t, stdout);
	output_table_free(t);
	return rc;
}

static int
show_print(const struct cnode *n)
{
	const Cohort__V1__Node *pb = n->pb;
	struct output_table *t;
	char b[OUTPUT_TIME_LEN], state[64], mem[32], *jobs;
	const char *h;
	bool nomem;
	int rc;

	if ((jobs = node_jobs(pb, &nomem)) == NULL && nomem)
		return -1;
	if ((t = output_fields_new()) == NULL) {
		free(jobs);
		return -1;
	}
	node_state(pb, state, sizeof(state));
	h = pb_health_name(pb->has_health, pb->health);
	rc = output_fields_addf(t, "Node", "%s", pb->name);
	rc |= output_fields_addf(t, "State", "%s", state);
	rc |= output_fields_addf(t, "Health", "%s", h ? h : "-");
	rc |= output_fields_addf(t, "Since", "%s", output_time_local(pb->has_since_ms ?
	    pb->since_ms : 0, b, sizeof(b)));
	rc |= output_fields_addf(t, "Reason", "%s", str_or_null(pb->reason) ?
	    pb->reason : "-");
	rc |= output_fields_addf(t, "Address", "%s", str_or_null(pb->address) ?
	    pb->address : "-");
	rc |= output_fields_addf(t, "Last heartbeat", "%s", output_time_local(
	    pb->has_last_heartbeat_ms ? pb->last_heartbeat_ms : 0, b,
	    sizeof(b)));
	rc |= output_fields_addf(t, "Switch", "%s", str_or_null(pb->switch_name) ?
	    pb->switch_name : "-");
	if (n->inv.ncpus > 0)
		rc |= output_fields_addf(t, "CPUs", "%u", n->inv.ncpus);
	else
		rc |= output_fields_addf(t, "CPUs", "-");
	rc |= output_fields_addf(t, "Memory", "%s", output_mib(n->inv.memory_mb, mem,
	    sizeof(mem)));
	rc |= output_fields_addf(t, "GPUs", "%u (%u free)", pb->has_gpus_total ?
	    pb->gpus_total : n->inv.ngpus, pb->gpus_free);
	rc |= output_fields_addf(t, "Inventory", "%s", str_or_null(n->inv.source) ?
	    n->inv.source : "-");
	rc |= output_fields_addf(t, "Jobs", "%s", jobs ? jobs : "-");
	if (rc == 0)
		output_table_print(t, stdout);
	output_table_free(t);
	free(jobs);
	if (rc == 0 && n->inv.ngpus > 0) {
		fputc('\n', stdout);
		rc = show_gpus(n);
	}
	return rc == 0 ? 0 : -1;
}

static int
node_show(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT, *rep;
	Cohort__V1__GetNodeRequest gn = COHORT__V1__GET_NODE_REQUEST__INIT;
	struct output_conn_flags conn;
	struct cnode *n;
	char prefix[96];
	bool json;
	int rc;

	if ((rc = nodes_parse("node show", argc, argv, &conn, &json)) == -2) {
		fputs(node_usage, stdout);
		return EXIT_OK;
	}
	if (rc != 0)
		return rc;
	if (argc - optind != 1) {
		output_error("node show: %s (see cohort node show --help)",
		    optind < argc ? "one node at a time" : "missing NODE");
		return EXIT_USAGE;
	}
	gn.name = argv[optind];
	snprintf(prefix, sizeof(prefix), "node show %.64s", gn.name);
	req.body_case = COHORT__V1__ENVELOPE__BODY_GET_NODE;
	req.get_node = &gn;
	if ((rc = output_request(prefix, opts, &conn, &req,
	    COHORT__V1__ENVELOPE__BODY_GET_NODE_REPLY, &rep)) != EXIT_OK)
		return rc;
	if ((n = malloc(sizeof(*n))) == NULL) {
		output_error("node show: out of memory");
		rc = EXIT_FAILED;
	} else if (cnode_read("node show", rep->get_node_reply->node, n) ==
	    -1)
		rc = EXIT_FAILED;
	else if (json)
		rc = output_json_print(node_json(n, true)) == 0 ? EXIT_OK :
		    EXIT_FAILED;
	else if (show_print(n) == -1 || fflush(stdout) == EOF) {
		output_error("node show: cannot print the node");
		rc = EXIT_FAILED;
	}
	free(n);
	frame_free(rep);
	return rc;
}

static int
node_delete(int argc, char **argv, const struct cconn_opts *opts)
{
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__DeleteNodeRequest dn = COHORT__V1__DELETE_NODE_REQUEST__INIT;
	struct output_conn_flags conn;
	char prefix[96];
	bool json;
	int rc;

	if ((rc = nodes_parse("node delete", argc, argv, &conn, &json)) ==
	    -2) {
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
	dn.name = argv[optind];
	snprintf(prefix, sizeof(prefix), "node delete %.64s", dn.name);
	req.body_case = COHORT__V1__ENVELOPE__BODY_DELETE_NODE;
	req.delete_node = &dn;
	return output_request(prefix, opts, &conn, &req,
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
