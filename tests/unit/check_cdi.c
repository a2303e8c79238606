/* daemon/agent/cdi.c: CDI specs written by the test, refused or applied
 * to a task's OCI configuration (ocispec.c), read back with jansson. */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/cdi.h"
#include "daemon/agent/ocispec.h"
#include "lib/container.h"

static char dir[64];

/* /dev/null, /dev/zero and /dev/full stand for the driver's nodes: real
 * character devices (1,3), (1,5), (1,7) here. */
static const char good[] =
"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\","
" \"containerEdits\":{"
"  \"env\":[\"NVIDIA_VISIBLE_DEVICES=void\",\"COHORT_JOB_ID=666\","
"   \"RANK=99\"],"
"  \"deviceNodes\":[{\"path\":\"/dev/nvidiactl\",\"hostPath\":\"/dev/null\"}],"
"  \"mounts\":[{\"hostPath\":\"/usr/lib/libcuda.so.1\","
"   \"containerPath\":\"/usr/lib/libcuda.so.1\",\"options\":[\"rw\","
"   \"bind\"]}],"
"  \"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/bin/true\"}]},"
" \"devices\":["
"  {\"name\":\"0\",\"containerEdits\":{\"deviceNodes\":[{\"path\":"
"   \"/dev/nvidia0\",\"hostPath\":\"/dev/zero\",\"permissions\":\"rw\"}]}},"
"  {\"name\":\"1\",\"containerEdits\":{\"deviceNodes\":[{\"path\":"
"   \"/dev/nvidia1\",\"hostPath\":\"/dev/full\"}],"
"   \"env\":[\"GPU1=yes\"]}},"
"  {\"name\":\"all\",\"containerEdits\":{\"deviceNodes\":[{\"path\":"
"   \"/dev/nvidia0\",\"hostPath\":\"/dev/zero\"}]}}]}";

static void
write_spec(const char *name, const char *text, mode_t mode)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_cdi.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Load name from dir, expecting a refusal whose text has want. */
static void
refused(const char *name, const char *want)
{
	struct cdi_spec *s = (struct cdi_spec *)1;
	struct cerr err;
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(cdi_spec_load(path, getuid(), &s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err.text, want) != NULL, "'%s' lacks '%s'",
	    err.text, want);
}

static json_t *
config(const struct ocispec *s)
{
	struct cerr err;
	json_t *j;
	char *text;
	size_t len;

	ck_assert_msg(ocispec_json(s, &text, &len, &err) == 0, "%s", err.text);
	ck_assert_ptr_nonnull(j = json_loads(text, 0, NULL));
	free(text);
	return j;
}

static int
has_str(json_t *a, const char *v)
{
	json_t *o;
	size_t i;

	json_array_foreach(a, i, o)
		if (strcmp(json_string_value(o), v) == 0)
			return 1;
	return 0;
}

