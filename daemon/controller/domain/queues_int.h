/* Private to queues.c, queues_share.c and queues_report.c: the tree as
 * they keep it. */
#ifndef COHORT_CONTROLLER_QUEUES_INT_H
#define COHORT_CONTROLLER_QUEUES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller/domain/queues.h"

#define QUEUES_KEY_UNIT 1000000.0

struct quser {
	char *name;
	double usage;
	int64_t at_ms;
};

struct qnode {
	struct queue_def def;
	int parent;		/* -1: top */
	unsigned depth;
	size_t nchildren;
	double usage;		/* decayed GPU-ms of the subtree */
	int64_t at_ms;
	struct quser *users;	/* sorted by name */
	size_t nqusers;
	uint32_t flav_nominal[SCHED_FLAVORS_MAX];
};

struct queues {
	struct qnode *q;
	size_t n;
	bool configured;
	int64_t half_life_ms;
	size_t *order;		/* depth-first, file order */
	const char *flavors[SCHED_FLAVORS_MAX];
	size_t nflavors;
};

#endif
