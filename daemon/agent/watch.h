/* What a job's files say while it runs, for the controller: the
 * checkpoint contract ($COHORT_CHECKPOINT_DIR/LATEST holding "STEP PATH",
 * written by rename) on the node of rank 0, and when the job's progress
 * file last changed (hang detection, --hang-timeout).
 *
 * These files are the job's: a root agent reads them with the job user's
 * privileges (watch_read_file), never following a symbolic link, and
 * only a regular file of bounded size that the job's uid owns. Only the
 * parsed "STEP PATH" and an mtime leave the node. */
#ifndef COHORT_AGENT_WATCH_H
#define COHORT_AGENT_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

#define WATCH_PATH_MAX 4096
/* LATEST is "STEP PATH\n": anything longer is not a checkpoint. */
#define WATCH_LATEST_MAX (WATCH_PATH_MAX + 32)

/* Whose files these are: the account the job's tasks run as. groups
 * (ngroups of them, owned by the caller) are its supplementary groups,
 * used for the read when the agent is root. */
struct watch_cred {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
};

/* Parse LATEST's content: one line "STEP PATH" (STEP a decimal integer,
 * PATH the rest of the line, not empty; a trailing newline allowed).
 * 0, or -1 (EINVAL) for anything else — a half-written file never
 * parses as a checkpoint. */
int watch_parse_latest(const char *buf, size_t len, uint64_t *step,
    char *path, size_t pathlen);

/* A step file's content (COHORT_STEP_FILE): one line "STEP COMPUTE_MS",
 * two decimal integers separated by blanks (COMPUTE_MS below 2^32), a
 * trailing newline allowed. 0, or -1 (EINVAL) for anything else. */
#define WATCH_STEP_MAX 64
int watch_parse_step(const char *buf, size_t len, uint64_t *step,
    uint32_t *compute_ms);

/* Read dir/name into buf (at most max bytes; *len set) as cred's user
 * would: when the agent is root the open runs with that user's
 * filesystem uid, gid and groups (this thread only), so directories the
 * user may not search and files it may not read stay closed; name is
 * opened without following a symbolic link and without blocking (a
 * FIFO never hangs the agent). *mtime_ms (may be NULL) is the file's
 * mtime. 0, or -1 with errno:
 *   ENOENT  no such file (or directory)
 *   EACCES  the user may not reach or read it
 *   ELOOP   name is a symbolic link
 *   EINVAL  not a regular file (FIFO, device, directory, ...)
 *   EPERM   owned by another uid than cred->uid (or cred->uid is 0
 *           while the agent is root)
 *   EFBIG   larger than max
 *   ECANCELED  the agent could not take the user's identity
 * Nothing is read before those checks pass. */
int watch_read_file(const char *dir, const char *name,
    const struct watch_cred *cred, char *buf, size_t max, size_t *len,
    int64_t *mtime_ms);

/* Read dir/LATEST with watch_read_file. 0 with *step, path and
 * *mtime_ms (may be NULL) set; -1 with errno as watch_read_file says,
 * or EBADMSG when its content does not parse (half written). */
int watch_read_latest(const char *dir, const struct watch_cred *cred,
    uint64_t *step, char *path, size_t pathlen, int64_t *mtime_ms);

/* Whether the PATH of a LATEST names something there, as cred's user
 * (as watch_read_file reads): a checkpoint is only complete once what
 * it names exists, and a start handed one that does not cannot resume.
 * Symbolic links are followed (a checkpoint may be one), "magic" /proc
 * links are not. A PATH that is not absolute (a URI, or a name the job
 * resolves itself) is not checked: 0. 0, or -1 with errno (ENOENT, or
 * EACCES: the user may not reach it; ECANCELED as above). */
int watch_path_reachable(const char *path, const struct watch_cred *cred);

/* The last change of a progress file, in ms since the epoch (its mtime),
 * into *ms. The agent creates the file, empty and owned by the job's
 * uid, when it launches the job, so until the job writes it this is the
 * launch time. Not followed if it is a symbolic link. 0, or -1 with
 * errno: ENOENT, ELOOP (a symbolic link), EINVAL (not a regular file),
 * EPERM (owned by another uid than uid). */
int watch_progress_changed(const char *path, uid_t uid, int64_t *ms);

/* Why a read was refused, for a log line: "a symbolic link", "not a
 * regular file", ... Static text. */
const char *watch_strerror(int e);

#endif
