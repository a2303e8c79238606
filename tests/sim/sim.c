/* cohort-simnodes' process: the nodes, their first connections, signals
 * and the stats line. */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "tests/sim/sim.h"
#include "tests/sim/simcert.h"
#include "tests/sim/simnode.h"

#define SIM_LOG_PER_S 20		/* per-node log lines per second */

static const int sim_signals[5] = { SIGINT, SIGTERM, SIGUSR1, SIGUSR2,
    SIGHUP };

int64_t
sim_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sim_log(struct sim *s, const char *fmt, ...)
{
	unsigned long suppressed;
	char buf[640];
	va_list ap;

	if (!ratelim_allow(&s->log_budget, sim_mono_ms(), SIM_LOG_PER_S, 1000,
	    &suppressed))
		return;
	if (suppressed > 0)
		log_warnx("(%lu similar messages suppressed)", suppressed);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s", buf);
}

void
sim_node_ready(struct sim *s)
{
	if (s->all_ready_said || s->ready < s->o.n)
		return;
	s->all_ready_said = true;
	printf("ready %u nodes registered in %.3f s\n", s->o.n,
	    (double)(sim_mono_ms() - s->t0_ms) / 1000);
	fflush(stdout);
}

static long
sim_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void
sim_stats(struct sim *s)
{
	long rss = sim_rss_kib();
	unsigned i, running = 0;

	for (i = 0; i < s->o.n; i++)
		running += simnode_running(s->nodes[i]);
	printf("stats t=%.1fs ready=%u/%u connecting=%u crashed=%u "
	    "running_tasks=%u connects=%" PRIu64 " resets=%" PRIu64
	    " launches=%" PRIu64 " exits=%" PRIu64 " acks=%" PRIu64
	    " stops=%" PRIu64 " rss_kib=%ld (%.1f KiB/node)\n",
	    (double)(sim_mono_ms() - s->t0_ms) / 1000, s->ready, s->o.n,
	    s->connecting, s->crashed, running, s->connects, s->resets,
	    s->launches, s->exits, s->acks, s->stops, rss,
	    (double)rss / s->o.n);
	fflush(stdout);
}

/* A ready node, preferring one with a running task, from a random
 * start. */
static void
sim_crash_one(struct sim *s)
{
	unsigned start = (unsigned)rand_r(&s->seed) % s->o.n, i;
	struct simnode *any = NULL, *nd;

	for (i = 0; i < s->o.n; i++) {
		nd = s->nodes[(start + i) % s->o.n];
		if (!simnode_ready(nd))
			continue;
		if (simnode_running(nd) > 0) {
			simnode_crash(nd);
			return;
		}
		if (any == NULL)
			any = nd;
	}
	if (any != NULL)
		simnode_crash(any);
	else
		log_warnx("SIGUSR1: no ready node to crash");
}

static void
sim_revive_all(struct sim *s)
{
	unsigned i;

	for (i = 0; i < s->o.n; i++)
		simnode_revive(s->nodes[i]);
	fflush(stdout);
}

static void
sim_stats_cb(evutil_socket_t fd, short what, void *arg)
{
	sim_stats(arg);
}

static void
sim_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct sim *s = arg;

	switch (sig) {
	case SIGUSR1:
		sim_crash_one(s);
		return;
	case SIGUSR2:
		sim_revive_all(s);
		return;
	case SIGHUP:
		sim_stats(s);
		return;
	default:
		log_info("signal %d: stopping", (int)sig);
		event_base_loopbreak(s->base);
	}
}

/* Start the nodes' first connections at --rate a second. */
static void
sim_first_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sim *s = arg;
	unsigned per = s->o.rate / 100 > 0 ? s->o.rate / 100 : 1;
	struct timeval tv = { 0, 10000 };
	unsigned i;

	for (i = 0; i < per && s->next_first < s->o.n; i++)
		simnode_start(s->nodes[s->next_first++], 0);
	if (s->next_first < s->o.n)
		evtimer_add(s->first_ev, &tv);
}

static void
sim_raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur >= want)
		return;
	if (rl.rlim_max < want) {
		struct rlimit up = { want, want };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want)
		log_warnx("open files limited to %lu (want %u): some nodes "
		    "will not connect", (unsigned long)rl.rlim_cur, want);
}

