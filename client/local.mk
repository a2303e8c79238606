## The CLI (client/): included from Makefile.am. cohort-mux, the daemon
## it starts, is daemon/mux/.
noinst_LIBRARIES += client/libclient.a
client_libclient_a_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS) $(INIH_CFLAGS) \
	$(JANSSON_CFLAGS)
client_libclient_a_SOURCES = \
	client/conn.c client/conn.h client/conn_int.h \
	client/conn_tls.c client/conn_tls.h client/mux.c \
	client/settings.c client/settings.h \
	client/script.c client/script.h \
	client/export.c client/export.h \
	client/script_sbatch.c client/script_sbatch.h \
	client/pernode.c client/pernode.h \
	client/slurm_submit.c client/slurm_srun.c \
	client/srun_args.c client/srun_args.h \
	client/srun_input.c client/srun_input.h \
	client/srun_pty.c client/srun_pty.h \
	client/slurm_salloc.c client/salloc.h \
	client/salloc_args.c client/salloc_args.h \
	client/output.c client/output.h \
	client/submit.c client/submit.h client/jobs.c client/commands.h \
	client/run.c client/status.c client/status.h \
	client/jobref.c client/jobref.h client/arrays.c client/arrays.h \
	client/wait.c client/logs.c client/logs.h client/nodes.c \
	client/control.c client/control.h \
	client/nodes_view.c client/nodes_view.h \
	client/admin.c client/events.c client/queues.c client/usage.c \
	client/slurm_format.c client/slurm_format.h \
	client/slurm_query.c client/slurm_query.h client/slurm_sacct.c \
	client/slurm_sinfo.c client/slurm_control.c client/slurm_steps.c \
	client/show_steps.c client/show_steps.h
CLIENT_LIBS = client/libclient.a $(COHORT_LIBS) $(JANSSON_LIBS)

bin_PROGRAMS += cohort
cohort_SOURCES = client/main.c
cohort_CFLAGS = $(client_libclient_a_CFLAGS)
cohort_LDADD = $(CLIENT_LIBS)
# Only what the CLI uses gets loaded: it talks to cohort-mux, so OpenSSL
# and libevent stay out of every command's start-up (about 1.3 ms each).
cohort_LDFLAGS = $(AM_LDFLAGS) -Wl,--as-needed

## Its Check suites.
CLIENT_UNIT_TESTS = \
	tests/unit/check_script \
	tests/unit/check_salloc \
	tests/unit/check_arrays \
	tests/unit/check_export \
	tests/unit/check_nodes_view \
	tests/unit/check_slurm_query \
	tests/unit/check_srun
# UNIT_TESTS feeds both check_PROGRAMS and TESTS in Makefile.am.
UNIT_TESTS += $(CLIENT_UNIT_TESTS)
tests_unit_check_salloc_SOURCES = tests/unit/check_salloc.c
tests_unit_check_salloc_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_salloc_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_script_SOURCES = tests/unit/check_script.c
tests_unit_check_script_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_script_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_export_SOURCES = tests/unit/check_export.c
tests_unit_check_export_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_export_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_srun_SOURCES = tests/unit/check_srun.c
tests_unit_check_srun_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_srun_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_slurm_query_SOURCES = tests/unit/check_slurm_query.c
tests_unit_check_slurm_query_CFLAGS = $(UNIT_CFLAGS) \
	-DSLURM_DATA_DIR='"$(top_srcdir)/tests/unit/data/slurm"'
tests_unit_check_slurm_query_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_nodes_view_SOURCES = tests/unit/check_nodes_view.c
tests_unit_check_nodes_view_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_nodes_view_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
tests_unit_check_arrays_SOURCES = tests/unit/check_arrays.c
tests_unit_check_arrays_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_arrays_LDADD = $(CLIENT_LIBS) $(CHECK_LIBS)
