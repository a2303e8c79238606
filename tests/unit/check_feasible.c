/* daemon/controller/domain/feasible.c: each refusal at submit, with the
 * limit its message names, and what must still be accepted (DOWN nodes
 * count; no node known: nothing judged). */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/controller/domain/feasible.h"
#include "daemon/sched/topo.h"

#define H100 "NVIDIA H100 80GB HBM3"
#define A100 "NVIDIA A100-SXM4-40GB"

/* node1-node4: 8 x H100 under sw1 (1-2) and sw2 (3-4); node5-node6:
 * 4 x A100 under sw3; node7: no GPU, not in the topology. */
static const struct feasible_node nodes[] = {
	{ "node1", H100, 8 }, { "node2", H100, 8 },
	{ "node3", H100, 8 }, { "node4", H100, 8 },
	{ "node5", A100, 4 }, { "node6", A100, 4 },
	{ "node7", NULL, 0 },
};

static const char *topo_text =
    "LevelNames=switch,spine\n"
    "SwitchName=sw1 Nodes=node[1-2]\n"
    "SwitchName=sw2 Nodes=node[3-4]\n"
    "SwitchName=sw3 Nodes=node[5-6]\n"
    "SwitchName=spine1 Switches=sw[1-2]\n"
    "SwitchName=spine2 Switches=sw3\n";

static struct topo *topo;
static struct feasible_input in;
static struct job_spec spec;
static struct cerr err;

static void
setup(void)
{
	char e[256];

	ck_assert_ptr_nonnull(topo = topo_parse(topo_text, strlen(topo_text),
	    "test", e, sizeof(e)));
	in.nodes = nodes;
	in.nnodes = sizeof(nodes) / sizeof(nodes[0]);
	in.topo = topo;
	job_spec_init(&spec);
	cerr_clear(&err);
}

static void
teardown(void)
{
	job_spec_clear(&spec);
	topo_destroy(topo);
}

static void
spec_set(unsigned n, unsigned gpn)
{
	job_spec_clear(&spec);
	job_spec_init(&spec);
	spec.nodes_min = spec.nodes_max = n;
	spec.gpus_per_node = gpn;
}

