/* lib/addrlist: the controller address lists of COHORT_SERVER and the
 * agent's controller key, and the walk that looks for the leader. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addrlist.h"

static const char *
fmt(const struct addrlist_addr *a)
{
	static char buf[ADDRLIST_ADDR_TEXT];

	return addrlist_addr_format(a, buf, sizeof(buf));
}

/* The next address of the walk, as text; "-" when the round is over. */
static const char *
next(struct addrlist_walk *w)
{
	struct addrlist_addr a;

	return addrlist_walk_next(w, &a) ? fmt(&a) : "-";
}

START_TEST(test_parse)
{
	struct addrlist l;
	struct cerr err;

	ck_assert_int_eq(addrlist_parse("ctl:7420", &l, &err), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.a[0].host, "ctl");
	ck_assert_uint_eq(l.a[0].port, 7420);
	ck_assert_int_eq(addrlist_parse(" 10.0.0.1:1 ,\t[::1]:2,h-3.x:65535 ",
	    &l, &err), 0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(fmt(&l.a[0]), "10.0.0.1:1");
	ck_assert_str_eq(fmt(&l.a[1]), "[::1]:2");
	ck_assert_str_eq(fmt(&l.a[2]), "h-3.x:65535");
	ck_assert_int_eq(addrlist_find(&l, &l.a[2]), 2);
}
END_TEST

/* Each bad entry is named by its place and text; the list is left. */
START_TEST(test_parse_errors)
{
	static const struct {
		const char *in, *want;
	} c[] = {
		{ "", "empty address list (expected HOST:PORT[,HOST:PORT...])" },
		{ "  ", "empty address list (expected HOST:PORT[,HOST:PORT...])" },
		{ "a:1,", "address 2 of 'a:1,' is empty" },
		{ ",a:1", "address 1 of ',a:1' is empty" },
		{ "a:1, b", "address 2 ('b'): 'b': missing port (expected "
		    "HOST:PORT)" },
		{ "a:1,b:0", "address 2 ('b:0'): " },
		{ "a:1,b:99999", "address 2 ('b:99999'): " },
		{ "a:1,::1:5", "address 2 ('::1:5'): '::1:5': an IPv6 address "
		    "needs brackets, as in [::1]:7420" },
		{ "a:1,A:1", "address 2 ('A:1') repeats address 1" },
		{ "a b:1,c:2", "address 1 ('a b:1'): " },
		{ "ctl", "'ctl': missing port (expected HOST:PORT)" },
	};
	struct addrlist l;
	struct cerr err;
	size_t i;

	l.n = 77;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cerr_clear(&err);
		ck_assert_msg(addrlist_parse(c[i].in, &l, &err) == -1, "%s",
		    c[i].in);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_msg(strncmp(err.text, c[i].want,
		    strlen(c[i].want)) == 0, "'%s': got '%s'", c[i].in,
		    err.text);
		ck_assert_uint_eq(l.n, 77);
	}
}
END_TEST

START_TEST(test_parse_too_many)
{
	char buf[1024] = "";
	struct addrlist l;
	struct cerr err;
	int i;

	for (i = 1; i <= ADDRLIST_MAX; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%sh:%d",
		    i > 1 ? "," : "", i);
	ck_assert_int_eq(addrlist_parse(buf, &l, &err), 0);
	ck_assert_uint_eq(l.n, ADDRLIST_MAX);
	strcat(buf, ",h:999");
	ck_assert_int_eq(addrlist_parse(buf, &l, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "more than 16 addresses"));
}
END_TEST

/* A round: the list in order; then a back-off of 50 ms doubling to
 * 250 ms. */
START_TEST(test_walk_rounds)
{
	struct addrlist l;
	struct addrlist_walk w;
	struct cerr err;

	ck_assert_int_eq(addrlist_parse("a:1,b:2,c:3", &l, &err), 0);
	addrlist_walk_init(&w, &l, NULL);
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert_str_eq(next(&w), "b:2");
	ck_assert_str_eq(next(&w), "c:3");
	ck_assert_str_eq(next(&w), "-");
	ck_assert_uint_eq(addrlist_walk_round(&w), 50);
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert_uint_eq(addrlist_walk_round(&w), 100);
	ck_assert_uint_eq(addrlist_walk_round(&w), 200);
	ck_assert_uint_eq(addrlist_walk_round(&w), 250);
	ck_assert_uint_eq(addrlist_walk_round(&w), 250);
}
END_TEST

/* The last known leader first, then the others, none twice a round. */
START_TEST(test_walk_leader_first)
{
	struct addrlist l;
	struct addrlist_walk w;
	struct cerr err;

	ck_assert_int_eq(addrlist_parse("a:1,b:2,c:3", &l, &err), 0);
	addrlist_walk_init(&w, &l, &l.a[1]);
	ck_assert_str_eq(next(&w), "b:2");
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert_str_eq(next(&w), "c:3");
	ck_assert_str_eq(next(&w), "-");
	addrlist_walk_round(&w);
	addrlist_walk_found(&w, &l.a[2]);
	ck_assert_str_eq(next(&w), "c:3");
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert_str_eq(next(&w), "b:2");
	ck_assert_str_eq(next(&w), "-");
}
END_TEST

/* ERR_NOT_LEADER naming the leader: there next, listed or not; a listed
 * one is not tried again in the round; redirects are bounded. */
START_TEST(test_walk_redirect)
{
	struct addrlist l;
	struct addrlist_walk w;
	struct addrlist_addr x;
	struct cerr err;
	int i;

	ck_assert_int_eq(addrlist_parse("a:1,b:2,c:3", &l, &err), 0);
	addrlist_walk_init(&w, &l, NULL);
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert(addrlist_walk_redirect(&w, &l.a[2]));
	ck_assert_str_eq(next(&w), "c:3");
	ck_assert_str_eq(next(&w), "b:2");
	ck_assert_str_eq(next(&w), "-");
	addrlist_walk_round(&w);
	ck_assert_int_eq(addrlist_addr_parse("elsewhere:9", &x, &err), 0);
	ck_assert_str_eq(next(&w), "a:1");
	ck_assert(addrlist_walk_redirect(&w, &x));
	ck_assert_str_eq(next(&w), "elsewhere:9");
	ck_assert_str_eq(next(&w), "b:2");
	/* Two replicas naming each other: followed a few times, then the
	 * round goes on. */
	addrlist_walk_round(&w);
	for (i = 0; i < ADDRLIST_MAX_REDIRECTS; i++) {
		ck_assert(addrlist_walk_redirect(&w, &l.a[i % 2]));
		ck_assert_str_eq(next(&w), fmt(&l.a[i % 2]));
	}
	ck_assert(!addrlist_walk_redirect(&w, &l.a[0]));
	ck_assert_str_eq(next(&w), "c:3");
	ck_assert_str_eq(next(&w), "-");
	/* A new round may follow again. */
	addrlist_walk_round(&w);
	ck_assert(addrlist_walk_redirect(&w, &l.a[1]));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("addrlist");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_parse_too_many);
	tcase_add_test(tc, test_walk_rounds);
	tcase_add_test(tc, test_walk_leader_first);
	tcase_add_test(tc, test_walk_redirect);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
