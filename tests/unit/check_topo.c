/* daemon/sched/topo.c: the tree syntax, ranges, levels, and each refusal
 * with its FILE:LINE. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sched/topo.h"

static struct topo *
parse(const char *text)
{
	char err[512];
	struct topo *t = topo_parse(text, strlen(text), "topo.conf", err,
	    sizeof(err));

	ck_assert_msg(t != NULL, "refused: %s", err);
	return t;
}

static int32_t
sw(const struct topo *t, const char *name)
{
	size_t i;

	for (i = 0; i < topo_nswitches(t); i++)
		if (strcmp(topo_switch_name(t, i), name) == 0)
			return (int32_t)i;
	ck_abort_msg("no switch %s", name);
	return -1;
}

START_TEST(test_tree)
{
	static const char text[] =
	    "# two leaves under a spine\n"
	    "\n"
	    "SwitchName=spine0 Switches=leaf[0-1]   # forward reference\n"
	    "SwitchName=leaf0 Nodes=gpu[001-032] LinkSpeed=400\n"
	    "switchname=leaf1 nodes=gpu[033-040],gpu050\n";
	struct topo *t = parse(text);

	ck_assert_uint_eq(topo_nswitches(t), 3);
	ck_assert_uint_eq(topo_nnodes(t), 41);
	ck_assert_uint_eq(topo_height(t), 2);
	ck_assert_int_eq(topo_node_leaf(t, "gpu001"), sw(t, "leaf0"));
	ck_assert_int_eq(topo_node_leaf(t, "gpu032"), sw(t, "leaf0"));
	ck_assert_int_eq(topo_node_leaf(t, "gpu033"), sw(t, "leaf1"));
	ck_assert_int_eq(topo_node_leaf(t, "gpu050"), sw(t, "leaf1"));
	ck_assert_int_eq(topo_node_leaf(t, "gpu041"), -1);
	ck_assert_int_eq(topo_node_leaf(t, "gpu1"), -1);
	ck_assert_int_eq(topo_switch_parent(t, sw(t, "leaf0")),
	    sw(t, "spine0"));
	ck_assert_int_eq(topo_switch_parent(t, sw(t, "spine0")), -1);
	ck_assert_uint_eq(topo_switch_level(t, sw(t, "leaf1")), 0);
	ck_assert_uint_eq(topo_switch_level(t, sw(t, "spine0")), 1);
	ck_assert_int_eq(topo_level_index(t, "leaf"), 0);
	ck_assert_int_eq(topo_level_index(t, "SPINE"), 1);
	ck_assert_int_eq(topo_level_index(t, "core"), 2);
	ck_assert_int_eq(topo_level_index(t, "level4"), 4);
	ck_assert_int_eq(topo_level_index(t, "rack"), -1);
	ck_assert_int_eq(topo_level_index(t, NULL), -1);
	ck_assert_str_eq(topo_level_name(t, 1), "spine");
	ck_assert_uint_gt(topo_bytes(t), 41 * 6);
	topo_destroy(t);
}
END_TEST

START_TEST(test_levels_irregular)
{
	/* A core over a spine and a bare leaf: Slurm's levels count from
	 * the bottom, one above the highest child. */
	static const char text[] =
	    "SwitchName=l0 Nodes=a[1-2]\n"
	    "SwitchName=l1 Nodes=b[1-2]\n"
	    "SwitchName=l2 Nodes=c[1-2]\n"
	    "SwitchName=s0 Switches=l[0-1]\n"
	    "SwitchName=c0 Switches=s0,l2\n";
	struct topo *t = parse(text);

	ck_assert_uint_eq(topo_height(t), 3);
	ck_assert_uint_eq(topo_switch_level(t, sw(t, "c0")), 2);
	ck_assert_uint_eq(topo_switch_level(t, sw(t, "l2")), 0);
	ck_assert_int_eq(topo_switch_parent(t, sw(t, "l2")), sw(t, "c0"));
	topo_destroy(t);
}

END_TEST

START_TEST(test_level_names)
{
	static const char text[] =
	    "LevelNames=rack,row,hall,site\n"
	    "SwitchName=r0 Nodes=n[1-4]\n"
	    "SwitchName=r1 Nodes=n[5-8]\n"
	    "SwitchName=w0 Switches=r[0-1]\n";
	struct topo *t = parse(text);

	ck_assert_int_eq(topo_level_index(t, "rack"), 0);
	ck_assert_int_eq(topo_level_index(t, "Row"), 1);
	ck_assert_int_eq(topo_level_index(t, "site"), 3);
	/* Given names replace the defaults. */
	ck_assert_int_eq(topo_level_index(t, "leaf"), -1);
	ck_assert_int_eq(topo_level_index(t, "spine"), -1);
	ck_assert_str_eq(topo_level_name(t, 2), "hall");
	topo_destroy(t);
}
END_TEST

