/* A job's container options: parsing and checks (see container.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/container.h"

const char ctr_save_refused[] = "not supported: "
    "Cohort does not write images back; build the image with umoci or "
    "mksquashfs instead";

void
ctr_clear(struct job_container *c)
{
	free(c->image);
	free(c->mounts);
	free(c->workdir);
	free(c->env);
	free(c->name);
	memset(c, 0, sizeof(*c));
}

static int
dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	return src != NULL && (*dst = strdup(src)) == NULL ? -1 : 0;
}

int
ctr_copy(struct job_container *dst, const struct job_container *src)
{
	*dst = *src;
	dst->image = dst->mounts = dst->workdir = dst->env = dst->name = NULL;
	if (dup_opt(&dst->image, src->image) == -1 ||
	    dup_opt(&dst->mounts, src->mounts) == -1 ||
	    dup_opt(&dst->workdir, src->workdir) == -1 ||
	    dup_opt(&dst->env, src->env) == -1 ||
	    dup_opt(&dst->name, src->name) == -1) {
		ctr_clear(dst);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

bool
ctr_any(const struct job_container *c)
{
	return c->image != NULL || c->mounts != NULL || c->workdir != NULL ||
	    c->env != NULL || c->name != NULL || c->writable ||
	    c->mount_home;
}

bool
ctr_digest_valid(const char *d)
{
	size_t i;

	if (d == NULL || strncmp(d, "sha256:", 7) != 0 ||
	    strlen(d) != CTR_DIGEST_LEN)
		return false;
	for (i = 7; d[i] != '\0'; i++)
		if (!((d[i] >= '0' && d[i] <= '9') ||
		    (d[i] >= 'a' && d[i] <= 'f')))
			return false;
	return true;
}

/* Printable, no control characters, no newline: these reach logs and a
 * JSON file the agent writes. */
static bool
text_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* An absolute path without "." or ".." components, so that what the
 * agent binds or reads is what the text says. */
