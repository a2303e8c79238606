/* Driver of the dqlite prototype, a client of the wire protocol only.
 *   dqbench join A1 A2 A3          add nodes 2, 3 as voters (node 1 leads)
 *   dqbench load N A1 A2 A3        10,000 rows, one transaction per N rows
 *   dqbench rate K SECS C A1 A2 A3 K-row transactions for SECS seconds
 *                                  from C clients
 *   dqbench failover PIDS A1 A2 A3 1-row writes; SIGKILL the leader (PIDS:
 *                                  comma-separated, in address order); time
 *                                  to the first write accepted by a new one;
 *                                  check every acknowledged row is there
 *   dqbench count A1 A2 A3         rows per phase, via the leader */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto-raft/dqwire.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Leader discovery as go-dqlite does it: ask each known address who the
 * leader is, connect there, and only trust it if it names itself. */
static int
find_leader(char **addrs, int n, struct dq *c, int *idx, double give_up_s)
{
	double end = now_s() + give_up_s;
	char la[128];
	uint64_t lid;

	while (now_s() < end) {
		for (int i = 0; i < n; i++) {
			struct dq probe;
			if (dq_connect(&probe, addrs[i], 500) != 0)
				continue;
			if (dq_leader(&probe, &lid, la, sizeof(la)) != 0 ||
			    la[0] == '\0') {
				dq_close(&probe);
				continue;
			}
			if (strcmp(la, addrs[i]) == 0) {
				dq_close(&probe);
				if (dq_connect(c, la, 10000) != 0)
					continue;
			} else {
				dq_close(&probe);
				if (dq_connect(c, la, 10000) != 0)
					continue;
				char again[128];
				uint64_t id2;
				if (dq_leader(c, &id2, again, sizeof(again)) != 0
				    || strcmp(again, la) != 0) {
					dq_close(c);
					continue;
				}
			}
			for (int j = 0; j < n; j++)
				if (strcmp(addrs[j], la) == 0)
					*idx = j;
			if (dq_open(c, "cohort") != 0) {
				dq_close(c);
				continue;
			}
			return 0;
		}
		usleep(20000);
	}
	return -1;
}

static void
die(struct dq *c, const char *what)
{
	fprintf(stderr, "%s: code %llu: %s\n", what,
	    (unsigned long long)c->code, c->msg);
	exit(1);
}

static int
cmd_join(char **a, int n)
{
	struct dq c;
	int li;

	if (find_leader(a, n, &c, &li, 10) != 0) {
		fprintf(stderr, "no leader\n");
		return 1;
	}
	for (int i = 1; i < n; i++) {
		if (dq_add(&c, (uint64_t)i + 1, a[i]) != 0)
			die(&c, "add");
		if (dq_assign(&c, (uint64_t)i + 1, 0) != 0)
			die(&c, "assign");
	}
	printf("leader %s\n", a[li]);
	dq_cluster(&c);
	dq_close(&c);
	return 0;
}

static char sql[65536];

static void
build_insert(int phase, int first, int k)
{
	size_t o = (size_t)snprintf(sql, sizeof(sql),
	    "INSERT INTO t (phase, seq, pad) VALUES ");
	for (int i = 0; i < k; i++)
		o += (size_t)snprintf(sql + o, sizeof(sql) - o,
		    "%s(%d, %d, 'job-%d-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')",
		    i ? "," : "", phase, first + i, first + i);
}

static int
cmd_load(int per, char **a, int n)
{
	struct dq c;
	int li;
	double t0;
	uint64_t ch;

	if (find_leader(a, n, &c, &li, 10) != 0)
		return 1;
	if (dq_exec(&c, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY "
	    "KEY, phase INTEGER, seq INTEGER, pad TEXT)", NULL, NULL) != 0)
		die(&c, "create");
	t0 = now_s();
	for (int i = 0; i < 10000; i += per) {
		build_insert(1, i, per);
		if (dq_exec(&c, sql, NULL, &ch) != 0)
			die(&c, "insert");
	}
	double dt = now_s() - t0;
	printf("load: 10000 rows, %d per txn, leader %s: %.2f s, %.0f txn/s, "
	    "%.0f rows/s\n", per, a[li], dt, 10000.0 / per / dt, 10000 / dt);
	dq_close(&c);
	return 0;
}