START_TEST(test_apply)
{
	static const char *const argv[] = { "nvidia-smi" };
	static char *const envp[] = { (char *)"COHORT_JOB_ID=7",
	    (char *)"RANK=0", NULL };
	static const unsigned gpus[] = { 1 };
	struct ocispec base, out;
	struct cdi_applied held;
	struct cdi_spec *s;
	struct cerr err;
	struct ctr_mount *m;
	json_t *j, *a, *o, *ro = NULL;
	char path[128], *text;
	size_t i, nm, ndev = 0, len;
	int saw_ctl = 0, saw_1 = 0;

	write_spec("nvidia.json", good, 0644);
	snprintf(path, sizeof(path), "%s/nvidia.json", dir);
	ck_assert_msg(cdi_spec_load(path, getuid(), &s, &err) == 0, "%s",
	    err.text);
	ck_assert_uint_eq(s->ndevices, 3);
	ck_assert_uint_eq(s->common.nhooks, 1);

	ck_assert_int_eq(ctr_mounts_parse("/data:/data", &m, &nm, &err), 0);
	memset(&base, 0, sizeof(base));
	base.rootfs = "/r";
	base.cwd = "/";
	base.argv = argv;
	base.argc = 1;
	base.envp = envp;
	base.mounts = m;
	base.nmounts = nm;
	ck_assert_msg(cdi_apply(s, gpus, 1, &base, &out, &held, &err) == 0,
	    "%s", err.text);
	j = config(&out);

	/* Exactly the job's GPU's node and the shared one. */
	json_array_foreach(json_object_get(json_object_get(j, "linux"),
	    "devices"), i, o) {
		const char *p = json_string_value(json_object_get(o, "path"));

		ndev++;
		ck_assert_int_eq(json_integer_value(json_object_get(o,
		    "major")), 1);
		if (strcmp(p, "/dev/nvidiactl") == 0)
			saw_ctl = json_integer_value(json_object_get(o,
			    "minor")) == 3;
		else if (strcmp(p, "/dev/nvidia1") == 0)
			saw_1 = json_integer_value(json_object_get(o,
			    "minor")) == 7;
		else
			ck_abort_msg("unexpected device %s", p);
	}
	ck_assert_uint_eq(ndev, 2);
	ck_assert(saw_ctl && saw_1);
	/* The cgroup allows those two and not /dev/zero (1,5). */
	json_array_foreach(json_object_get(json_object_get(json_object_get(j,
	    "linux"), "resources"), "devices"), i, o)
		ck_assert_int_ne(json_integer_value(json_object_get(o,
		    "minor")), 5);

	/* The driver's library: read only, nosuid, nodev, whatever the spec
	 * asked; the job's own mount still there. */
	json_array_foreach(json_object_get(j, "mounts"), i, o)
		if (strcmp(json_string_value(json_object_get(o,
		    "destination")), "/usr/lib/libcuda.so.1") == 0)
			ro = o;
	ck_assert_ptr_nonnull(ro);
	a = json_object_get(ro, "options");
	ck_assert(has_str(a, "ro") && has_str(a, "nosuid") &&
	    has_str(a, "nodev") && !has_str(a, "rw"));
	ck_assert_str_eq(json_string_value(json_object_get(ro, "source")),
	    "/usr/lib/libcuda.so.1");

	/* Env: the spec's added, the job's kept, COHORT_ never the spec's. */
	a = json_object_get(json_object_get(j, "process"), "env");
	ck_assert(has_str(a, "NVIDIA_VISIBLE_DEVICES=void"));
	ck_assert(has_str(a, "GPU1=yes"));
	ck_assert(has_str(a, "COHORT_JOB_ID=7"));
	ck_assert(!has_str(a, "COHORT_JOB_ID=666"));
	ck_assert(has_str(a, "RANK=0"));
	ck_assert(!has_str(a, "RANK=99"));
	ck_assert_uint_eq(json_array_size(a), 4);
	json_decref(j);
	cdi_applied_free(&held);

	/* GPU 0: its node with the spec's permissions in the cgroup. */
	{
		static const unsigned g0[] = { 0 };
		int saw = 0;

		ck_assert_int_eq(cdi_apply(s, g0, 1, &base, &out, &held, &err),
		    0);
		j = config(&out);
		json_array_foreach(json_object_get(json_object_get(
		    json_object_get(j, "linux"), "resources"), "devices"), i, o)
			if (json_integer_value(json_object_get(o, "minor")) ==
			    5) {
				ck_assert_str_eq(json_string_value(
				    json_object_get(o, "access")), "rw");
				saw = 1;
			}
		ck_assert(saw);
		json_decref(j);
		/* And ocispec refuses an access that is not of "rwm". */
		held.devs[0].access = "rwx";
		ck_assert_int_eq(ocispec_json(&out, &text, &len, &err), -1);
		ck_assert(strstr(err.text, "access") != NULL);
		cdi_applied_free(&held);
	}

	/* A GPU the spec does not name: nothing applied. */
	{
		static const unsigned g7[] = { 7 };

		memset(&out, 0, sizeof(out));
		ck_assert_int_eq(cdi_apply(s, g7, 1, &base, &out, &held, &err),
		    -1);
		ck_assert(strstr(err.text, "no device named \"7\"") != NULL);
		ck_assert_ptr_null(out.rootfs);
		ck_assert_ptr_null(held.devs);
	}
	ctr_mounts_free(m, nm);
	cdi_spec_free(s);
}
END_TEST

