/* CDI specs of kind nvidia.com/gpu (see cdi.h). */
#include "config.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon/agent/cdi.h"
#include "lib/log.h"

static void
edits_free(struct cdi_edits *e)
{
	size_t i;

	for (i = 0; i < e->nenv; i++)
		free(e->env[i]);
	free(e->env);
	for (i = 0; i < e->ndevs; i++) {
		free(e->devs[i].path);
		free(e->devs[i].host);
	}
	free(e->devs);
	for (i = 0; i < e->nmounts; i++) {
		free(e->mounts[i].host);
		free(e->mounts[i].ctr);
	}
	free(e->mounts);
	memset(e, 0, sizeof(*e));
}

void
cdi_spec_free(struct cdi_spec *s)
{
	size_t i;

	if (s == NULL)
		return;
	edits_free(&s->common);
	for (i = 0; i < s->ndevices; i++) {
		free(s->names[i]);
		edits_free(&s->devices[i]);
	}
	free(s->names);
	free(s->devices);
	free(s->path);
	free(s);
}

/* Absolute, and no "." or ".." component. */
static int
clean_abs(const char *p)
{
	const char *c;

	if (p == NULL || p[0] != '/' || strlen(p) >= 4096)
		return 0;
	for (c = p; c != NULL; c = strchr(c + 1, '/'))
		if ((strncmp(c, "/..", 3) == 0 && (c[3] == '/' ||
		    c[3] == '\0')) || (strncmp(c, "/.", 2) == 0 &&
		    (c[2] == '/' || c[2] == '\0')))
			return 0;
	return 1;
}

static json_t *
arr(json_t *o, const char *key, const char *path, const char *what,
    struct cerr *err, int *bad)
{
	json_t *a = json_object_get(o, key);

	if (a == NULL || json_is_null(a))
		return NULL;
	if (!json_is_array(a) || json_array_size(a) > CDI_MAX_ITEMS) {
		*bad = 1;
		cerr_set(err, ERR_INVALID, "%s: %s.%s is not a list of at "
		    "most %d entries", path, what, key, CDI_MAX_ITEMS);
		return NULL;
	}
	return a;
}

static const char *
str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int
edits_parse(json_t *o, const char *path, const char *what,
    struct cdi_edits *e, struct cerr *err)
{
	json_t *a, *v;
	size_t i, n;
	int bad = 0;

