/* The OCI runtime configuration (a bundle's config.json) of a job's task
 * in a container image: pure, from a struct, so that what a container
 * may do is read and tested here rather than in the runtime.
 *
 * What it always says: the root file system read only unless writable;
 * the process as uid/gid with its supplementary groups, no new
 * privileges, no capabilities, no terminal; the host's network, IPC,
 * PID and UTS namespaces (no entries: NCCL needs the network and shared
 * memory, and the agent signals the task's processes), a mount
 * namespace of its own; /proc, a /dev tmpfs with the runtime's default
 * devices, /dev/shm (a tmpfs of shm_bytes), /dev/pts, /sys read only,
 * /proc's sensitive files masked; then the binds asked for, and the GPU
 * device nodes given (created, and allowed in the devices cgroup). */
#ifndef COHORT_AGENT_OCISPEC_H
#define COHORT_AGENT_OCISPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/container.h"
#include "lib/err.h"

/* A character device node to give the container (a GPU's). */
struct ocispec_dev {
	const char *path;	/* the same inside and out: /dev/nvidia0 */
	uint32_t major, minor;
	const char *access;	/* the cgroup's, of "rwm"; NULL: "rwm" */
};

struct ocispec {
	const char *rootfs;		/* absolute */
	bool writable;
	const char *const *argv;	/* argc words */
	size_t argc;
	char *const *envp;		/* NULL-terminated "K=V" */
	const char *cwd;		/* absolute, inside */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;		/* supplementary */
	size_t ngroups;
	const struct ctr_mount *mounts;	/* binds, in order */
	size_t nmounts;
	const struct ocispec_dev *devs;
	size_t ndevs;
	const char *cgroups_path;	/* NULL: the runtime's default */
	uint64_t shm_bytes;		/* /dev/shm's size; 0: 64 MiB */
};

/* The JSON text of s into *out (NUL-terminated, the caller frees), its
 * length in *len. 0, or -1 with err: ERR_INVALID for a relative path or
 * an empty command, ERR_INTERNAL for memory. */
int ocispec_json(const struct ocispec *s, char **out, size_t *len,
    struct cerr *err);

#endif
