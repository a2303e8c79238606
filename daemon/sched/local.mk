## The scheduler core (daemon/sched/): included from Makefile.am.
## A pure library (libc only), so the controller, the Check suites and the
## benchmark all link the same archive. lib/hostlist.c lives here too: it
## is pure, and the topology parser needs it.
noinst_LIBRARIES += daemon/sched/libsched.a
daemon_sched_libsched_a_CFLAGS = $(AM_CFLAGS)
daemon_sched_libsched_a_SOURCES = \
	daemon/sched/sched.c daemon/sched/sched.h \
	daemon/sched/sched_int.h \
	daemon/sched/state.c \
	daemon/sched/place.c \
	daemon/sched/resv.c \
	daemon/sched/keep.c \
	daemon/sched/block.c \
	daemon/sched/squota.c \
	daemon/sched/preempt.c \
	daemon/sched/rsort.c \
	daemon/sched/topo.c daemon/sched/topo.h \
	daemon/sched/topo_block.c daemon/sched/topo_block.h \
	daemon/sched/topo_torus.c daemon/sched/topo_torus.h \
	daemon/sched/torus.c \
	daemon/sched/htab.c daemon/sched/htab.h \
	lib/fnv.h \
	lib/hostlist.c lib/hostlist.h
SCHED_LIBS = daemon/sched/libsched.a

SCHED_UNIT_TESTS = tests/unit/check_sched tests/unit/check_topo \
	tests/unit/check_hostlist tests/unit/check_sched_queue \
	tests/unit/check_preempt tests/unit/check_sched_nodes \
	tests/unit/check_sched_block tests/unit/check_torus
## check_PROGRAMS and TESTS already name $(UNIT_TESTS).
UNIT_TESTS += $(SCHED_UNIT_TESTS)
check_PROGRAMS += tests/bench/bench_sched tests/bench/replay
TESTS += tests/bench/sched-smoke.sh tests/bench/replay-smoke.sh

SCHED_CHECK_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_sched_SOURCES = tests/unit/check_sched.c \
	tests/unit/check_sched_sim.c tests/unit/check_sched.h \
	tests/unit/check_sched_lib.c
tests_unit_check_sched_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_sched_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_sched_queue_SOURCES = tests/unit/check_sched_queue.c \
	tests/unit/check_sched_lib.c tests/unit/check_sched.h
tests_unit_check_sched_queue_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_sched_queue_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_preempt_SOURCES = tests/unit/check_preempt.c \
	tests/unit/check_sched_lib.c tests/unit/check_sched.h
tests_unit_check_preempt_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_preempt_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_sched_nodes_SOURCES = tests/unit/check_sched_nodes.c \
	tests/unit/check_sched_lib.c tests/unit/check_sched.h
tests_unit_check_sched_nodes_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_sched_nodes_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_sched_block_SOURCES = tests/unit/check_sched_block.c \
	tests/unit/check_sched_lib.c tests/unit/check_sched.h
tests_unit_check_sched_block_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_sched_block_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_torus_SOURCES = tests/unit/check_torus.c \
	tests/unit/check_sched_lib.c tests/unit/check_sched.h
tests_unit_check_torus_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_torus_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_topo_SOURCES = tests/unit/check_topo.c
tests_unit_check_topo_CFLAGS = $(SCHED_CHECK_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_check_topo_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_hostlist_SOURCES = tests/unit/check_hostlist.c
tests_unit_check_hostlist_CFLAGS = $(SCHED_CHECK_CFLAGS)
tests_unit_check_hostlist_LDADD = $(SCHED_LIBS) $(CHECK_LIBS) -lm

## Not a timed test: make check runs it in --smoke mode only.
tests_bench_bench_sched_SOURCES = tests/bench/bench_sched.c
tests_bench_bench_sched_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_sched_LDADD = $(SCHED_LIBS) -lm

## The trace replay: make check runs a few hundred jobs of the trace.
tests_bench_replay_SOURCES = tests/bench/replay.c tests/bench/replay_big.c \
	tests/bench/replay_tenants.c tests/bench/replay.h
tests_bench_replay_CFLAGS = $(AM_CFLAGS)
tests_bench_replay_LDADD = $(SCHED_LIBS) -lm

EXTRA_DIST += etc/topology.conf tests/bench/sched-smoke.sh \
	tests/bench/replay-smoke.sh