static int cmd_rate1(int k, double secs, char **a, int n);

/* CLIENTS processes, each its own connection, as 16 submitters would;
 * the parent counts the rows they added through the leader. */
static int
cmd_rate(int k, double secs, int clients, char **a, int n)
{
	struct dq c;
	int li;
	int64_t before, after;
	double t0;

	if (clients <= 1)
		return cmd_rate1(k, secs, a, n);
	if (find_leader(a, n, &c, &li, 10) != 0)
		return 1;
	if (dq_query_int(&c, "SELECT count(*) FROM t WHERE phase=3",
	    &before) != 0)
		die(&c, "count");
	t0 = now_s();
	for (int i = 0; i < clients; i++)
		if (fork() == 0) {
			if (freopen("/dev/null", "w", stdout) == NULL)
				_exit(1);
			_exit(cmd_rate1(k, secs, a, n));
		}
	while (wait(NULL) > 0)
		;
	double dt = now_s() - t0;
	if (dq_query_int(&c, "SELECT count(*) FROM t WHERE phase=3",
	    &after) != 0)
		die(&c, "count");
	printf("rate: %d-row txns, %d clients, leader %s: %.0f commits/s, "
	    "%.0f rows/s\n", k, clients, a[li], (after - before) / k / dt,
	    (after - before) / dt);
	dq_close(&c);
	return 0;
}

static int
cmd_rate1(int k, double secs, char **a, int n)
{
	struct dq c;
	int li, seq = 0;
	unsigned long txns = 0, busy = 0;
	double t0, end;

	if (find_leader(a, n, &c, &li, 10) != 0)
		return 1;
	t0 = now_s();
	end = t0 + secs;
	while (now_s() < end) {
		build_insert(3, seq, k);
		/* dqlite takes one write transaction at a time per database:
		 * another connection's gets SQLITE_BUSY at once, and
		 * go-dqlite's answer is to retry. */
		int rc = dq_exec(&c, sql, NULL, NULL);
		if (rc == -2 && (c.code & 0xff) == 5) {
			busy++;
			continue;
		}
		if (rc != 0)
			die(&c, "insert");
		seq += k;
		txns++;
	}
	double dt = now_s() - t0;
	printf("rate: %d-row txns, 1 client, leader %s: %lu txns in %.2f s = "
	    "%.0f commits/s, %.0f rows/s, mean %.2f ms, %lu busy\n", k, a[li],
	    txns, dt, txns / dt, txns * k / dt, dt * 1000 / txns, busy);
	fprintf(stderr, "BUSY %lu\n", busy);
	dq_close(&c);
	return 0;
}

static int
cmd_count(char **a, int n)
{
	struct dq c;
	int li;
	int64_t v;
	char q[128];

	if (find_leader(a, n, &c, &li, 10) != 0)
		return 1;
	printf("leader %s\n", a[li]);
	for (int p = 1; p <= 3; p++) {
		snprintf(q, sizeof(q), "SELECT count(*) FROM t WHERE phase=%d",
		    p);
		if (dq_query_int(&c, q, &v) != 0)
			die(&c, "count");
		printf("  phase %d: %lld rows\n", p, (long long)v);
	}
	dq_cluster(&c);
	dq_close(&c);
	return 0;
}

