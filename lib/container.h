/* A job's container (Pyxis's options): the image its tasks run in and
 * how. Pure: parsing and checking only; the agent prepares and runs it
 * (daemon/agent/container.h).
 *
 *   --container-image IMAGE     /abs/file.sqsh (a squashfs image),
 *                               oci:/abs/dir[:TAG] (an OCI image layout;
 *                               TAG default "latest"), or
 *                               docker://[REGISTRY#]IMAGE[:TAG] (Pyxis's
 *                               registry form; REGISTRY default Docker
 *                               Hub, CTR_DEFAULT_REGISTRY; imported on
 *                               the node where [container] registries
 *                               allows it; USER@ is parsed and refused:
 *                               the nodes hold no registry logins)
 *   --container-mounts SRC:DST[:FLAGS],...   bind mounts; SRC alone
 *                               means SRC:SRC; FLAGS '+'-separated of
 *                               ro rw private rprivate slave rslave
 *                               shared rshared nosuid nodev noexec
 *   --container-workdir DIR     the task's directory inside (absolute)
 *   --container-writable        a private writable root (default: read
 *                               only); --container-readonly undoes it
 *   --container-env NAME,...    names the job's value wins for (the job's
 *                               environment always wins here: the
 *                               image's own is not read)
 *   --container-mount-home      the user's home at the same path
 *   --container-name NAME       a name (1-64 of [A-Za-z0-9._-])
 *
 * Every field is kept as the user gave it, so that cohort show prints it
 * back; NULL image: no container (and every other field unset). */
#ifndef COHORT_CONTAINER_H
#define COHORT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#define CTR_TEXT_MAX	4096	/* image, mounts, workdir, env */
#define CTR_NAME_MAX	64
#define CTR_MOUNTS_MAX	64	/* entries of --container-mounts */

struct job_container {
	char *image;		/* NULL: no container */
	char *mounts;		/* NULL: none */
	char *workdir;		/* NULL: the job's workdir */
	char *env;		/* NULL: none */
	char *name;		/* NULL: none */
	bool writable;
	bool mount_home;
};

enum ctr_image_kind {
	CTR_IMAGE_SQUASHFS,	/* a squashfs file */
	CTR_IMAGE_OCI,		/* an OCI image layout directory */
	CTR_IMAGE_DOCKER,	/* a registry's image (docker://) */
};

/* Docker Hub, a docker:// image's registry when it names none; its
 * registry's host, registry-1.docker.io, means the same in a list of
 * allowed registries. */
#define CTR_DEFAULT_REGISTRY	"docker.io"
#define CTR_REGISTRY_MAX	255	/* HOST[:PORT] */

/* An image reference, split. */
struct ctr_image_ref {
	enum ctr_image_kind kind;
	/* the file or layout directory; docker: the image's name in its
	 * registry (nvidia/pytorch) */
	char path[CTR_TEXT_MAX];
	char tag[256];			/* OCI, docker: the reference name */
	char registry[CTR_REGISTRY_MAX + 1]; /* docker: "" for the default */
};

/* Mount flags, as bits. */
#define CTR_MF_RO	0x01
#define CTR_MF_RW	0x02
#define CTR_MF_NOSUID	0x04
#define CTR_MF_NODEV	0x08
#define CTR_MF_NOEXEC	0x10

struct ctr_mount {
	char *src;
	char *dst;
	unsigned flags;		/* CTR_MF_* */
	const char *propagation; /* "rprivate" (default) .. "rshared";
				  * static text */
};

void ctr_clear(struct job_container *c);
/* Deep copy; 0, or -1 (ENOMEM) with dst cleared. */
int ctr_copy(struct job_container *dst, const struct job_container *src);
/* True when any field is set. */
bool ctr_any(const struct job_container *c);
/* An image's digest: "sha256:" and 64 lowercase hex digits (an OCI
 * manifest's, or a squashfs file's). */
#define CTR_DIGEST_LEN (7 + 64)
bool ctr_digest_valid(const char *d);

/* Split image into ref. 0; -1 with err (ERR_INVALID) naming the image
 * and the reason (relative path, registry reference, bad tag...). */
int ctr_image_parse(const char *image, struct ctr_image_ref *ref,
    struct cerr *err);

/* True when h[0..len) is a registry host: HOST[:PORT], HOST's labels
 * of letters, digits and '-' joined by '.', PORT 1-65535. */
bool ctr_registry_host_ok(const char *h, size_t len);

/* True when registry ("" for CTR_DEFAULT_REGISTRY) is one of list's
 * comma-separated hosts (case-insensitive; docker.io and
 * registry-1.docker.io alike); NULL or empty list: none is. */
bool ctr_registry_allowed(const char *list, const char *registry);

/* A docker image's source for skopeo copy: docker://HOST/IMAGE:TAG. 0;
 * -1 (ENAMETOOLONG, EINVAL for another kind). */
int ctr_image_source(const struct ctr_image_ref *ref, char *buf,
    size_t len);

/* Parse a --container-mounts value into *out (n entries, to free with
 * ctr_mounts_free). 0; -1 with err (ERR_INVALID) naming the entry. */
int ctr_mounts_parse(const char *text, struct ctr_mount **out, size_t *n,
    struct cerr *err);
void ctr_mounts_free(struct ctr_mount *m, size_t n);

/* Check every field (and that the others come with an image). 0; -1
 * with err (ERR_INVALID) saying which option and why. */
int ctr_validate(const struct job_container *c, struct cerr *err);

/* The reason --container-save is refused, for the clients. */
extern const char ctr_save_refused[];

#endif
