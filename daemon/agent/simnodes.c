/* cohort-simnodes: N simulated node agents in one process, for scale
 * tests against a real controller.
 *
 * Each simulated node has its own TLS connection, node name and client
 * certificate (minted here from the development CA: O=cohort, OU=agent,
 * CN=NAME, clientAuth, SAN DNS:NAME), registers a simulated 8-GPU
 * inventory and heartbeats like the real agent (daemon/agent/link.c). A
 * launched task is a timer of the simulated length; when it fires the
 * task "exits" with status 0 (TaskExit, and in heartbeats until the
 * controller acknowledges it). Stop ends the ranks as killed by SIGTERM;
 * Signal and ReadLog are answered (no log data).
 *
 * Failure injection: SIGUSR1 crashes one node (its connection drops, its
 * heartbeats stop, its tasks are lost) and prints
 *	crash NAME time_ms T jobs J1,J2
 * on stdout; SIGUSR2 brings every crashed node back as a fresh agent.
 *
 * Everything is bounded: tasks per node, frame size, queued output,
 * handshakes in flight, log lines per second. */
#include "config.h"

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/clock.h"
#include "daemon/agent/inventory.h"
#include "lib/conf.h"
#include "lib/frame.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "lib/wire.h"

#define SIM_PROG "cohort-simnodes"
#define SIM_MAX_NODES 200000
#define SIM_MAX_FRAME (16u * 1024 * 1024)
/* A node whose controller does not read: drop the connection. */
#define SIM_MAX_QUEUED (4u * 1024 * 1024)
#define SIM_MAX_TASKS 64		/* per node */
#define SIM_BACKOFF_MIN_MS 250
#define SIM_BACKOFF_MAX_MS 5000
#define SIM_NAME_MAX 64
#define SIM_LOG_PER_S 20		/* per-node log lines per second */

enum node_state {
	NS_IDLE,		/* waiting to (re)connect */
	NS_CONNECTING,		/* TCP + TLS */
	NS_HELLO,
	NS_REGISTER,
	NS_READY,
	NS_CRASHED,		/* simulated crash: silent until revived */
};

struct simnode;

struct simtask {
	TAILQ_ENTRY(simtask) entry;
	struct simnode *node;
	struct event *ev;	/* the run timer; NULL once ended */
	uint64_t job_id;
	uint32_t restart;
	uint32_t rank;
	int32_t wait_status;
	bool running;
};

TAILQ_HEAD(simtasks, simtask);

struct simnode {
	struct sim *sim;
	struct bufferevent *bev;
	struct event *timer;	/* retry when idle, heartbeat when ready */
	EVP_PKEY *key;
	X509 *cert;
	struct simtasks tasks;
	uint64_t next_id;
	unsigned ntasks;
	unsigned attempts;
	unsigned hb_ms;
	enum node_state state;
	bool counted;		/* in sim->connecting */
	bool ever_ready;
	char name[SIM_NAME_MAX + 1];
};

struct sim {
	struct event_base *base;
	SSL_CTX *ctx;
	struct simnode *nodes;
	unsigned n;
	/* options */
	char host[CONF_HOST_MAX + 1];
	uint16_t port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	const char *address;		/* reported in Register */
	uint64_t task_ms;
	uint64_t hb_override_ms;	/* 0: the controller's */
	double fail_rate;
	unsigned rate;			/* connection starts per second */
	unsigned max_connecting;
	unsigned stats_s;
	struct sim_gpus gpus;
	/* state */
	unsigned connecting;
	unsigned ready;
	unsigned crashed;
	bool all_ready_said;
	bool stopping;
	int64_t t0_ms;
	unsigned seed;
	/* counters */
	uint64_t connects, resets, registers, launches, exits, stops,
	    signals, readlogs, acks, crashes, refusals;
	/* log budget */
	int64_t log_sec;
	unsigned log_used, log_dropped;
	struct event *sig_ev[5];
	struct event *stats_ev;
	struct event *first_ev;		/* staggered first connects */
	unsigned next_first;
};

static struct inventory sim_inv;	/* scratch for Register */

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
ms_tv(uint64_t ms, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)((ms % 1000) * 1000);
}

/* Per-node messages, at most SIM_LOG_PER_S a second: 10,000 nodes that
 * lose their controller at once must not write 10,000 lines. */
