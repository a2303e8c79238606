/* The digest a prepared container image is known by, for `cohort show`
 * and the job's events: an OCI layout's manifest digest for the tag (from
 * its index.json, read when the image is prepared), or a squashfs file's
 * sha256 (written into its cache entry by the unpack, which reads the
 * file anyway). Both "sha256:" and 64 hex digits (ctr_digest_valid). */
#ifndef COHORT_AGENT_IMGDIGEST_H
#define COHORT_AGENT_IMGDIGEST_H

#include <stddef.h>

#include "lib/err.h"

/* The digest of the manifest tagged tag in the layout: 0 with out (len
 * > CTR_DIGEST_LEN bytes) filled, or -1 with err (no index.json, not
 * JSON, no such tag, not sha256). */
int imgdigest_oci(const char *layout, const char *tag, char *out, size_t len,
    struct cerr *err);
/* The sha256 the unpack wrote to ENTRY/digest (64 hex digits): 0 with out
 * filled, or -1 with err (an entry made without one, or not a sha256). */
int imgdigest_entry(const char *entry, char *out, size_t len,
    struct cerr *err);

#endif
