/* cohort-simnodes: N simulated node agents in one process, for scale
 * tests against a real controller (a test program: not installed).
 *
 * Each simulated node is a link (daemon/agent/link.c, the real agent's
 * connection code) with its own TLS connection, node name and client
 * certificate (minted from the development CA: simcert.c), registers a
 * simulated 8-GPU inventory and heartbeats like the real agent; its
 * tasks are timers (simnode.c). All share one event loop (sim.c).
 *
 * Failure injection: SIGUSR1 crashes one node (its connection drops, its
 * heartbeats stop, its tasks are lost) and prints
 *	crash NAME time_ms T jobs J1,J2
 * on stdout; SIGUSR2 brings every crashed node back as a fresh agent.
 *
 * Everything is bounded: tasks per node, frame size, queued output,
 * handshakes in flight, log lines per second. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/conf.h"
#include "lib/log.h"
#include "tests/sim/sim.h"
#include "tests/sim/simtopo.h"

/* The command line: the simulation's options and the topology's. */
struct args {
	struct sim_opts sim;
	const char *server;
	const char *topology;
	unsigned per_leaf, per_spine;
};

static const char usage_text[] =
    "usage: " SIM_PROG " --nodes N [OPTIONS]\n"
    "  N simulated node agents in one process, against a real controller.\n"
    "\n"
    "  --server HOST:PORT     the controller\n"
    "  --ca FILE              the cluster CA certificate (ca.pem)\n"
    "  --ca-key FILE          its key (ca.key): node certificates are minted\n"
    "  --nodes N              how many nodes (1..200000)\n"
    "  --prefix P             node names P<number> (default node)\n"
    "  --first K              number of the first node (default 1)\n"
    "  --width W              digits of the numbers (default: those of the\n"
    "                         last number, at least 2)\n"
    "  --gpus G               GPUs per node (default 8)\n"
    "  --heartbeat DURATION   heartbeat interval (default: the controller's)\n"
    "  --task-seconds S       simulated run time of a task (default 5); a\n"
    "                         job's env SIM_SECONDS=S overrides it and\n"
    "                         SIM_EXIT=N sets its exit status\n"
    "  --fail-rate P          fraction of tasks that exit 1 (default 0)\n"
    "  --rate R               first connections per second (default 2000)\n"
    "  --max-connecting M     TLS handshakes in flight at most (default 128)\n"
    "  --shared-key           one key pair for every node (certificates still\n"
    "                         differ per name)\n"
    "  --address A            address reported to the controller (127.0.0.1)\n"
    "  --stats S              a stats line every S seconds (default 10; 0: off)\n"
    "  --write-topology FILE  write a Slurm tree topology for these nodes\n"
    "                         (alone, without --server: write it and exit)\n"
    "  --nodes-per-leaf K     nodes per leaf switch (default 32)\n"
    "  --leaves-per-spine S   leaves per spine switch (default 16)\n"
    "  -v                     debug messages\n"
    "\n"
    "Signals: SIGUSR1 crashes one node (preferably one running a task) and\n"
    "prints 'crash NAME time_ms T jobs J,...'; SIGUSR2 revives the crashed\n"
    "nodes; SIGHUP prints a stats line; SIGINT/SIGTERM stop.\n";

enum {
	O_SERVER = 256, O_CA, O_CA_KEY, O_NODES, O_PREFIX, O_FIRST, O_WIDTH,
	O_GPUS, O_HB, O_TASK, O_FAIL, O_RATE, O_MAXCONN, O_SHARED, O_ADDR,
	O_STATS, O_TOPO, O_PER_LEAF, O_PER_SPINE, O_HELP,
};