/* Once for every node: 10,000 lookups would only repeat this one. */
static int
sim_resolve(struct sim *s, struct cerr *err)
{
	struct addrinfo hints, *res;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", s->o.port);
	if ((rc = getaddrinfo(s->o.host, port, &hints, &res)) != 0)
		return cerr_set(err, ERR_INVALID, "%s: %s", s->o.host,
		    gai_strerror(rc));
	memcpy(&s->addr, res->ai_addr, res->ai_addrlen);
	s->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Keys and certificates, all before the first connection. */
static int
sim_make_nodes(struct sim *s, struct simcert *m, struct cerr *err)
{
	EVP_PKEY *shared = NULL, *key;
	X509 *cert;
	char name[SIMNODE_NAME_MAX + 1], ebuf[256];
	int64_t t = sim_mono_ms();
	unsigned i;
	int rc = -1;

	if (s->o.shared_key && (shared = simcert_key(m)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "cannot make a key: %s",
		    tls_error_string(ebuf, sizeof(ebuf)));
		goto out;
	}
	for (i = 0; i < s->o.n; i++) {
		snprintf(name, sizeof(name), "%s%0*u", s->o.prefix,
		    (int)s->o.width, s->o.first + i);
		if (shared != NULL)
			key = EVP_PKEY_up_ref(shared) == 1 ? shared : NULL;
		else
			key = simcert_key(m);
		cert = key != NULL ? simcert_mint(m, key, name) : NULL;
		if (cert == NULL) {
			EVP_PKEY_free(key);
			cerr_set(err, ERR_INTERNAL, "%s: cannot make its key "
			    "and certificate: %s", name,
			    tls_error_string(ebuf, sizeof(ebuf)));
			goto out;
		}
		if ((s->nodes[i] = simnode_create(s, name, key, cert,
		    err)) == NULL)
			goto out;
	}
	printf("minted %u certificates (%s) in %.3f s\n", s->o.n,
	    shared != NULL ? "one shared key" : "a key per node",
	    (double)(sim_mono_ms() - t) / 1000);
	fflush(stdout);
	rc = 0;
out:
	EVP_PKEY_free(shared);
	return rc;
}

static int
sim_events(struct sim *s, struct cerr *err)
{
	struct timeval tv;
	unsigned i;

	for (i = 0; i < 5; i++)
		if ((s->sig_ev[i] = evsignal_new(s->base, sim_signals[i],
		    sim_signal_cb, s)) == NULL ||
		    event_add(s->sig_ev[i], NULL) == -1)
			return cerr_set(err, ERR_INTERNAL, "cannot catch "
			    "signals");
	if (s->o.stats_s > 0) {
		if ((s->stats_ev = event_new(s->base, -1, EV_PERSIST,
		    sim_stats_cb, s)) == NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		tv.tv_sec = s->o.stats_s;
		tv.tv_usec = 0;
		event_add(s->stats_ev, &tv);
	}
	if ((s->first_ev = evtimer_new(s->base, sim_first_cb, s)) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

struct sim *
sim_create(const struct sim_opts *o, struct cerr *err)
{
	struct simcert *m = NULL;
	struct sim *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->o = *o;
	s->seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	s->health.health = HEALTH_OK;
	s->health.checked_ms = clock_now_ms();
	sim_raise_nofile(o->n + 256);
	/* The CA's files first: a missing one is named. */
	if ((m = simcert_create(o->ca, o->ca_key, err)) == NULL ||
	    sim_resolve(s, err) == -1 ||
	    (s->ctx = simcert_client_ctx(o->ca, err)) == NULL)
		goto fail;
	if ((s->nodes = calloc(o->n, sizeof(*s->nodes))) == NULL ||
	    (s->base = event_base_new()) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (sim_make_nodes(s, m, err) == -1 || sim_events(s, err) == -1)
		goto fail;
	simcert_destroy(m);
	return s;
fail:
	simcert_destroy(m);
	sim_destroy(s);
	return NULL;
}

int
sim_run(struct sim *s)
{
	s->t0_ms = sim_mono_ms();
	log_info("%u nodes %s%0*u..%s%0*u against %s:%u", s->o.n,
	    s->o.prefix, (int)s->o.width, s->o.first, s->o.prefix,
	    (int)s->o.width, s->o.first + s->o.n - 1, s->o.host, s->o.port);
	sim_first_cb(-1, 0, s);
	if (event_base_dispatch(s->base) == -1) {
		log_warnx("the event loop failed");
		return -1;
	}
	sim_stats(s);
	return 0;
}

void
sim_destroy(struct sim *s)
{
	unsigned i;

	if (s == NULL)
		return;
	for (i = 0; s->nodes != NULL && i < s->o.n; i++)
		simnode_destroy(s->nodes[i]);
	free(s->nodes);
	for (i = 0; i < 5; i++)
		if (s->sig_ev[i] != NULL)
			event_free(s->sig_ev[i]);
	if (s->stats_ev != NULL)
		event_free(s->stats_ev);
	if (s->first_ev != NULL)
		event_free(s->first_ev);
	if (s->base != NULL)
		event_base_free(s->base);
	SSL_CTX_free(s->ctx);
	free(s);
}
