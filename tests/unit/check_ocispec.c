/* daemon/agent/ocispec.c: the runtime configuration a task in an image
 * gets, read back with jansson; and lib/container.c's mount parsing,
 * which feeds it. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/ocispec.h"
#include "lib/container.h"

static json_t *
build(const struct ocispec *s)
{
	struct cerr err;
	json_error_t jerr;
	json_t *j;
	char *text;
	size_t len;

	ck_assert_msg(ocispec_json(s, &text, &len, &err) == 0, "%s", err.text);
	ck_assert_uint_eq(strlen(text), len);
	j = json_loads(text, 0, &jerr);
	ck_assert_msg(j != NULL, "not JSON (%s): %s", jerr.text, text);
	free(text);
	return j;
}

/* The mount at dst in j's mounts, or NULL. */
static json_t *
mount_at(json_t *j, const char *dst)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(j, "mounts"), i, m)
		if (strcmp(json_string_value(json_object_get(m, "destination")),
		    dst) == 0)
			return m;
	return NULL;
}

static bool
has_option(json_t *m, const char *opt)
{
	json_t *o;
	size_t i;

	json_array_foreach(json_object_get(m, "options"), i, o)
		if (strcmp(json_string_value(o), opt) == 0)
			return true;
	return false;
}

START_TEST(test_spec)
{
	static const char *const argv[] = { "python", "train.py", "a\"b\\c\n" };
	static char *const envp[] = { (char *)"RANK=3", (char *)"X=\x01",
	    NULL };
	static const gid_t groups[] = { 100, 200 };
	struct ctr_mount *m;
	struct ocispec_dev dev = { "/dev/nvidia1", 195, 1 };
	struct ocispec s;
	struct cerr err;
	json_t *j, *p, *mt, *ns;
	size_t nm;

	ck_assert_int_eq(ctr_mounts_parse("/data:/data:ro+nosuid,/ckpt:/c",
	    &m, &nm, &err), 0);
	memset(&s, 0, sizeof(s));
	s.rootfs = "/spool/rank-0.ctr/rootfs";
	s.argv = argv;
	s.argc = 3;
	s.envp = envp;
	s.cwd = "/work";
	s.uid = 1234;
	s.gid = 567;
	s.groups = groups;
	s.ngroups = 2;
	s.mounts = m;
	s.nmounts = nm;
	s.devs = &dev;
	s.ndevs = 1;
	s.cgroups_path = "/cohort-n1/job-5.0/rank-3";
	s.shm_bytes = 1ULL << 34;
	j = build(&s);

	p = json_object_get(j, "process");
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(p, "user"), "uid")), 1234);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(p, "user"), "gid")), 567);
	ck_assert_uint_eq(json_array_size(json_object_get(
	    json_object_get(p, "user"), "additionalGids")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(p,
	    "args"), 2)), "a\"b\\c\n");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(p,
	    "env"), 1)), "X=\x01");
	ck_assert_str_eq(json_string_value(json_object_get(p, "cwd")), "/work");
	ck_assert(json_is_true(json_object_get(p, "noNewPrivileges")));
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(p,
	    "capabilities"), "bounding")), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(p,
	    "capabilities"), "effective")), 0);
	ck_assert(json_is_true(json_object_get(json_object_get(j, "root"),
	    "readonly")));

	/* Only a mount namespace: the host's network, IPC and PIDs. */
	ns = json_object_get(json_object_get(j, "linux"), "namespaces");
	ck_assert_uint_eq(json_array_size(ns), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ns,
	    0), "type")), "mount");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "linux"), "cgroupsPath")), "/cohort-n1/job-5.0/rank-3");

	ck_assert_ptr_nonnull(mount_at(j, "/proc"));
	ck_assert(has_option(mount_at(j, "/sys"), "ro"));
	ck_assert(has_option(mount_at(j, "/dev/shm"), "size=17179869184"));
	mt = mount_at(j, "/data");
	ck_assert_ptr_nonnull(mt);
	ck_assert_str_eq(json_string_value(json_object_get(mt, "type")),
	    "bind");
	ck_assert(has_option(mt, "ro") && has_option(mt, "nosuid") &&
	    has_option(mt, "rbind") && has_option(mt, "rprivate"));
	mt = mount_at(j, "/c");
	ck_assert_str_eq(json_string_value(json_object_get(mt, "source")),
	    "/ckpt");
	ck_assert(has_option(mt, "rw") && !has_option(mt, "ro"));

	/* The GPU: a node, and allowed after the deny-all. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(json_object_get(j, "linux"), "devices"), 0),
	    "path")), "/dev/nvidia1");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(
	    json_object_get(j, "linux"), "resources"), "devices")), 2);
	json_decref(j);

	/* Writable; no GPU, no cgroup: none of their entries. */
	s.writable = true;
	s.ndevs = 0;
	s.cgroups_path = NULL;
	j = build(&s);
	ck_assert(json_is_false(json_object_get(json_object_get(j, "root"),
	    "readonly")));
	ck_assert_ptr_null(json_object_get(json_object_get(j, "linux"),
	    "cgroupsPath"));
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(j,
	    "linux"), "devices")), 0);
	json_decref(j);
	ctr_mounts_free(m, nm);
}
END_TEST

