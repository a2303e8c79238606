/* daemon/agent/cpubind.c: CPU lists, the numa_cpus map, the sysfs map
 * (a fake sysfs in a temporary directory), and the choice of cores:
 * next to the task's GPUs, spread over its NUMA nodes, not another
 * task's, then other nodes, then shared. */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cpubind.h"

static char why[256];

/* set as a list, for assertions. */
static const char *
fmt(const cpu_set_t *set)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	ck_assert_int_eq(cpubind_list_format(set, buf[k], sizeof(buf[k])), 0);
	return buf[k];
}

static cpu_set_t
list(const char *s)
{
	cpu_set_t set;

	ck_assert_msg(cpubind_list_parse(s, &set, why, sizeof(why)) == 0,
	    "%s: %s", s, why);
	return set;
}

START_TEST(test_list)
{
	cpu_set_t set;
	char small[4];

	ck_assert_str_eq(fmt(&(cpu_set_t){ 0 }), "");
	set = list("0-3,8,10-11");
	ck_assert_int_eq(CPU_COUNT(&set), 7);
	ck_assert_str_eq(fmt(&set), "0-3,8,10-11");
	set = list("5,1,2,3");
	ck_assert_str_eq(fmt(&set), "1-3,5");
	set = list("1023");
	ck_assert_str_eq(fmt(&set), "1023");
	ck_assert_int_eq(cpubind_list_parse("1024", &set, why, sizeof(why)),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "'1024' is not a CPU list"));
	ck_assert_int_eq(cpubind_list_parse("3-1", &set, why, sizeof(why)),
	    -1);
	ck_assert_str_eq(why, "CPU range 3-1 runs backwards");
	ck_assert_int_eq(cpubind_list_parse("", &set, why, sizeof(why)), -1);
	ck_assert_int_eq(cpubind_list_parse("1,", &set, why, sizeof(why)),
	    -1);
	ck_assert_int_eq(cpubind_list_parse("-1", &set, why, sizeof(why)),
	    -1);
	ck_assert_int_eq(cpubind_list_parse("1 2", &set, why, sizeof(why)),
	    -1);
	set = list("0-10");
	ck_assert_int_eq(cpubind_list_format(&set, small, sizeof(small)), -1);
}
END_TEST

START_TEST(test_map_parse)
{
	struct cpubind_map m;

	ck_assert_int_eq(cpubind_map_parse(" 1:4-7  0:0-3 ", &m, why,
	    sizeof(why)), 0);
	ck_assert_uint_eq(m.nnodes, 2);
	ck_assert_int_eq(m.node[0], 0);	/* kept ascending */
	ck_assert_str_eq(fmt(&m.cpus[0]), "0-3");
	ck_assert_int_eq(m.node[1], 1);
	ck_assert_str_eq(fmt(&m.cpus[1]), "4-7");
	ck_assert_int_eq(cpubind_map_parse("0:0 0:1", &m, why, sizeof(why)),
	    -1);
	ck_assert_str_eq(why, "NUMA node 0 is given twice");
	ck_assert_int_eq(cpubind_map_parse("0:0-2 1:2-3", &m, why,
	    sizeof(why)), -1);
	ck_assert_str_eq(why, "CPU 2 is on two NUMA nodes");
	ck_assert_int_eq(cpubind_map_parse("0=1", &m, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "'0=1': expected NODE:CPUS"));
	ck_assert_int_eq(cpubind_map_parse("64:1", &m, why, sizeof(why)), -1);
	ck_assert_int_eq(cpubind_map_parse("x:1", &m, why, sizeof(why)), -1);
	ck_assert_int_eq(cpubind_map_parse("0:", &m, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "NUMA node 0: an empty CPU list");
	ck_assert_int_eq(cpubind_map_parse("   ", &m, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "no NUMA node given"));
}
END_TEST

static void
put(const char *dir, const char *node, const char *cpulist)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s/cpulist", dir, node);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "%s\n", cpulist);
	fclose(fp);
}

/* A fake /sys/devices/system/node: two nodes and a memory-only one; the
 * agent's affinity hides CPU 3. No node directory: one node 0. */
