/* Fuzz target: what programs on a node write for the agent to read.
 * First byte below 0x80: the health check program's stdout as
 * health_parse reads it (that byte's low bits its exit status, the next
 * byte the node's GPU count); 0x80 and above: a job's checkpoint LATEST
 * file ("STEP PATH") as watch_parse_latest reads it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "daemon/agent/health_parse.h"
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_health h;
	unsigned i;
	char path[WATCH_PATH_MAX];
	uint64_t step;

	if (size < 2)
		return 0;
	/* What either parser lets through is sent as protobuf strings, which
	 * must be text (lib/wirecheck.c): valid UTF-8, and no control
	 * characters in a path or (but tabs) in a reason. */
	if (data[0] & 0x80) {
		if (watch_parse_latest((const char *)data + 1, size - 1,
		    &step, path, sizeof(path)) == 0 &&
		    (!text_utf8_valid(path) || text_control_at(path) != -1))
			abort();
		return 0;
	}
	memset(&h, 0, sizeof(h));
	if (health_parse((const char *)data + 2, size - 2,
	    (data[0] & 0x7f) << 8, data[1] % (INV_MAX_GPUS + 2), &h) == 0) {
		if (!fuzz_reason_ok(h.reason))
			abort();
		for (i = 0; i < h.ngpus; i++)
			if (!fuzz_reason_ok(h.gpus[i].reason))
				abort();
	}
	return 0;
}
