/* daemon/agent/imgdigest.c: what a prepared image is known by. An OCI
 * layout's manifest digest for the tag, from index.json (other tags,
 * malformed digests, non-JSON, a FIFO where the index should be: none,
 * without blocking); a squashfs entry's sha256 file. */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/imgdigest.h"
#include "lib/container.h"

#define HEX1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static char tmpdir[PATH_MAX];
static char path[PATH_MAX + 32];

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_imgdigest.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/index.json", tmpdir);
}

static void
teardown(void)
{
	char p[PATH_MAX + 32];

	unlink(path);
	snprintf(p, sizeof(p), "%s/digest", tmpdir);
	unlink(p);
	rmdir(tmpdir);
}

static void
write_file(const char *name, const char *text)
{
	char p[PATH_MAX + 32];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static const char index_json[] =
    "{\"schemaVersion\":2,\"manifests\":["
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
    "\"digest\":\"sha256:" HEX1 "\",\"size\":349,"
    "\"annotations\":{\"org.opencontainers.image.ref.name\":\"v1\"}},"
    "{\"digest\":\"sha256:" HEX2 "\","
    "\"annotations\":{\"org.opencontainers.image.ref.name\":\"v2\"}},"
    "{\"digest\":\"md5:abc\","
    "\"annotations\":{\"org.opencontainers.image.ref.name\":\"old\"}}]}";

START_TEST(test_oci_tags)
{
	char d[CTR_DIGEST_LEN + 1];
	struct cerr err;

	write_file("index.json", index_json);
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, sizeof(d), &err), 0);
	ck_assert_str_eq(d, "sha256:" HEX1);
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v2", d, sizeof(d), &err), 0);
	ck_assert_str_eq(d, "sha256:" HEX2);
	ck_assert_int_eq(imgdigest_oci(tmpdir, "latest", d, sizeof(d), &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "'latest'"));
	ck_assert_int_eq(imgdigest_oci(tmpdir, "old", d, sizeof(d), &err),
	    -1);
	/* A buffer too small for a digest is refused. */
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, CTR_DIGEST_LEN, &err),
	    -1);
}
END_TEST

START_TEST(test_oci_bad_index)
{
	char d[CTR_DIGEST_LEN + 1];
	struct cerr err;

	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, sizeof(d), &err), -1);
	write_file("index.json", "{\"manifests\": [");
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, sizeof(d), &err), -1);
	write_file("index.json", "{\"manifests\": 3}");
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, sizeof(d), &err), -1);
	/* A FIFO in its place is refused, not waited on. */
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(imgdigest_oci(tmpdir, "v1", d, sizeof(d), &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not a file"));
}
END_TEST

START_TEST(test_entry)
{
	char d[CTR_DIGEST_LEN + 1];
	struct cerr err;

	ck_assert_int_eq(imgdigest_entry(tmpdir, d, sizeof(d), &err), -1);
	write_file("digest", HEX2 "\n");
	ck_assert_int_eq(imgdigest_entry(tmpdir, d, sizeof(d), &err), 0);
	ck_assert_str_eq(d, "sha256:" HEX2);
	write_file("digest", "not a digest\n");
	ck_assert_int_eq(imgdigest_entry(tmpdir, d, sizeof(d), &err), -1);
	ck_assert_str_eq(d, "");
}
END_TEST

START_TEST(test_valid)
{
	ck_assert(ctr_digest_valid("sha256:" HEX1));
	ck_assert(!ctr_digest_valid(NULL));
	ck_assert(!ctr_digest_valid(""));
	ck_assert(!ctr_digest_valid("sha256:" HEX1 "0"));
	ck_assert(!ctr_digest_valid("sha512:" HEX1));
	ck_assert(!ctr_digest_valid("sha256:0123456789ABCDEF0123456789abcdef"
	    "0123456789abcdef0123456789abcdef"));
}
END_TEST

static Suite *
imgdigest_suite(void)
{
	Suite *s = suite_create("imgdigest");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_oci_tags);
	tcase_add_test(tc, test_oci_bad_index);
	tcase_add_test(tc, test_entry);
	tcase_add_test(tc, test_valid);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(imgdigest_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