static void sim_log(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sim_log(struct sim *s, const char *fmt, ...)
{
	int64_t sec = mono_ms() / 1000;
	char buf[512];
	va_list ap;

	if (sec != s->log_sec) {
		if (s->log_dropped > 0)
			log_warnx("(%u similar messages suppressed)",
			    s->log_dropped);
		s->log_sec = sec;
		s->log_used = 0;
		s->log_dropped = 0;
	}
	if (s->log_used >= SIM_LOG_PER_S) {
		s->log_dropped++;
		return;
	}
	s->log_used++;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s", buf);
}

/* ---- certificates ---------------------------------------------------- */

struct minter {
	X509 *ca;
	EVP_PKEY *cakey;
	X509_EXTENSION *ext[3];		/* basicConstraints, keyUsage, EKU */
	/* Fetched once: OpenSSL 3 looks the algorithm up under locks on
	 * every implicit use. */
	EVP_MD_CTX *sign_tmpl;		/* DigestSignInit done with the CA key */
	EVP_MD_CTX *sign;
	uint64_t serial;
};

static int
minter_init(struct minter *m, const char *ca_path, const char *key_path)
{
	static const struct {
		int nid;
		const char *value;
	} fixed[3] = {
		{ NID_basic_constraints, "critical,CA:FALSE" },
		{ NID_key_usage, "critical,digitalSignature" },
		{ NID_ext_key_usage, "clientAuth" },
	};
	FILE *f;
	unsigned i;

	memset(m, 0, sizeof(*m));
	if ((f = fopen(ca_path, "r")) == NULL) {
		log_warn("%s", ca_path);
		return -1;
	}
	m->ca = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if ((f = fopen(key_path, "r")) == NULL) {
		log_warn("%s", key_path);
		return -1;
	}
	m->cakey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (m->ca == NULL || m->cakey == NULL) {
		log_warnx("cannot read the CA (%s, %s)", ca_path, key_path);
		return -1;
	}
	if (X509_check_private_key(m->ca, m->cakey) != 1) {
		log_warnx("%s does not match %s", key_path, ca_path);
		return -1;
	}
	for (i = 0; i < 3; i++)
		if ((m->ext[i] = X509V3_EXT_conf_nid(NULL, NULL, fixed[i].nid,
		    fixed[i].value)) == NULL)
			return -1;
	if ((m->sign_tmpl = EVP_MD_CTX_new()) == NULL ||
	    (m->sign = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit_ex(m->sign_tmpl, NULL, "SHA256", NULL, NULL,
	    m->cakey, NULL) != 1) {
		log_warnx("cannot sign with %s", key_path);
		return -1;
	}
	if (RAND_bytes((unsigned char *)&m->serial, sizeof(m->serial)) != 1)
		m->serial = (uint64_t)time(NULL) << 20;
	/* Positive and far from overflowing as it counts up. */
	m->serial = (m->serial >> 2) | 1;
	return 0;
}

static void
minter_free(struct minter *m)
{
	unsigned i;

	X509_free(m->ca);
	EVP_PKEY_free(m->cakey);
	for (i = 0; i < 3; i++)
		X509_EXTENSION_free(m->ext[i]);
	EVP_MD_CTX_free(m->sign_tmpl);
	EVP_MD_CTX_free(m->sign);
}

/* A P-256 key as a legacy EC_KEY. OpenSSL 3.0 encodes a provider key
 * into a certificate through its encoder and decoder registries (a
 * lookup over every provider for each certificate: three quarters of the
 * minting time); a legacy key takes the direct ASN.1 method, which
 * makes 10,000 certificates a second or so instead of four. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static EVP_PKEY *
mint_key(struct minter *m)
{
	EVP_PKEY *k = NULL;
	EC_KEY *ec;

	if ((ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1)) == NULL)
		return NULL;
	if (EC_KEY_generate_key(ec) != 1 || (k = EVP_PKEY_new()) == NULL ||
	    EVP_PKEY_assign_EC_KEY(k, ec) != 1) {
		EVP_PKEY_free(k);
		EC_KEY_free(ec);
		return NULL;
	}
	return k;
}
#pragma GCC diagnostic pop

static X509 *
mint(struct minter *m, EVP_PKEY *key, const char *name)
{
	X509 *x;
	X509_NAME *subj;
	GENERAL_NAMES *san = NULL;
	GENERAL_NAME *gn;
	ASN1_IA5STRING *dns;
	unsigned i;

	if ((x = X509_new()) == NULL)
		return NULL;
	subj = X509_get_subject_name(x);
	if (X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set_uint64(X509_get_serialNumber(x),
	    m->serial++) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 365L * 86400) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC,
	    (const unsigned char *)"cohort", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_ASC,
	    (const unsigned char *)"agent", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
	    (const unsigned char *)name, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(m->ca)) != 1)
		goto fail;
	for (i = 0; i < 3; i++)
		if (X509_add_ext(x, m->ext[i], -1) != 1)
			goto fail;
	/* subjectAltName DNS:name, built directly (no config parsing). */
	if ((san = GENERAL_NAMES_new()) == NULL ||
	    (gn = GENERAL_NAME_new()) == NULL)
		goto fail;
	if ((dns = ASN1_IA5STRING_new()) == NULL ||
	    ASN1_STRING_set(dns, name, -1) != 1) {
		ASN1_IA5STRING_free(dns);
		GENERAL_NAME_free(gn);
		goto fail;
	}
	GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
	if (sk_GENERAL_NAME_push(san, gn) == 0) {
		GENERAL_NAME_free(gn);
		goto fail;
	}
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, san, 0,
	    X509V3_ADD_DEFAULT) != 1)
		goto fail;
	if (EVP_MD_CTX_copy_ex(m->sign, m->sign_tmpl) != 1 ||
	    X509_sign_ctx(x, m->sign) == 0)
		goto fail;
	GENERAL_NAMES_free(san);
	return x;
fail:
	GENERAL_NAMES_free(san);
	X509_free(x);
	return NULL;
}

/* ---- the connection --------------------------------------------------- */

static void node_connect(struct simnode *nd);
static void node_send_heartbeat(struct simnode *nd);

static void
node_uncount(struct simnode *nd)
{
	if (nd->counted) {
		nd->counted = false;
		nd->sim->connecting--;
	}
}

static void
node_send(struct simnode *nd, Cohort__V1__Envelope *env)
{
	struct evbuffer *out;

	if (nd->bev == NULL)
		return;
	out = bufferevent_get_output(nd->bev);
	if (evbuffer_get_length(out) > SIM_MAX_QUEUED)
		return;		/* the read side will notice; bounded */
	if (frame_write(out, env, SIM_MAX_FRAME) == -1)
		sim_log(nd->sim, "%s: cannot queue a '%s' message", nd->name,
		    wire_body_name(env->body_case));
}