START_TEST(test_empty)
{
	struct topo *t = parse("# nothing here\n\n   \n");

	ck_assert_uint_eq(topo_nswitches(t), 0);
	ck_assert_uint_eq(topo_height(t), 0);
	ck_assert_int_eq(topo_node_leaf(t, "n1"), -1);
	ck_assert_int_eq(topo_level_index(t, "leaf"), 0);
	topo_destroy(t);
	/* Not NUL terminated: only len bytes are read. */
	t = topo_parse("SwitchName=a Nodes=n1XXXX", 21, "f", NULL, 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(topo_node_leaf(t, "n1"), 0);
	topo_destroy(t);
}
END_TEST

struct bad {
	const char *text;
	const char *msg;	/* the whole "FILE:LINE: ..." or a prefix */
};

static const struct bad bads[] = {
	{ "SwitchName=a Nodes=n1\nSwitchName=b Nodse=n2\n",
	    "topo.conf:2: unknown key \"Nodse\"" },
	{ "SwitchName=a Nodes\n", "topo.conf:1: expected KEY=VALUE" },
	{ "# c\nNodes=n1\n", "topo.conf:2: missing SwitchName=" },
	{ "SwitchName=a SwitchName=b Nodes=n1\n",
	    "topo.conf:1: SwitchName= given twice" },
	{ "SwitchName= Nodes=n1\n", "topo.conf:1: SwitchName= has no value" },
	{ "SwitchName=a Nodes=n1\n\nSwitchName=a Nodes=n2\n",
	    "topo.conf:3: switch a already defined at line 1" },
	{ "SwitchName=a Nodes=n1 Switches=b\nSwitchName=b Nodes=n2\n",
	    "topo.conf:1: switch a has both Nodes= and Switches=" },
	{ "SwitchName=a LinkSpeed=5\n",
	    "topo.conf:1: switch a has neither Nodes= nor Switches=" },
	{ "SwitchName=a Nodes=n[1-\n",
	    "topo.conf:1: Nodes=: hostlist \"n[1-\": missing ']'" },
	{ "SwitchName=a Nodes=n[2-1]\n",
	    "topo.conf:1: Nodes=: hostlist \"n[2-1]\": range 2-1 runs "
	    "backwards" },
	{ "SwitchName=a Nodes=n[1-4]\nSwitchName=b Nodes=n[4-6]\n",
	    "topo.conf:2: node n4 is already under switch a (line 1)" },
	{ "SwitchName=a Nodes=n1,n1\n",
	    "topo.conf:1: node n1 listed twice under switch a" },
	{ "SwitchName=a Nodes=n1\nSwitchName=s Switches=a,zz\n",
	    "topo.conf:2: unknown switch zz in Switches=" },
	{ "SwitchName=a Nodes=n1\nSwitchName=s Switches=a\n"
	  "SwitchName=t Switches=a\n",
	    "topo.conf:3: switch a is already under switch s (line 2)" },
	{ "SwitchName=s Switches=s\n", "topo.conf:1: switch s lists itself" },
	{ "SwitchName=a Nodes=n1\nSwitchName=s Switches=t\n"
	  "SwitchName=t Switches=s\n",
	    "topo.conf:2: switch s is its own ancestor" },
	{ "LevelNames=a,b\nLevelNames=c\n",
	    "topo.conf:2: LevelNames= given again (first at line 1)" },
	{ "LevelNames=a,,b\n", "topo.conf:1: empty name in LevelNames=" },
	{ "LevelNames=a,B,b\n", "topo.conf:1: level name \"B\" given twice" },
	{ "LevelNames=rack,Torus\n", "topo.conf:1: level name \"Torus\" is "
	    "reserved (--topology torus and block)" },
	{ "LevelNames=block\n", "topo.conf:1: level name \"block\" is "
	    "reserved (--topology torus and block)" },
	{ "LevelNames=a SwitchName=x Nodes=n1\n",
	    "topo.conf:1: LevelNames= must be alone on its line" },
	{ "LevelNames=rack\nSwitchName=a Nodes=n1\n"
	  "SwitchName=s Switches=a\n",
	    "topo.conf:1: LevelNames= names 1 levels but the tree has 2" },
	{ "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n\0002\n",
	    "topo.conf:2: NUL byte" },
	/* Blocks. */
	{ "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-6]\n",
	    "topo.conf:2: node n4 is already in block b1 (line 1)" },
	{ "BlockName=b1 Nodes=n1,n1\n",
	    "topo.conf:1: node n1 listed twice in block b1" },
	{ "BlockName=b1 Nodes=n1\nBlockName=b1 Nodes=n2\n",
	    "topo.conf:2: block b1 already defined at line 1" },
	{ "BlockName=b1\n", "topo.conf:1: block b1 has no Nodes=" },
	{ "BlockName=b1 Nodes=n1 LinkSpeed=400\n",
	    "topo.conf:1: unknown key \"LinkSpeed\" in a block statement" },
	{ "BlockName=b1 Switches=s1\n",
	    "topo.conf:1: unknown key \"Switches\" in a block statement" },
	{ "BlockName=b1 Nodes=n1 BlockName=b2\n",
	    "topo.conf:1: BlockName= given twice" },
	{ "BlockName= Nodes=n1\n", "topo.conf:1: BlockName= has no value" },
	{ "BlockName=b1 Nodes=n[1-\n",
	    "topo.conf:1: Nodes=: hostlist \"n[1-\": missing ']'" },
	{ "BlockName=b1 Nodes=n[1-3]\nBlockSizes=2\n",
	    "topo.conf:1: block b1 has 3 nodes, more than the base block "
	    "size 2 (BlockSizes= at line 2)" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2,3\n",
	    "topo.conf:2: BlockSizes=: 3 is not a multiple of the base "
	    "block size 2" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=4,2\n",
	    "topo.conf:2: BlockSizes=: 2 is not above 4" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=0\n",
	    "topo.conf:2: BlockSizes=: 0 is not a size" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2,x\n",
	    "topo.conf:2: BlockSizes=: expected a number at \"x\"" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2,4,\n",
	    "topo.conf:2: BlockSizes=: expected a number" },
	{ "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2 BlockName=b2\n",
	    "topo.conf:2: BlockSizes= must be alone on its line" },
	{ "BlockSizes=2\nBlockSizes=4\nBlockName=b Nodes=n1\n",
	    "topo.conf:2: BlockSizes= given again (first at line 1)" },
	{ "BlockSizes=2\n",
	    "topo.conf:1: BlockSizes= given but no BlockName= statement" },
	{ "SwitchName=l0 Nodes=n[1-2]\nBlockName=b1 Nodes=n[1-2] "
	  "SwitchName=l1\n",
	    "topo.conf:2: unknown key \"SwitchName\" in a block statement" },
};

START_TEST(test_bad)
{
	char err[512];
	struct topo *t;
	size_t len = strlen(bads[_i].text);

	/* The NUL case carries its length past the NUL. */
	if (strstr(bads[_i].msg, "NUL") != NULL)
		len += 3;
	errno = 0;
	t = topo_parse(bads[_i].text, len, "topo.conf", err, sizeof(err));
	ck_assert_msg(t == NULL, "accepted: %s", bads[_i].text);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strncmp(err, bads[_i].msg, strlen(bads[_i].msg)) == 0,
	    "want '%s', got '%s'", bads[_i].msg, err);
}
END_TEST

