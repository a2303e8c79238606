/* Linked into the Check suites that open stores. Under valgrind (make
 * check-valgrind) code is translated as it first runs, and what a
 * forked test translates dies with it: every test translated SQLite's
 * parser and the schema's migrations anew, which cost more than most
 * tests (check_recovery: 40 s, 22 s with this). One in-memory store
 * opened and closed in the parent, before main, lets each test's child
 * inherit those translations. Natively it costs one open. */
#include "config.h"

#include "daemon/controller/store/store.h"
#include "lib/err.h"

__attribute__((constructor)) static void
store_warm(void)
{
	struct cerr err;

	store_close(store_open(":memory:", &err));
}