static const struct option longopts[] = {
	{ "server", required_argument, NULL, O_SERVER },
	{ "ca", required_argument, NULL, O_CA },
	{ "ca-key", required_argument, NULL, O_CA_KEY },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "prefix", required_argument, NULL, O_PREFIX },
	{ "first", required_argument, NULL, O_FIRST },
	{ "width", required_argument, NULL, O_WIDTH },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "heartbeat", required_argument, NULL, O_HB },
	{ "task-seconds", required_argument, NULL, O_TASK },
	{ "fail-rate", required_argument, NULL, O_FAIL },
	{ "rate", required_argument, NULL, O_RATE },
	{ "max-connecting", required_argument, NULL, O_MAXCONN },
	{ "shared-key", no_argument, NULL, O_SHARED },
	{ "address", required_argument, NULL, O_ADDR },
	{ "stats", required_argument, NULL, O_STATS },
	{ "write-topology", required_argument, NULL, O_TOPO },
	{ "nodes-per-leaf", required_argument, NULL, O_PER_LEAF },
	{ "leaves-per-spine", required_argument, NULL, O_PER_SPINE },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, SIM_PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" SIM_PROG " --help'.\n");
	return 2;
}

static int
opt_uint(const char *name, const char *v, uint64_t lo, uint64_t hi,
    uint64_t *out)
{
	struct cerr err;

	if (conf_parse_uint(v, lo, hi, out, &err) == -1)
		return usage_error("--%s: %s", name, err.text);
	return 0;
}

static bool
valid_prefix(const char *p)
{
	size_t i;

	if (p[0] == '\0' || strlen(p) > 40)
		return false;
	for (i = 0; p[i] != '\0'; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') ||
		    (i > 0 && (p[i] == '-' || p[i] == '_' || p[i] == '.'))))
			return false;
	return true;
}

static int
opt_seconds_ms(const char *name, const char *v, uint64_t *ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || d < 0 ||
	    d > 366.0 * 86400)
		return usage_error("--%s: not a number of seconds: '%s'",
		    name, v);
	*ms = (uint64_t)llround(d * 1000);
	return 0;
}

static int
opt_fraction(const char *name, const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' ||
	    !(*out >= 0 && *out <= 1))
		return usage_error("--%s: want 0..1, not '%s'", name, v);
	return 0;
}

/* An unsigned option into *out; 0 or the exit status 2. */
static int
opt_unsigned(const char *name, const char *v, uint64_t lo, uint64_t hi,
    unsigned *out)
{
	uint64_t u;

	if (opt_uint(name, v, lo, hi, &u) != 0)
		return 2;
	*out = (unsigned)u;
	return 0;
}

/* One option; 0, or the exit status. */
static int
parse_one(int ch, const char *v, struct args *a)
{
	struct sim_opts *o = &a->sim;
	struct cerr err;
	unsigned gpus;

	switch (ch) {
	case O_SERVER:
		a->server = v;
		return 0;
	case O_CA:
		o->ca = v;
		return 0;
	case O_CA_KEY:
		o->ca_key = v;
		return 0;
	case O_NODES:
		return opt_unsigned("nodes", v, 1, SIM_MAX_NODES, &o->n);
	case O_PREFIX:
		o->prefix = v;
		return 0;
	case O_FIRST:
		return opt_unsigned("first", v, 0, 100000000, &o->first);
	case O_WIDTH:
		return opt_unsigned("width", v, 1, 12, &o->width);
	case O_GPUS:
		if (opt_unsigned("gpus", v, 1, INV_MAX_GPUS, &gpus) != 0)
			return 2;
		o->gpus.count = gpus;
		o->gpus.nics = gpus;
		/* 8: as an HGX board; else one NVLink domain. */
		snprintf(o->gpus.nvlink, sizeof(o->gpus.nvlink), "%s",
		    gpus == 8 ? "quads" : "all");
		if (gpus < 2)
			o->gpus.numa_nodes = 1;
		return 0;
	case O_HB:
		if (conf_parse_duration_ms(v, 100, 3600 * 1000,
		    &o->heartbeat_ms, &err) == -1)
			return usage_error("--heartbeat: %s", err.text);
		return 0;
	case O_TASK:
		return opt_seconds_ms("task-seconds", v, &o->task_ms);
	case O_FAIL:
		return opt_fraction("fail-rate", v, &o->fail_rate);
	case O_RATE:
		return opt_unsigned("rate", v, 1, 1000000, &o->rate);
	case O_MAXCONN:
		return opt_unsigned("max-connecting", v, 1, 100000,
		    &o->max_connecting);
	case O_SHARED:
		o->shared_key = true;
		return 0;
	case O_ADDR:
		o->address = v;
		return 0;
	case O_STATS:
		return opt_unsigned("stats", v, 0, 86400, &o->stats_s);
	case O_TOPO:
		a->topology = v;
		return 0;
	case O_PER_LEAF:
		return opt_unsigned("nodes-per-leaf", v, 1, 100000,
		    &a->per_leaf);
	case O_PER_SPINE:
		return opt_unsigned("leaves-per-spine", v, 1, 100000,
		    &a->per_spine);
	case 'v':
		o->verbose = true;
		return 0;
	default:
		return usage_error("unknown option");
	}
}