static void
node_send_error(struct simnode *nd, uint64_t id, enum err_code code,
    const char *text)
{
	Cohort__V1__Envelope env;
	Cohort__V1__Error e;

	wire_error(&env, &e, id, code, text);
	node_send(nd, &env);
}

static void
node_drop_bev(struct simnode *nd)
{
	if (nd->bev != NULL) {
		bufferevent_free(nd->bev);
		nd->bev = NULL;
	}
	if (nd->state == NS_READY)
		nd->sim->ready--;
	node_uncount(nd);
}

/* Drop the connection; retry after a capped, jittered back-off. */
static void
node_reset(struct simnode *nd, const char *why)
{
	struct sim *s = nd->sim;
	unsigned shift = nd->attempts < 10 ? nd->attempts : 10;
	uint64_t ms = (uint64_t)SIM_BACKOFF_MIN_MS << shift;
	struct timeval tv;

	node_drop_bev(nd);
	evtimer_del(nd->timer);
	s->resets++;
	if (ms > SIM_BACKOFF_MAX_MS)
		ms = SIM_BACKOFF_MAX_MS;
	ms = ms / 2 + (uint64_t)rand_r(&s->seed) % (ms / 2 + 1);
	nd->attempts++;
	nd->state = NS_IDLE;
	sim_log(s, "%s: link down (%s); retrying in %" PRIu64 " ms", nd->name,
	    why, ms);
	if (s->stopping)
		return;
	ms_tv(ms, &tv);
	evtimer_add(nd->timer, &tv);
}

static void
task_free(struct simtask *t)
{
	struct simnode *nd = t->node;

	if (t->ev != NULL)
		event_free(t->ev);
	TAILQ_REMOVE(&nd->tasks, t, entry);
	nd->ntasks--;
	free(t);
}

static Cohort__V1__TaskStatus **
node_statuses(struct simnode *nd, size_t *n, Cohort__V1__TaskStatus **buf)
{
	Cohort__V1__TaskStatus *ts, **ptrs;
	struct simtask *t;
	size_t i = 0;

	*n = 0;
	*buf = NULL;
	if (nd->ntasks == 0)
		return NULL;
	ts = calloc(nd->ntasks, sizeof(*ts));
	ptrs = calloc(nd->ntasks, sizeof(*ptrs));
	if (ts == NULL || ptrs == NULL) {
		free(ts);
		free(ptrs);
		return NULL;
	}
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		cohort__v1__task_status__init(&ts[i]);
		ts[i].job_id = t->job_id;
		ts[i].restart = t->restart;
		ts[i].rank = t->rank;
		ts[i].running = t->running;
		ts[i].has_wait_status = !t->running;
		ts[i].wait_status = t->wait_status;
		ptrs[i] = &ts[i];
		i++;
	}
	*n = i;
	*buf = ts;
	return ptrs;
}

static void
node_send_hello(struct simnode *nd)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__Hello h = COHORT__V1__HELLO__INIT;

	h.major = WIRE_MAJOR;
	h.minor = WIRE_MINOR;
	h.software = SIM_PROG " " PACKAGE_VERSION;
	env.id = ++nd->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	node_send(nd, &env);
	nd->state = NS_HELLO;
}

static void
node_send_register(struct simnode *nd)
{
	struct sim *s = nd->sim;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__RegisterRequest rr = COHORT__V1__REGISTER_REQUEST__INIT;
	Cohort__V1__NodeHealth nh = COHORT__V1__NODE_HEALTH__INIT;
	Cohort__V1__Inventory inv;
	Cohort__V1__TaskStatus *buf;
	struct cerr err;

	/* Built on demand: a whole inventory per node would cost ~20 KiB
	 * each; UUIDs derive from the name, so it is the same every time. */
	if (inventory_simulated(&s->gpus, nd->name, &sim_inv, &err) == -1) {
		log_warnx("%s: inventory: %s", nd->name, err.text);
		node_reset(nd, "no inventory");
		return;
	}
	if (wire_inventory_to_pb(&sim_inv, &inv) == -1) {
		node_reset(nd, "out of memory");
		return;
	}
	nh.health = COHORT__V1__HEALTH__HEALTH_OK;
	nh.has_checked_ms = true;
	nh.checked_ms = clock_now_ms();
	rr.name = nd->name;
	rr.address = (char *)s->address;
	rr.inventory = &inv;
	rr.health = &nh;
	rr.has_spare = true;
	rr.spare = false;
	rr.tasks = node_statuses(nd, &rr.n_tasks, &buf);
	env.id = ++nd->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_REGISTER;
	env.register_ = &rr;
	node_send(nd, &env);
	free(rr.tasks);
	free(buf);
	wire_inventory_pb_release(&inv);
	nd->state = NS_REGISTER;
}

static void
node_arm_heartbeat(struct simnode *nd, bool first)
{
	struct sim *s = nd->sim;
	uint64_t ms = nd->hb_ms;
	struct timeval tv;

	/* The first beat at a random point of the interval, then the
	 * interval less up to 5%: phases stay spread, never late. */
	if (first)
		ms = (uint64_t)rand_r(&s->seed) % (ms + 1);
	else
		ms -= (uint64_t)rand_r(&s->seed) % (ms / 20 + 1);
	ms_tv(ms, &tv);
	evtimer_add(nd->timer, &tv);
}

static void
node_send_heartbeat(struct simnode *nd)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__Heartbeat hb = COHORT__V1__HEARTBEAT__INIT;
	Cohort__V1__TaskStatus *buf;

	if (nd->state != NS_READY || nd->bev == NULL)
		return;
	/* Ended tasks ride along until acknowledged. */
	hb.tasks = node_statuses(nd, &hb.n_tasks, &buf);
	env.id = ++nd->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	node_send(nd, &env);
	free(hb.tasks);
	free(buf);
}