/* The check refuses with ERR_INVALID and a text containing want. */
static void
refused(const char *want)
{
	cerr_clear(&err);
	ck_assert_int_eq(feasible_check(&in, &spec, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	ck_assert_msg(strstr(err.text, want) != NULL, "'%s' lacks '%s'",
	    err.text, want);
}

static void
accepted(void)
{
	cerr_clear(&err);
	ck_assert_msg(feasible_check(&in, &spec, &err) == 0, "%s", err.text);
}

START_TEST(test_gpus_per_node)
{
	spec_set(1, 8);
	accepted();
	spec_set(1, 16);
	refused("--gpus-per-node 16: the largest node has 8 GPUs (" H100
	    ")");
	spec_set(1, 8);
	spec.gpu_type = strdup("A100");
	refused("--gpus-per-node 8: the largest node of type A100 has 4 GPUs");
}
END_TEST

START_TEST(test_node_count)
{
	spec_set(4, 8);
	accepted();
	spec_set(5, 8);
	refused("--nodes 5: the cluster has only 4 nodes with 8 or more GPUs");
	spec_set(3, 4);
	spec.gpu_type = strdup("a100");
	refused("--nodes 3: the cluster has only 2 nodes with 4 or more GPUs "
	    "of type a100");
	/* Whole nodes: the node without GPUs does not count. */
	spec_set(7, 0);
	refused("--nodes 7: the cluster has only 6 nodes with GPUs");
	/* CPU-only: every node does. */
	spec_set(7, 0);
	spec.cpu_only = true;
	accepted();
	spec_set(8, 0);
	spec.cpu_only = true;
	refused("--nodes 8: the cluster has only 7 nodes");
	/* Elastic: the minimum is judged. */
	spec_set(4, 8);
	spec.nodes_max = 16;
	accepted();
}
END_TEST

START_TEST(test_gpu_type)
{
	spec_set(1, 1);
	spec.gpu_type = strdup("B300");
	refused("no node has a GPU matching 'B300'; models here: " H100 ", "
	    A100);
	spec_set(1, 1);
	spec.gpu_type = strdup("h100");
	accepted();
}
END_TEST

START_TEST(test_topology)
{
	spec_set(1, 1);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("rack");
	refused("no topology level 'rack'; levels: switch, spine");
	spec.topo_mode = TOPO_PREFERRED;
	refused("no topology level 'rack'");
	/* A switch holds 2 H100 nodes, a spine 4. */
	spec_set(3, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("switch");
	refused("the largest switch holds only 2 nodes with 8 or more GPUs");
	spec_set(3, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("spine");
	accepted();
	/* Preferred never waits for its level. */
	spec.topo_mode = TOPO_PREFERRED;
	free(spec.topo_level);
	spec.topo_level = strdup("switch");
	accepted();
	/* No topology at all. */
	in.topo = NULL;
	spec.topo_mode = TOPO_REQUIRED;
	refused("no topology level 'switch'; the controller has no topology");
}
END_TEST

/* Blocks: node1-2, node3-4 (8 GPUs), node5-6 (4). */
START_TEST(test_blocks)
{
	static const char *bt =
	    "SwitchName=sw1 Nodes=node[1-4]\n"
	    "BlockName=b1 Nodes=node[1-2]\n"
	    "BlockName=b2 Nodes=node[3-4]\n"
	    "BlockName=b3 Nodes=node[5-6]\n";
	struct topo *plain = in.topo;
	char e[256];

	/* No blocks: --segment and "block" are refused. */
	spec_set(2, 8);
	spec.segment = 2;
	refused("--segment 2: the topology has no blocks");
	spec_set(2, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("block");
	refused("no topology level 'block'");
	ck_assert_ptr_nonnull(in.topo = topo_parse(bt, strlen(bt), "test", e,
	    sizeof(e)));
	accepted();
	spec_set(3, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("block");
	refused("--nodes 3 with --topology block: the largest block holds "
	    "only 2 nodes with 8 or more GPUs");
	/* Preferred: never refused for its block. */
	spec.topo_mode = TOPO_PREFERRED;
	accepted();
	/* Two segments of two 8-GPU nodes exist, not three. */
	spec_set(4, 8);
	spec.segment = 2;
	accepted();
	spec_set(4, 8);
	spec.segment = 4;
	refused("--nodes 4 with --segment 4: the blocks hold only 0 such "
	    "segments (the largest block 2 nodes with 8 or more GPUs)");
	/* Three segments of two 4-GPU nodes. */
	spec_set(6, 4);
	spec.segment = 2;
	accepted();
	/* Segments of 3: no block has 3 nodes. */
	spec_set(3, 1);
	spec.segment = 3;
	refused("the blocks hold only 0 such segments");
	topo_destroy(in.topo);
	in.topo = plain;
}
END_TEST

/* --topology torus: refused without a torus (with a tree or none),
 * counted against the nodes the torus places when required. */
START_TEST(test_topology_torus)
{
	struct topo *t;
	char e[256];
	static const char torus[] =
	    "TorusName=t0 Dims=2x2 Nodes=node[1-4]\n";
	static const char ring[] = "TorusName=t0 Dims=8 Nodes=node[1-8]\n";

	spec_set(2, 8);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("torus");
	refused("--topology torus: the controller's topology has no torus");
	spec.topo_mode = TOPO_PREFERRED;
	refused("has no torus");
	in.topo = NULL;
	refused("has no torus");
	ck_assert_ptr_nonnull(t = topo_parse(torus, strlen(torus), "test", e,
	    sizeof(e)));
	in.topo = t;
	spec.topo_mode = TOPO_REQUIRED;
	accepted();
	/* 4 nodes are on the torus, of which node1-4 have 8 GPUs. */
	spec_set(5, 1);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("TORUS");
	refused("--nodes 5 with --topology torus:required: the torus t0 "
	    "holds only 4 nodes");
	spec.topo_mode = TOPO_PREFERRED;
	accepted();
	in.topo = topo;
	topo_destroy(t);
	/* A torus naming a node that never registered (node8): nothing is
	 * judged yet (its GPUs are unknown), though 6 torus nodes with GPUs
	 * are known and 7 are asked. */
	ck_assert_ptr_nonnull(t = topo_parse(ring, strlen(ring), "test", e,
	    sizeof(e)));
	in.topo = t;
	spec_set(7, 1);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("torus");
	accepted();
	in.topo = topo;
	topo_destroy(t);
}
END_TEST

/* --topology group on a Dragonfly+: refused when no group holds the
 * gang (node1-4 one group, node5-6 another), never when preferred. */
START_TEST(test_topology_group)
{
	static const char df[] =
	    "GroupName=g0 Nodes=node[1-4] NodesPerRouter=2\n"
	    "GroupName=g1 Nodes=node[5-6] NodesPerRouter=2\n";
	struct topo *t;
	char e[256];

	ck_assert_ptr_nonnull(t = topo_parse(df, strlen(df), "test", e,
	    sizeof(e)));
	in.topo = t;
	spec_set(4, 1);
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("group");
	accepted();
	spec.nodes_min = spec.nodes_max = 5;
	refused("--nodes 5 with --topology group:required: the largest group "
	    "holds only 4 nodes");
	spec.topo_mode = TOPO_PREFERRED;
	accepted();
	in.topo = topo;
	topo_destroy(t);
}
END_TEST

START_TEST(test_nodelist)
{
	spec_set(2, 8);
	spec.nodelist = strdup("node[1-2]");
	accepted();
	spec.nodelist[7] = '9';		/* node[1-9] */
	refused("--nodelist: no node named 'node8'");
	spec_set(2, 8);
	spec.nodelist = strdup("node[1-3]");
	spec.exclude = strdup("node2,node3");
	refused("--nodes 2: --nodelist and --exclude leave only 1 node with 8 "
	    "or more GPUs");
	spec_set(4, 8);
	spec.exclude = strdup("node4,nodeX");	/* unknown: nothing */
	refused("--nodes 4: --exclude leaves only 3 nodes");
	spec_set(2, 8);
	spec.nodelist = strdup("node[5-6]");	/* A100 x 4 */
	refused("--nodelist leaves only 0 nodes with 8 or more GPUs");
	spec_set(1, 1);
	spec.nodelist = strdup("node[1-");
	refused("--nodelist node[1-: ");
	/* The filter and a required level together. */
	spec_set(2, 8);
	spec.nodelist = strdup("node2,node3");
	spec.topo_mode = TOPO_REQUIRED;
	spec.topo_level = strdup("switch");
	refused("the largest switch holds only 1 node with");
}
END_TEST

/* node1-2 fp64+ib H100s of 81,559 MiB (80 GiB rounded), node3 ib only,
 * node4 an A100 of 40 GiB, node5 no GPU. */
static const char *const f_fp64_ib[] = { "fp64", "ib" };
static const char *const f_ib[] = { "ib" };
static const struct feasible_node cnodes[] = {
	{ "node1", H100, 8, f_fp64_ib, 2, 81559 },
	{ "node2", H100, 8, f_fp64_ib, 2, 81559 },
	{ "node3", H100, 8, f_ib, 1, 81559 },
	{ "node4", A100, 4, NULL, 0, 40960 },
	{ "node5", NULL, 0, f_fp64_ib, 2, 0 },
};

/* node1-2: 32 CPUs and 256 GiB; node3: 64 CPUs and 1 TiB; node4: a node
 * whose agent reported neither. */
static const struct feasible_node mnodes[] = {
	{ "node1", H100, 8, NULL, 0, 81559, 32, 256 * 1024 },
	{ "node2", H100, 8, NULL, 0, 81559, 32, 256 * 1024 },
	{ "node3", H100, 8, NULL, 0, 81559, 64, 1024 * 1024 },
	{ "node4", H100, 8, NULL, 0, 81559, 0, 0 },
};

/* --cpus-per-task counts per node with --tasks-per-node; both it and
 * --mem-per-node are refused alone when no node holds them, and narrow
 * the node count otherwise. */
START_TEST(test_cpus_mem)
{
	in.nodes = mnodes;
	in.nnodes = sizeof(mnodes) / sizeof(mnodes[0]);
	in.topo = NULL;
	spec_set(2, 8);
	spec.tasks_per_node = 8;
	spec.cpus_per_task = 4;		/* 32: node1-3 */
	accepted();
	spec.nodes_min = spec.nodes_max = 4;
	refused("--nodes 4: --cpus-per-task leaves only 3 nodes");
	spec.nodes_min = spec.nodes_max = 2;
	spec.cpus_per_task = 8;		/* 64: node3 only */
	refused("--nodes 2: --cpus-per-task leaves only 1 node");
	spec.cpus_per_task = 9;
	refused("--cpus-per-task 9: 8 tasks per node need 72 CPUs; no node "
	    "has that many (at most 64)");
	spec.cpus_per_task = 0;
	spec.nodes_min = spec.nodes_max = 4;
	accepted();			/* no binding: node4 counts */
	spec.nodes_min = spec.nodes_max = 1;
	spec.mem_per_node_mb = 1024 * 1024;
	accepted();
	spec.mem_per_node_mb = 1024 * 1024 + 1;
	refused("--mem-per-node 1048577 MiB: no node has that much memory "
	    "(at most 1048576 MiB)");
	spec.nodes_min = spec.nodes_max = 3;
	spec.mem_per_node_mb = 256 * 1024;
	spec.cpus_per_task = 1;
	accepted();
	spec.cpus_per_task = 5;		/* 40: node3 only */
	refused("--nodes 3: --cpus-per-task and --mem-per-node leave only 1 "
	    "node");
}
END_TEST

START_TEST(test_constraint)
{
	in.nodes = cnodes;
	in.nnodes = sizeof(cnodes) / sizeof(cnodes[0]);
	in.topo = NULL;
	spec_set(2, 1);
	spec.constraint = strdup("fp64&ib");
	accepted();
	spec.nodes_min = spec.nodes_max = 3;
	refused("--nodes 3: --constraint leaves only 2 nodes with 1 or more "
	    "GPUs");
	free(spec.constraint);
	spec.constraint = strdup("nvl72");
	refused("--constraint nvl72: no node has feature nvl72");
	free(spec.constraint);
	spec.constraint = strdup("nvl72|fp64&x");
	refused("--constraint nvl72|fp64&x: no node has features");
	free(spec.constraint);
	spec.constraint = strdup("fp64|");
	refused("--constraint 'fp64|': at column 6");
	free(spec.constraint);
	spec.constraint = strdup("ib");
	accepted();			/* 3 nodes */
	spec.gpu_memory_mb = 80 * 1024;	/* the H100s round to 80 GiB */
	accepted();
	spec.gpu_memory_mb = 81 * 1024;
	refused("--gpu-memory 81 GiB: no node has that much on every GPU "
	    "(at most 80 GiB)");
	free(spec.constraint);
	spec.constraint = NULL;
	spec.gpu_memory_mb = 40 * 1024;
	spec.nodes_min = spec.nodes_max = 4;
	accepted();			/* node4 counts, node5 has no GPU */
	spec.nodes_min = spec.nodes_max = 5;
	refused("--nodes 5: the cluster has only 4 nodes");
	spec.nodes_min = spec.nodes_max = 4;
	spec.gpu_memory_mb = 41 * 1024;
	refused("--nodes 4: --gpu-memory leaves only 3 nodes");
}
END_TEST

START_TEST(test_exclusive)
{
	spec_set(4, 0);
	spec.exclusive = true;
	accepted();
	spec_set(1, 16);
	spec.exclusive = true;
	refused("--gpus-per-node 16");
	/* Exclusive and CPU-only: any node, the GPU-less one too. */
	spec_set(7, 0);
	spec.exclusive = true;
	spec.cpu_only = true;
	accepted();
}
END_TEST

/* A node that is DOWN is still known: it is in the snapshot the caller
 * passes. With no node known nothing is judged. */
START_TEST(test_nothing_known)
{
	spec_set(100, 64);
	spec.gpu_type = strdup("B300");
	in.nnodes = 0;
	accepted();
}
END_TEST

/* While a node of the topology has never registered (its GPUs are not
 * known), nothing is judged; once every one has, the limits hold. */
START_TEST(test_bring_up)
{
	static const struct feasible_node some[] = {
		{ "node1", H100, 8 }, { "node2", H100, 8 },
		{ "node7", NULL, 0 },
	};

	in.nodes = some;
	in.nnodes = sizeof(some) / sizeof(some[0]);
	spec_set(6, 8);
	accepted();
	spec_set(1, 16);
	accepted();
	in.nodes = nodes;
	in.nnodes = sizeof(nodes) / sizeof(nodes[0]);
	spec_set(1, 16);
	refused("--gpus-per-node 16: the largest node has 8 GPUs");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("feasible");
	TCase *tc = tcase_create("check");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_gpus_per_node);
	tcase_add_test(tc, test_node_count);
	tcase_add_test(tc, test_gpu_type);
	tcase_add_test(tc, test_topology);
	tcase_add_test(tc, test_blocks);
	tcase_add_test(tc, test_topology_torus);
	tcase_add_test(tc, test_topology_group);
	tcase_add_test(tc, test_nodelist);
	tcase_add_test(tc, test_constraint);
	tcase_add_test(tc, test_cpus_mem);
	tcase_add_test(tc, test_exclusive);
	tcase_add_test(tc, test_nothing_known);
	tcase_add_test(tc, test_bring_up);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