	memset(e, 0, sizeof(*e));
	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return cerr_set(err, ERR_INVALID, "%s: %s is not an object",
		    path, what);
	if ((a = arr(o, "env", path, what, err, &bad)) != NULL) {
		n = json_array_size(a);
		if ((e->env = calloc(n + 1, sizeof(*e->env))) == NULL)
			goto nomem;
		json_array_foreach(a, i, v) {
			const char *s = json_string_value(v);

			if (s == NULL || strchr(s, '=') == NULL || s[0] ==
			    '=' || strlen(s) > 65536) {
				cerr_set(err, ERR_INVALID, "%s: %s.env[%zu] "
				    "is not NAME=VALUE", path, what, i);
				goto fail;
			}
			if ((e->env[e->nenv] = strdup(s)) == NULL)
				goto nomem;
			e->nenv++;
		}
	}
	if (bad)
		goto fail;
	if ((a = arr(o, "deviceNodes", path, what, err, &bad)) != NULL) {
		n = json_array_size(a);
		if ((e->devs = calloc(n + 1, sizeof(*e->devs))) == NULL)
			goto nomem;
		json_array_foreach(a, i, v) {
			struct cdi_dev *d = &e->devs[e->ndevs];
			const char *p = str(v, "path"), *h = str(v, "hostPath");
			const char *t = str(v, "type"), *perm =
			    str(v, "permissions");
			json_t *ma = json_object_get(v, "major");
			json_t *mi = json_object_get(v, "minor");

			if (!clean_abs(p) || strncmp(p, "/dev/", 5) != 0 ||
			    (h != NULL && (!clean_abs(h) ||
			    strncmp(h, "/dev/", 5) != 0)) ||
			    (t != NULL && strcmp(t, "c") != 0) ||
			    (ma != NULL && (!json_is_integer(ma) ||
			    json_integer_value(ma) < 0 ||
			    json_integer_value(ma) > 0xfff)) ||
			    (mi != NULL && (!json_is_integer(mi) ||
			    json_integer_value(mi) < 0 ||
			    json_integer_value(mi) > 0xfffff)) ||
			    (perm != NULL && (perm[0] == '\0' ||
			    strlen(perm) > 3 || strspn(perm, "rwm") !=
			    strlen(perm)))) {
				cerr_set(err, ERR_INVALID, "%s: %s.deviceNodes"
				    "[%zu]: a character device under /dev "
				    "(path, hostPath, type \"c\", major, "
				    "minor, permissions of \"rwm\") is "
				    "expected", path,
				    what, i);
				goto fail;
			}
			if ((d->path = strdup(p)) == NULL ||
			    (d->host = strdup(h != NULL ? h : p)) == NULL) {
				e->ndevs++;
				goto nomem;
			}
			d->major = ma != NULL ? (uint32_t)json_integer_value(ma)
			    : 0;
			d->minor = mi != NULL ? (uint32_t)json_integer_value(mi)
			    : 0;
			snprintf(d->access, sizeof(d->access), "%s",
			    perm != NULL ? perm : "rwm");
			e->ndevs++;
		}
	}
	if (bad)
		goto fail;
	if ((a = arr(o, "mounts", path, what, err, &bad)) != NULL) {
		n = json_array_size(a);
		if ((e->mounts = calloc(n + 1, sizeof(*e->mounts))) == NULL)
			goto nomem;
		json_array_foreach(a, i, v) {
			struct cdi_mount *m = &e->mounts[e->nmounts];
			const char *h = str(v, "hostPath");
			const char *c = str(v, "containerPath");
			const char *t = str(v, "type");

			if (!clean_abs(h) || !clean_abs(c) || strcmp(c, "/")
			    == 0 || strpbrk(h, ",:") != NULL ||
			    strpbrk(c, ",:") != NULL) {
				cerr_set(err, ERR_INVALID, "%s: %s.mounts[%zu]:"
				    " hostPath and containerPath must be "
				    "absolute, without \"..\", ',' or ':'",
				    path, what, i);
				goto fail;
			}
			/* Only binds: another file system type would be
			 * read here as a bind of its "hostPath". */
			if (json_object_get(v, "type") != NULL && (t == NULL ||
			    strcmp(t, "bind") != 0)) {
				cerr_set(err, ERR_INVALID, "%s: %s.mounts[%zu]:"
				    " only bind mounts are applied", path,
				    what, i);
				goto fail;
			}
			if ((m->host = strdup(h)) == NULL ||
			    (m->ctr = strdup(c)) == NULL) {
				e->nmounts++;
				goto nomem;
			}
			e->nmounts++;
		}
	}
	if (bad)
		goto fail;
	if ((a = arr(o, "hooks", path, what, err, &bad)) != NULL)
		e->nhooks = json_array_size(a);
	if (bad)
		goto fail;
	return 0;
nomem:
	cerr_set(err, ERR_INTERNAL, "out of memory");
fail:
	edits_free(e);
	return -1;
}

/* 0.3.0 .. 0.8.0: the versions whose edits are the ones read here. */
static int
version_ok(const char *v)
{
	unsigned a, b, c;
	char tail;

	return v != NULL && sscanf(v, "%u.%u.%u%c", &a, &b, &c, &tail) == 3 &&
	    a == 0 && b >= 3 && b <= 8;
}

static int
spec_parse(json_t *root, const char *path, struct cdi_spec *s,
    struct cerr *err)
{
	const char *v = str(root, "cdiVersion"), *kind = str(root, "kind");
	json_t *a, *d;
	size_t i, j;
	int bad = 0;

