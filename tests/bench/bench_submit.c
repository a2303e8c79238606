/* bench_submit: how fast the controller acknowledges submissions.
 *
 *   bench_submit [--clients N] [--jobs M] [--idempotency-keys]
 *       [--server ...] [--cert ...] [--key ...] [--ca ...]
 *
 * N threads each open their own connection, wait until all are
 * connected, then submit their share of M tiny jobs ("-- true") one at a
 * time, each waiting for its acknowledgement. The clock runs from the
 * first submit to the last acknowledgement, so connecting is not
 * counted. With --idempotency-keys each submit carries a key of its own,
 * random as the CLI's are ("b-" and 32 hex digits). One summary line on stdout; exit 1 if any submit failed. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "client/conn.h"
#include "client/settings.h"
#include "lib/frame.h"
#include "lib/job.h"
#include "lib/wire.h"

#define BENCH_CLIENTS_MAX 1024
#define BENCH_JOBS_MAX 10000000

struct bench {
	struct cconn_opts opts;
	int keys;			/* --idempotency-keys */
	pthread_barrier_t ready;	/* all connected (or failed) */
	pthread_mutex_t lock;
	int64_t first_ns;		/* first submit sent */
	int64_t last_ns;		/* last acknowledgement */
	int failed;
	char why[sizeof(((struct cerr *)0)->text) + 64];
};