static void
node_send_exit(struct simnode *nd, const struct simtask *t)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__TaskExit te = COHORT__V1__TASK_EXIT__INIT;

	if (nd->state != NS_READY)
		return;		/* the next Register carries it */
	te.job_id = t->job_id;
	te.restart = t->restart;
	te.rank = t->rank;
	te.wait_status = t->wait_status;
	env.id = ++nd->next_id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_TASK_EXIT;
	env.task_exit = &te;
	node_send(nd, &env);
	nd->sim->exits++;
}

static void
task_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simtask *t = arg;
	struct sim *s = t->node->sim;

	event_free(t->ev);
	t->ev = NULL;
	t->running = false;
	if (s->fail_rate > 0 &&
	    (double)rand_r(&s->seed) / ((double)RAND_MAX + 1) < s->fail_rate)
		t->wait_status = 1 << 8;	/* exit 1 */
	node_send_exit(t->node, t);
}

static struct simtask *
node_find_start(struct simnode *nd, uint64_t job_id, uint32_t restart)
{
	struct simtask *t;

	TAILQ_FOREACH(t, &nd->tasks, entry)
		if (t->job_id == job_id && t->restart == restart)
			return t;
	return NULL;
}

/* How long this job's tasks run, and how they end: SIM_SECONDS and
 * SIM_EXIT in the job's environment (`cohort submit --env`; the CLI
 * keeps COHORT_* for itself, but a COHORT_ prefix is accepted too), else
 * the defaults. */
static void
launch_params(struct sim *s, const Cohort__V1__JobSpec *spec,
    uint64_t *ms, int32_t *status)
{
	size_t i;
	char *end;
	double d;
	long v;

	*ms = s->task_ms;
	*status = 0;
	for (i = 0; i < spec->n_env; i++) {
		const char *e = spec->env[i];

		if (strncmp(e, "COHORT_", 7) == 0)
			e += 7;
		if (strncmp(e, "SIM_SECONDS=", 12) == 0) {
			errno = 0;
			d = strtod(e + 12, &end);
			if (errno == 0 && end != e + 12 && *end == '\0' &&
			    d >= 0 && d <= 366.0 * 86400)
				*ms = (uint64_t)llround(d * 1000);
		} else if (strncmp(e, "SIM_EXIT=", 9) == 0) {
			v = strtol(e + 9, &end, 10);
			if (end != e + 9 && *end == '\0' && v >= 0 &&
			    v <= 255)
				*status = (int32_t)(v << 8);
		}
	}
}

static void
node_on_launch(struct simnode *nd, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__LaunchRequest *lr = req->launch;
	struct sim *s = nd->sim;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__LaunchReply rep = COHORT__V1__LAUNCH_REPLY__INIT;
	unsigned tpn, r;
	uint64_t ms;
	int32_t status;
	struct timeval tv;

	if (lr->n_nodelist == 0 || lr->node_rank >= lr->n_nodelist ||
	    lr->spec == NULL) {
		node_send_error(nd, req->id, ERR_INVALID,
		    "launch: inconsistent placement");
		return;
	}
	tpn = lr->spec->has_tasks_per_node && lr->spec->tasks_per_node > 0 ?
	    lr->spec->tasks_per_node : 1;
	/* Idempotent on (job, restart). */
	if (node_find_start(nd, lr->job_id, lr->restart) == NULL) {
		if (tpn > SIM_MAX_TASKS - nd->ntasks) {
			node_send_error(nd, req->id, ERR_UNAVAILABLE,
			    "simulated node: too many tasks");
			return;
		}
		launch_params(s, lr->spec, &ms, &status);
		ms_tv(ms, &tv);
		for (r = 0; r < tpn; r++) {
			struct simtask *t = calloc(1, sizeof(*t));

			if (t == NULL || (t->ev = evtimer_new(s->base,
			    task_done_cb, t)) == NULL) {
				free(t);
				node_send_error(nd, req->id, ERR_INTERNAL,
				    "out of memory");
				return;
			}
			t->node = nd;
			t->job_id = lr->job_id;
			t->restart = lr->restart;
			t->rank = lr->node_rank * tpn + r;
			t->running = true;
			t->wait_status = status;
			TAILQ_INSERT_TAIL(&nd->tasks, t, entry);
			nd->ntasks++;
			evtimer_add(t->ev, &tv);
		}
		s->launches++;
	}
	rep.job_id = lr->job_id;
	rep.restart = lr->restart;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_LAUNCH_REPLY;
	env.launch_reply = &rep;
	node_send(nd, &env);
}

static void
node_on_stop(struct simnode *nd, const Cohort__V1__Envelope *req)
{
	const Cohort__V1__StopRequest *sr = req->stop;
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__StopReply rep = COHORT__V1__STOP_REPLY__INIT;
	struct simtask *t;

	nd->sim->stops++;
	rep.job_id = sr->job_id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_STOP_REPLY;
	env.stop_reply = &rep;
	node_send(nd, &env);
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (t->job_id != sr->job_id || t->restart != sr->restart ||
		    !t->running)
			continue;
		event_free(t->ev);
		t->ev = NULL;
		t->running = false;
		t->wait_status = SIGTERM;	/* killed by SIGTERM */
		node_send_exit(nd, t);
	}
}

