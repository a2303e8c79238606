## The node agent (daemon/agent/): included from Makefile.am.
noinst_LIBRARIES += daemon/agent/libagent.a
daemon_agent_libagent_a_CFLAGS = $(AM_CFLAGS) $(DEP_CFLAGS) $(INIH_CFLAGS) $(HWLOC_CFLAGS) \
	$(JANSSON_CFLAGS)
daemon_agent_libagent_a_SOURCES = \
	daemon/agent/agent_config.c daemon/agent/agent_config.h \
	daemon/agent/inventory.c daemon/agent/inventory.h \
	daemon/agent/hwtopo.c daemon/agent/hwtopo.h \
	daemon/agent/nvml.c daemon/agent/nvml.h \
	daemon/agent/env.c daemon/agent/env.h \
	daemon/agent/taskout.c daemon/agent/taskout.h \
	daemon/agent/tasks.c daemon/agent/tasks.h daemon/agent/tasks_int.h \
	daemon/agent/tasks_prep.c daemon/agent/tasks_child.c \
	daemon/agent/tasks_spool.c daemon/agent/tasks_spool.h \
	daemon/agent/account.c daemon/agent/account.h \
	daemon/agent/agent.c daemon/agent/agent.h \
	daemon/agent/health.c daemon/agent/health.h daemon/agent/health_int.h \
	daemon/agent/health_parse.c daemon/agent/health_parse.h \
	daemon/agent/health_nvml.c daemon/agent/health_check.c \
	daemon/agent/watch.c daemon/agent/watch.h \
	daemon/agent/link.c daemon/agent/link.h \
	daemon/agent/cpubind.c daemon/agent/cpubind.h \
	daemon/agent/cgroup.c daemon/agent/cgroup.h \
	daemon/agent/container.c daemon/agent/container.h \
	daemon/agent/imgdigest.c daemon/agent/imgdigest.h \
	daemon/agent/ocispec.c daemon/agent/ocispec.h \
	daemon/agent/cdi.c daemon/agent/cdi.h
AGENT_LIBS = daemon/agent/libagent.a $(COHORT_LIBS) $(HWLOC_LIBS) \
	$(JANSSON_LIBS) -ldl

sbin_PROGRAMS += cohort-agent
cohort_agent_SOURCES = daemon/agent/main.c
cohort_agent_CFLAGS = $(daemon_agent_libagent_a_CFLAGS) $(SYSTEMD_CFLAGS)
cohort_agent_LDADD = $(AGENT_LIBS) $(SYSTEMD_LIBS)

## The fake NVML library the tests load instead of the real one.
check_PROGRAMS += tests/fake/libnvidia-ml.so.1
tests_fake_libnvidia_ml_so_1_SOURCES = tests/fake/fake_nvml.c
tests_fake_libnvidia_ml_so_1_CFLAGS = $(AM_CFLAGS) -fPIC
tests_fake_libnvidia_ml_so_1_LDFLAGS = -shared $(COV_CFLAGS)

AGENT_UNIT_TESTS = tests/unit/check_env tests/unit/check_tasks \
	tests/unit/check_inventory tests/unit/check_agent_config \
	tests/unit/check_link \
	tests/unit/check_health tests/unit/check_watch tests/unit/check_agent_steps \
	tests/unit/check_taskout tests/unit/check_cpubind \
	tests/unit/check_cgroup tests/unit/check_hwtopo \
	tests/unit/check_ocispec tests/unit/check_imgdigest \
	tests/unit/check_cdi
# UNIT_TESTS feeds both check_PROGRAMS and TESTS in Makefile.am.
UNIT_TESTS += $(AGENT_UNIT_TESTS)
## tasks_child.c may call only async-signal-safe functions: nm -u of its
## object against an allow-list.
TESTS += tests/unit/tasks-child-safe.sh
EXTRA_DIST += tests/unit/tasks-child-safe.sh tests/unit/tasks_child.allow
AGENT_UNIT_CFLAGS = $(UNIT_CFLAGS) -DFAKE_NVML='"$(abs_top_builddir)/tests/fake/libnvidia-ml.so.1"'
tests_unit_check_ocispec_SOURCES = tests/unit/check_ocispec.c
tests_unit_check_ocispec_CFLAGS = $(AGENT_UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_ocispec_LDADD = $(AGENT_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)
tests_unit_check_cdi_SOURCES = tests/unit/check_cdi.c
tests_unit_check_cdi_CFLAGS = $(AGENT_UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_cdi_LDADD = $(AGENT_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)
tests_unit_check_imgdigest_SOURCES = tests/unit/check_imgdigest.c
tests_unit_check_imgdigest_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_imgdigest_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_env_SOURCES = tests/unit/check_env.c
tests_unit_check_env_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_env_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_cpubind_SOURCES = tests/unit/check_cpubind.c
tests_unit_check_cpubind_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_cpubind_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_cgroup_SOURCES = tests/unit/check_cgroup.c
tests_unit_check_cgroup_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_cgroup_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_taskout_SOURCES = tests/unit/check_taskout.c
tests_unit_check_taskout_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_taskout_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_taskout_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=outpat_expand
tests_unit_check_tasks_SOURCES = tests/unit/check_tasks.c
tests_unit_check_tasks_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_tasks_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_inventory_SOURCES = tests/unit/check_inventory.c
tests_unit_check_inventory_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_inventory_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_agent_config_SOURCES = tests/unit/check_agent_config.c
tests_unit_check_agent_config_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_agent_config_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_health_SOURCES = tests/unit/check_health.c
tests_unit_check_health_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_health_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_agent_steps_SOURCES = tests/unit/check_agent_steps.c
tests_unit_check_agent_steps_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_agent_steps_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)

tests_unit_check_watch_SOURCES = tests/unit/check_watch.c
tests_unit_check_watch_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_watch_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_link_SOURCES = tests/unit/check_link.c \
	tests/unit/pki_fixture.c tests/unit/pki_fixture.h
tests_unit_check_link_CFLAGS = $(AGENT_UNIT_CFLAGS)
tests_unit_check_link_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
tests_unit_check_hwtopo_SOURCES = tests/unit/check_hwtopo.c
tests_unit_check_hwtopo_CFLAGS = $(AGENT_UNIT_CFLAGS) $(HWLOC_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_check_hwtopo_LDADD = $(AGENT_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/data/hwloc-dgx.xml
