/* Jobs in container images on this node ([container] in
 * cohort-agent.conf; the options are lib/container.h's).
 *
 * Preparation, off the event loop: before a launch's tasks start, the
 * agent forks one child per request, one at a time (so that two jobs
 * never unpack the same image at once). The child takes the job's
 * user's groups, gid and uid as its effective ones and checks with
 * them that the user may read the image (the file, or the layout
 * directory, its index.json and blobs/): a user who cannot read it
 * never gets it, cached or not. Only then, as root again, it runs a
 * shell script that unpacks the image (umoci raw unpack for oci:DIR:TAG,
 * unsquashfs for a squashfs file) into CACHE/KEY/rootfs, KEY a hash of
 * the image's kind, path and tag; an entry whose recorded identity (the
 * source's device, inode, size and mtime, and the tag) still matches is
 * used as it is. Afterwards the script evicts the least recently used
 * entries while the cache is above cache_size, skipping any held by a
 * running task (a shared flock on CACHE/KEY/lock, which runc keeps for
 * the container's life) or used in the last minute.
 *
 * Running (tasks_child.c, container_task_prep below): each task gets a
 * bundle SPOOL/jobs/JOBID.START/[step-S/]rank-R.ctr: config.json
 * (ocispec.h), and an overlay mounted by the task in a mount namespace
 * of its own (lower: the cached rootfs; upper: the bundle's), so that the
 * cache is never written and a writable container's changes are its
 * own; the mount goes with the task. The task then execs
 * `runc --root SPOOL/runc run --bundle DIR ID` as root; runc runs the
 * command as the job's user with no privileges, in a cgroup under the
 * task's (cgroupsPath TASK/ctr), so that the agent's kill of the job's
 * cgroup stops the container too, and forwards the signals it gets
 * (SIGTERM, the checkpoint signal) to the container's process. */
#ifndef COHORT_AGENT_CONTAINER_H
#define COHORT_AGENT_CONTAINER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/agent/agent_config.h"
#include "lib/container.h"
#include "lib/err.h"

struct event_base;
struct ctr_cache;
struct ctr_req;
struct cdi_spec;

/* What came of a preparation. */
struct ctr_result {
	int err;		/* 0: ready; else an errno */
	bool permanent;		/* err would come again: do not retry */
	char why[512];		/* err's text, naming the image */
	char rootfs[PATH_MAX];	/* ready: the cached root */
	char lock[PATH_MAX];	/* ready: its lock file */
	bool cached;		/* ready: it was there already */
	int64_t ms;		/* how long it took */
	/* ready: what it is known by (imgdigest.h); "": not known */
	char digest[CTR_DIGEST_LEN + 1];
};

typedef void (*ctr_done_cb)(void *arg, const struct ctr_result *r);

/* The node's image cache (cfg's [container]); NULL with err. */
struct ctr_cache *ctr_cache_create(struct event_base *base,
    const struct agent_config *cfg, struct cerr *err);
void ctr_cache_destroy(struct ctr_cache *c);
/* The node's CDI spec read at create (cdi.h; borrowed), or NULL. */
const struct cdi_spec *ctr_cache_cdi(const struct ctr_cache *c);

/* Prepare image (as given, lib/container.h) for a task of user uid/gid
 * (with groups). cb runs later, from the loop, exactly once unless the
 * request is cancelled first. NULL (ENOMEM) when it cannot be queued. */
struct ctr_req *ctr_prepare(struct ctr_cache *c, const char *image,
    uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
    ctr_done_cb cb, void *arg);
/* Forget r: its cb never runs (a child already running finishes for the
 * next request's benefit). */
void ctr_req_cancel(struct ctr_cache *c, struct ctr_req *r);

/* What a task in a container needs (task_launch.ctr). */
struct ctr_launch {
	const char *image;		/* as given, for messages */
	const struct ctr_result *res;	/* the preparation's outcome */
	const char *runtime;		/* runc's path; NULL: none here */
	const char *spool;		/* the agent's (runc's state in it) */
	const struct job_container *opts;
	const char *admin_mounts;	/* [container] mounts, or NULL */
	const char *home;		/* the user's, for mount_home */
	const char *startdir;		/* bound into the container */
	const char *cgroup;		/* the task's cgroup dir, or NULL */
	uint64_t shm;
	const unsigned *gpus;		/* the task's GPUs (indices) */
	size_t ngpus;
	bool enabled;			/* [container] enabled */
	const struct cdi_spec *cdi;	/* the node's, or NULL */
};

struct launch;
struct task_launch;
/* Write rank's bundle and fill L's container fields for the task (in
 * tasks_prep_create, after L's paths and command). 0, or -1 with err;
 * a preparation that failed is not an error here: the task fails with
 * its reason when it starts. */
int container_task_prep(struct launch *L, const struct task_launch *l,
    struct cerr *err);

/* The cgroup v2 path relative to its mount (for cgroupsPath), or NULL
 * when abs is under neither /sys/fs/cgroup nor /sys/fs/cgroup/unified. */
const char *container_cgroup_rel(const char *abs);

/* At the end of a job whose cgroup v2 directory is job_path: remove the
 * directories a runtime made for its containers at the same place in
 * the cgroup v1 hierarchies of a hybrid layout (runc removes its own
 * leaf only). Empty directories only; best effort. */
void container_cgroup_v1_end(const char *job_path);

/* Free what container_task_prep put in L (tasks_prep_destroy). */
void container_task_free(struct launch *L);

#endif