static bool
path_ok(const char *p)
{
	const char *c;
	size_t len;

	if (p[0] != '/' || strlen(p) >= CTR_TEXT_MAX || !text_ok(p))
		return false;
	for (c = p; *c != '\0';) {
		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

bool
ctr_registry_host_ok(const char *h, size_t len)
{
	size_t i, label = 0, hl;
	unsigned long port = 0;

	if (len == 0 || len > CTR_REGISTRY_MAX)
		return false;
	for (hl = 0; hl < len && h[hl] != ':'; hl++)
		;
	if (hl == 0 || h[0] == '.' || h[0] == '-' || h[hl - 1] == '.' ||
	    h[hl - 1] == '-')
		return false;
	for (i = 0; i < hl; i++) {
		if (h[i] == '.') {
			if (label == 0 || h[i - 1] == '-' || h[i + 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((h[i] >= 'a' && h[i] <= 'z') ||
		    (h[i] >= 'A' && h[i] <= 'Z') ||
		    (h[i] >= '0' && h[i] <= '9') || h[i] == '-') ||
		    ++label > 63)
			return false;
	}
	if (hl == len)
		return true;
	if (len - hl < 2 || len - hl > 6)
		return false;
	for (i = hl + 1; i < len; i++) {
		if (h[i] < '0' || h[i] > '9')
			return false;
		port = port * 10 + (unsigned long)(h[i] - '0');
	}
	return h[hl + 1] != '0' && port >= 1 && port <= 65535;
}

/* docker.io and its registry's own host name the same registry. */
static const char *
registry_canon(const char *h, size_t len)
{
	if ((len == 9 && strncasecmp(h, "docker.io", 9) == 0) ||
	    (len == 20 && strncasecmp(h, "registry-1.docker.io", 20) == 0) ||
	    (len == 15 && strncasecmp(h, "index.docker.io", 15) == 0))
		return CTR_DEFAULT_REGISTRY;
	return NULL;
}

bool
ctr_registry_allowed(const char *list, const char *registry)
{
	const char *e, *end, *h, *t, *want, *canon;
	size_t wl;

	if (list == NULL || registry == NULL)
		return false;
	want = registry[0] != '\0' ? registry : CTR_DEFAULT_REGISTRY;
	wl = strlen(want);
	if ((canon = registry_canon(want, wl)) != NULL) {
		want = canon;
		wl = strlen(canon);
	}
	for (e = list; ; e = end + 1) {
		end = e + strcspn(e, ",");
		for (h = e; h < end && *h == ' '; h++)
			;
		for (t = end; t > h && t[-1] == ' '; t--)
			;
		if ((canon = registry_canon(h, (size_t)(t - h))) != NULL) {
			h = canon;
			t = canon + strlen(canon);
		}
		if ((size_t)(t - h) == wl && strncasecmp(h, want, wl) == 0)
			return true;
		if (*end == '\0')
			return false;
	}
}

int
ctr_image_source(const struct ctr_image_ref *ref, char *buf, size_t len)
{
	int n;

	if (ref->kind != CTR_IMAGE_DOCKER) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(buf, len, "docker://%s/%s:%s", ref->registry[0] !=
	    '\0' ? ref->registry : CTR_DEFAULT_REGISTRY, ref->path, ref->tag);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static bool
in_set(char ch, const char *set)
{
	return ch != '\0' && strchr(set, ch) != NULL;
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define TAG_CHARS LOWER_DIGITS "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-"

/* docker://[USER@][REGISTRY#]IMAGE[:TAG] into ref (see container.h).
 * IMAGE is '/'-separated components of lowercase letters and digits,
 * joined inside by '.', '_' or '-' (the distribution spec's names);
 * TAG 1-128 of letters, digits, '.', '_', '-', not first '.' or '-'. */
static int
docker_parse(const char *image, struct ctr_image_ref *ref, struct cerr *err)
{
	const char *p = image + 9, *at, *hash, *colon, *slash, *c;
	size_t len, comp;

	ref->kind = CTR_IMAGE_DOCKER;
	hash = strchr(p, '#');
	at = strchr(p, '@');
	if (at != NULL && strncmp(at + 1, "sha256:", 7) == 0)
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "images by digest (@sha256:...) are not supported: give "
		    "a tag", image);
	if (at != NULL && (hash == NULL || at < hash)) {
		for (c = p; c < at; c++)
			if (!in_set(*c, TAG_CHARS))
				break;
		if (c == p || c < at || at - p > 64)
			return cerr_set(err, ERR_INVALID, "--container-image "
			    "'%s': bad user before '@'", image);
		return cerr_set(err, ERR_INVALID, "--container-image '%s': a "
		    "registry login (USER@) is not supported: the nodes hold "
		    "no registry credentials; use a public image or import "
		    "it into an OCI layout (oci:/DIR:TAG)", image);
	}
	if (at != NULL)
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "an '@' after the image (a digest is @sha256:HEX, and not "
		    "supported)", image);
	if (hash != NULL) {
		if (!ctr_registry_host_ok(p, (size_t)(hash - p)))
			return cerr_set(err, ERR_INVALID, "--container-image "
			    "'%s': '%.*s' is not a registry (HOST or "
			    "HOST:PORT before '#')", image, (int)(hash - p),
			    p);
		memcpy(ref->registry, p, (size_t)(hash - p));
		ref->registry[hash - p] = '\0';
		p = hash + 1;
		if (strchr(p, '#') != NULL)
			return cerr_set(err, ERR_INVALID, "--container-image "
			    "'%s': more than one '#'", image);
	}
	slash = strrchr(p, '/');
	colon = strrchr(p, ':');
	/* Pyxis's form names a registry only before '#': a first
	 * component that looks like a host (nvcr.io/..., reg:5000/...)
	 * would otherwise go to Docker Hub. */
	len = strcspn(p, "/");
	if ((colon != NULL && slash != NULL && colon < slash) ||
	    (hash == NULL && p[len] == '/' && (memchr(p, '.', len) != NULL ||
	    (len == 9 && strncmp(p, "localhost", 9) == 0))))
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "a registry's host goes before '#' "
		    "(docker://REGISTRY#IMAGE:TAG)", image);
	len = colon != NULL ? (size_t)(colon - p) : strlen(p);
	if (colon != NULL) {
		if (colon[1] == '\0' || strlen(colon + 1) > 128 ||
		    colon[1] == '.' || colon[1] == '-')
			return cerr_set(err, ERR_INVALID, "--container-image "
			    "'%s': bad tag", image);
		for (c = colon + 1; *c != '\0'; c++)
			if (!in_set(*c, TAG_CHARS))
				return cerr_set(err, ERR_INVALID,
				    "--container-image '%s': bad tag "
				    "(letters, digits, '.', '_', '-')", image);
		snprintf(ref->tag, sizeof(ref->tag), "%s", colon + 1);
	} else
		snprintf(ref->tag, sizeof(ref->tag), "latest");
	if (len == 0 || len > 255)
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "no image name, or one over 255 characters", image);
	/* Components of [a-z0-9], separators inside only. */
	for (comp = 0, c = p; c < p + len; c++) {
		if (in_set(*c, LOWER_DIGITS)) {
			comp++;
			continue;
		}
		if (!in_set(*c, "._-/") || comp == 0 || c + 1 == p + len ||
		    !in_set(c[1], LOWER_DIGITS))
			return cerr_set(err, ERR_INVALID, "--container-image "
			    "'%s': bad image name (lowercase letters and "
			    "digits, '/'-separated, joined by '.', '_' or "
			    "'-')", image);
		if (*c == '/')
			comp = 0;
	}
	memcpy(ref->path, p, len);
	ref->path[len] = '\0';
	return 0;
}

int
ctr_image_parse(const char *image, struct ctr_image_ref *ref,
    struct cerr *err)
{
	const char *p, *slash, *colon;
	size_t len, i;

	memset(ref, 0, sizeof(*ref));
	if (image == NULL || image[0] == '\0')
		return cerr_set(err, ERR_INVALID, "--container-image: empty");
	if (strlen(image) >= CTR_TEXT_MAX || !text_ok(image))
		return cerr_set(err, ERR_INVALID, "--container-image: too "
		    "long or not printable text");
	if (strncmp(image, "docker://", 9) == 0)
		return docker_parse(image, ref, err);
	if (strncmp(image, "dockerd://", 10) == 0 ||
	    strncmp(image, "podman://", 9) == 0)
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "images from a local Docker or Podman daemon are not "
		    "supported (there is none on the nodes): give "
		    "docker://[REGISTRY#]IMAGE[:TAG], oci:/DIR[:TAG] or a "
		    "squashfs file", image);
	if (strchr(image, '#') != NULL)
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "a registry's image is docker://[REGISTRY#]IMAGE[:TAG]",
		    image);
	if (strncmp(image, "oci:", 4) == 0) {
		p = image + 4;
		slash = strrchr(p, '/');
		colon = strrchr(p, ':');
		ref->kind = CTR_IMAGE_OCI;
		if (colon != NULL && (slash == NULL || colon > slash)) {
			len = (size_t)(colon - p);
			if (colon[1] == '\0' || strlen(colon + 1) >=
			    sizeof(ref->tag))
				return cerr_set(err, ERR_INVALID,
				    "--container-image '%s': bad tag",
				    image);
			snprintf(ref->tag, sizeof(ref->tag), "%s", colon + 1);
			for (i = 0; ref->tag[i] != '\0'; i++)
				if (strchr("abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
				    ref->tag[i]) == NULL)
					return cerr_set(err, ERR_INVALID,
					    "--container-image '%s': bad tag "
					    "(letters, digits, '.', '_', "
					    "'-')", image);
		} else {
			len = strlen(p);
			snprintf(ref->tag, sizeof(ref->tag), "latest");
		}
		memcpy(ref->path, p, len);
		ref->path[len] = '\0';
		while (len > 1 && ref->path[len - 1] == '/')
			ref->path[--len] = '\0';
	} else {
		ref->kind = CTR_IMAGE_SQUASHFS;
		snprintf(ref->path, sizeof(ref->path), "%s", image);
	}
	if (!path_ok(ref->path))
		return cerr_set(err, ERR_INVALID, "--container-image '%s': "
		    "the image's path must be absolute, without '.' or '..' "
		    "(a squashfs file /DIR/IMAGE.sqsh, or oci:/DIR[:TAG])",
		    image);
	return 0;
}

