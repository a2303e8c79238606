/* Fuzz target: what programs on a node write for the agent to read, and
 * what its admin writes. The first byte picks one (the table at the end):
 * the health check program's stdout as health_parse reads it (the next
 * byte's low bits its exit status, the one after the node's GPU count); a
 * job's checkpoint LATEST file ("STEP PATH") as watch_parse_latest reads
 * it; [agent] numa_cpus and a CPU list; [gpu] nics; /proc/self/cgroup;
 * the whole cohort-agent.conf. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/agent_config.h"
#include "daemon/agent/cgroup.h"
#include "daemon/agent/cpubind.h"
#include "daemon/agent/health_parse.h"
#include "daemon/agent/inventory.h"
#include "daemon/agent/watch.h"
#include "lib/text.h"
#include "tests/fuzz/fuzz.h"

static int
fuzz_reason_ok(const char *r)
{
	size_t i;

	if (!text_utf8_valid(r))
		return 0;
	for (i = 0; r[i] != '\0'; i++)
		if (((unsigned char)r[i] < 0x20 && r[i] != '\t') || r[i] == 0x7f)
			return 0;
	return 1;
}

/* What either parser lets through is sent as protobuf strings, which must
 * be text (lib/wirecheck.c): valid UTF-8, and no control characters in a
 * path or (but tabs) in a reason. */
static void
fuzz_health(const uint8_t *data, size_t size)
{
	struct node_health h;
	unsigned i;

	if (size < 2)
		return;
	memset(&h, 0, sizeof(h));
	if (health_parse((const char *)data + 2, size - 2,
	    (data[0] & 0x7f) << 8, data[1] % (INV_MAX_GPUS + 2), &h) == 0) {
		if (!fuzz_reason_ok(h.reason))
			abort();
		for (i = 0; i < h.ngpus; i++)
			if (!fuzz_reason_ok(h.gpus[i].reason))
				abort();
	}
}

static void
fuzz_latest(const uint8_t *data, size_t size)
{
	char path[WATCH_PATH_MAX];
	uint64_t step;

	if (watch_parse_latest((const char *)data, size, &step, path,
	    sizeof(path)) == 0 &&
	    (!text_utf8_valid(path) || text_control_at(path) != -1))
		abort();
}

/* [agent] numa_cpus and a CPU list: what parses formats back the same. */
static void
fuzz_cpus(const uint8_t *data, size_t size)
{
	static struct cpubind_map m;
	char *s = fuzz_str(data, size), why[256], buf[8192];
	cpu_set_t set, again;

	(void)cpubind_map_parse(s, &m, why, sizeof(why));
	if (cpubind_list_parse(s, &set, why, sizeof(why)) == 0 &&
	    cpubind_list_format(&set, buf, sizeof(buf)) == 0 &&
	    (cpubind_list_parse(buf, &again, why, sizeof(why)) != 0 ||
	    !CPU_EQUAL(&set, &again)))
		abort();
	free(s);
}

static void
fuzz_nics(const uint8_t *data, size_t size)
{
	static struct sim_gpus sim;
	char *s = fuzz_str(data, size);
	struct cerr err;

	inventory_sim_defaults(&sim);
	(void)inventory_sim_nics(&sim, s, &err);
	free(s);
}

static void
fuzz_cgroup(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), out[PATH_MAX];

	(void)cgroup_parse_self(s, out, sizeof(out));
	free(s);
}

static void
fuzz_config(const uint8_t *data, size_t size)
{
	static struct agent_config cfg;
	struct cerr err;

	if (agent_config_load(&cfg, fuzz_file(data, size), &err) == 0)
		agent_config_clear(&cfg);
}

static const struct fuzz_entry entries[] = {
	{ "health", fuzz_health },
	{ "latest", fuzz_latest },
	{ "cpus", fuzz_cpus },
	{ "nics", fuzz_nics },
	{ "cgroup", fuzz_cgroup },
	{ "config", fuzz_config },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dispatch(entries, sizeof(entries) / sizeof(entries[0]), data,
	    size);
	return 0;
}