static void
node_on_signal(struct simnode *nd, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__SignalReply rep = COHORT__V1__SIGNAL_REPLY__INIT;

	if (req->signal->signal == 0 || req->signal->signal >= (uint32_t)NSIG) {
		node_send_error(nd, req->id, ERR_INVALID,
		    "signal: no such signal");
		return;
	}
	nd->sim->signals++;
	rep.job_id = req->signal->job_id;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_SIGNAL_REPLY;
	env.signal_reply = &rep;
	node_send(nd, &env);
}

static void
node_on_read_log(struct simnode *nd, const Cohort__V1__Envelope *req)
{
	Cohort__V1__Envelope env = COHORT__V1__ENVELOPE__INIT;
	Cohort__V1__ReadLogReply rep = COHORT__V1__READ_LOG_REPLY__INIT;

	nd->sim->readlogs++;
	rep.data.data = NULL;
	rep.data.len = 0;
	env.id = req->id;
	env.body_case = COHORT__V1__ENVELOPE__BODY_READ_LOG_REPLY;
	env.read_log_reply = &rep;
	node_send(nd, &env);
}

static void
node_on_ack(struct simnode *nd, const Cohort__V1__TaskExitAck *a)
{
	struct simtask *t;

	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (t->job_id == a->job_id && t->restart == a->restart &&
		    t->rank == a->rank && !t->running) {
			task_free(t);
			nd->sim->acks++;
			return;
		}
	}
}

static void
sim_say_all_ready(struct sim *s)
{
	if (s->all_ready_said || s->ready < s->n)
		return;
	s->all_ready_said = true;
	printf("ready %u nodes registered in %.3f s\n", s->n,
	    (double)(mono_ms() - s->t0_ms) / 1000);
	fflush(stdout);
}

