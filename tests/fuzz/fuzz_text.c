/* Fuzz target: the text parsers that read what users and admins write.
 * The first byte picks one: #COHORT script lines, one line split into
 * words, topology.conf, a hostlist, a duration, the config value parsers
 * (size, duration, HOST:PORT), a script's #COHORT and #SBATCH lines with
 * the #SBATCH options translated, a --constraint expression, an
 * agent's features list and a GPU model made features. Each must return a result or a clean
 * error, never crash, leak or read out of bounds. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "client/script_sbatch.h"
#include "daemon/sched/topo.h"
#include "lib/conf.h"
#include "lib/constraint.h"
#include "lib/features.h"
#include "lib/inventory.h"
#include "lib/duration.h"
#include "lib/hostlist.h"
#include "tests/fuzz/fuzz.h"

/* Several parsers want a C string. */
static char *
fuzz_str(const uint8_t *data, size_t size)
{
	char *s;

	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static void
fuzz_argv(char **argv, size_t argc)
{
	size_t i;

	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* A script's directive lines, the #SBATCH ones translated. */
static void
fuzz_sbatch(const uint8_t *data, size_t size)
{
	struct script_sbatch_opt *opts;
	struct script_line *lines;
	struct cerr err;
	size_t n, i, nopts, rest;

	if (script_lines((const char *)data, size, &lines, &n, &err) != 0)
		return;
	/* Each line as an #SBATCH line and as sbatch's command line. */
	for (i = 0; i < n; i++) {
		if (lines[i].tag != SCRIPT_TAG_SBATCH)
			continue;
		if (script_sbatch_parse(lines[i].argv, lines[i].argc, NULL,
		    &opts, &nopts, &err) == 0)
			script_sbatch_free(opts, nopts);
		if (script_sbatch_parse(lines[i].argv, lines[i].argc, &rest,
		    &opts, &nopts, &err) == 0)
			script_sbatch_free(opts, nopts);
	}
	script_lines_free(lines, n);
}

static int
fuzz_name(const char *name, size_t len, void *arg)
{
	(void)name;
	*(size_t *)arg += len;
	return 0;
}

/* A --constraint expression, matched against a node whose features
 * are the expression's own names, and the same text as a features
 * list. */
/* s as a GPU model (lib/features.h): whatever it is, the features made
 * of it are feature names a --constraint can name, and fit. */
static void
fuzz_model(const char *s)
{
	static struct inventory inv;
	struct features_derived d;
	char buf[INV_FEATURE_MAX + 1];
	unsigned i;

	if (features_model_name(s, buf, sizeof(buf)) == 0 &&
	    !constraint_name_ok(buf))
		abort();
	if (features_model_family(s, buf, sizeof(buf)) == 0 &&
	    !constraint_name_ok(buf))
		abort();
	if (features_model_name(s, buf, 5) == 0 && strlen(buf) > 4)
		abort();
	memset(&inv, 0, sizeof(inv));
	inv.ngpus = 2;
	for (i = 0; i < inv.ngpus; i++) {
		snprintf(inv.gpus[i].model, sizeof(inv.gpus[i].model), "%s", s);
		inv.gpus[i].nvlink_domain = 0;
	}
	features_derive(&inv, &d);
	if (d.n > FEATURES_DERIVED_MAX)
		abort();
	for (i = 0; i < d.n; i++)
		if (!constraint_name_ok(d.v[i]))
			abort();
}

static void
fuzz_constraint(const char *s)
{
	static const char *const feats[] = { "fp64", "ib", "a", "nvl72" };
	static struct inventory inv;
	char errbuf[256];
	size_t total = 0;

	if (constraint_parse(s, errbuf, sizeof(errbuf)) == 0) {
		(void)constraint_match(s, feats, 4);
		(void)constraint_names(s, fuzz_name, &total);
		if (total > strlen(s))
			abort();
	} else if (constraint_match(s, feats, 4) != -1)
		abort();
	(void)inventory_set_features(&inv, s, errbuf, sizeof(errbuf));
	fuzz_model(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **argv, **names, errbuf[256], host[256], *s;
	size_t argc, n;
	struct topo *t;
	struct cerr err;
	uint64_t v;
	uint16_t port;

	if (size == 0)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	switch (data[0] % 8) {
	case 0:
		/* The bytes themselves, not the NUL-terminated copy: the
		 * CLI passes a length that stops short of any NUL. */
		if (script_options((const char *)data + 1, size - 1, &argv,
		    &argc, &err) == 0)
			fuzz_argv(argv, argc);
		break;
	case 1:
		if (script_split(s, &argv, &argc, &err) == 0)
			fuzz_argv(argv, argc);
		break;
	case 2:
		if ((t = topo_parse((const char *)data + 1, size - 1, "fuzz",
		    errbuf, sizeof(errbuf))) != NULL) {
			(void)topo_node_leaf(t, "node01");
			topo_destroy(t);
		}
		break;
	case 3:
		if (hostlist_expand(s, 10000, &names, &n, errbuf,
		    sizeof(errbuf)) == 0)
			hostlist_free(names, n);
		break;
	case 4:
		(void)duration_parse(s, &v);
		break;
	case 5:
		(void)conf_parse_size(s, 0, UINT64_MAX, &v, &err);
		(void)conf_parse_duration(s, 0, UINT64_MAX, &v, &err);
		(void)conf_parse_hostport(s, host, sizeof(host), &port, true,
		    &err);
		break;
	case 6:
		fuzz_sbatch(data + 1, size - 1);
		break;
	case 7:
		fuzz_constraint(s);
		break;
	}
	free(s);
	return 0;
}
