/* Fuzz target: cohortd.conf as ctl_config_load reads it (every section:
 * [controller], [tls], [limits], the queues, quotas and replicas). A
 * refusal is one line naming the file; an accepted file is cleared
 * without a leak. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "daemon/controller/ctl_config.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_config cfg;
	struct cerr err;

	if (ctl_config_load(&cfg, fuzz_file(data, size), &err) == 0)
		ctl_config_clear(&cfg);
	else if (strchr(err.text, '\n') != NULL)
		abort();
	return 0;
}
