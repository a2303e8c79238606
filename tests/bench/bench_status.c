/* The status page's render time (under 100 ms at 1,000 nodes,
 * readable at 10,000). Builds a cluster through the real controller
 * domain (jobs, nodes, cluster, scheduler, on an in-memory store:
 * tests/domain/domain.h), without a server: N nodes of 8 GPUs under leaf
 * switches of 32, half the nodes busy with 4-node jobs, a quarter with
 * 1-node jobs of 2 GPUs, jobs waiting that cannot start, 1% of the nodes
 * with a failed GPU, 1% drained, a few DOWN. Then times
 * status_page_write (everything status_page_render does but reading the
 * server's counters) and prints the median and the maximum of R renders
 * and the page's size, of the overview and of one switch's page
 * (/?switch=leaf0001). No timed assertion: figures only.
 *
 *	bench_status [--nodes N[,N...]] [--renders R] [--html PREFIX]
 *	    [--verbose]
 *
 * Default: --nodes 1000,10000 --renders 20. --html writes each size's
 * page to PREFIX-N.html, to look at. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "daemon/controller/domain/jobs.h"
#include "daemon/controller/domain/nodes.h"
#include "daemon/controller/domain/recovery.h"
#include "daemon/controller/web/status_page.h"
#include "daemon/sched/topo.h"
#include "lib/clock.h"
#include "tests/domain/domain.h"

#define GPUS 8
#define PER_LEAF 32
#define RENDERS_MAX 1000

static const struct peer admin = { "root", ROLE_ADMIN };

static void
die(const char *what, const struct cerr *err)
{
	fprintf(stderr, "bench_status: %s: %s\n", what,
	    err != NULL ? err->text : "failed");
	exit(1);
}

/* "SwitchName=leaf0000 Nodes=node[00001-00032]" per 32 nodes. */
static char *
topology(unsigned n)
{
	size_t cap = (size_t)(n / PER_LEAF + 1) * 64 + 1, len = 0;
	char *t = malloc(cap);
	unsigned first;

	if (t == NULL)
		die("topology", NULL);
	t[0] = '\0';
	for (first = 1; first <= n; first += PER_LEAF) {
		unsigned last = first + PER_LEAF - 1 < n ? first + PER_LEAF - 1 :
		    n;

		len += (size_t)snprintf(t + len, cap - len,
		    "SwitchName=leaf%04u Nodes=node[%05u-%05u]\n",
		    (first - 1) / PER_LEAF, first, last);
	}
	return t;
}

static void
submit(struct domain *d, const char *user, unsigned nodes, unsigned gpus)
{
	struct cerr err;

	if (domain_submit(d, user, nodes, gpus, NULL, NULL, &err) == 0)
		die("submit", &err);
}