START_TEST(test_refused)
{
	char big[CDI_MAX_BYTES + 64], path[128], link[128];
	struct cdi_spec *s;
	struct cerr err;

	write_spec("bad.json", "{\"cdiVersion\":", 0644);
	refused("bad.json", "not a JSON object");
	write_spec("ver.json", "{\"cdiVersion\":\"1.0.0\",\"kind\":"
	    "\"nvidia.com/gpu\",\"devices\":[]}", 0644);
	refused("ver.json", "cdiVersion 1.0.0 is not one read here");
	write_spec("kind.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"vendor.com/fpga\",\"devices\":[]}", 0644);
	refused("kind.json", "kind vendor.com/fpga is not nvidia.com/gpu");
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, good, strlen(good));
	write_spec("big.json", big, 0644);
	refused("big.json", "larger than");
	write_spec("gw.json", good, 0664);
	refused("gw.json", "writable by group or others");
	write_spec("ow.json", good, 0646);
	refused("ow.json", "writable by group or others");
	/* Bad entries: a mount with "..", a block device, no name. */
	write_spec("dots.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"nvidia.com/gpu\",\"devices\":[{\"name\":\"0\","
	    "\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/etc/../etc/"
	    "shadow\",\"containerPath\":\"/x\"}]}}]}", 0644);
	refused("dots.json", "without \"..\"");
	write_spec("blk.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"nvidia.com/gpu\",\"devices\":[{\"name\":\"0\","
	    "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/sda\","
	    "\"type\":\"b\"}]}}]}", 0644);
	refused("blk.json", "a character device under /dev");
	write_spec("noname.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"nvidia.com/gpu\",\"devices\":[{\"containerEdits\":{}}]}", 0644);
	refused("noname.json", "has no valid name");
	write_spec("tmpfs.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"nvidia.com/gpu\",\"devices\":[{\"name\":\"0\","
	    "\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/tmp\","
	    "\"containerPath\":\"/x\",\"type\":\"tmpfs\"}]}}]}", 0644);
	refused("tmpfs.json", "only bind mounts are applied");

	/* Someone else's file: chown it when root, else expect another
	 * owner. */
	write_spec("owner.json", good, 0644);
	snprintf(path, sizeof(path), "%s/owner.json", dir);
	if (getuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		refused("owner.json", "owned by uid 65534");
	} else {
		ck_assert_int_eq(cdi_spec_load(path, getuid() + 1, &s, &err),
		    -1);
		ck_assert(strstr(err.text, "owned by uid") != NULL);
	}

	/* A symlink to a good spec. */
	write_spec("good.json", good, 0644);
	snprintf(path, sizeof(path), "%s/good.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	refused("link.json", "a symbolic link");
	/* A directory. */
	snprintf(path, sizeof(path), "%s/d.json", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	refused("d.json", "not a regular file");
}
END_TEST

START_TEST(test_find)
{
	struct cdi_spec *s;
	struct cerr err;
	char dirs[256];

	/* Refused files and other kinds are passed over; the good one
	 * found. */
	write_spec("a-bad.json", "not json", 0644);
	write_spec("b-other.json", "{\"cdiVersion\":\"0.5.0\",\"kind\":"
	    "\"x.com/y\",\"devices\":[]}", 0644);
	write_spec("c.yaml", "cdiVersion: 0.5.0", 0644);
	write_spec("d-gpu.json", good, 0644);
	snprintf(dirs, sizeof(dirs), "/nonexistent/cdi:%s", dir);
	ck_assert_int_eq(cdi_find(dirs, getuid(), &s, &err), 0);
	ck_assert_ptr_nonnull(s);
	ck_assert(strstr(s->path, "d-gpu.json") != NULL);
	cdi_spec_free(s);
	/* A directory others may write is not read. */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert_int_eq(cdi_find(dirs, getuid(), &s, &err), 0);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	/* None. */
	ck_assert_int_eq(cdi_find("/nonexistent/cdi", getuid(), &s, &err), 0);
	ck_assert_ptr_null(s);
	/* The setting's checks. */
	ck_assert_int_eq(cdi_dirs_check("/etc/cdi:/var/run/cdi", &err), 0);
	ck_assert_int_eq(cdi_dirs_check("etc/cdi", &err), -1);
	ck_assert_int_eq(cdi_dirs_check("/etc/cdi::/x", &err), -1);
	ck_assert_int_eq(cdi_dirs_check("/etc/../cdi", &err), -1);
	ck_assert_int_eq(cdi_dirs_check("", &err), -1);
	ck_assert_int_eq(cdi_dirs_check("/a:/b:/c:/d:/e:/f:/g:/h:/i", &err),
	    -1);
	ck_assert_int_eq(cdi_find("relative", getuid(), &s, &err), -1);
}
END_TEST

static Suite *
cdi_suite(void)
{
	Suite *s = suite_create("cdi");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_apply);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_find);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cdi_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
