## The controller (daemon/controller/): included from Makefile.am. One
## convenience library, its sources by folder; each folder's include
## rule is checked by tests/unit/layers.sh (docs/ARCHITECTURE.md,
## "Layers").
noinst_LIBRARIES += daemon/controller/libcontroller.a
daemon_controller_libcontroller_a_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS) \
	$(SQLITE_CFLAGS) $(INIH_CFLAGS) $(SYSTEMD_CFLAGS) $(DQLITE_CFLAGS) \
	$(RAFT_CFLAGS) $(LIBUV_CFLAGS)
# The composition root: configuration, the driver, the mailer.
CTL_ROOT_SOURCES = \
	daemon/controller/ctl_config.c daemon/controller/ctl_config.h \
	daemon/controller/ctl_figures.c daemon/controller/ctl_figures.h \
	daemon/controller/ctl_reload.c daemon/controller/ctl_reload.h \
	daemon/controller/driver.c daemon/controller/driver.h \
	daemon/controller/mailer.c daemon/controller/mailer.h
# The pure domain: no event loop, network, database or clock.
CTL_DOMAIN_SOURCES = \
	daemon/controller/domain/alloc.c daemon/controller/domain/alloc.h \
	daemon/controller/domain/cluster.c daemon/controller/domain/cluster.h \
	daemon/controller/domain/cluster_int.h \
	daemon/controller/domain/cluster_logs.c \
	daemon/controller/domain/cluster_suspect.c \
	daemon/controller/domain/feasible.c \
	daemon/controller/domain/feasible.h daemon/controller/domain/gang.c \
	daemon/controller/domain/gates.c daemon/controller/domain/gates.h \
	daemon/controller/domain/goodput.c daemon/controller/domain/goodput.h \
	daemon/controller/domain/jobs.c daemon/controller/domain/jobs.h \
	daemon/controller/domain/jobs_account.c \
	daemon/controller/domain/jobs_array.c \
	daemon/controller/domain/jobs_authz.c \
	daemon/controller/domain/jobs_control.c \
	daemon/controller/domain/jobs_depend.c \
	daemon/controller/domain/jobs_int.h \
	daemon/controller/domain/jobs_keys.c \
	daemon/controller/domain/jobs_retention.c \
	daemon/controller/domain/mail.c daemon/controller/domain/mail.h \
	daemon/controller/domain/nodes.c daemon/controller/domain/nodes.h \
	daemon/controller/domain/outbox.h daemon/controller/domain/placement.c \
	daemon/controller/domain/placement.h \
	daemon/controller/domain/preemption.c \
	daemon/controller/domain/queues.c daemon/controller/domain/queues.h \
	daemon/controller/domain/queues_int.h \
	daemon/controller/domain/queues_report.c \
	daemon/controller/domain/queues_share.c \
	daemon/controller/domain/quota.c daemon/controller/domain/quota.h \
	daemon/controller/domain/recovery.c \
	daemon/controller/domain/recovery.h daemon/controller/domain/reports.c \
	daemon/controller/domain/reports.h daemon/controller/domain/steps.c \
	daemon/controller/domain/steps.h daemon/controller/domain/steps_int.h \
	daemon/controller/domain/steps_layout.c \
	daemon/controller/domain/straggler.c \
	daemon/controller/domain/straggler.h \
	daemon/controller/domain/suspect.c daemon/controller/domain/suspect.h
# SQLite and the group commit over it.
CTL_STORE_SOURCES = \
	daemon/controller/store/store.c daemon/controller/store/store.h \
	daemon/controller/store/store_backup.c \
	daemon/controller/store/store_history.c \
	daemon/controller/store/store_int.h \
	daemon/controller/store/store_nodes.c \
	daemon/controller/store/store_wal.c daemon/controller/store/txq.c \
	daemon/controller/store/txq.h