	if (!version_ok(v))
		return cerr_set(err, ERR_INVALID, "%s: cdiVersion %s is not "
		    "one read here (0.3.0 to 0.8.0)", path, v != NULL ? v :
		    "(missing)");
	if (kind == NULL || strcmp(kind, CDI_KIND) != 0)
		return cerr_set(err, ERR_INVALID, "%s: kind %s is not "
		    CDI_KIND, path, kind != NULL ? kind : "(missing)");
	if (edits_parse(json_object_get(root, "containerEdits"), path,
	    "containerEdits", &s->common, err) == -1)
		return -1;
	if ((a = arr(root, "devices", path, "spec", err, &bad)) == NULL) {
		edits_free(&s->common);
		return bad ? -1 : cerr_set(err, ERR_INVALID, "%s: no devices",
		    path);
	}
	if ((s->names = calloc(json_array_size(a) + 1, sizeof(*s->names)))
	    == NULL || (s->devices = calloc(json_array_size(a) + 1,
	    sizeof(*s->devices))) == NULL)
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	json_array_foreach(a, i, d) {
		const char *name = str(d, "name");
		char what[96];

		if (name == NULL || name[0] == '\0' || strlen(name) > 64 ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
		    "QRSTUVWXYZ0123456789_.:-") != strlen(name))
			return cerr_set(err, ERR_INVALID, "%s: devices[%zu] "
			    "has no valid name", path, i);
		for (j = 0; j < s->ndevices; j++)
			if (strcmp(s->names[j], name) == 0)
				return cerr_set(err, ERR_INVALID, "%s: device "
				    "%s named twice", path, name);
		snprintf(what, sizeof(what), "devices[%s].containerEdits",
		    name);
		if (edits_parse(json_object_get(d, "containerEdits"), path,
		    what, &s->devices[i], err) == -1)
			return -1;
		if ((s->names[i] = strdup(name)) == NULL) {
			edits_free(&s->devices[i]);
			return cerr_set(err, ERR_INTERNAL, "out of memory");
		}
		s->ndevices++;
	}
	return 0;
}

int
cdi_spec_load(const char *path, uid_t owner, struct cdi_spec **out,
    struct cerr *err)
{
	struct cdi_spec *s = NULL;
	struct stat st;
	json_error_t je;
	json_t *root = NULL;
	char *buf = NULL;
	ssize_t r;
	size_t len = 0;
	int fd = -1, rc = -1;