START_TEST(test_map_sysfs)
{
	char dir[] = "/tmp/check_cpubind.XXXXXX", cmd[64];
	struct cpubind_map m;
	cpu_set_t allowed = list("0-2,4-7");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "node0", "0-3");
	put(dir, "node1", "4-7");
	put(dir, "node2", "");
	put(dir, "nodeX", "8");		/* not a node */
	ck_assert_int_eq(cpubind_map_sysfs(dir, &allowed, &m), 0);
	ck_assert_uint_eq(m.nnodes, 3);
	ck_assert_str_eq(fmt(&m.cpus[0]), "0-2");
	ck_assert_str_eq(fmt(&m.cpus[1]), "4-7");
	ck_assert_str_eq(fmt(&m.cpus[2]), "");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(cpubind_map_sysfs("/nonexistent", &allowed, &m), 0);
	ck_assert_uint_eq(m.nnodes, 1);
	ck_assert_int_eq(m.node[0], 0);
	ck_assert_str_eq(fmt(&m.cpus[0]), "0-2,4-7");
}
END_TEST

/* Two NUMA nodes of 4 cores: 0-3 and 4-7. */
static struct cpubind_map m2;

static void
map2(void)
{
	ck_assert_int_eq(cpubind_map_parse("0:0-3 1:4-7", &m2, why,
	    sizeof(why)), 0);
}

START_TEST(test_choose_local)
{
	cpu_set_t used, out;
	unsigned flags;
	int n0[] = { 0 }, n1[] = { 1 }, both[] = { 0, 1 }, none[] = { -1 };

	map2();
	CPU_ZERO(&used);
	ck_assert_int_eq(cpubind_choose(&m2, n1, 1, 2, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "4-5");
	ck_assert_uint_eq(flags, 0);
	/* The next task of the job on the same node gets the next cores. */
	CPU_OR(&used, &used, &out);
	ck_assert_int_eq(cpubind_choose(&m2, n1, 1, 2, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "6-7");
	ck_assert_uint_eq(flags, 0);
	/* GPUs on both nodes: cores from each, in turn. */
	CPU_ZERO(&used);
	ck_assert_int_eq(cpubind_choose(&m2, both, 2, 4, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0-1,4-5");
	/* Unknown NUMA node (or a CPU-only task): any node, lowest first. */
	ck_assert_int_eq(cpubind_choose(&m2, none, 1, 3, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0-2");
	ck_assert_uint_eq(flags, 0);
	ck_assert_int_eq(cpubind_choose(&m2, NULL, 0, 1, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0");
	/* A NUMA node the map lacks counts as unknown. */
	n0[0] = 7;
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 1, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0");
	ck_assert_uint_eq(flags, 0);
}
END_TEST

START_TEST(test_choose_fallback)
{
	cpu_set_t used, out;
	unsigned flags;
	int n0[] = { 0 };

	map2();
	/* Node 0 has 1 free core (3): 3, then node 1's lowest. */
	used = list("0-2");
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 3, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "3-5");
	ck_assert_uint_eq(flags, CPUBIND_REMOTE);
	/* Everything taken: shared, the task's own node first. */
	used = list("0-7");
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 2, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0-1");
	ck_assert_uint_eq(flags, CPUBIND_SHARED);
	/* Free 6-7 first, then shared local cores. */
	used = list("0-5");
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 4, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0-1,6-7");
	ck_assert_uint_eq(flags, CPUBIND_REMOTE | CPUBIND_SHARED);
	/* More than the node has: all of it. */
	CPU_ZERO(&used);
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 9, &used, &out, &flags),
	    0);
	ck_assert_str_eq(fmt(&out), "0-7");
	ck_assert(flags & CPUBIND_SHORT);
	ck_assert_int_eq(cpubind_choose(&m2, n0, 1, 0, &used, &out, &flags),
	    -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cpubind");
	TCase *tc = tcase_create("cpubind");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_map_parse);
	tcase_add_test(tc, test_map_sysfs);
	tcase_add_test(tc, test_choose_local);
	tcase_add_test(tc, test_choose_fallback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
