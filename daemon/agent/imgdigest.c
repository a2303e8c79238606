/* The digest a prepared container image is known by (imgdigest.h). */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon/agent/imgdigest.h"
#include "lib/container.h"

/* The most of index.json read: a layout's index lists its tags, a few
 * hundred bytes each. */
#define IMGDIGEST_INDEX_MAX (1024 * 1024)

/* path's contents (at most max bytes, NUL-terminated), malloc'd; NULL
 * with err. */
static char *
imgdigest_slurp(const char *path, size_t max, size_t *len, struct cerr *err)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	/* Not following a link, and not waiting on a FIFO put there: the
	 * file is the user's, read by the agent. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1) {
		cerr_set(err, ERR_NOT_FOUND, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max) {
		cerr_set(err, ERR_INVALID, "%s: not a file of at most %zu "
		    "bytes", path, max);
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((n = read(fd, buf, (size_t)st.st_size)) < 0) {
		cerr_set(err, ERR_INTERNAL, "%s: %s", path, strerror(errno));
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
	*len = (size_t)n;
out:
	close(fd);
	return buf;
}

/* The digest of the manifest tagged tag in index, or NULL. */
static const char *
imgdigest_find(json_t *index, const char *tag)
{
	json_t *m, *ann, *name, *digest;
	size_t i;

	json_array_foreach(json_object_get(index, "manifests"), i, m) {
		ann = json_object_get(m, "annotations");
		name = json_object_get(ann, "org.opencontainers.image.ref.name");
		digest = json_object_get(m, "digest");
		if (json_is_string(name) && json_is_string(digest) &&
		    strcmp(json_string_value(name), tag) == 0)
			return json_string_value(digest);
	}
	return NULL;
}

int
imgdigest_oci(const char *layout, const char *tag, char *out, size_t len,
    struct cerr *err)
{
	char path[4096];
	const char *d;
	json_error_t je;
	json_t *index;
	size_t n;
	char *buf;

	if (len <= CTR_DIGEST_LEN)
		return cerr_set(err, ERR_INVALID, "digest buffer too small");
	if ((size_t)snprintf(path, sizeof(path), "%s/index.json", layout) >=
	    sizeof(path))
		return cerr_set(err, ERR_INVALID, "%s: path too long", layout);
	if ((buf = imgdigest_slurp(path, IMGDIGEST_INDEX_MAX, &n,
	    err)) == NULL)
		return -1;
	index = json_loadb(buf, n, 0, &je);
	free(buf);
	if (index == NULL)
		return cerr_set(err, ERR_INVALID, "%s: %s", path, je.text);
	d = imgdigest_find(index, tag);
	if (d == NULL || !ctr_digest_valid(d)) {
		json_decref(index);
		return cerr_set(err, ERR_NOT_FOUND, "%s: no sha256 manifest "
		    "tagged '%s'", path, tag);
	}
	snprintf(out, len, "%s", d);
	json_decref(index);
	return 0;
}

int
imgdigest_entry(const char *entry, char *out, size_t len, struct cerr *err)
{
	char path[4096], *buf;
	size_t n;

	if (len <= CTR_DIGEST_LEN)
		return cerr_set(err, ERR_INVALID, "digest buffer too small");
	if ((size_t)snprintf(path, sizeof(path), "%s/digest", entry) >=
	    sizeof(path))
		return cerr_set(err, ERR_INVALID, "%s: path too long", entry);
	if ((buf = imgdigest_slurp(path, 128, &n, err)) == NULL)
		return -1;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	snprintf(out, len, "sha256:%s", buf);
	free(buf);
	if (!ctr_digest_valid(out)) {
		out[0] = '\0';
		return cerr_set(err, ERR_INVALID, "%s: not a sha256", path);
	}
	return 0;
}
