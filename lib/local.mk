## lib/: shared by every program; included from Makefile.am.
noinst_LIBRARIES += lib/libcohort.a
lib_libcohort_a_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS) $(INIH_CFLAGS)
lib_libcohort_a_SOURCES = \
	lib/err.c lib/err.h \
	lib/fnv.h lib/siphash.c lib/siphash.h \
	lib/log.c lib/log.h \
	lib/duration.c lib/duration.h \
	lib/job.c lib/job.h lib/container.c lib/container.h \
	lib/frame.c lib/frame.h lib/frame_ev.c \
	lib/tls.c lib/tls.h lib/tls_words.c lib/tls_words.h \
	lib/wire.c lib/wire.h \
	lib/conf.c lib/conf.h lib/inventory.c lib/inventory.h \
	lib/daemon.c lib/daemon.h lib/clock.c lib/clock.h \
	lib/ratelim.c lib/ratelim.h \
	lib/text.c lib/text.h lib/wirecheck.c lib/wirecheck.h \
	lib/slot.c lib/slot.h \
	lib/array.c lib/array.h lib/depend.c lib/depend.h \
	lib/hostlist.c lib/hostlist.h lib/outpat.c lib/outpat.h \
	lib/constraint.c lib/constraint.h \
	lib/features.c lib/features.h \
	lib/histogram.c lib/histogram.h \
	lib/addrlist.c lib/addrlist.h \
	lib/admit.c lib/admit.h
nodist_lib_libcohort_a_SOURCES = proto/cohort.pb-c.c proto/cohort.pb-c.h
COHORT_LIBS = lib/libcohort.a $(DEP_LIBS) $(INIH_LIBS)

## Its Check suites.
LIB_UNIT_TESTS = \
	tests/unit/check_duration \
	tests/unit/check_job \
	tests/unit/check_frame \
	tests/unit/check_tls \
	tests/unit/check_text \
	tests/unit/check_array \
	tests/unit/check_depend \
	tests/unit/check_outpat \
	tests/unit/check_histogram \
	tests/unit/check_constraint \
	tests/unit/check_features \
	tests/unit/check_addrlist
# UNIT_TESTS feeds both check_PROGRAMS and TESTS in Makefile.am.
UNIT_TESTS += $(LIB_UNIT_TESTS)
tests_unit_check_duration_SOURCES = tests/unit/check_duration.c
tests_unit_check_duration_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_duration_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_constraint_SOURCES = tests/unit/check_constraint.c
tests_unit_check_constraint_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_constraint_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_addrlist_SOURCES = tests/unit/check_addrlist.c
tests_unit_check_addrlist_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_addrlist_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_features_SOURCES = tests/unit/check_features.c
tests_unit_check_features_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_features_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_outpat_SOURCES = tests/unit/check_outpat.c
tests_unit_check_outpat_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_outpat_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_job_SOURCES = tests/unit/check_job.c
tests_unit_check_job_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_job_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
# lib/job.c's key look-ups counted: --env's cost at submit.
tests_unit_check_job_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=strchr
tests_unit_check_frame_SOURCES = tests/unit/check_frame.c
tests_unit_check_frame_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_frame_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_tls_SOURCES = tests/unit/check_tls.c \
	tests/unit/pki_fixture.c tests/unit/pki_fixture.h
tests_unit_check_tls_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_tls_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_histogram_SOURCES = tests/unit/check_histogram.c
tests_unit_check_histogram_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_histogram_LDADD = $(COHORT_LIBS) $(CHECK_LIBS) -lm
tests_unit_check_text_SOURCES = tests/unit/check_text.c
tests_unit_check_text_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_text_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_array_SOURCES = tests/unit/check_array.c
tests_unit_check_array_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_array_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
tests_unit_check_depend_SOURCES = tests/unit/check_depend.c
tests_unit_check_depend_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_depend_LDADD = $(COHORT_LIBS) $(CHECK_LIBS)
