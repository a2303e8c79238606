/* Node features the inventory implies, as Slurm's node features and
 * Kubernetes' node labels (NVIDIA's GPU feature discovery) say what a
 * node is without anyone writing it down. The agent's configured
 * features (inventory.features, the [agent] features key) and these
 * derived ones are kept apart, so that `cohort node show` can say which
 * is which, and both match --constraint. Pure: no I/O, no globals.
 *
 * The rule (stable: jobs name these in scripts; a change is a release
 * note):
 * - the GPU model as a name: lower case, every run of characters other
 *   than ASCII letters and digits one '-', none at either end, cut to
 *   INV_FEATURE_MAX at a '-' ("NVIDIA H100 80GB HBM3" ->
 *   "nvidia-h100-80gb-hbm3", "Tesla V100-SXM2-16GB" ->
 *   "tesla-v100-sxm2-16gb");
 * - the GPU family: of those words, the first one with a digit that is
 *   neither a vendor or brand word (nvidia, amd, intel, tesla, geforce,
 *   quadro, instinct, radeon) nor a memory size ("80gb"); a word of
 *   digits alone takes the letters word before it ("GeForce RTX 4090" ->
 *   "rtx4090"): "h100", "a100", "v100", "l40s", "gh200", "mi300x";
 *   none when no word qualifies ("NVIDIA TITAN V");
 * - "nvlink" when the node has two or more GPUs all in one NVLink domain
 *   (every GPU reaches every other over NVLink: an NVSwitch board). GPUs
 *   in pairs or quads do not make it: the feature promises all-to-all.
 * A model feature is derived only when every GPU of the node gives it
 * (as --gpu-memory wants every GPU): on a node of mixed GPUs the core may
 * hand out any of them. Nodes without GPUs derive nothing. */
#ifndef COHORT_FEATURES_H
#define COHORT_FEATURES_H

#include <stddef.h>

#include "lib/inventory.h"

/* Derived features of one node: model name, family, nvlink. */
#define FEATURES_DERIVED_MAX 4
/* Configured and derived features of one node together. */
#define FEATURES_MAX (INV_MAX_FEATURES + FEATURES_DERIVED_MAX)

struct features_derived {
	unsigned n;
	char v[FEATURES_DERIVED_MAX][INV_FEATURE_MAX + 1];
};

/* The model as a feature name into buf (at least INV_FEATURE_MAX + 1
 * bytes). 0, or -1 when the model gives none (no letter or digit). */
int	features_model_name(const char *model, char *buf, size_t size);

/* The model's family into buf (as above). 0, or -1 when none. */
int	features_model_family(const char *model, char *buf, size_t size);

/* What inv implies, by the rule above, in the order family, model name,
 * nvlink (each once). Always succeeds. */
void	features_derive(const struct inventory *inv,
	    struct features_derived *out);

/* Point v[0..FEATURES_MAX) at inv's configured features then d's
 * derived ones (borrowed); returns how many. d may be NULL. */
size_t	features_list(const struct inventory *inv,
	    const struct features_derived *d, const char **v);

#endif