/* The cluster described at the top, at d->now. */
static void
build(struct domain *d, unsigned n, struct topo **topo)
{
	struct cluster_opts o = {
		.node_timeout_ms = 10000,
		.heartbeat_ms = 2000,
		.stop_timeout_ms = 60000,
		.accept_unknown_nodes = true,
	};
	static const char *const users[] = { "alice", "bob", "carol" };
	struct cerr err;
	char name[16], ebuf[256], *text;
	unsigned i;

	text = topology(n);
	if ((*topo = topo_parse(text, strlen(text), "bench", ebuf,
	    sizeof(ebuf))) == NULL) {
		fprintf(stderr, "bench_status: topology: %s\n", ebuf);
		exit(1);
	}
	free(text);
	o.topo = *topo;
	if (domain_open(d, &o, &err) == -1)
		die("domain_open", &err);
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "node%05u", i);
		if (domain_add_node(d, name, GPUS, false, &err) == 0)
			die(name, &err);
	}
	/* Half the nodes in 4-node jobs, a quarter in 1-node 2-GPU jobs
	 * (four per node), then work that waits. */
	for (i = 0; i < n / 8; i++)
		submit(d, users[i % 3], 4, GPUS);
	for (i = 0; i < n; i++)
		submit(d, users[i % 3], 1, 2);
	domain_pass(d);
	domain_answer_launches(d, NULL);
	for (i = 0; i < n / 4 + 50; i++)
		submit(d, users[i % 3], 8, GPUS);
	domain_pass(d);
	/* Failures: a GPU on 1% of the nodes, 1% drained, 0.2% DOWN. */
	for (i = 1; i <= n; i += 100) {
		snprintf(name, sizeof(name), "node%05u", i + 7);
		if (i + 7 <= n)
			domain_health(d, name, HEALTH_FAILED, 3, "xid=79");
		snprintf(name, sizeof(name), "node%05u", i + 42);
		if (i + 42 <= n && recovery_drain(d->cl, &admin, name,
		    "maintenance: replace DIMM", false, d->now, &err) == -1)
			die("drain", &err);
	}
	domain_commit(d);
	for (i = 1; i <= n; i += 500) {
		snprintf(name, sizeof(name), "node%05u", i + 99);
		if (i + 99 <= n)
			domain_disconnect(d, name);
	}
	domain_run_for(d, 12000, 4000);
	domain_pass(d);
	domain_answer_launches(d, NULL);
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
save_page(const char *prefix, unsigned n, struct evbuffer *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s-%u.html", prefix, n);
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(evbuffer_pullup(b, -1), 1, evbuffer_get_length(b), f) !=
	    evbuffer_get_length(b) || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Render in R times; the median and the maximum in *med and *max (µs),
 * the page's size returned; the last page saved when html is set. */
static size_t
renders_time(const struct status_page_in *in, unsigned renders,
    const char *html, unsigned n, uint64_t *med, uint64_t *max)
{
	uint64_t t[RENDERS_MAX], t0;
	size_t bytes = 0, i;

	for (i = 0; i < renders; i++) {
		struct evbuffer *b = evbuffer_new();

		if (b == NULL)
			die("evbuffer_new", NULL);
		t0 = clock_mono_us();
		if (status_page_write(in, b) == -1)
			die("status_page_write", NULL);
		t[i] = clock_mono_us() - t0;
		bytes = evbuffer_get_length(b);
		if (html != NULL && i + 1 == renders)
			save_page(html, n, b);
		evbuffer_free(b);
	}
	qsort(t, renders, sizeof(t[0]), u64_cmp);
	*med = t[(renders - 1) / 2];
	*max = t[renders - 1];
	return bytes;
}

static void
bench(unsigned n, unsigned renders, const char *html, bool verbose)
{
	struct domain d;
	struct topo *topo;
	struct status_page_in in;
	uint64_t t0, setup, med, max;
	size_t bytes;
	int saved = -1, null;

	fflush(stderr);
	/* The domain logs every registration and start. */
	if (!verbose && (null = open("/dev/null", O_WRONLY)) >= 0) {
		saved = dup(2);
		dup2(null, 2);
		close(null);
	}
	t0 = clock_mono_us();
	build(&d, n, &topo);
	setup = clock_mono_us() - t0;
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	memset(&in, 0, sizeof(in));
	in.jobs = d.js;
	in.nodes = d.ns;
	in.topo = topo;
	in.store = d.st;
	in.health.now_ms = d.now;
	in.health.started_ms = d.now - 3600 * 1000;
	bytes = renders_time(&in, renders, html, n, &med, &max);
	printf("%6u nodes %6u GPUs %5zu jobs: render median %7.2f ms, max "
	    "%7.2f ms over %u; page %7.1f KiB (set-up %.1f s)\n", n, n * GPUS,
	    jobs_count(d.js), (double)med / 1e3, (double)max / 1e3, renders,
	    (double)bytes / 1024, (double)setup / 1e6);
	/* One switch's page (/?switch=leaf0001): its 32 nodes' rows. */
	in.switch_name = "leaf0001";
	bytes = renders_time(&in, renders, NULL, n, &med, &max);
	printf("%6u nodes, /?switch=%s: render median %7.2f ms, max "
	    "%7.2f ms over %u; page %7.1f KiB\n", n, in.switch_name,
	    (double)med / 1e3, (double)max / 1e3, renders,
	    (double)bytes / 1024);
	domain_close(&d);
	topo_destroy(topo);
}

int
main(int argc, char **argv)
{
	const char *sizes = "1000,10000", *html = NULL;
	unsigned renders = 20;
	bool verbose = false;
	char *copy, *tok, *save;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
			sizes = argv[++i];
		else if (strcmp(argv[i], "--renders") == 0 && i + 1 < argc)
			renders = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--html") == 0 && i + 1 < argc)
			html = argv[++i];
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else {
			fprintf(stderr, "usage: bench_status [--nodes N[,N...]] "
			    "[--renders R] [--html PREFIX] [--verbose]\n");
			return 2;
		}
	}
	if (renders < 1 || renders > RENDERS_MAX) {
		fprintf(stderr, "bench_status: --renders: 1 to %d\n",
		    RENDERS_MAX);
		return 2;
	}
	if ((copy = strdup(sizes)) == NULL)
		return 1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		unsigned long n = strtoul(tok, NULL, 10);

		if (n < 1 || n > 99999) {
			fprintf(stderr, "bench_status: --nodes: 1 to 99999\n");
			return 2;
		}
		bench((unsigned)n, renders, html, verbose);
		fflush(stdout);
	}
	free(copy);
	return 0;
}