/* What the options say together. 0, or the exit status. */
static int
check_args(struct args *a)
{
	struct sim_opts *o = &a->sim;
	struct cerr err;
	char buf[24];

	if (o->n == 0)
		return usage_error("missing --nodes N");
	if (!valid_prefix(o->prefix))
		return usage_error("--prefix: want [A-Za-z0-9][A-Za-z0-9._-]*, "
		    "at most 40 characters, not '%s'", o->prefix);
	if (a->server == NULL && a->topology == NULL)
		return usage_error("missing --server HOST:PORT");
	if (a->server != NULL && (o->ca == NULL || o->ca_key == NULL))
		return usage_error("--server needs --ca and --ca-key");
	if (a->server != NULL && conf_parse_hostport(a->server, o->host,
	    sizeof(o->host), &o->port, false, &err) == -1)
		return usage_error("--server: %s", err.text);
	if (o->width == 0) {
		o->width = (unsigned)snprintf(buf, sizeof(buf), "%u",
		    o->first + o->n - 1);
		if (o->width < 2)
			o->width = 2;
	}
	return 0;
}

/* -1: go on; else the exit status. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	int ch, rc;

	memset(a, 0, sizeof(*a));
	a->sim.prefix = "node";
	a->sim.first = 1;
	a->sim.task_ms = 5000;
	a->sim.rate = 2000;
	a->sim.max_connecting = 128;
	a->sim.stats_s = 10;
	a->sim.address = "127.0.0.1";
	inventory_sim_defaults(&a->sim.gpus);
	a->sim.gpus.count = 8;
	a->sim.gpus.nics = 8;
	snprintf(a->sim.gpus.nvlink, sizeof(a->sim.gpus.nvlink), "quads");
	a->per_leaf = 32;
	a->per_spine = 16;
	while ((ch = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		if (ch == 'h' || ch == O_HELP) {
			fputs(usage_text, stdout);
			return 0;
		}
		if ((rc = parse_one(ch, optarg, a)) != 0)
			return rc;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return check_args(a) == 0 ? -1 : 2;
}

int
main(int argc, char **argv)
{
	struct args a;
	struct sim *s;
	struct cerr err;
	int rc;

	if ((rc = parse_args(argc, argv, &a)) != -1)
		return rc;
	log_init(SIM_PROG, true, a.sim.verbose);
	if (a.topology != NULL && simtopo_write(a.topology, a.sim.prefix,
	    a.sim.first, a.sim.n, a.sim.width, a.per_leaf,
	    a.per_spine) == -1)
		return 1;
	if (a.server == NULL)
		return 0;
	signal(SIGPIPE, SIG_IGN);
	if ((s = sim_create(&a.sim, &err)) == NULL) {
		log_warnx("%s", err.text);
		return 1;
	}
	rc = sim_run(s) == 0 ? 0 : 1;
	sim_destroy(s);
	return rc;
}
