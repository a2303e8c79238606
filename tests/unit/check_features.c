/* lib/features.c: the GPU model as feature names (the rule in
 * features.h, which jobs depend on), the nvlink feature, every GPU must
 * agree, and the configured and derived lists side by side. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/constraint.h"
#include "lib/features.h"

static const struct {
	const char *model;
	const char *name;	/* NULL: none */
	const char *family;	/* NULL: none */
} models[] = {
	{ "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3", "h100" },
	{ "NVIDIA H100 PCIe", "nvidia-h100-pcie", "h100" },
	{ "NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb", "a100" },
	{ "NVIDIA A100 80GB PCIe", "nvidia-a100-80gb-pcie", "a100" },
	{ "Tesla V100-SXM2-16GB", "tesla-v100-sxm2-16gb", "v100" },
	{ "Tesla T4", "tesla-t4", "t4" },
	{ "NVIDIA L40S", "nvidia-l40s", "l40s" },
	{ "NVIDIA GH200 480GB", "nvidia-gh200-480gb", "gh200" },
	{ "NVIDIA B200", "nvidia-b200", "b200" },
	{ "NVIDIA RTX A6000", "nvidia-rtx-a6000", "a6000" },
	{ "NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090", "rtx4090" },
	{ "Quadro RTX 8000", "quadro-rtx-8000", "rtx8000" },
	{ "AMD Instinct MI300X", "amd-instinct-mi300x", "mi300x" },
	{ "Intel(R) Data Center GPU Max 1550",
	    "intel-r-data-center-gpu-max-1550", "max1550" },
	{ "NVIDIA TITAN V", "nvidia-titan-v", NULL },
	{ "80GB H100", "80gb-h100", "h100" },	/* a size is no family */
	{ "  h100  ", "h100", "h100" },
	{ "H100", "h100", "h100" },
	{ "NVIDIA 4090", "nvidia-4090", NULL },	/* digits with no series */
	{ "caf\xc3\xa9 X1", "caf-x1", "x1" },	/* not ASCII: a separator */
	{ "--", NULL, NULL },
	{ "", NULL, NULL },
};

START_TEST(test_models)
{
	char buf[INV_FEATURE_MAX + 1];
	int rc;

	rc = features_model_name(models[_i].model, buf, sizeof(buf));
	if (models[_i].name == NULL)
		ck_assert_msg(rc == -1, "'%s' gave name '%s'",
		    models[_i].model, buf);
	else {
		ck_assert_msg(rc == 0, "'%s': no name", models[_i].model);
		ck_assert_str_eq(buf, models[_i].name);
		ck_assert(constraint_name_ok(buf));
	}
	rc = features_model_family(models[_i].model, buf, sizeof(buf));
	if (models[_i].family == NULL)
		ck_assert_msg(rc == -1, "'%s' gave family '%s'",
		    models[_i].model, buf);
	else {
		ck_assert_msg(rc == 0, "'%s': no family", models[_i].model);
		ck_assert_str_eq(buf, models[_i].family);
		ck_assert(constraint_name_ok(buf));
	}
}
END_TEST