static void
node_on_message(struct simnode *nd, const Cohort__V1__Envelope *env)
{
	struct sim *s = nd->sim;

	switch (env->body_case) {
	case COHORT__V1__ENVELOPE__BODY_HELLO_REPLY:
		if (nd->state == NS_HELLO)
			node_send_register(nd);
		return;
	case COHORT__V1__ENVELOPE__BODY_REGISTER_REPLY:
		if (nd->state != NS_REGISTER)
			return;
		nd->hb_ms = s->hb_override_ms != 0 ?
		    (unsigned)s->hb_override_ms :
		    env->register_reply->heartbeat_ms;
		if (nd->hb_ms < 100)
			nd->hb_ms = 2000;
		node_uncount(nd);
		nd->state = NS_READY;
		nd->attempts = 0;
		nd->ever_ready = true;
		s->ready++;
		s->registers++;
		evtimer_del(nd->timer);
		node_arm_heartbeat(nd, true);
		sim_say_all_ready(s);
		return;
	case COHORT__V1__ENVELOPE__BODY_ERROR:
		sim_log(s, "%s: controller: %s", nd->name, env->error->text);
		if (nd->state != NS_READY) {
			s->refusals++;
			node_reset(nd, "refused");
		}
		return;
	case COHORT__V1__ENVELOPE__BODY_LAUNCH:
		node_on_launch(nd, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_STOP:
		node_on_stop(nd, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_SIGNAL:
		node_on_signal(nd, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_READ_LOG:
		node_on_read_log(nd, env);
		return;
	case COHORT__V1__ENVELOPE__BODY_TASK_EXIT_ACK:
		node_on_ack(nd, env->task_exit_ack);
		return;
	default:
		sim_log(s, "%s: unexpected '%s' from the controller",
		    nd->name, wire_body_name(env->body_case));
		node_send_error(nd, env->id, ERR_PROTOCOL,
		    "unexpected message");
	}
}

static void
node_read_cb(struct bufferevent *bev, void *arg)
{
	struct simnode *nd = arg;
	Cohort__V1__Envelope *env;

	while (nd->bev == bev) {
		switch (frame_read(bufferevent_get_input(bev), SIM_MAX_FRAME,
		    &env)) {
		case FRAME_NEED:
			if (nd->bev == bev && evbuffer_get_length(
			    bufferevent_get_output(bev)) > SIM_MAX_QUEUED)
				node_reset(nd, "controller does not read");
			return;
		case FRAME_OK:
			node_on_message(nd, env);
			frame_free(env);
			break;
		case FRAME_TOO_LARGE:
			node_reset(nd, "oversized frame from the controller");
			return;
		case FRAME_BAD:
			node_reset(nd, "undecodable frame from the controller");
			return;
		}
	}
}

static void
node_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct simnode *nd = arg;
	char buf[256];

	if (what & BEV_EVENT_CONNECTED) {
		node_send_hello(nd);
		return;
	}
	/* A server of another role says so, not "verify failed". */
	if (tls_server_verify_error(bufferevent_openssl_get_ssl(bev),
	    nd->sim->host, buf, sizeof(buf)) == NULL)
		tls_bufferevent_error(bev, what, buf, sizeof(buf));
	ERR_clear_error();
	node_reset(nd, buf);
}

static void
node_connect(struct simnode *nd)
{
	struct sim *s = nd->sim;
	struct timeval tv;
	SSL *ssl;

	if (s->stopping || nd->state == NS_CRASHED)
		return;
	/* Bounded handshakes in flight: the controller's accept backlog
	 * and both CPUs are finite. */
	if (s->connecting >= s->max_connecting) {
		ms_tv(20 + (uint64_t)rand_r(&s->seed) % 80, &tv);
		evtimer_add(nd->timer, &tv);
		return;
	}
	s->connects++;
	if ((ssl = SSL_new(s->ctx)) == NULL ||
	    SSL_use_certificate(ssl, nd->cert) != 1 ||
	    SSL_use_PrivateKey(ssl, nd->key) != 1 ||
	    tls_client_expect_host(ssl, s->host) == -1) {
		char ebuf[256], why[300];

		SSL_free(ssl);
		snprintf(why, sizeof(why), "cannot set up TLS: %s",
		    tls_error_string(ebuf, sizeof(ebuf)));
		node_reset(nd, why);
		return;
	}
	nd->bev = bufferevent_openssl_socket_new(s->base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (nd->bev == NULL) {
		node_reset(nd, "cannot set up TLS");
		return;
	}
	nd->counted = true;
	s->connecting++;
	nd->state = NS_CONNECTING;
	bufferevent_setcb(nd->bev, node_read_cb, NULL, node_event_cb, nd);
	bufferevent_enable(nd->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(nd->bev, (struct sockaddr *)&s->addr,
	    (int)s->addrlen) == -1)
		node_reset(nd, "connect failed");
}

static void
node_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simnode *nd = arg;

	switch (nd->state) {
	case NS_IDLE:
		node_connect(nd);
		break;
	case NS_READY:
		node_send_heartbeat(nd);
		node_arm_heartbeat(nd, false);
		break;
	default:
		break;
	}
}

/* ---- failure injection ------------------------------------------------- */

static void
node_crash(struct simnode *nd)
{
	struct sim *s = nd->sim;
	struct simtask *t;
	char jobs[256];
	size_t len = 0;
	uint64_t last = 0;

	jobs[0] = '\0';
	TAILQ_FOREACH(t, &nd->tasks, entry) {
		if (!t->running || t->job_id == last)
			continue;
		last = t->job_id;
		if (len < sizeof(jobs) - 24)
			len += (size_t)snprintf(jobs + len, sizeof(jobs) - len,
			    "%s%" PRIu64, len > 0 ? "," : "", t->job_id);
	}
	node_drop_bev(nd);
	evtimer_del(nd->timer);
	while ((t = TAILQ_FIRST(&nd->tasks)) != NULL)
		task_free(t);
	nd->state = NS_CRASHED;
	s->crashed++;
	s->crashes++;
	printf("crash %s time_ms %" PRId64 " jobs %s\n", nd->name, clock_now_ms(),
	    len > 0 ? jobs : "-");
	fflush(stdout);
}

/* A ready node, preferring one with a running task, from a random start. */
static void
sim_crash_one(struct sim *s)
{
	unsigned start = (unsigned)rand_r(&s->seed) % s->n, i;
	struct simnode *any = NULL, *nd;
	struct simtask *t;

	for (i = 0; i < s->n; i++) {
		nd = &s->nodes[(start + i) % s->n];
		if (nd->state != NS_READY)
			continue;
		if (any == NULL)
			any = nd;
		TAILQ_FOREACH(t, &nd->tasks, entry)
			if (t->running) {
				node_crash(nd);
				return;
			}
	}
	if (any != NULL)
		node_crash(any);
	else
		log_warnx("SIGUSR1: no ready node to crash");
}

static void
sim_revive_all(struct sim *s)
{
	struct timeval tv;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		struct simnode *nd = &s->nodes[i];

		if (nd->state != NS_CRASHED)
			continue;
		nd->state = NS_IDLE;
		nd->attempts = 0;
		s->crashed--;
		printf("revive %s time_ms %" PRId64 "\n", nd->name, clock_now_ms());
		ms_tv((uint64_t)rand_r(&s->seed) % 500, &tv);
		evtimer_add(nd->timer, &tv);
	}
	fflush(stdout);
}

/* ---- the process --------------------------------------------------------- */

static long
self_rss_kib(void)
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
	long rss = self_rss_kib();
	unsigned i, running = 0;
	struct simtask *t;

	for (i = 0; i < s->n; i++)
		TAILQ_FOREACH(t, &s->nodes[i].tasks, entry)
			running += t->running;
	printf("stats t=%.1fs ready=%u/%u connecting=%u crashed=%u "
	    "running_tasks=%u connects=%" PRIu64 " resets=%" PRIu64
	    " launches=%" PRIu64 " exits=%" PRIu64 " acks=%" PRIu64
	    " stops=%" PRIu64 " rss_kib=%ld (%.1f KiB/node)\n",
	    (double)(mono_ms() - s->t0_ms) / 1000, s->ready, s->n,
	    s->connecting, s->crashed, running, s->connects, s->resets,
	    s->launches, s->exits, s->acks, s->stops, rss,
	    (double)rss / s->n);
	fflush(stdout);
}

static void
stats_cb(evutil_socket_t fd, short what, void *arg)
{
	sim_stats(arg);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
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
		s->stopping = true;
		event_base_loopbreak(s->base);
	}
}

/* Start the nodes' first connections at --rate a second. */
static void
first_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sim *s = arg;
	unsigned per = s->rate / 100 > 0 ? s->rate / 100 : 1;
	struct timeval tv = { 0, 10000 };
	unsigned i;

	for (i = 0; i < per && s->next_first < s->n; i++)
		node_connect(&s->nodes[s->next_first++]);
	if (s->next_first < s->n)
		evtimer_add(s->first_ev, &tv);
}

static void
raise_nofile(unsigned want)
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

/* Slurm tree topology for the nodes: leaves of K nodes, spines of S
 * leaves, a core above when there are several spines. */