void
ctr_mounts_free(struct ctr_mount *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(m[i].src);
		free(m[i].dst);
	}
	free(m);
}

static const char *const propagations[] = {
	"private", "rprivate", "slave", "rslave", "shared", "rshared", NULL,
};

/* One FLAGS word into m; -1 when unknown. */
static int
mount_flag(const char *w, size_t len, struct ctr_mount *m)
{
	static const struct { const char *w; unsigned f; } words[] = {
		{ "ro", CTR_MF_RO }, { "rw", CTR_MF_RW },
		{ "nosuid", CTR_MF_NOSUID }, { "nodev", CTR_MF_NODEV },
		{ "noexec", CTR_MF_NOEXEC },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].w) == len &&
		    strncmp(words[i].w, w, len) == 0) {
			m->flags |= words[i].f;
			return 0;
		}
	for (i = 0; propagations[i] != NULL; i++)
		if (strlen(propagations[i]) == len &&
		    strncmp(propagations[i], w, len) == 0) {
			m->propagation = propagations[i];
			return 0;
		}
	return -1;
}

static int
mount_one(const char *e, size_t len, struct ctr_mount *m, struct cerr *err)
{
	char buf[CTR_TEXT_MAX], *f[3], *c;
	size_t nf = 0, wl;

	if (len == 0)
		return cerr_set(err, ERR_INVALID, "--container-mounts: an "
		    "empty entry");
	if (len >= sizeof(buf))
		return cerr_set(err, ERR_INVALID, "--container-mounts: an "
		    "entry is too long");
	memcpy(buf, e, len);
	buf[len] = '\0';
	f[nf++] = buf;
	for (c = buf; *c != '\0'; c++)
		if (*c == ':') {
			if (nf == 3)
				return cerr_set(err, ERR_INVALID,
				    "--container-mounts '%s': expected "
				    "SRC:DST[:FLAGS]", buf);
			*c = '\0';
			f[nf++] = c + 1;
		}
	m->propagation = "rprivate";
	if (nf == 1)
		f[1] = f[0];
	if (!path_ok(f[0]) || !path_ok(f[1]))
		return cerr_set(err, ERR_INVALID, "--container-mounts '%.*s': "
		    "SRC and DST must be absolute paths without '.' or '..'",
		    (int)len, e);
	if (strcmp(f[1], "/") == 0)
		return cerr_set(err, ERR_INVALID, "--container-mounts '%.*s': "
		    "cannot mount over the image's root", (int)len, e);
	if (nf == 3) {
		for (c = f[2]; ; c += wl + 1) {
			wl = strcspn(c, "+");
			if (mount_flag(c, wl, m) == -1)
				return cerr_set(err, ERR_INVALID,
				    "--container-mounts '%.*s': unknown flag "
				    "'%.*s' (ro, rw, nosuid, nodev, noexec, "
				    "private, rprivate, slave, rslave, shared, "
				    "rshared; several with '+')", (int)len, e,
				    (int)wl, c);
			if (c[wl] == '\0')
				break;
		}
		if ((m->flags & (CTR_MF_RO | CTR_MF_RW)) ==
		    (CTR_MF_RO | CTR_MF_RW))
			return cerr_set(err, ERR_INVALID, "--container-mounts "
			    "'%.*s': both ro and rw", (int)len, e);
	}
	if ((m->src = strdup(f[0])) == NULL ||
	    (m->dst = strdup(f[1])) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	return 0;
}

int
ctr_mounts_parse(const char *text, struct ctr_mount **out, size_t *n,
    struct cerr *err)
{
	struct ctr_mount *m = NULL;
	const char *e;
	size_t cnt = 0, len;

	*out = NULL;
	*n = 0;
	if (strlen(text) >= CTR_TEXT_MAX * 4 || !text_ok(text))
		return cerr_set(err, ERR_INVALID, "--container-mounts: too "
		    "long or not printable text");
	for (e = text; ; e += len + 1) {
		len = strcspn(e, ",");
		if (cnt == CTR_MOUNTS_MAX) {
			ctr_mounts_free(m, cnt);
			return cerr_set(err, ERR_INVALID, "--container-mounts: "
			    "more than %d mounts", CTR_MOUNTS_MAX);
		}
		if (cnt == 0 && (m = calloc(CTR_MOUNTS_MAX, sizeof(*m))) ==
		    NULL)
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		if (mount_one(e, len, &m[cnt], err) == -1) {
			ctr_mounts_free(m, cnt + 1);
			return -1;
		}
		cnt++;
		if (e[len] == '\0')
			break;
	}
	*out = m;
	*n = cnt;
	return 0;
}

static bool
env_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int
ctr_validate(const struct job_container *c, struct cerr *err)
{
	struct ctr_image_ref ref;
	struct ctr_mount *m;
	const char *e;
	size_t n, len, i;

	if (c->image == NULL) {
		if (ctr_any(c))
			return cerr_set(err, ERR_INVALID, "--container-%s "
			    "needs --container-image",
			    c->mounts != NULL ? "mounts" :
			    c->workdir != NULL ? "workdir" :
			    c->env != NULL ? "env" :
			    c->name != NULL ? "name" :
			    c->writable ? "writable" : "mount-home");
		return 0;
	}
	if (ctr_image_parse(c->image, &ref, err) == -1)
		return -1;
	if (c->mounts != NULL) {
		if (ctr_mounts_parse(c->mounts, &m, &n, err) == -1)
			return -1;
		ctr_mounts_free(m, n);
	}
	if (c->workdir != NULL && !path_ok(c->workdir))
		return cerr_set(err, ERR_INVALID, "--container-workdir '%s': "
		    "must be an absolute path without '.' or '..'",
		    c->workdir);
	if (c->env != NULL) {
		if (strlen(c->env) >= CTR_TEXT_MAX)
			return cerr_set(err, ERR_INVALID,
			    "--container-env: too long");
		for (e = c->env; ; e += len + 1) {
			len = strcspn(e, ",");
			if (!env_name_ok(e, len))
				return cerr_set(err, ERR_INVALID,
				    "--container-env: '%.*s' is not a "
				    "variable name", (int)len, e);
			if (e[len] == '\0')
				break;
		}
	}
	if (c->name != NULL) {
		len = strlen(c->name);
		if (len == 0 || len > CTR_NAME_MAX)
			return cerr_set(err, ERR_INVALID, "--container-name: "
			    "1 to %d characters", CTR_NAME_MAX);
		for (i = 0; i < len; i++)
			if (strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    c->name[i]) == NULL)
				return cerr_set(err, ERR_INVALID,
				    "--container-name '%s': letters, digits, "
				    "'.', '_' and '-' only", c->name);
	}
	return 0;
}