	*out = NULL;
	if (lstat(path, &st) == -1)
		return cerr_set(err, ERR_NOT_FOUND, "%s: %s", path,
		    strerror(errno));
	if (S_ISLNK(st.st_mode))
		return cerr_set(err, ERR_INVALID, "%s: a symbolic link, not "
		    "read (a CDI spec grants mounts into containers)", path);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return cerr_set(err, ERR_NOT_FOUND, "%s: %s", path,
		    strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		cerr_set(err, ERR_INVALID, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		cerr_set(err, ERR_INVALID, "%s: owned by uid %u or writable "
		    "by group or others, not read (it must be uid %u's, mode "
		    "644 or stricter)", path, (unsigned)st.st_uid,
		    (unsigned)owner);
		goto out;
	}
	if (st.st_size > CDI_MAX_BYTES) {
		cerr_set(err, ERR_INVALID, "%s: larger than %d bytes", path,
		    CDI_MAX_BYTES);
		goto out;
	}
	if ((buf = malloc(CDI_MAX_BYTES + 1)) == NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	/* Read one byte past the cap: a file that grew is refused too. */
	while (len <= CDI_MAX_BYTES) {
		r = read(fd, buf + len, CDI_MAX_BYTES + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			cerr_set(err, ERR_INTERNAL, "%s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > CDI_MAX_BYTES) {
		cerr_set(err, ERR_INVALID, "%s: larger than %d bytes", path,
		    CDI_MAX_BYTES);
		goto out;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL || !json_is_object(root)) {
		cerr_set(err, ERR_INVALID, "%s: not a JSON object (line %d: "
		    "%s)", path, je.line, root == NULL ? je.text : "");
		goto out;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL || (s->path = strdup(path)) ==
	    NULL) {
		cerr_set(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (spec_parse(root, path, s, err) == -1)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	cdi_spec_free(s);
	json_decref(root);
	free(buf);
	close(fd);
	return rc;
}

int
cdi_dirs_check(const char *dirs, struct cerr *err)
{
	const char *p = dirs, *e;
	char one[4096];
	size_t n = 0, len;

	if (dirs == NULL || dirs[0] == '\0')
		return cerr_set(err, ERR_INVALID, "empty");
	for (;;) {
		e = strchr(p, ':');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == 0 || len >= sizeof(one))
			return cerr_set(err, ERR_INVALID, "an empty "
			    "or too long directory in %s", dirs);
		memcpy(one, p, len);
		one[len] = '\0';
		if (!clean_abs(one))
			return cerr_set(err, ERR_INVALID, "%s is not "
			    "an absolute path without \"..\"", one);
		if (++n > CDI_MAX_DIRS)
			return cerr_set(err, ERR_INVALID, "more than "
			    "%d directories", CDI_MAX_DIRS);
		if (e == NULL)
			return 0;
		p = e + 1;
	}
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The spec of our kind in dir, first by name; 1 found, 0 not. */
static int
find_in(const char *dir, uid_t owner, struct cdi_spec **out)
{
	char *names[CDI_MAX_FILES], path[4096];
	struct dirent *de;
	struct stat st;
	struct cerr e;
	size_t n = 0, i, len;
	int found = 0;
	DIR *d;

	/* Whoever may write the directory may replace its specs. */
	if (lstat(dir, &st) == -1)
		return 0;
	if (!S_ISDIR(st.st_mode) || st.st_uid != owner ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		log_warnx("CDI directory %s: not a directory of uid %u that "
		    "only it may write; not read", dir, (unsigned)owner);
		return 0;
	}
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		if ((len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0) ||
		    (len > 4 && strcmp(de->d_name + len - 4, ".yml") == 0)) {
			log_warnx("CDI spec %s/%s: YAML is not read here; "
			    "write it as JSON (nvidia-ctk cdi generate "
			    "--format=json)", dir, de->d_name);
			continue;
		}
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if (n == CDI_MAX_FILES) {
			log_warnx("CDI directory %s: more than %d specs, the "
			    "rest not read", dir, CDI_MAX_FILES);
			break;
		}
		if ((names[n] = strdup(de->d_name)) != NULL)
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		if (found || (size_t)snprintf(path, sizeof(path), "%s/%s",
		    dir, names[i]) >= sizeof(path))
			continue;
		if (cdi_spec_load(path, owner, out, &e) == 0)
			found = 1;
		else if (strstr(e.text, ": kind ") == NULL)
			log_warnx("CDI spec refused: %s", e.text);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	return found;
}

int
cdi_find(const char *dirs, uid_t owner, struct cdi_spec **out,
    struct cerr *err)
{
	const char *p, *e;
	char one[4096];
	size_t len;

	*out = NULL;
	if (cdi_dirs_check(dirs, err) == -1)
		return -1;
	for (p = dirs; p != NULL; p = e != NULL ? e + 1 : NULL) {
		e = strchr(p, ':');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		memcpy(one, p, len);
		one[len] = '\0';
		if (find_in(one, owner, out))
			return 0;
	}
	return 0;
}

void
cdi_applied_free(struct cdi_applied *h)
{
	if (h == NULL)
		return;
	free(h->devs);
	free(h->devpaths);
	ctr_mounts_free(h->mounts, h->nmounts);
	free(h->envp);
	memset(h, 0, sizeof(*h));
}

static const struct cdi_edits *
device_edits(const struct cdi_spec *s, unsigned gpu)
{
	char name[16];
	size_t i;

	snprintf(name, sizeof(name), "%u", gpu);
	for (i = 0; i < s->ndevices; i++)
		if (strcmp(s->names[i], name) == 0)
			return &s->devices[i];
	return NULL;
}

/* Does envp have NAME (of "NAME=VALUE" kv)? */
static int
env_has(char *const *envp, size_t n, const char *kv)
{
	size_t len = (size_t)(strchr(kv, '=') - kv), i;

	for (i = 0; i < n; i++)
		if (strncmp(envp[i], kv, len) == 0 && envp[i][len] == '=')
			return 1;
	return 0;
}

int
cdi_apply(const struct cdi_spec *s, const unsigned *gpus, size_t ngpus,
    const struct ocispec *in, struct ocispec *out, struct cdi_applied *hold,
    struct cerr *err)
{
	const struct cdi_edits *ed[CDI_MAX_ITEMS + 1];
	struct cdi_applied h;
	struct stat st;
	size_t ned = 0, ndev = 0, nenv = 0, nm = 0, nin = 0, i, j, k;

	memset(&h, 0, sizeof(h));
	memset(hold, 0, sizeof(*hold));
	if (ngpus > CDI_MAX_ITEMS)
		return cerr_set(err, ERR_INVALID, "too many GPUs");
	ed[ned++] = &s->common;
	for (i = 0; i < ngpus; i++)
		if ((ed[ned++] = device_edits(s, gpus[i])) == NULL)
			return cerr_set(err, ERR_NOT_FOUND, "%s: no device "
			    "named \"%u\" (GPU %u's)", s->path, gpus[i],
			    gpus[i]);
	for (i = 0; i < ned; i++) {
		ndev += ed[i]->ndevs;
		nenv += ed[i]->nenv;
		nm += ed[i]->nmounts;
	}
	if (ndev + in->ndevs > CDI_MAX_ITEMS || nm + in->nmounts >
	    CDI_MAX_ITEMS || nenv > CDI_MAX_ITEMS)
		return cerr_set(err, ERR_INVALID, "%s: too many edits for one "
		    "container", s->path);
	for (; in->envp != NULL && in->envp[nin] != NULL; nin++)
		;
	if ((h.devs = calloc(ndev + in->ndevs + 1, sizeof(*h.devs))) ==
	    NULL || (h.devpaths = calloc(ndev + 1, sizeof(*h.devpaths))) ==
	    NULL || (h.mounts = calloc(nm + in->nmounts + 1,
	    sizeof(*h.mounts))) == NULL || (h.envp = calloc(nin + nenv + 1,
	    sizeof(*h.envp))) == NULL)
		goto nomem;
	/* Devices: the job's (given), then the spec's not yet there. */
	for (k = 0; k < in->ndevs; k++)
		h.devs[k] = in->devs[k];
	for (i = 0; i < ned; i++)
		for (j = 0; j < ed[i]->ndevs; j++) {
			const struct cdi_dev *d = &ed[i]->devs[j];
			struct ocispec_dev *o = &h.devs[k];
			size_t q;

			for (q = 0; q < k; q++)
				if (strcmp(h.devs[q].path, d->path) == 0)
					break;
			if (q < k)
				continue;
			if (stat(d->host, &st) == -1 || !S_ISCHR(st.st_mode)) {
				cerr_set(err, ERR_NOT_FOUND, "%s: device %s "
				    "is not a character device here",
				    s->path, d->host);
				goto fail;
			}
			snprintf(h.devpaths[k - in->ndevs], 64, "%s", d->path);
			if (strlen(d->path) >= 64) {
				cerr_set(err, ERR_INVALID, "%s: device path "
				    "%s too long", s->path, d->path);
				goto fail;
			}
			o->path = h.devpaths[k - in->ndevs];
			if (d->major != 0 || d->minor != 0) {
				o->major = d->major;
				o->minor = d->minor;
			} else {
				o->major = major(st.st_rdev);
				o->minor = minor(st.st_rdev);
			}
			o->access = d->access;
			k++;
		}
	/* Mounts: read only, no setuid, no device files, whatever the
	 * spec's options; a driver's files need nothing else. */
	for (j = 0; j < in->nmounts; j++) {
		h.mounts[h.nmounts] = in->mounts[j];
		if ((h.mounts[h.nmounts].src = strdup(in->mounts[j].src)) ==
		    NULL || (h.mounts[h.nmounts].dst =
		    strdup(in->mounts[j].dst)) == NULL) {
			h.nmounts++;
			goto nomem;
		}
		h.nmounts++;
	}
	for (i = 0; i < ned; i++)
		for (j = 0; j < ed[i]->nmounts; j++) {
			struct ctr_mount *m = &h.mounts[h.nmounts++];

			m->flags = CTR_MF_RO | CTR_MF_NOSUID | CTR_MF_NODEV;
			m->propagation = "rprivate";
			if ((m->src = strdup(ed[i]->mounts[j].host)) == NULL ||
			    (m->dst = strdup(ed[i]->mounts[j].ctr)) == NULL)
				goto nomem;
		}
	/* Env: the job's wins, and COHORT_ / SLURM_ names are never the
	 * spec's. */
	for (j = 0; j < nin; j++)
		h.envp[j] = in->envp[j];
	for (i = 0; i < ned; i++)
		for (k = 0; k < ed[i]->nenv; k++) {
			char *kv = ed[i]->env[k];

			if (strncmp(kv, "COHORT_", 7) == 0 ||
			    strncmp(kv, "SLURM_", 6) == 0 ||
			    env_has(h.envp, j, kv))
				continue;
			h.envp[j++] = kv;
		}
	*out = *in;
	out->devs = h.devs;
	for (out->ndevs = 0; h.devs[out->ndevs].path != NULL; out->ndevs++)
		;
	out->mounts = h.mounts;
	out->nmounts = h.nmounts;
	out->envp = h.envp;
	*hold = h;
	return 0;
nomem:
	cerr_set(err, ERR_INTERNAL, "out of memory");
fail:
	cdi_applied_free(&h);
	return -1;
}

struct cdi_spec *
cdi_node_load(const char *dirs)
{
	static const char *const ctk[] = { "/usr/bin/nvidia-ctk",
	    "/usr/local/bin/nvidia-ctk", "/usr/sbin/nvidia-ctk", NULL };
	struct cdi_spec *s;
	struct cerr err;
	size_t i, hooks;

	if (dirs == NULL)
		dirs = CDI_DEFAULT_DIRS;
	if (cdi_find(dirs, 0, &s, &err) == -1) {
		log_warnx("CDI: %s", err.text);
		return NULL;
	}
	if (s != NULL) {
		hooks = s->common.nhooks;
		for (i = 0; i < s->ndevices; i++)
			hooks += s->devices[i].nhooks;
		log_info("CDI spec %s: %zu devices of kind " CDI_KIND " for "
		    "GPU jobs in images", s->path, s->ndevices);
		if (hooks > 0)
			log_warnx("CDI spec %s: its %zu hooks are not run "
			    "(they would run as root on this host); its "
			    "mounts, device nodes and env are applied", s->path,
			    hooks);
		return s;
	}
	if (access("/dev/nvidiactl", F_OK) != 0)
		return NULL;
	for (i = 0; ctk[i] != NULL && access(ctk[i], X_OK) != 0; i++)
		;
	log_info("CDI: no spec of kind " CDI_KIND " in %s: GPU jobs in "
	    "images get the GPUs' device nodes only, not the driver's "
	    "libraries%s", dirs, ctk[i] != NULL ? "; `nvidia-ctk cdi "
	    "generate --format=json --output=/etc/cdi/nvidia.json` makes one" :
	    "");
	return NULL;
}
