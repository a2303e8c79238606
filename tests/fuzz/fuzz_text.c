/* Fuzz target: the text parsers that read what users and admins write.
 * The first byte picks one (the table at the end): #COHORT script lines,
 * one line split into words, an --export mode, a hostlist, a duration,
 * the config value parsers (size, duration, HOST:PORT), a script's
 * #COHORT and #SBATCH lines with the #SBATCH options translated, a
 * --constraint expression, an agent's features list and a GPU model made
 * features, an --array spec, a --dependency list, an --output pattern, a
 * controller address list, a job reference (12_[1-3]), the CLI's
 * --since, --state and other word parsers, the CLI's settings file, and
 * what Slurm's commands parse (squeue -o/-O and sacct -o formats, state
 * lists, times).
 * Each must return a result or a clean error, never crash, leak or read
 * out of bounds. topology.conf is fuzz_topo's: its node lists expand to
 * up to a million names, which would starve every other entry here. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/script.h"
#include "client/script_sbatch.h"
#include "lib/conf.h"
#include "lib/constraint.h"
#include "lib/features.h"
#include "lib/inventory.h"
#include "lib/duration.h"
#include "lib/hostlist.h"
#include "client/export.h"
#include "client/jobref.h"
#include "client/nodes_view.h"
#include "client/output.h"
#include "client/settings.h"
#include "client/slurm_format.h"
#include "lib/addrlist.h"
#include "lib/array.h"
#include "lib/depend.h"
#include "lib/job.h"
#include "lib/log.h"
#include "lib/outpat.h"
#include "tests/fuzz/fuzz.h"

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

static void
fuzz_script(const uint8_t *data, size_t size)
{
	struct cerr err;
	char **argv;
	size_t argc;

	/* The bytes themselves, not a NUL-terminated copy: the CLI passes a
	 * length that stops short of any NUL. */
	if (script_options((const char *)data, size, &argv, &argc, &err) == 0)
		fuzz_argv(argv, argc);
}

static void
fuzz_split(const uint8_t *data, size_t size)
{
	char **argv, *s = fuzz_str(data, size);
	struct cerr err;
	size_t argc;

	if (script_split(s, &argv, &argc, &err) == 0)
		fuzz_argv(argv, argc);
	free(s);
}

static void
fuzz_hostlist(const uint8_t *data, size_t size)
{
	char **names, errbuf[256], *s = fuzz_str(data, size);
	size_t n;

	if (hostlist_expand(s, 10000, &names, &n, errbuf, sizeof(errbuf)) == 0)
		hostlist_free(names, n);
	free(s);
}

static void
fuzz_duration(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	uint64_t v;

	(void)duration_parse(s, &v);
	free(s);
}

static void
fuzz_conf_values(const uint8_t *data, size_t size)
{
	char host[256], *s = fuzz_str(data, size);
	struct cerr err;
	uint16_t port;
	uint64_t v;
	bool b;

	(void)conf_parse_size(s, 0, UINT64_MAX, &v, &err);
	(void)conf_parse_duration(s, 0, UINT64_MAX, &v, &err);
	(void)conf_parse_duration_ms(s, 0, UINT64_MAX, &v, &err);
	(void)conf_parse_uint(s, 0, UINT64_MAX, &v, &err);
	(void)conf_parse_bool(s, &b, &err);
	(void)conf_parse_hostport(s, host, sizeof(host), &port, true, &err);
	free(s);
}

static void
fuzz_constraint_text(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);

	fuzz_constraint(s);
	free(s);
}

/* An --array spec: what parses formats back to the same indices. */
static void
fuzz_array(const uint8_t *data, size_t size)
{
	struct array_spec a, b;
	struct cerr err;
	char *s = fuzz_str(data, size), small[8], *buf;
	size_t len;

	if (array_parse(s, &a, &err) == 0) {
		if (a.n == 0 || a.idx[0] != a.min || a.idx[a.n - 1] != a.max)
			abort();
		len = array_format(a.idx, a.n, small, sizeof(small)) + 1;
		if ((buf = malloc(len)) == NULL)
			abort();
		if (array_format(a.idx, a.n, buf, len) != len - 1 ||
		    array_parse(buf, &b, &err) != 0 || b.n != a.n ||
		    memcmp(a.idx, b.idx, a.n * sizeof(*a.idx)) != 0)
			abort();
		array_spec_clear(&b);
		free(buf);
		array_spec_clear(&a);
	}
	free(s);
}

static void
fuzz_depend(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	struct depend d;
	struct cerr err;

	if (depend_parse(s, &d, &err) == 0)
		depend_clear(&d);
	free(s);
}

/* An --output pattern as the agent expands it: the result fits and is
 * never empty. */
static void
fuzz_outpat(const uint8_t *data, size_t size)
{
	struct outpat_vars v = { .job_id = 12, .array_id = 10,
	    .array_task = 2, .rank = 7, .node_rank = 1, .node = "gpu01",
	    .name = "train", .user = "alice" };
	char buf[256], *s = fuzz_str(data, size);

	if (outpat_expand(s, &v, buf, sizeof(buf)) == 0 &&
	    (buf[0] == '\0' || strlen(buf) >= sizeof(buf)))
		abort();
	v.array_id = 0;
	v.node = v.name = v.user = NULL;
	(void)outpat_expand(s, &v, buf, 8);
	free(s);
}