/* A model longer than a feature name keeps whole words only. */
START_TEST(test_long_model)
{
	char model[200], buf[INV_FEATURE_MAX + 1], want[INV_FEATURE_MAX + 1];
	size_t i;

	/* 13 words of "abcd" joined by spaces: 64 characters end a word
	 * exactly. */
	model[0] = '\0';
	for (i = 0; i < 13; i++)
		strcat(model, i ? " abcd" : "abcd");
	ck_assert_int_eq(features_model_name(model, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(strlen(buf), 64);
	/* One more character: the last word is dropped, with its '-'. */
	strcat(model, "e");
	ck_assert_int_eq(features_model_name(model, buf, sizeof(buf)), 0);
	want[0] = '\0';
	for (i = 0; i < 12; i++)
		strcat(want, i ? "-abcd" : "abcd");
	ck_assert_str_eq(buf, want);
	/* One word too long for a name is cut at the limit. */
	memset(model, 'x', 100);
	model[100] = '\0';
	ck_assert_int_eq(features_model_name(model, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(strlen(buf), INV_FEATURE_MAX);
	ck_assert(constraint_name_ok(buf));
	/* A small buffer is never overrun. */
	ck_assert_int_eq(features_model_name("NVIDIA H100", buf, 8), 0);
	ck_assert_str_eq(buf, "nvidia");
	ck_assert_int_eq(features_model_family("NVIDIA GeForce RTX 4090",
	    buf, 5), -1);
}
END_TEST

static void
gpus(struct inventory *inv, unsigned n, const char *model, int domain)
{
	unsigned i;

	memset(inv, 0, sizeof(*inv));
	inv->ngpus = n;
	for (i = 0; i < n; i++) {
		snprintf(inv->gpus[i].model, sizeof(inv->gpus[i].model), "%s",
		    model);
		inv->gpus[i].index = i;
		inv->gpus[i].nvlink_domain = domain;
	}
}

static char *
joined(const struct features_derived *d)
{
	static char buf[512];
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < d->n; i++) {
		if (i)
			strcat(buf, ",");
		strcat(buf, d->v[i]);
	}
	return buf;
}

START_TEST(test_derive)
{
	struct inventory inv;
	struct features_derived d;

	gpus(&inv, 8, "NVIDIA H100 80GB HBM3", 0);
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100,nvidia-h100-80gb-hbm3,nvlink");
	/* Two quads: no all-to-all NVLink. */
	inv.gpus[5].nvlink_domain = 1;
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100,nvidia-h100-80gb-hbm3");
	/* No NVLink at all, or one GPU alone: none. */
	gpus(&inv, 4, "NVIDIA H100 80GB HBM3", -1);
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100,nvidia-h100-80gb-hbm3");
	gpus(&inv, 1, "NVIDIA H100 80GB HBM3", 0);
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100,nvidia-h100-80gb-hbm3");
	/* Mixed models: only what every GPU gives. */
	gpus(&inv, 2, "NVIDIA H100 80GB HBM3", 0);
	snprintf(inv.gpus[1].model, sizeof(inv.gpus[1].model),
	    "NVIDIA H100 PCIe");
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100,nvlink");
	snprintf(inv.gpus[1].model, sizeof(inv.gpus[1].model),
	    "NVIDIA A100-SXM4-80GB");
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "nvlink");
	/* A model that is its own family counts once. */
	gpus(&inv, 2, "H100", -1);
	features_derive(&inv, &d);
	ck_assert_str_eq(joined(&d), "h100");
	/* No GPUs: nothing, whatever else the node has. */
	gpus(&inv, 0, "", -1);
	inv.ncpus = 64;
	features_derive(&inv, &d);
	ck_assert_uint_eq(d.n, 0);
}
END_TEST

START_TEST(test_list_and_match)
{
	struct inventory inv;
	struct features_derived d;
	const char *v[FEATURES_MAX];
	char err[128];
	size_t n;

	gpus(&inv, 4, "NVIDIA A100-SXM4-80GB", 0);
	ck_assert_int_eq(inventory_set_features(&inv, "fp64,ib", err,
	    sizeof(err)), 0);
	features_derive(&inv, &d);
	n = features_list(&inv, &d, v);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(v[0], "fp64");
	ck_assert_str_eq(v[1], "ib");
	ck_assert_str_eq(v[2], "a100");
	ck_assert_str_eq(v[4], "nvlink");
	ck_assert_int_eq(constraint_match("a100&fp64&nvlink", v, n), 1);
	ck_assert_int_eq(constraint_match("h100|nvidia-a100-sxm4-40gb", v,
	    n), 0);
	ck_assert_uint_eq(features_list(&inv, NULL, v), 2);
	/* The most there can be fits. */
	ck_assert_int_eq(inventory_set_features(&inv, "a0,a1,a2,a3,a4,a5,a6,"
	    "a7,a8,a9,b0,b1,b2,b3,b4,b5,b6,b7,b8,b9,c0,c1,c2,c3,c4,c5,c6,c7,"
	    "c8,c9,d0,d1", err, sizeof(err)), 0);
	ck_assert_uint_eq(features_list(&inv, &d, v), INV_MAX_FEATURES + 3);
}
END_TEST

static Suite *
features_suite(void)
{
	Suite *s = suite_create("features");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_models, 0,
	    sizeof(models) / sizeof(*models));
	tcase_add_test(tc, test_long_model);
	tcase_add_test(tc, test_derive);
	tcase_add_test(tc, test_list_and_match);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(features_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
