## cohort-simnodes (tests/sim/): N simulated agents in one process, for
## scale tests (tests/bench/scale.sh, t300, t441); included from
## Makefile.am. A test program, so not installed, but built by `make`
## (noinst, not check_): the benchmark and tests run by hand after a
## plain build find it at the top of the build directory, and a change to
## the link's operations that breaks it breaks the ordinary build.
noinst_PROGRAMS += cohort-simnodes
cohort_simnodes_SOURCES = tests/sim/simnodes.c \
	tests/sim/sim.c tests/sim/sim.h \
	tests/sim/simnode.c tests/sim/simnode.h \
	tests/sim/simcert.c tests/sim/simcert.h \
	tests/sim/simtopo.c tests/sim/simtopo.h
cohort_simnodes_CFLAGS = $(daemon_agent_libagent_a_CFLAGS)
cohort_simnodes_LDADD = $(AGENT_LIBS) $(OPENSSL_LIBS) -lm