struct worker {
	struct bench *b;
	pthread_t tid;
	int index;
	unsigned jobs;
	double *lat_ms;			/* this worker's latencies */
	unsigned done;
};

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
bench_fail(struct bench *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bench_fail(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&b->lock);
	if (b->failed++ == 0) {	/* keep the first reason */
		va_start(ap, fmt);
		vsnprintf(b->why, sizeof(b->why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&b->lock);
}

/* One submit and its acknowledgement. 0 or -1 after bench_fail. */
static int
submit_one(struct worker *w, struct cconn *c, Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope *rep;
	struct cerr err;
	int rc = 0;

	if ((rep = cconn_call(c, req, &err)) == NULL) {
		bench_fail(w->b, "client %d: %s", w->index, err.text);
		return -1;
	}
	if (rep->body_case == COHORT__V1__ENVELOPE__BODY_ERROR) {
		bench_fail(w->b, "client %d: submit refused: %s", w->index,
		    rep->error->text);
		rc = -1;
	} else if (rep->body_case != COHORT__V1__ENVELOPE__BODY_SUBMIT_REPLY) {
		bench_fail(w->b, "client %d: unexpected reply '%s'", w->index,
		    wire_body_name(rep->body_case));
		rc = -1;
	}
	frame_free(rep);
	return rc;
}

/* A key like the CLI's: "b-" and 32 hex digits. */
static int
bench_key(char *buf, size_t size)
{
	unsigned char r[16];
	size_t i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	snprintf(buf, size, "b-");
	for (i = 0; i < sizeof(r) && 2 + 2 * i + 2 < size; i++)
		snprintf(buf + 2 + 2 * i, size - 2 - 2 * i, "%02x", r[i]);
	return 0;
}

static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	Cohort__V1__Envelope req = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SubmitRequest sub = COHORT__V1__SUBMIT_REQUEST__INIT;
	Cohort__V1__JobSpec pb = COHORT__V1__JOB_SPEC__INIT;
	char *argv[] = { "true", NULL };
	struct job_spec spec;
	struct cconn *c;
	struct cerr err;
	char key[64];
	int64_t t0, t1;

	job_spec_init(&spec);
	spec.argv = argv;
	spec.argc = 1;
	spec.workdir = "/tmp";
	wire_spec_to_pb(&spec, &pb);
	sub.spec = &pb;
	req.body_case = COHORT__V1__ENVELOPE__BODY_SUBMIT;
	req.submit = &sub;

	if ((c = cconn_open_tls(&b->opts, &err)) == NULL)
		bench_fail(b, "client %d: %s", w->index, err.text);
	pthread_barrier_wait(&b->ready);
	if (c == NULL || b->failed)
		goto out;
	for (w->done = 0; w->done < w->jobs; w->done++) {
		if (b->keys) {
			if (bench_key(key, sizeof(key)) == -1) {
				bench_fail(b, "client %d: getrandom: %s",
				    w->index, strerror(errno));
				break;
			}
			pb.idempotency_key = key;
		}
		t0 = now_ns();
		pthread_mutex_lock(&b->lock);
		if (b->first_ns == 0 || t0 < b->first_ns)
			b->first_ns = t0;
		pthread_mutex_unlock(&b->lock);
		if (submit_one(w, c, &req) == -1)
			break;
		t1 = now_ns();
		w->lat_ms[w->done] = (double)(t1 - t0) / 1e6;
		pthread_mutex_lock(&b->lock);
		if (t1 > b->last_ns)
			b->last_ns = t1;
		pthread_mutex_unlock(&b->lock);
	}
out:
	cconn_close(c);
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile by the nearest-rank method. */
static double
quantile(const double *sorted, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)(q * (double)n + 0.999999);	/* ceil, 1-based */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static int
parse_count(const char *opt, const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || errno != 0 || *end != '\0' || v < 1 ||
	    v > max) {
		fprintf(stderr, "bench_submit: %s: '%s' is not a number from 1 "
		    "to %u\n", opt, s, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static const struct option longopts[] = {
	{ "clients", required_argument, NULL, 'n' },
	{ "jobs", required_argument, NULL, 'm' },
	{ "idempotency-keys", no_argument, NULL, 'i' },
	{ "server", required_argument, NULL, 's' },
	{ "cert", required_argument, NULL, 'c' },
	{ "key", required_argument, NULL, 'k' },
	{ "ca", required_argument, NULL, 'a' },
	{ NULL, 0, NULL, 0 },
};

/* Run the workers and print the summary. Returns the exit code. */
static int
bench_run(struct bench *b, unsigned clients, unsigned jobs)
{
	struct worker *w;
	double *lat, secs;
	size_t n = 0;
	unsigned i;
	int rc = 1;

	w = calloc(clients, sizeof(*w));
	lat = calloc(jobs, sizeof(*lat));
	if (w == NULL || lat == NULL) {
		fprintf(stderr, "bench_submit: out of memory\n");
		goto out;
	}
	pthread_barrier_init(&b->ready, NULL, clients);
	for (i = 0; i < clients; i++) {
		w[i].b = b;
		w[i].index = (int)i;
		w[i].jobs = jobs / clients + (i < jobs % clients);
		w[i].lat_ms = lat + n;
		n += w[i].jobs;
		if (pthread_create(&w[i].tid, NULL, worker_run, &w[i]) != 0) {
			/* The barrier would never open: nothing to clean up
			 * but to leave. */
			fprintf(stderr, "bench_submit: cannot start a thread\n");
			exit(1);
		}
	}
	for (i = 0; i < clients; i++)
		pthread_join(w[i].tid, NULL);
	pthread_barrier_destroy(&b->ready);
	if (b->failed) {
		fprintf(stderr, "bench_submit: %d client(s) failed; first: %s\n",
		    b->failed, b->why);
		goto out;
	}
	qsort(lat, jobs, sizeof(*lat), cmp_double);
	secs = (double)(b->last_ns - b->first_ns) / 1e9;
	printf("bench_submit: clients=%u jobs=%u seconds=%.3f "
	    "submits_per_s=%.1f p50_ms=%.3f p99_ms=%.3f\n", clients, jobs,
	    secs, secs > 0 ? jobs / secs : 0.0, quantile(lat, jobs, 0.50),
	    quantile(lat, jobs, 0.99));
	rc = 0;
out:
	free(w);
	free(lat);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *flag[4] = { NULL, NULL, NULL, NULL };
	unsigned clients = 4, jobs = 1000;
	struct settings s;
	struct bench b;
	struct cerr err;
	int ch, rc, keys = 0;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			if (parse_count("--clients", optarg, BENCH_CLIENTS_MAX,
			    &clients) == -1)
				return 2;
			break;
		case 'm':
			if (parse_count("--jobs", optarg, BENCH_JOBS_MAX,
			    &jobs) == -1)
				return 2;
			break;
		case 'i':
			keys = 1;
			break;
		case 's':
		case 'c':
		case 'k':
		case 'a':
			flag[strchr("scka", ch) - "scka"] = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench_submit [--clients N] "
			    "[--jobs M] [--idempotency-keys] "
			    "[--server HOST:PORT[,...]] [--cert F] "
			    "[--key F] [--ca F]\n");
			return 2;
		}
	}
	if (optind < argc || clients > jobs) {
		fprintf(stderr, "bench_submit: %s\n", optind < argc ?
		    "unexpected argument" : "more clients than jobs");
		return 2;
	}
	if (settings_resolve(&s, flag[0], flag[1], flag[2], flag[3], NULL,
	    &err) == -1) {
		fprintf(stderr, "bench_submit: %s\n", err.text);
		settings_clear(&s);
		return 2;
	}
	memset(&b, 0, sizeof(b));
	b.keys = keys;
	b.opts.server = s.server;
	b.opts.cert = s.cert;
	b.opts.key = s.key;
	b.opts.ca = s.ca;
	pthread_mutex_init(&b.lock, NULL);
	rc = bench_run(&b, clients, jobs);
	pthread_mutex_destroy(&b.lock);
	settings_clear(&s);
	return rc;
}
