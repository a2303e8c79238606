/* Fuzz target: what programs on a node write for the agent to read.
 * First byte below 0x80: the health check program's stdout as
 * health_parse reads it (that byte's low bits its exit status, the next
 * byte the node's GPU count); 0x80 and above: a job's checkpoint LATEST
 * file ("STEP PATH") as watch_parse_latest reads it. */
#include "config.h"

#include <string.h>

#include "daemon/agent/health.h"
#include "daemon/agent/watch.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_health h;
	char path[WATCH_PATH_MAX];
	uint64_t step;

	if (size < 2)
		return 0;
	if (data[0] & 0x80) {
		(void)watch_parse_latest((const char *)data + 1, size - 1,
		    &step, path, sizeof(path));
		return 0;
	}
	memset(&h, 0, sizeof(h));
	(void)health_parse((const char *)data + 2, size - 2,
	    (data[0] & 0x7f) << 8, data[1] % (INV_MAX_GPUS + 2), &h);
	return 0;
}
