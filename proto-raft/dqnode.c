/* One dqlite node in its own process: dqnode ID ADDR DIR [LATENCY_MS].
 * dqlite runs the node's libuv loop (raft, the wire protocol server) in a
 * thread of its own; this main thread only waits for a signal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <dqlite.h>

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	dqlite_node *n;
	unsigned long long id;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: dqnode ID ADDR DIR [LATENCY_MS]\n");
		return 2;
	}
	/* libraft's libuv writes to peer sockets get EPIPE when a peer
	 * dies; without this, SIGPIPE kills the surviving nodes at the first
	 * election after a leader's death (seen, see REPLICATION.md). */
	signal(SIGPIPE, SIG_IGN);
	id = strtoull(argv[1], NULL, 10);
	if ((rc = dqlite_node_create(id, argv[2], argv[3], &n)) != 0) {
		fprintf(stderr, "dqlite_node_create: %d\n", rc);
		return 1;
	}
	if ((rc = dqlite_node_set_bind_address(n, argv[2])) != 0) {
		fprintf(stderr, "bind: %s\n", dqlite_node_errmsg(n));
		return 1;
	}
	if (argc > 4 && (rc = dqlite_node_set_network_latency_ms(n,
	    (unsigned)atoi(argv[4]))) != 0) {
		fprintf(stderr, "latency: %d\n", rc);
		return 1;
	}
	if ((rc = dqlite_node_start(n)) != 0) {
		fprintf(stderr, "start: %s\n", dqlite_node_errmsg(n));
		return 1;
	}
	fprintf(stderr, "dqnode %llu on %s (dqlite %d)\n", id, argv[2],
	    dqlite_version_number());
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop)
		pause();
	dqlite_node_stop(n);
	dqlite_node_destroy(n);
	return 0;
}