/* Writes of one row each; SIGKILL the leader after 2 s of them. */
static int
cmd_failover(char *pidlist, char **a, int n)
{
	pid_t pids[8];
	int np = 0, li, seq = 0, killed = 0;
	struct dq c;
	static int acked[1 << 20];
	int nacked = 0, nfail = 0;
	double t0, tkill = 0, tnew = 0;
	char *s = strtok(pidlist, ",");

	while (s != NULL && np < 8) {
		pids[np++] = (pid_t)atoi(s);
		s = strtok(NULL, ",");
	}
	if (find_leader(a, n, &c, &li, 10) != 0)
		return 1;
	printf("failover: leader %s pid %d\n", a[li], (int)pids[li]);
	if (dq_exec(&c, "DELETE FROM t WHERE phase=2", NULL, NULL) != 0)
		die(&c, "delete");
	t0 = now_s();
	while (!killed || tnew == 0 || now_s() - tnew < 1) {
		if (!killed && now_s() - t0 > 2) {
			kill(pids[li], SIGKILL);
			tkill = now_s();
			killed = 1;
			printf("  SIGKILL leader %s after %d acks\n", a[li],
			    nacked);
			fprintf(stderr, "KILLED %d\n", li + 1);
			fflush(stdout);
		}
		build_insert(2, seq, 1);
		int rc = dq_exec(&c, sql, NULL, NULL);
		if (rc == 0) {
			acked[nacked++] = seq;
			if (killed && tnew == 0) {
				tnew = now_s();
				printf("  first write accepted by %s %.3f s "
				    "after the kill\n", a[li], tnew - tkill);
				printf("FAILOVER_S %.3f\n", tnew - tkill);
			}
		} else {
			nfail++;
			if (rc == -2 && nfail < 5)
				fprintf(stderr, "  seq %d: code %llu %s\n", seq,
				    (unsigned long long)c.code, c.msg);
			else if (nfail < 5)
				fprintf(stderr, "  seq %d: connection lost\n",
				    seq);
			dq_close(&c);
			if (find_leader(a, n, &c, &li, 30) != 0) {
				fprintf(stderr, "no new leader in 30 s\n");
				return 1;
			}
		}
		seq++;
	}
	printf("  %d attempts, %d acknowledged, %d failed\n", seq, nacked,
	    nfail);
	/* Every acknowledged row present exactly once. */
	int64_t total, missing = 0, dup;
	if (dq_query_int(&c, "SELECT count(*) FROM t WHERE phase=2",
	    &total) != 0)
		die(&c, "count");
	if (dq_query_int(&c, "SELECT count(*) - count(DISTINCT seq) FROM t "
	    "WHERE phase=2", &dup) != 0)
		die(&c, "dup");
	for (int i = 0; i < nacked; i += 400) {
		size_t o = (size_t)snprintf(sql, sizeof(sql),
		    "SELECT count(*) FROM t WHERE phase=2 AND seq IN (");
		int m = nacked - i < 400 ? nacked - i : 400;
		for (int j = 0; j < m; j++)
			o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s%d",
			    j ? "," : "", acked[i + j]);
		snprintf(sql + o, sizeof(sql) - o, ")");
		int64_t got;
		if (dq_query_int(&c, sql, &got) != 0)
			die(&c, "check");
		missing += m - got;
	}
	printf("  on new leader %s: %lld rows, %lld acknowledged missing, "
	    "%lld duplicates\n", a[li], (long long)total, (long long)missing,
	    (long long)dup);
	dq_cluster(&c);
	dq_close(&c);
	return missing == 0 && dup == 0 ? 0 : 1;
}

static int
cmd_who(char **a, int n)
{
	for (int i = 0; i < n; i++) {
		struct dq c;
		char la[128];
		uint64_t id;
		if (dq_connect(&c, a[i], 1000) != 0) {
			printf("  %s: down\n", a[i]);
			continue;
		}
		if (dq_leader(&c, &id, la, sizeof(la)) != 0)
			printf("  %s: error %s\n", a[i], c.msg);
		else
			printf("  %s: leader id=%llu %s\n", a[i],
			    (unsigned long long)id, la);
		dq_close(&c);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && strcmp(argv[1], "who") == 0)
		return cmd_who(argv + 2, argc - 2);
	if (argc >= 3 && strcmp(argv[1], "join") == 0)
		return cmd_join(argv + 2, argc - 2);
	if (argc >= 4 && strcmp(argv[1], "load") == 0)
		return cmd_load(atoi(argv[2]), argv + 3, argc - 3);
	if (argc >= 6 && strcmp(argv[1], "rate") == 0)
		return cmd_rate(atoi(argv[2]), atof(argv[3]), atoi(argv[4]),
		    argv + 5, argc - 5);
	if (argc >= 4 && strcmp(argv[1], "failover") == 0)
		return cmd_failover(argv[2], argv + 3, argc - 3);
	if (argc >= 3 && strcmp(argv[1], "count") == 0)
		return cmd_count(argv + 2, argc - 2);
	fprintf(stderr, "usage: see the comment at the top of dqbench.c\n");
	return 2;
}
