## Fuzz targets (tests/fuzz/): included from Makefile.am. Built here with
## tests/fuzz/driver.c (seeded mutations, no coverage feedback) so that
## make check runs them for a few seconds, under ASan/UBSan in the
## sanitizer build; tests/fuzz/libfuzzer.sh builds them from these same
## lines with clang's libFuzzer for real fuzzing runs. smoke.sh and
## link.sh take every tests/fuzz/fuzz_NAME.c: a new target needs its
## lines here and seeds in tests/fuzz/corpus/NAME/, or they fail.
check_PROGRAMS += tests/fuzz/fuzz_wire tests/fuzz/fuzz_text tests/fuzz/fuzz_node
check_PROGRAMS += tests/fuzz/fuzz_topo
TESTS += tests/fuzz/smoke.sh
# The libFuzzer build is the same whichever build runs it: the normal one
# only, so that CI builds it once.
if !SANITIZERS
TESTS += tests/fuzz/link.sh
endif
EXTRA_DIST += tests/fuzz/smoke.sh tests/fuzz/link.sh tests/fuzz/libfuzzer.sh \
	tests/fuzz/fuzz.h \
	tests/fuzz/corpus

tests_fuzz_fuzz_wire_SOURCES = tests/fuzz/fuzz_wire.c tests/fuzz/driver.c
tests_fuzz_fuzz_wire_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS)
tests_fuzz_fuzz_wire_LDADD = $(COHORT_LIBS)

tests_fuzz_fuzz_text_SOURCES = tests/fuzz/fuzz_text.c tests/fuzz/driver.c
tests_fuzz_fuzz_text_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS)
tests_fuzz_fuzz_text_LDADD = $(CLIENT_LIBS)

## The whole topology parser, then a scheduling pass on what it accepts.
tests_fuzz_fuzz_topo_SOURCES = tests/fuzz/fuzz_topo.c tests/fuzz/driver.c
tests_fuzz_fuzz_topo_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_topo_LDADD = $(SCHED_LIBS)

tests_fuzz_fuzz_node_SOURCES = tests/fuzz/fuzz_node.c tests/fuzz/driver.c
tests_fuzz_fuzz_node_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS)
tests_fuzz_fuzz_node_LDADD = $(AGENT_LIBS)

## cohortd.conf: the controller's whole configuration file.
check_PROGRAMS += tests/fuzz/fuzz_ctl
tests_fuzz_fuzz_ctl_SOURCES = tests/fuzz/fuzz_ctl.c tests/fuzz/driver.c
tests_fuzz_fuzz_ctl_CFLAGS = $(daemon_controller_libcontroller_a_CFLAGS)
tests_fuzz_fuzz_ctl_LDADD = $(CONTROLLER_LIBS)