START_TEST(test_deep)
{
	char text[4096];
	size_t off = 0;
	int i;
	char err[256];

	off += (size_t)snprintf(text + off, sizeof(text) - off,
	    "SwitchName=s0 Nodes=n1\n");
	for (i = 1; i <= TOPO_LEVELS_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
		    "SwitchName=s%d Switches=s%d\n", i, i - 1);
	errno = 0;
	ck_assert_ptr_null(topo_parse(text, off, "deep", err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "levels above its leaves") != NULL, "%s",
	    err);
	ck_assert_msg(strncmp(err, "deep:17: ", 9) == 0, "%s", err);
}
END_TEST

START_TEST(test_load_file)
{
	char path[] = "/tmp/check_topo.XXXXXX", err[512];
	static const char text[] = "SwitchName=l0 Nodes=g[1-2]\n"
	    "SwitchName=l1 Nodez=g3\n";
	struct topo *t;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
	    (int)sizeof(text) - 1);
	close(fd);
	errno = 0;
	ck_assert_ptr_null(topo_load_file(path, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0 &&
	    strncmp(err + strlen(path), ":2: unknown key", 15) == 0, "%s",
	    err);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, 27), 27);
	close(fd);
	t = topo_load_file(path, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_int_eq(topo_node_leaf(t, "g2"), 0);
	topo_destroy(t);
	unlink(path);
	errno = 0;
	ck_assert_ptr_null(topo_load_file(path, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
}
END_TEST

START_TEST(test_blocks)
{
	/* Blocks with the tree: each block's nodes also sit under a leaf;
	 * one node is in a block only, one under a leaf only. */
	static const char text[] =
	    "SwitchName=leaf0 Nodes=n[01-04]\n"
	    "SwitchName=leaf1 Nodes=n[05-08],x1\n"
	    "SwitchName=spine Switches=leaf[0-1]\n"
	    "BlockName=nvl0 Nodes=n[01-04]   # one NVL domain\n"
	    "blockname=nvl1 nodes=n[05-07],n09\n"
	    "BlockName=nvl2 Nodes=n[10-11]\n";
	struct topo *t = parse(text);

	ck_assert_uint_eq(topo_nswitches(t), 3);
	ck_assert_uint_eq(topo_nnodes(t), 9);
	ck_assert_uint_eq(topo_nblocks(t), 3);
	ck_assert_str_eq(topo_block_name(t, 1), "nvl1");
	ck_assert_uint_eq(topo_block_nnodes(t, 1), 4);
	ck_assert_uint_eq(topo_block_nnodes(t, 2), 2);
	ck_assert_int_eq(topo_node_block(t, "n01"), 0);
	ck_assert_int_eq(topo_node_block(t, "n04"), 0);
	ck_assert_int_eq(topo_node_block(t, "n05"), 1);
	ck_assert_int_eq(topo_node_block(t, "n09"), 1);
	ck_assert_int_eq(topo_node_block(t, "n11"), 2);
	ck_assert_int_eq(topo_node_block(t, "n08"), -1);
	ck_assert_int_eq(topo_node_block(t, "x1"), -1);
	ck_assert_int_eq(topo_node_block(t, NULL), -1);
	ck_assert_int_eq(topo_node_leaf(t, "n05"), sw(t, "leaf1"));
	ck_assert_int_eq(topo_node_leaf(t, "n09"), -1);
	/* Default sizes: the largest block (4), then 8 (2 blocks); 16
	 * would need 4. */
	ck_assert_uint_eq(topo_nblock_sizes(t), 2);
	ck_assert_uint_eq(topo_block_size(t, 0), 4);
	ck_assert_uint_eq(topo_block_size(t, 1), 8);
	topo_destroy(t);

	t = parse("BlockSizes=18,54\nBlockName=b[1] Nodes=g[001-018]\n"
	    "BlockName=b2 Nodes=g[019-030]\n");
	ck_assert_uint_eq(topo_nswitches(t), 0);
	ck_assert_uint_eq(topo_height(t), 0);
	ck_assert_uint_eq(topo_nblocks(t), 2);
	ck_assert_str_eq(topo_block_name(t, 0), "b[1]");
	ck_assert_uint_eq(topo_nblock_sizes(t), 2);
	ck_assert_uint_eq(topo_block_size(t, 0), 18);
	ck_assert_uint_eq(topo_block_size(t, 1), 54);
	ck_assert_int_eq(topo_node_block(t, "g030"), 1);
	topo_destroy(t);

	/* No blocks: nothing to ask. */
	t = parse("SwitchName=l0 Nodes=a1\n");
	ck_assert_uint_eq(topo_nblocks(t), 0);
	ck_assert_uint_eq(topo_nblock_sizes(t), 0);
	ck_assert_int_eq(topo_node_block(t, "a1"), -1);
	topo_destroy(t);
	ck_assert_uint_eq(topo_nblocks(NULL), 0);
}
END_TEST

/* The example shipped in etc/ must parse. */
START_TEST(test_example)
{
	char err[512];
	struct topo *t;

	t = topo_load_file(TOP_SRCDIR "/etc/topology.conf", err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_uint_gt(topo_nnodes(t), 0);
	ck_assert_int_ge(topo_node_leaf(t, "gpu001"), 0);
	topo_destroy(t);
}
END_TEST

static Suite *
topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_tree);
	tcase_add_test(tc, test_levels_irregular);
	tcase_add_test(tc, test_level_names);
	tcase_add_test(tc, test_empty);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bads) / sizeof(*bads));
	tcase_add_test(tc, test_deep);
	tcase_add_test(tc, test_blocks);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_example);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(topo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
