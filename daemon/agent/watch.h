/* What a job's files say while it runs, for the controller: the
 * checkpoint contract ($COHORT_CHECKPOINT_DIR/LATEST holding "STEP PATH",
 * written by rename) on the node of rank 0, and when the job's progress
 * file last changed (hang detection, --hang-timeout). */
#ifndef COHORT_AGENT_WATCH_H
#define COHORT_AGENT_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define WATCH_PATH_MAX 4096

/* Parse LATEST's content: one line "STEP PATH" (STEP a decimal integer,
 * PATH the rest of the line, not empty; a trailing newline allowed).
 * 0, or -1 (EINVAL) for anything else — a half-written file never
 * parses as a checkpoint. */
int watch_parse_latest(const char *buf, size_t len, uint64_t *step,
    char *path, size_t pathlen);

/* Read dir/LATEST. 0 with *step and path set; -1 with errno (ENOENT: no
 * checkpoint yet; EINVAL: unparsable). */
int watch_read_latest(const char *dir, uint64_t *step, char *path,
    size_t pathlen);

/* The last change of a progress file, in ms since the epoch (its mtime;
 * 0 when it does not exist). The agent creates the file, empty, when it
 * launches the job, so until the job writes it this is the launch time:
 * a job that never reports progress has made none since it started. */
int64_t watch_progress_changed(const char *path);

#endif
