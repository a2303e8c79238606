/* Step credentials (daemon/controller/rpc/stepcred.c): what srun presents
 * to prove it runs in its job. Made and checked with the key of a real
 * database in a fresh temporary directory: the one of (job, attempt,
 * user) passes; another job's, attempt's or user's, a changed byte, a
 * short one and none are refused; two databases have different keys, and
 * a database reopened keeps its key. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/controller/rpc/stepcred.h"
#include "daemon/controller/store/store.h"

static char dir[64], path[128], path2[128];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_stepcred.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.db", dir);
	snprintf(path2, sizeof(path2), "%s/b.db", dir);
}

static void
teardown(void)
{
	char p[160];

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
}

static int
check(struct stepcred *sc, uint64_t job, uint32_t attempt, const char *user,
    const uint8_t *cred, size_t len)
{
	struct cerr err;

	cerr_clear(&err);
	if (stepcred_check(sc, job, attempt, user, cred, len, &err) == 0)
		return 0;
	ck_assert_int_eq(err.code, ERR_DENIED);
	return -1;
}

START_TEST(test_made_and_checked)
{
	struct cerr err;
	struct store *st = store_open(path, &err);
	struct stepcred *sc;
	uint8_t c[STEPCRED_LEN], d[STEPCRED_LEN];

	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(sc = stepcred_create(st));
	ck_assert_int_eq(stepcred_make(sc, 12, 3, "alice", c), 0);
	ck_assert_int_eq(check(sc, 12, 3, "alice", c, sizeof(c)), 0);
	ck_assert_int_eq(check(sc, 13, 3, "alice", c, sizeof(c)), -1);
	ck_assert_int_eq(check(sc, 12, 4, "alice", c, sizeof(c)), -1);
	ck_assert_int_eq(check(sc, 12, 3, "bob", c, sizeof(c)), -1);
	ck_assert_int_eq(check(sc, 12, 3, "alice", c, sizeof(c) - 1), -1);
	ck_assert_int_eq(check(sc, 12, 3, "alice", NULL, 0), -1);
	memcpy(d, c, sizeof(d));
	d[17] ^= 1;
	ck_assert_int_eq(check(sc, 12, 3, "alice", d, sizeof(d)), -1);
	/* Every (job, attempt) has its own. */
	ck_assert_int_eq(stepcred_make(sc, 12, 4, "alice", d), 0);
	ck_assert_int_ne(memcmp(c, d, sizeof(c)), 0);
	stepcred_destroy(sc);
	store_close(st);

	/* The key is the database's: kept when it is opened again, and
	 * not another database's. */
	ck_assert_ptr_nonnull(st = store_open(path, &err));
	ck_assert_ptr_nonnull(sc = stepcred_create(st));
	ck_assert_int_eq(check(sc, 12, 3, "alice", c, sizeof(c)), 0);
	stepcred_destroy(sc);
	store_close(st);
	ck_assert_ptr_nonnull(st = store_open(path2, &err));
	ck_assert_ptr_nonnull(sc = stepcred_create(st));
	ck_assert_int_eq(check(sc, 12, 3, "alice", c, sizeof(c)), -1);
	stepcred_destroy(sc);
	store_close(st);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("stepcred");
	TCase *tc = tcase_create("stepcred");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_made_and_checked);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