# The TLS listener, the RPC handlers, the agents' commands.
CTL_RPC_SOURCES = \
	daemon/controller/rpc/agentcmd.c daemon/controller/rpc/agentcmd.h \
	daemon/controller/rpc/rpc.c daemon/controller/rpc/rpc.h \
	daemon/controller/rpc/rpc_agent.c daemon/controller/rpc/rpc_alloc.c \
	daemon/controller/rpc/rpc_control.c daemon/controller/rpc/rpc_int.h \
	daemon/controller/rpc/rpc_nodes.c daemon/controller/rpc/rpc_repl.c \
	daemon/controller/rpc/rpc_steps.c daemon/controller/rpc/rpc_usage.c \
	daemon/controller/rpc/server.c daemon/controller/rpc/server.h \
	daemon/controller/rpc/server_admit.c \
	daemon/controller/rpc/server_int.h \
	daemon/controller/rpc/server_limits.h daemon/controller/rpc/stepcred.c \
	daemon/controller/rpc/stepcred.h
# Replication (Raft).
CTL_REPL_SOURCES = \
	daemon/controller/repl/repl.c daemon/controller/repl/repl.h \
	daemon/controller/repl/repl_int.h daemon/controller/repl/repl_net.c
# /metrics and the status page.
CTL_WEB_SOURCES = \
	daemon/controller/web/http.c daemon/controller/web/http.h \
	daemon/controller/web/metrics.c daemon/controller/web/metrics.h \
	daemon/controller/web/status_page.c \
	daemon/controller/web/status_page.h \
	daemon/controller/web/status_page_cells.c \
	daemon/controller/web/status_page_html.c \
	daemon/controller/web/status_page_int.h \
	daemon/controller/web/status_page_jobs.c \
	daemon/controller/web/status_page_nodes.c
daemon_controller_libcontroller_a_SOURCES = $(CTL_ROOT_SOURCES) \
	$(CTL_DOMAIN_SOURCES) $(CTL_STORE_SOURCES) $(CTL_RPC_SOURCES) \
	$(CTL_REPL_SOURCES) $(CTL_WEB_SOURCES)
nodist_daemon_controller_libcontroller_a_SOURCES = sql/migrations.c
CONTROLLER_LIBS = daemon/controller/libcontroller.a $(SCHED_LIBS) \
	$(COHORT_LIBS) $(SQLITE_LIBS) $(SYSTEMD_LIBS) $(DQLITE_LIBS) \
	$(RAFT_LIBS) $(LIBUV_LIBS) -lpthread -lm

sbin_PROGRAMS += cohortd
cohortd_SOURCES = daemon/controller/main.c
cohortd_CFLAGS = $(daemon_controller_libcontroller_a_CFLAGS)
# cohortd --join speaks to a replica as the CLI does (client/conn_tls.c).
cohortd_LDADD = client/libclient.a $(CONTROLLER_LIBS) $(JANSSON_LIBS)


## The controller's Check suites: the library the daemon links, parts
## stubbed at link time (--wrap).
CTL_UNIT_TESTS = \
	tests/unit/check_conf \
	tests/unit/check_jobs \
	tests/unit/check_store \
	tests/unit/check_txq \
	tests/unit/check_reports \
	tests/unit/check_cluster \
	tests/unit/check_mail \
	tests/unit/check_steps \
	tests/unit/check_alloc \
	tests/unit/check_stepcred \
	tests/unit/check_agentcmd \
	tests/unit/check_nodes \
	tests/unit/check_placement \
	tests/unit/check_recovery \
	tests/unit/check_restarts \
	tests/unit/check_goodput \
	tests/unit/check_suspect \
	tests/unit/check_straggler \
	tests/unit/check_gang_image \
	tests/unit/check_preemption \
	tests/unit/check_queues \
	tests/unit/check_quota \
	tests/unit/check_jobs_control \
	tests/unit/check_jobs_account \
	tests/unit/check_jobs_array \
	tests/unit/check_gates \
	tests/unit/check_feasible \
	tests/unit/check_metrics \
	tests/unit/check_status_page \
	tests/unit/check_repl_net \
	tests/unit/check_rpc