static int
write_topology(const char *path, const char *prefix, unsigned first,
    unsigned n, unsigned width, unsigned per_leaf, unsigned per_spine)
{
	unsigned leaves = (n + per_leaf - 1) / per_leaf;
	unsigned spines = (leaves + per_spine - 1) / per_spine;
	unsigned l, sp, a, b;
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warn("%s", tmp);
		return -1;
	}
	fprintf(f, "# Written by %s: %u nodes, %u per leaf, %u leaves per "
	    "spine.\n", SIM_PROG, n, per_leaf, per_spine);
	for (l = 0; l < leaves; l++) {
		a = first + l * per_leaf;
		b = a + per_leaf - 1;
		if (b > first + n - 1)
			b = first + n - 1;
		if (a == b)
			fprintf(f, "SwitchName=leaf%u Nodes=%s%0*u\n", l,
			    prefix, (int)width, a);
		else
			fprintf(f, "SwitchName=leaf%u Nodes=%s[%0*u-%0*u]\n",
			    l, prefix, (int)width, a, (int)width, b);
	}
	for (sp = 0; sp < spines; sp++) {
		a = sp * per_spine;
		b = a + per_spine - 1;
		if (b > leaves - 1)
			b = leaves - 1;
		if (a == b)
			fprintf(f, "SwitchName=spine%u Switches=leaf%u\n", sp,
			    a);
		else
			fprintf(f, "SwitchName=spine%u Switches=leaf[%u-%u]\n",
			    sp, a, b);
	}
	if (spines > 1)
		fprintf(f, "SwitchName=core0 Switches=spine[0-%u]\n",
		    spines - 1);
	if (fclose(f) != 0 || rename(tmp, path) == -1) {
		log_warn("%s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

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
resolve(struct sim *s)
{
	struct addrinfo hints, *res;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", s->port);
	if ((rc = getaddrinfo(s->host, port, &hints, &res)) != 0) {
		log_warnx("%s: %s", s->host, gai_strerror(rc));
		return -1;
	}
	memcpy(&s->addr, res->ai_addr, res->ai_addrlen);
	s->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static SSL_CTX *
client_ctx(const char *ca)
{
	SSL_CTX *ctx;
	char ebuf[256];

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		goto fail;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
		goto fail;
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
	/* Idle connections give their 2 x 16 KiB record buffers back. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	    SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		goto fail;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* Only the controller's certificate, not any the CA signed. */
	if (tls_ctx_expect_controller(ctx) == -1)
		goto fail;
	return ctx;
fail:
	log_warnx("TLS context: %s", tls_error_string(ebuf, sizeof(ebuf)));
	SSL_CTX_free(ctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	struct sim s;
	struct minter m;
	const char *server = NULL, *ca = NULL, *ca_key = NULL;
	const char *prefix = "node", *topo = NULL;
	uint64_t nodes = 0, first = 1, width = 0, gpus = 8, per_leaf = 32,
	    per_spine = 16, v;
	bool shared_key = false, verbose = false;
	EVP_PKEY *shared = NULL;
	struct timeval tv;
	struct cerr err;
	int64_t t;
	unsigned i, last;
	int ch, rc = 1;
	static const int sigs[5] = { SIGINT, SIGTERM, SIGUSR1, SIGUSR2,
	    SIGHUP };

	memset(&s, 0, sizeof(s));
	s.task_ms = 5000;
	s.rate = 2000;
	s.max_connecting = 128;
	s.stats_s = 10;
	s.address = "127.0.0.1";
	inventory_sim_defaults(&s.gpus);
	while ((ch = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (ch) {
		case O_SERVER:
			server = optarg;
			break;
		case O_CA:
			ca = optarg;
			break;
		case O_CA_KEY:
			ca_key = optarg;
			break;
		case O_NODES:
			if (opt_uint("nodes", optarg, 1, SIM_MAX_NODES,
			    &nodes) != 0)
				return 2;
			break;
		case O_PREFIX:
			prefix = optarg;
			break;
		case O_FIRST:
			if (opt_uint("first", optarg, 0, 100000000, &first))
				return 2;
			break;
		case O_WIDTH:
			if (opt_uint("width", optarg, 1, 12, &width))
				return 2;
			break;
		case O_GPUS:
			if (opt_uint("gpus", optarg, 1, INV_MAX_GPUS, &gpus))
				return 2;
			break;
		case O_HB:
			if (conf_parse_duration_ms(optarg, 100,
			    3600 * 1000, &s.hb_override_ms, &err) == -1)
				return usage_error("--heartbeat: %s", err.text);
			break;
		case O_TASK: {
			char *end;
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    d < 0 || d > 366.0 * 86400)
				return usage_error("--task-seconds: not a "
				    "number of seconds: '%s'", optarg);
			s.task_ms = (uint64_t)llround(d * 1000);
			break;
		}
		case O_FAIL: {
			char *end;

			errno = 0;
			s.fail_rate = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(s.fail_rate >= 0 && s.fail_rate <= 1))
				return usage_error("--fail-rate: want 0..1, "
				    "not '%s'", optarg);
			break;
		}
		case O_RATE:
			if (opt_uint("rate", optarg, 1, 1000000, &v))
				return 2;
			s.rate = (unsigned)v;
			break;
		case O_MAXCONN:
			if (opt_uint("max-connecting", optarg, 1, 100000, &v))
				return 2;
			s.max_connecting = (unsigned)v;
			break;
		case O_SHARED:
			shared_key = true;
			break;
		case O_ADDR:
			s.address = optarg;
			break;
		case O_STATS:
			if (opt_uint("stats", optarg, 0, 86400, &v))
				return 2;
			s.stats_s = (unsigned)v;
			break;
		case O_TOPO:
			topo = optarg;
			break;
		case O_PER_LEAF:
			if (opt_uint("nodes-per-leaf", optarg, 1, 100000,
			    &per_leaf))
				return 2;
			break;
		case O_PER_SPINE:
			if (opt_uint("leaves-per-spine", optarg, 1, 100000,
			    &per_spine))
				return 2;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
		case O_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("unknown option");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (nodes == 0)
		return usage_error("missing --nodes N");
	if (!valid_prefix(prefix))
		return usage_error("--prefix: want [A-Za-z0-9][A-Za-z0-9._-]*, "
		    "at most 40 characters, not '%s'", prefix);
	if (server == NULL && topo == NULL)
		return usage_error("missing --server HOST:PORT");
	if (server != NULL && (ca == NULL || ca_key == NULL))
		return usage_error("--server needs --ca and --ca-key");
	log_init(SIM_PROG, true, verbose);
	s.n = (unsigned)nodes;
	last = (unsigned)(first + nodes - 1);
	if (width == 0) {
		char buf[24];

		width = (uint64_t)snprintf(buf, sizeof(buf), "%u", last);
		if (width < 2)
			width = 2;
	}
	if (topo != NULL && write_topology(topo, prefix, (unsigned)first,
	    s.n, (unsigned)width, (unsigned)per_leaf,
	    (unsigned)per_spine) == -1)
		return 1;
	if (server == NULL)
		return 0;
	if (conf_parse_hostport(server, s.host, sizeof(s.host), &s.port,
	    false, &err) == -1)
		return usage_error("--server: %s", err.text);
	s.gpus.count = (unsigned)gpus;
	s.gpus.nics = (unsigned)gpus;
	if (gpus == 8)
		snprintf(s.gpus.nvlink, sizeof(s.gpus.nvlink), "quads");
	if (gpus < 2)
		s.gpus.numa_nodes = 1;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile(s.n + 256);
	s.seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	if (resolve(&s) == -1 || (s.ctx = client_ctx(ca)) == NULL)
		return 1;
	if (minter_init(&m, ca, ca_key) == -1) {
		minter_free(&m);
		SSL_CTX_free(s.ctx);
		return 1;
	}
	if ((s.nodes = calloc(s.n, sizeof(*s.nodes))) == NULL ||
	    (s.base = event_base_new()) == NULL) {
		log_warnx("out of memory");
		goto out;
	}

	/* Keys and certificates, all before the first connection. */
	t = mono_ms();
	if (shared_key && (shared = mint_key(&m)) == NULL) {
		log_warnx("cannot make a key");
		goto out;
	}
	for (i = 0; i < s.n; i++) {
		struct simnode *nd = &s.nodes[i];

		nd->sim = &s;
		TAILQ_INIT(&nd->tasks);
		snprintf(nd->name, sizeof(nd->name), "%s%0*u", prefix,
		    (int)width, (unsigned)first + i);
		if (shared != NULL) {
			EVP_PKEY_up_ref(shared);
			nd->key = shared;
		} else
			nd->key = mint_key(&m);
		if (nd->key == NULL ||
		    (nd->cert = mint(&m, nd->key, nd->name)) == NULL ||
		    (nd->timer = evtimer_new(s.base, node_timer_cb,
		    nd)) == NULL) {
			char ebuf[256];

			log_warnx("%s: cannot make its key and certificate: "
			    "%s", nd->name, tls_error_string(ebuf,
			    sizeof(ebuf)));
			goto out;
		}
	}
	printf("minted %u certificates (%s) in %.3f s\n", s.n,
	    shared != NULL ? "one shared key" : "a key per node",
	    (double)(mono_ms() - t) / 1000);
	fflush(stdout);

	for (i = 0; i < 5; i++) {
		if ((s.sig_ev[i] = evsignal_new(s.base, sigs[i], signal_cb,
		    &s)) == NULL || event_add(s.sig_ev[i], NULL) == -1) {
			log_warnx("cannot catch signals");
			goto out;
		}
	}
	if (s.stats_s > 0) {
		s.stats_ev = event_new(s.base, -1, EV_PERSIST, stats_cb, &s);
		if (s.stats_ev == NULL)
			goto out;
		ms_tv((uint64_t)s.stats_s * 1000, &tv);
		event_add(s.stats_ev, &tv);
	}
	if ((s.first_ev = evtimer_new(s.base, first_cb, &s)) == NULL)
		goto out;
	s.t0_ms = mono_ms();
	log_info("%u nodes %s%0*u..%s%0*u against %s:%u", s.n, prefix,
	    (int)width, (unsigned)first, prefix, (int)width, last, s.host,
	    s.port);
	first_cb(-1, 0, &s);
	event_base_dispatch(s.base);
	sim_stats(&s);
	rc = 0;
out:
	if (s.nodes != NULL) {
		for (i = 0; i < s.n; i++) {
			struct simnode *nd = &s.nodes[i];
			struct simtask *tk;

			if (nd->bev != NULL)
				bufferevent_free(nd->bev);
			while ((tk = TAILQ_FIRST(&nd->tasks)) != NULL)
				task_free(tk);
			if (nd->timer != NULL)
				event_free(nd->timer);
			X509_free(nd->cert);
			EVP_PKEY_free(nd->key);
		}
		free(s.nodes);
	}
	EVP_PKEY_free(shared);
	for (i = 0; i < 5; i++)
		if (s.sig_ev[i] != NULL)
			event_free(s.sig_ev[i]);
	if (s.stats_ev != NULL)
		event_free(s.stats_ev);
	if (s.first_ev != NULL)
		event_free(s.first_ev);
	if (s.base != NULL)
		event_base_free(s.base);
	minter_free(&m);
	SSL_CTX_free(s.ctx);
	return rc;
}
