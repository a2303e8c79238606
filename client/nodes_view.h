/* What `cohort nodes` makes of the controller's nodes, without the wire:
 * the states --state filters on, the Slurm-like state each node is
 * counted under by --summary (sinfo -s), its GPUs split into allocated,
 * idle and other, and the drain reasons grouped as sinfo -R does. Pure:
 * client/nodes.c reads the Node messages into struct nodes_view_node. */
#ifndef COHORT_CLIENT_NODES_VIEW_H
#define COHORT_CLIENT_NODES_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/err.h"

/* One node as the controller sent it (borrowed strings). */
struct nodes_view_node {
	const char *name;
	bool up;			/* UP, else DOWN */
	const char *drain;		/* "", "DRAINING" or "DRAINED" */
	bool busy;			/* some job holds it (GPU or CPU-only) */
	unsigned gpus_total;
	unsigned gpus_held;		/* held by jobs */
	unsigned gpus_unavailable;	/* no job, and no new work either */
	const char *reason;		/* the drain's, else the DOWN one */
	const char *drain_actor;	/* NULL when not drained */
	int64_t drain_ms;
	int64_t since_ms;		/* in its UP/DOWN state since */
	/* Its features: the agent's configured ones, and those the
	 * controller derives from the inventory (lib/features.h). */
	const char *const *features;
	size_t nfeatures;
	const char *const *derived;
	size_t nderived;
};

/* The state a node is counted under, one each, the first that holds:
 * DOWN, DRAINED, DRAINING, then for an UP node in service ALLOCATED
 * (every GPU held, or a job on a node without GPUs), MIXED (some held,
 * or a CPU-only job), IDLE. */
enum nodes_view_state {
	NODES_VIEW_IDLE = 0,
	NODES_VIEW_MIXED,
	NODES_VIEW_ALLOCATED,
	NODES_VIEW_DRAINING,
	NODES_VIEW_DRAINED,
	NODES_VIEW_DOWN,
	NODES_VIEW_NSTATES
};

/* --state bits: every state name a node answers to. */
enum {
	NODES_VIEW_BIT_UP = 1u << NODES_VIEW_NSTATES,
};

enum nodes_view_state nodes_view_state(const struct nodes_view_node *n);
/* "IDLE", "MIXED", "ALLOCATED", "DRAINING", "DRAINED", "DOWN". */
const char *nodes_view_state_name(enum nodes_view_state s);
/* The --state names n answers to: its counted state's bit, UP for an UP
 * node, DRAINING or DRAINED for a drained DOWN node too. */
unsigned nodes_view_bits(const struct nodes_view_node *n);
/* Parse --state S[,S...] (case-insensitive: UP, DOWN, DRAINING, DRAINED,
 * IDLE, MIXED, ALLOCATED) into *mask (ORed in). 0, or -1 with err naming
 * the bad word and the good ones. */
int nodes_view_states_parse(const char *arg, unsigned *mask,
    struct cerr *err);

/* n's GPUs as sinfo's A/I/O: held by jobs, free for new work, other
 * (unavailable: every GPU of a DOWN node, and those a drain or a failure
 * keeps from new work). They add up to gpus_total. */
void nodes_view_gpus(const struct nodes_view_node *n, unsigned *alloc,
    unsigned *idle, unsigned *other);

/* --summary: nodes and GPUs by counted state. */
struct nodes_view_summary;
struct nodes_view_summary *nodes_view_summary_new(void);
/* Count n (its name copied). 0, or -1 (ENOMEM). */
int nodes_view_summary_add(struct nodes_view_summary *s,
    const struct nodes_view_node *n);
/* NODES(A/I/O/T) GPUS(A/I/O/T) on one line, then a table of STATE NODES
 * GPUS(A/I/O/T) NODELIST for each state that has nodes. 0 or -1. */
int nodes_view_summary_print(const struct nodes_view_summary *s, FILE *fp);
/* {"nodes": {"allocated", "idle", "other", "total"}, "gpus": {...},
 * "states": [{"state", "nodes", "gpus": {...}, "nodelist"}]}; NULL on
 * ENOMEM. */
json_t *nodes_view_summary_json(const struct nodes_view_summary *s);
void nodes_view_summary_free(struct nodes_view_summary *s);

/* --reasons (sinfo -R): drained and DOWN nodes grouped by reason, who and
 * when (to the second), each group with its hostlist. */
struct nodes_view_reasons;
struct nodes_view_reasons *nodes_view_reasons_new(void);
/* Add n if it is drained or DOWN (others are skipped). 0 or -1. */
int nodes_view_reasons_add(struct nodes_view_reasons *r,
    const struct nodes_view_node *n);
/* REASON USER TIMESTAMP NODELIST, by time. 0 or -1. */
int nodes_view_reasons_print(const struct nodes_view_reasons *r, FILE *fp);
/* [{"reason", "user", "time", "nodelist", "nodes"}]; NULL on ENOMEM. */
json_t *nodes_view_reasons_json(const struct nodes_view_reasons *r);
void nodes_view_reasons_free(struct nodes_view_reasons *r);

/* The REASON cell of the node table: the reason, and for a drain who
 * and when: "maint (alice, 2026-12-01 18:04:05 UTC)". NULL for none. */
const char *nodes_view_reason_cell(const struct nodes_view_node *n,
    char *buf, size_t len);

/* The FEATURES cell (cohort nodes --long, as sinfo -o %f): the
 * configured features then the derived ones, comma-joined, each once;
 * NULL for none (and for a buf too small, never a cut list). */
const char *nodes_view_features_cell(const struct nodes_view_node *n,
    char *buf, size_t len);
/* Whether n's features, configured or derived, satisfy the --constraint
 * expression expr (which must parse: lib/constraint.h): 1 or 0. What
 * `cohort nodes --constraint` lists, as placement judges it. */
int nodes_view_matches(const struct nodes_view_node *n, const char *expr);

#endif