# UNIT_TESTS feeds both check_PROGRAMS and TESTS in Makefile.am.
UNIT_TESTS += $(CTL_UNIT_TESTS)
# The controller domain's suites share a fixture: an in-memory store,
# writes refused on demand, and allocations and log lines seen through
# the linker's --wrap (the library under test is the programs' own).
CTL_FIXTURE = tests/unit/ctl_fixture.c tests/unit/ctl_fixture.h \
	tests/unit/store_warm.c
# The virtual-time domain harness (tests/domain), for suites without the
# fixture above.
DOMAIN_HARNESS = tests/domain/domain.c tests/domain/domain.h \
	tests/unit/store_warm.c
CTL_WRAP_FLAGS = $(AM_LDFLAGS) -Wl,--wrap=calloc \
	-Wl,--wrap=reallocarray -Wl,--wrap=log_info -Wl,--wrap=log_warnx
tests_unit_check_queues_SOURCES = tests/unit/check_queues.c
tests_unit_check_queues_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_queues_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_conf_SOURCES = tests/unit/check_conf.c
tests_unit_check_conf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_conf_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_store_SOURCES = tests/unit/check_store.c \
	tests/unit/store_warm.c
tests_unit_check_store_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_store_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_txq_SOURCES = tests/unit/check_txq.c
tests_unit_check_txq_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_txq_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_agentcmd_SOURCES = tests/unit/check_agentcmd.c
tests_unit_check_agentcmd_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_agentcmd_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_agentcmd_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=calloc
tests_unit_check_cluster_SOURCES = tests/unit/check_cluster.c \
	tests/domain/domain.c tests/domain/domain.h $(CTL_FIXTURE)
tests_unit_check_cluster_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_cluster_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_cluster_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_stepcred_SOURCES = tests/unit/check_stepcred.c
tests_unit_check_stepcred_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_stepcred_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_mail_SOURCES = tests/unit/check_mail.c \
	$(DOMAIN_HARNESS)
tests_unit_check_mail_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_mail_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_steps_SOURCES = tests/unit/check_steps.c \
	$(DOMAIN_HARNESS)
tests_unit_check_steps_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_steps_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_alloc_SOURCES = tests/unit/check_alloc.c \
	$(DOMAIN_HARNESS)
tests_unit_check_alloc_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_alloc_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_goodput_SOURCES = tests/unit/check_goodput.c \
	$(DOMAIN_HARNESS)
tests_unit_check_goodput_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_goodput_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_recovery_SOURCES = tests/unit/check_recovery.c \
	$(DOMAIN_HARNESS)
tests_unit_check_recovery_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_recovery_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_restarts_SOURCES = tests/unit/check_restarts.c \
	$(DOMAIN_HARNESS)
tests_unit_check_restarts_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_restarts_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_suspect_SOURCES = tests/unit/check_suspect.c \
	$(DOMAIN_HARNESS)
tests_unit_check_suspect_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_suspect_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_straggler_SOURCES = tests/unit/check_straggler.c \
	$(DOMAIN_HARNESS)
tests_unit_check_straggler_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_straggler_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_gang_image_SOURCES = tests/unit/check_gang_image.c \
	$(DOMAIN_HARNESS)
tests_unit_check_gang_image_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_gang_image_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_preemption_SOURCES = tests/unit/check_preemption.c \
	$(DOMAIN_HARNESS)
tests_unit_check_preemption_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_preemption_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_jobs_control_SOURCES = tests/unit/check_jobs_control.c \
	tests/domain/domain.c tests/domain/domain.h $(CTL_FIXTURE)
