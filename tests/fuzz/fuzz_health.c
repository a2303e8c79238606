/* Fuzz target: what a node's health check program prints, as the agent
 * parses it (NHC convention: "gpu N FAILED ...", "node DEGRADED ...").
 * The first two bytes give the program's exit status and the node's GPU
 * count; the rest is its stdout. */
#include "config.h"

#include <string.h>

#include "daemon/agent/health.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_health h;

	if (size < 2)
		return 0;
	memset(&h, 0, sizeof(h));
	(void)health_parse((const char *)data + 2, size - 2,
	    (data[0] & 0x7f) << 8, data[1] % (INV_MAX_GPUS + 2), &h);
	return 0;
}
