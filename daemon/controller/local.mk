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
	daemon/controller/store/store_nodes.c daemon/controller/store/txq.c \
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
CONTROLLER_LIBS = daemon/controller/libcontroller.a $(SCHED_LIBS) $(COHORT_LIBS) \
	$(SQLITE_LIBS) $(SYSTEMD_LIBS) $(DQLITE_LIBS) $(RAFT_LIBS) \
	$(LIBUV_LIBS) -lm

sbin_PROGRAMS += cohortd
cohortd_SOURCES = daemon/controller/main.c
cohortd_CFLAGS = $(daemon_controller_libcontroller_a_CFLAGS)
# cohortd --join speaks to a replica as the CLI does (client/conn_tls.c).
cohortd_LDADD = client/libclient.a $(CONTROLLER_LIBS) $(JANSSON_LIBS)