START_TEST(test_spec_bad)
{
	static const char *const argv[] = { "true" };
	struct ocispec s;
	struct cerr err;
	char *text;
	size_t len;

	memset(&s, 0, sizeof(s));
	s.rootfs = "rootfs";
	s.argv = argv;
	s.argc = 1;
	s.cwd = "/";
	ck_assert_int_eq(ocispec_json(&s, &text, &len, &err), -1);
	ck_assert_int_eq(err.code, ERR_INVALID);
	s.rootfs = "/r";
	s.argc = 0;
	ck_assert_int_eq(ocispec_json(&s, &text, &len, &err), -1);
	ck_assert_ptr_null(text);
}
END_TEST

START_TEST(test_mounts)
{
	struct ctr_mount *m;
	struct cerr err;
	size_t n;

	ck_assert_int_eq(ctr_mounts_parse("/a,/b:/c:ro+rslave+noexec,"
	    "/d:/e:rw", &m, &n, &err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(m[0].src, "/a");
	ck_assert_str_eq(m[0].dst, "/a");
	ck_assert_str_eq(m[0].propagation, "rprivate");
	ck_assert_uint_eq(m[1].flags, CTR_MF_RO | CTR_MF_NOEXEC);
	ck_assert_str_eq(m[1].propagation, "rslave");
	ck_assert_uint_eq(m[2].flags, CTR_MF_RW);
	ctr_mounts_free(m, n);
	ck_assert_int_eq(ctr_mounts_parse("/a:/b/../c", &m, &n, &err), -1);
	ck_assert_int_eq(ctr_mounts_parse("/a:/b:", &m, &n, &err), -1);
	ck_assert_int_eq(ctr_mounts_parse("/a:/b\n", &m, &n, &err), -1);
	ck_assert_int_eq(ctr_mounts_parse("/a,", &m, &n, &err), -1);
}
END_TEST

START_TEST(test_image)
{
	struct ctr_image_ref ref;
	struct cerr err;

	ck_assert_int_eq(ctr_image_parse("oci:/srv/img:v1.2", &ref, &err), 0);
	ck_assert_int_eq(ref.kind, CTR_IMAGE_OCI);
	ck_assert_str_eq(ref.path, "/srv/img");
	ck_assert_str_eq(ref.tag, "v1.2");
	ck_assert_int_eq(ctr_image_parse("oci:/srv/img/", &ref, &err), 0);
	ck_assert_str_eq(ref.path, "/srv/img");
	ck_assert_str_eq(ref.tag, "latest");
	ck_assert_int_eq(ctr_image_parse("/i/pt.sqsh", &ref, &err), 0);
	ck_assert_int_eq(ref.kind, CTR_IMAGE_SQUASHFS);
	ck_assert_int_eq(ctr_image_parse("oci:/srv/img:", &ref, &err), -1);
	ck_assert_int_eq(ctr_image_parse("oci:/srv/img:a/b:c$", &ref, &err),
	    -1);
	ck_assert_int_eq(ctr_image_parse("pt.sqsh", &ref, &err), -1);
	ck_assert(strstr(err.text, "absolute") != NULL);
	ck_assert_int_eq(ctr_image_parse("", &ref, &err), -1);
}
END_TEST

/* docker://[USER@][REGISTRY#]IMAGE[:TAG]: good forms split, bad ones
 * refused with their reason. */
START_TEST(test_image_docker)
{
	static const struct {
		const char *image, *registry, *path, *tag;
	} good[] = {
		{ "docker://ubuntu", "", "ubuntu", "latest" },
		{ "docker://ubuntu:22.04", "", "ubuntu", "22.04" },
		{ "docker://nvcr.io#nvidia/pytorch:24.01-py3", "nvcr.io",
		  "nvidia/pytorch", "24.01-py3" },
		{ "docker://reg.lan:5000#team/a.b_c-d/img", "reg.lan:5000",
		  "team/a.b_c-d/img", "latest" },
		{ "docker://localhost:443#x:V_1", "localhost:443", "x",
		  "V_1" },
	};
	static const struct {
		const char *image, *why;
	} bad[] = {
		{ "docker://", "no image name" },
		{ "docker://:tag", "no image name" },
		{ "docker://ubuntu:", "bad tag" },
		{ "docker://ubuntu:-x", "bad tag" },
		{ "docker://ubuntu:a$b", "bad tag" },
		{ "docker://Ubuntu", "bad image name" },
		{ "docker://a//b", "bad image name" },
		{ "docker://a/", "bad image name" },
		{ "docker://-a", "bad image name" },
		{ "docker://a..b", "bad image name" },
		{ "docker://nvcr.io/nvidia/pytorch:24.01", "goes before '#'" },
		{ "docker://localhost/x", "goes before '#'" },
		{ "docker://reg:5000/x", "goes before '#'" },
		{ "docker://#ubuntu", "is not a registry" },
		{ "docker://bad_host#ubuntu", "is not a registry" },
		{ "docker://h:0#ubuntu", "is not a registry" },
		{ "docker://h:65536#ubuntu", "is not a registry" },
		{ "docker://h:#ubuntu", "is not a registry" },
		{ "docker://-h#ubuntu", "is not a registry" },
		{ "docker://h#a#b", "more than one '#'" },
		{ "docker://me@nvcr.io#nvidia/pytorch", "registry login" },
		{ "docker://@ubuntu", "bad user" },
		{ "docker://m e@ubuntu", "bad user" },
		{ "docker://ubuntu@sha256:00", "by digest" },
		{ "dockerd://ubuntu", "local Docker" },
		{ "nvcr.io#nvidia/pytorch", "docker://[REGISTRY#]" },
	};
	struct job_container c;
	struct ctr_image_ref ref;
	struct cerr err;
	char src[512];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(ctr_image_parse(good[i].image, &ref, &err) == 0,
		    "%s: %s", good[i].image, err.text);
		ck_assert_int_eq(ref.kind, CTR_IMAGE_DOCKER);
		ck_assert_str_eq(ref.registry, good[i].registry);
		ck_assert_str_eq(ref.path, good[i].path);
		ck_assert_str_eq(ref.tag, good[i].tag);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(ctr_image_parse(bad[i].image, &ref, &err) == -1,
		    "%s accepted", bad[i].image);
		ck_assert_int_eq(err.code, ERR_INVALID);
		ck_assert_msg(strstr(err.text, bad[i].why) != NULL &&
		    strstr(err.text, bad[i].image) != NULL, "%s: %s",
		    bad[i].image, err.text);
	}
	/* skopeo's source: the default registry named. */
	ck_assert_int_eq(ctr_image_parse("docker://ubuntu", &ref, &err), 0);
	ck_assert_int_eq(ctr_image_source(&ref, src, sizeof(src)), 0);
	ck_assert_str_eq(src, "docker://docker.io/ubuntu:latest");
	ck_assert_int_eq(ctr_image_source(&ref, src, 20), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(ctr_image_parse("docker://nvcr.io#nvidia/pytorch:1",
	    &ref, &err), 0);
	ck_assert_int_eq(ctr_image_source(&ref, src, sizeof(src)), 0);
	ck_assert_str_eq(src, "docker://nvcr.io/nvidia/pytorch:1");
	ck_assert_int_eq(ctr_image_parse("oci:/srv/img", &ref, &err), 0);
	ck_assert_int_eq(ctr_image_source(&ref, src, sizeof(src)), -1);
	/* And as a job's option. */
	memset(&c, 0, sizeof(c));
	c.image = (char *)"docker://nvcr.io#nvidia/pytorch:24.01-py3";
	ck_assert_msg(ctr_validate(&c, &err) == 0, "%s", err.text);
	c.image = (char *)"docker://me@nvcr.io#nvidia/pytorch";
	ck_assert_int_eq(ctr_validate(&c, &err), -1);
}
END_TEST

/* Registry hosts, and the allowed list. */
START_TEST(test_registries)
{
	ck_assert(ctr_registry_host_ok("nvcr.io", 7));
	ck_assert(ctr_registry_host_ok("reg.lan:5000", 12));
	ck_assert(ctr_registry_host_ok("localhost", 9));
	ck_assert(!ctr_registry_host_ok("", 0));
	ck_assert(!ctr_registry_host_ok("a..b", 4));
	ck_assert(!ctr_registry_host_ok("a.-b", 4));
	ck_assert(!ctr_registry_host_ok("a:05", 4));
	ck_assert(!ctr_registry_host_ok("a:1234567", 9));
	ck_assert(!ctr_registry_host_ok("a/b", 3));
	ck_assert(!ctr_registry_host_ok(":80", 3));
	/* None by default. */
	ck_assert(!ctr_registry_allowed(NULL, ""));
	ck_assert(!ctr_registry_allowed("", ""));
	ck_assert(!ctr_registry_allowed("", "nvcr.io"));
	ck_assert(ctr_registry_allowed("nvcr.io, reg.lan:5000", "nvcr.io"));
	ck_assert(ctr_registry_allowed("nvcr.io, reg.lan:5000",
	    "REG.lan:5000"));
	ck_assert(!ctr_registry_allowed("nvcr.io, reg.lan:5000", "reg.lan"));
	ck_assert(!ctr_registry_allowed("nvcr.io", "nvcr.i"));
	ck_assert(!ctr_registry_allowed("nvcr.io", ""));
	/* Docker Hub: by either name, or by naming none. */
	ck_assert(ctr_registry_allowed("docker.io", ""));
	ck_assert(ctr_registry_allowed("registry-1.docker.io", ""));
	ck_assert(ctr_registry_allowed("nvcr.io,docker.io",
	    "registry-1.docker.io"));
	ck_assert(ctr_registry_allowed("index.docker.io", "docker.io"));
}
END_TEST

START_TEST(test_validate)
{
	struct job_container c;
	struct cerr err;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ctr_validate(&c, &err), 0);
	c.writable = true;
	ck_assert_int_eq(ctr_validate(&c, &err), -1);
	ck_assert(strstr(err.text, "--container-writable needs "
	    "--container-image") != NULL);
	c.image = (char *)"/i.sqsh";
	ck_assert_int_eq(ctr_validate(&c, &err), 0);
	c.env = (char *)"A,,B";
	ck_assert_int_eq(ctr_validate(&c, &err), -1);
	c.env = NULL;
	c.name = (char *)"";
	ck_assert_int_eq(ctr_validate(&c, &err), -1);
}
END_TEST

static Suite *
ocispec_suite(void)
{
	Suite *s = suite_create("ocispec");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_spec);
	tcase_add_test(tc, test_spec_bad);
	tcase_add_test(tc, test_mounts);
	tcase_add_test(tc, test_image);
	tcase_add_test(tc, test_image_docker);
	tcase_add_test(tc, test_registries);
	tcase_add_test(tc, test_validate);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ocispec_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
