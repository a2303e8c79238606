/* CDI (the Container Device Interface) specs of kind nvidia.com/gpu:
 * what NVIDIA's container toolkit writes (`nvidia-ctk cdi generate`) so
 * that a container on a GPU node gets the host driver's user-space
 * files (libcuda.so.*, libnvidia-ml.so.*, nvidia-smi...) as well as the
 * device nodes.
 *
 * Read from a list of directories ([container] cdi_dirs, default
 * /etc/cdi then /var/run/cdi), JSON only (jansson), bounded: at most
 * CDI_MAX_FILES files a directory, CDI_MAX_BYTES a file, CDI_MAX_ITEMS
 * entries in any list. A spec grants mounts and devices to containers,
 * so a file is read only when it is a regular file (no symlink) owned
 * by the expected owner (root in the agent) and not writable by group
 * or others.
 *
 * Applying a spec to a job's task: the spec's common containerEdits and
 * the device edits of the devices named by the job's GPU indices ("0",
 * "1", ...); other devices, "all" included, are never applied (a job
 * must not get a node of a GPU it was not given). Device nodes become
 * character devices of the container (created, allowed in the devices
 * cgroup); mounts become read-only binds with nosuid,nodev whatever the
 * spec's options say; env entries are added unless the job already has
 * the name (a job's COHORT_* and SLURM_* are never CDI's). Hooks run as
 * root on the host: they are never run, and a spec with hooks is
 * applied without them (logged once when loaded). */
#ifndef COHORT_AGENT_CDI_H
#define COHORT_AGENT_CDI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/agent/ocispec.h"
#include "lib/err.h"

#define CDI_KIND	"nvidia.com/gpu"
#define CDI_DEFAULT_DIRS "/etc/cdi:/var/run/cdi"
#define CDI_MAX_BYTES	(1024 * 1024)
#define CDI_MAX_FILES	64
#define CDI_MAX_ITEMS	512
#define CDI_MAX_DIRS	8

struct cdi_dev {
	char *path;		/* inside: under /dev */
	char *host;		/* where to stat it; = path when not given */
	uint32_t major, minor;	/* 0/0: from the host node */
	char access[4];		/* of "rwm"; default "rwm" */
};

struct cdi_mount {
	char *host, *ctr;	/* absolute, no ".." */
};

struct cdi_edits {
	char **env;		/* "K=V" */
	size_t nenv;
	struct cdi_dev *devs;
	size_t ndevs;
	struct cdi_mount *mounts;
	size_t nmounts;
	size_t nhooks;		/* counted, never run */
};

struct cdi_spec {
	char *path;		/* the file it came from */
	struct cdi_edits common;
	char **names;		/* devices[].name */
	struct cdi_edits *devices;
	size_t ndevices;
};

/* Read the spec at path, which owner must own. 0 with *out (the
 * caller's: cdi_spec_free), or -1 with err naming path: ERR_INVALID for
 * a symlink, a file that is not regular, owned by another user,
 * writable by group or others, larger than CDI_MAX_BYTES, not JSON, of
 * another cdiVersion (0.3.0 to 0.8.0 are read) or kind, or with an
 * entry that is not valid; ERR_NOT_FOUND when it cannot be opened. */
int cdi_spec_load(const char *path, uid_t owner, struct cdi_spec **out,
    struct cerr *err);
void cdi_spec_free(struct cdi_spec *s);

/* dirs: absolute directories separated by ':' (at most CDI_MAX_DIRS).
 * 0 or -1 (ERR_INVALID with err) for the agent's configuration. */
int cdi_dirs_check(const char *dirs, struct cerr *err);

/* The first spec of kind nvidia.com/gpu in dirs (in order; a directory's
 * *.json files by name) that loads; others and refused files are
 * logged. A directory not owner's, or writable by group or others, is
 * not read (logged). 0 with *out, NULL when there is none; -1 with err for an
 * invalid dirs. */
int cdi_find(const char *dirs, uid_t owner, struct cdi_spec **out,
    struct cerr *err);

/* At the agent's start: cdi_find(dirs or CDI_DEFAULT_DIRS, root), with
 * what it found logged, and when nothing was found on a node with
 * /dev/nvidiactl, that GPU jobs in images get device nodes only (and
 * how nvidia-ctk makes a spec, where it is installed). NULL: none. */
struct cdi_spec *cdi_node_load(const char *dirs);

/* What applying a spec allocates; cdi_applied_free releases it. */
struct cdi_applied {
	struct ocispec_dev *devs;
	char (*devpaths)[64];
	struct ctr_mount *mounts;
	size_t nmounts;
	char **envp;
};

/* *out = *in plus s's edits for a task with GPUs gpus (indices): in's
 * devices, then the spec's that are not already there; in's mounts,
 * then the spec's; in's env, then the spec's names it lacks. A job GPU
 * without a device named by its index, a device node that is not a
 * character device here, or too many entries: -1 with err and nothing
 * applied (*out untouched). out's arrays are held by *hold. */
int cdi_apply(const struct cdi_spec *s, const unsigned *gpus, size_t ngpus,
    const struct ocispec *in, struct ocispec *out, struct cdi_applied *hold,
    struct cerr *err);
void cdi_applied_free(struct cdi_applied *h);

#endif