static void
fuzz_addrlist(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), buf[300];
	struct addrlist l;
	struct cerr err;
	size_t i;

	if (addrlist_parse(s, &l, &err) == 0) {
		if (l.n == 0 || l.n > ADDRLIST_MAX)
			abort();
		for (i = 0; i < l.n; i++)
			(void)addrlist_addr_format(&l.a[i], buf, sizeof(buf));
	}
	free(s);
}

static void
fuzz_jobref(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	struct jobref r;
	struct cerr err;
	size_t i;

	if (jobref_parse(s, &r, &err) == 0) {
		for (i = 1; i < r.ntasks; i++)
			if (r.tasks[i] <= r.tasks[i - 1])
				abort();
		jobref_clear(&r);
	}
	free(s);
}

/* The CLI's and daemons' one-word parsers. */
static void
fuzz_words(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	enum job_state st;
	struct cerr err;
	unsigned mask = 0;
	int64_t ms;
	int level;

	(void)output_parse_since(s, 1790000000000LL, &ms);
	(void)nodes_view_states_parse(s, &mask, &err);
	(void)log_level_parse(s, &level);
	(void)job_state_parse(s, &st);
	(void)role_parse(s);
	free(s);
}

/* The CLI's settings file (client.conf), with every setting given there
 * only. A failure leaves in st what was found (settings.h). */
static void
fuzz_settings(const uint8_t *data, size_t size)
{
	struct settings st;
	struct cerr err;

	memset(&st, 0, sizeof(st));
	(void)settings_resolve(&st, NULL, NULL, NULL, NULL, fuzz_file(data,
	    size), &err);
	settings_clear(&st);
}

/* An --export mode over a small environment (one value not UTF-8, which
 * ALL leaves out) and one --env entry. */
static void
fuzz_export(const uint8_t *data, size_t size)
{
	static char *const envp[] = { "HOME=/home/alice", "PATH=/usr/bin",
	    "LANG=C.UTF-8", "BAD=\xff\xfe", "VIRTUAL_ENV=/venv", NULL };
	static char *const extra[] = { "PATH=/opt/bin" };
	char *s = fuzz_str(data, size), **env;
	struct export_note note;
	struct cerr err;
	size_t n;

	if (export_build(s, envp, extra, 1, &env, &n, &note, &err) == 0)
		strv_free(env, n);
	free(s);
}

/* What Slurm's commands parse from their command lines: a format in each
 * of the three syntaxes (over a small table: the parser, not the
 * fields, is what is tried), a state list and a time. */
static void
fuzz_slurm(const uint8_t *data, size_t size)
{
	static const struct sfmt_def defs[] = {
		{ 'i', "JobID", "JOBID", 18, 0 },
		{ 'j', "Name", "NAME", 8, 1 },
		{ 'T', "State", "STATE", 8, 2 },
	};
	char *s = fuzz_str(data, size);
	const char *cells[] = { "12", "train", "RUNNING" };
	struct sfmt fmt;
	struct cerr err;
	unsigned mask = 0;
	int64_t ms;
	FILE *null;

	null = fopen("/dev/null", "w");
	memset(&fmt, 0, sizeof(fmt));
	if (sfmt_parse_letters(s, defs, 3, &fmt, &err) == 0 && null != NULL &&
	    sfmt_nfields(&fmt) <= 3) {
		sfmt_fit(&fmt, cells);
		(void)sfmt_print(&fmt, cells, null);
	}
	sfmt_clear(&fmt);
	if (sfmt_parse_names(s, defs, 3, &fmt, &err) == 0 && null != NULL &&
	    sfmt_nfields(&fmt) <= 3)
		(void)sfmt_print(&fmt, cells, null);
	sfmt_clear(&fmt);
	if (sfmt_parse_sacct(s, defs, 3, &fmt, &err) == 0 && null != NULL &&
	    sfmt_nfields(&fmt) <= 3)
		(void)sfmt_print_parsable(&fmt, cells, false, null);
	sfmt_clear(&fmt);
	(void)slurm_states_parse(s, &mask, &err);
	(void)slurm_time_parse(s, 1790000000000LL, &ms);
	if (null != NULL)
		fclose(null);
	free(s);
}

static const struct fuzz_entry entries[] = {
	{ "script", fuzz_script },
	{ "split", fuzz_split },
	{ "export", fuzz_export },
	{ "hostlist", fuzz_hostlist },
	{ "duration", fuzz_duration },
	{ "conf", fuzz_conf_values },
	{ "sbatch", fuzz_sbatch },
	{ "constraint", fuzz_constraint_text },
	{ "array", fuzz_array },
	{ "depend", fuzz_depend },
	{ "outpat", fuzz_outpat },
	{ "addrlist", fuzz_addrlist },
	{ "jobref", fuzz_jobref },
	{ "words", fuzz_words },
	{ "settings", fuzz_settings },
	{ "slurm", fuzz_slurm },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dispatch(entries, sizeof(entries) / sizeof(entries[0]), data,
	    size);
	return 0;
}