tests_unit_check_jobs_control_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_jobs_control_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_jobs_control_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
# Its log lines through the fixture's --wrap; certificates minted.
tests_unit_check_repl_net_SOURCES = tests/unit/check_repl_net.c \
	tests/unit/pki_fixture.c tests/unit/pki_fixture.h $(CTL_FIXTURE)
tests_unit_check_repl_net_CFLAGS = $(UNIT_CFLAGS) $(RAFT_CFLAGS) \
	$(LIBUV_CFLAGS)
tests_unit_check_repl_net_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_repl_net_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_jobs_SOURCES = tests/unit/check_jobs.c $(CTL_FIXTURE)
tests_unit_check_jobs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_jobs_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_jobs_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_jobs_account_SOURCES = tests/unit/check_jobs_account.c \
	$(CTL_FIXTURE)
tests_unit_check_jobs_account_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_jobs_account_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_jobs_account_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_nodes_SOURCES = tests/unit/check_nodes.c $(CTL_FIXTURE)
tests_unit_check_nodes_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_nodes_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_nodes_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_feasible_SOURCES = tests/unit/check_feasible.c
tests_unit_check_feasible_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_feasible_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_placement_SOURCES = tests/unit/check_placement.c \
	$(CTL_FIXTURE)
tests_unit_check_placement_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_placement_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_placement_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_metrics_SOURCES = tests/unit/check_metrics.c
tests_unit_check_metrics_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_metrics_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_reports_SOURCES = tests/unit/check_reports.c
tests_unit_check_reports_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_reports_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_jobs_array_SOURCES = tests/unit/check_jobs_array.c \
	tests/domain/domain.c tests/domain/domain.h $(CTL_FIXTURE)
tests_unit_check_jobs_array_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_jobs_array_LDFLAGS = $(CTL_WRAP_FLAGS)
tests_unit_check_jobs_array_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_gates_SOURCES = tests/unit/check_gates.c \
	$(DOMAIN_HARNESS)
tests_unit_check_gates_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_gates_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_status_page_SOURCES = tests/unit/check_status_page.c \
	$(DOMAIN_HARNESS)
tests_unit_check_status_page_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_status_page_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)
tests_unit_check_quota_SOURCES = tests/unit/check_quota.c \
	tests/unit/store_warm.c
tests_unit_check_quota_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_quota_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)

# The RPC edge without a socket: the server's connection calls, the
# clock and the Raft leader's address are the fixture's (--wrap), so
# rpc_dispatch runs as the daemon links it over the in-memory domain.
RPC_WRAP_FLAGS = $(AM_LDFLAGS) -Wl,--wrap=server_conn \
	-Wl,--wrap=server_conn_id -Wl,--wrap=server_conn_peer \
	-Wl,--wrap=server_conn_hello_done \
	-Wl,--wrap=server_conn_set_hello_done \
	-Wl,--wrap=server_conn_set_registered \
	-Wl,--wrap=server_conn_send_frame -Wl,--wrap=server_conn_send \
	-Wl,--wrap=server_conn_send_error -Wl,--wrap=server_conn_reserve \
	-Wl,--wrap=server_conn_release -Wl,--wrap=server_conn_close \
	-Wl,--wrap=server_max_frame -Wl,--wrap=clock_now_ms \
	-Wl,--wrap=repl_leader_rpc
tests_unit_check_rpc_SOURCES = tests/unit/check_rpc.c \
	tests/unit/rpc_fixture.c tests/unit/rpc_fixture.h \
	$(DOMAIN_HARNESS)
tests_unit_check_rpc_CFLAGS = $(UNIT_CFLAGS)
tests_unit_check_rpc_LDFLAGS = $(RPC_WRAP_FLAGS)
tests_unit_check_rpc_LDADD = $(CONTROLLER_LIBS) $(CHECK_LIBS)

## Each folder keeps its include rule (the domain: no event loop,
## network, database or clock).
TESTS += tests/unit/layers.sh
EXTRA_DIST += tests/unit/layers.sh
