/* The schema migrations, embedded at build time by scripts/embed-sql.
 * migrations[i] brings a database from user_version i to i + 1. */
#ifndef COHORT_SQL_MIGRATIONS_H
#define COHORT_SQL_MIGRATIONS_H

#include <stddef.h>

struct migration {
	int version;		/* user_version after applying it */
	const char *name;	/* e.g. "001_init" */
	const char *sql;
};

extern const struct migration migrations[];
extern const size_t migrations_count;

#endif
