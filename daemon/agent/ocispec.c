/* A task's OCI runtime configuration (see ocispec.h). */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/ocispec.h"

struct jbuf {
	char *p;
	size_t len, cap;
	bool bad;
};

static void
jb_put(struct jbuf *b, const char *s, size_t n)
{
	char *np;
	size_t ncap;

	if (b->bad)
		return;
	if (b->len + n + 1 > b->cap) {
		ncap = b->cap == 0 ? 4096 : b->cap;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->bad = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
jb_raw(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
jb_fmt(struct jbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		b->bad = true;
	else
		jb_put(b, tmp, (size_t)n);
}

/* A JSON string: quotes, backslashes and control characters escaped;
 * other bytes as they are (the runtime reads UTF-8, and the job's own
 * bytes are its business). */
static void
jb_str(struct jbuf *b, const char *s)
{
	char esc[8];
	const char *run = s;

	jb_put(b, "\"", 1);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		jb_put(b, run, (size_t)(s - run));
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			jb_put(b, esc, 2);
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			jb_put(b, esc, 6);
		}
		run = s + 1;
	}
	jb_put(b, run, (size_t)(s - run));
	jb_put(b, "\"", 1);
}

/* One mount: {"destination":D,"type":T,"source":S,"options":[O...]},
 * opts NULL-terminated. */
static void
jb_mount(struct jbuf *b, const char *dst, const char *type, const char *src,
    const char *const *opts)
{
	size_t i;

	jb_raw(b, ",{\"destination\":");
	jb_str(b, dst);
	jb_raw(b, ",\"type\":");
	jb_str(b, type);
	jb_raw(b, ",\"source\":");
	jb_str(b, src);
	jb_raw(b, ",\"options\":[");
	for (i = 0; opts[i] != NULL; i++) {
		if (i > 0)
			jb_raw(b, ",");
		jb_str(b, opts[i]);
	}
	jb_raw(b, "]}");
}

static void
jb_binds(struct jbuf *b, const struct ctr_mount *m, size_t n)
{
	const char *opts[8];
	size_t i, k;

	for (i = 0; i < n; i++) {
		k = 0;
		opts[k++] = "rbind";
		opts[k++] = (m[i].flags & CTR_MF_RO) ? "ro" : "rw";
		if (m[i].flags & CTR_MF_NOSUID)
			opts[k++] = "nosuid";
		if (m[i].flags & CTR_MF_NODEV)
			opts[k++] = "nodev";
		if (m[i].flags & CTR_MF_NOEXEC)
			opts[k++] = "noexec";
		opts[k++] = m[i].propagation != NULL ? m[i].propagation :
		    "rprivate";
		opts[k] = NULL;
		jb_mount(b, m[i].dst, "bind", m[i].src, opts);
	}
}

static void
jb_process(struct jbuf *b, const struct ocispec *s)
{
	size_t i;

	jb_raw(b, "\"process\":{\"terminal\":false,\"user\":{");
	jb_fmt(b, "\"uid\":%u,\"gid\":%u", (unsigned)s->uid,
	    (unsigned)s->gid);
	jb_raw(b, ",\"additionalGids\":[");
	for (i = 0; i < s->ngroups; i++)
		jb_fmt(b, "%s%u", i > 0 ? "," : "", (unsigned)s->groups[i]);
	jb_raw(b, "]},\"args\":[");
	for (i = 0; i < s->argc; i++) {
		if (i > 0)
			jb_raw(b, ",");
		jb_str(b, s->argv[i]);
	}
	jb_raw(b, "],\"env\":[");
	for (i = 0; s->envp != NULL && s->envp[i] != NULL; i++) {
		if (i > 0)
			jb_raw(b, ",");
		jb_str(b, s->envp[i]);
	}
	jb_raw(b, "],\"cwd\":");
	jb_str(b, s->cwd);
	/* Nothing privileged, even where the image has setuid files. */
	jb_raw(b, ",\"noNewPrivileges\":true,\"capabilities\":{"
	    "\"bounding\":[],\"effective\":[],\"inheritable\":[],"
	    "\"permitted\":[],\"ambient\":[]}}");
}

static void
jb_linux(struct jbuf *b, const struct ocispec *s)
{
	size_t i;

	/* Only a mount namespace: the host's network and IPC for NCCL,
	 * its PIDs so that the agent's signals and cgroup reach the
	 * task's processes as they are. */
	jb_raw(b, ",\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]");
	if (s->cgroups_path != NULL) {
		jb_raw(b, ",\"cgroupsPath\":");
		jb_str(b, s->cgroups_path);
	}
	jb_raw(b, ",\"devices\":[");
	for (i = 0; i < s->ndevs; i++) {
		jb_raw(b, i > 0 ? ",{\"path\":" : "{\"path\":");
		jb_str(b, s->devs[i].path);
		jb_fmt(b, ",\"type\":\"c\",\"major\":%" PRIu32 ",\"minor\":%"
		    PRIu32 ",\"fileMode\":438,\"uid\":0,\"gid\":0}",
		    s->devs[i].major, s->devs[i].minor);
	}
	/* The devices cgroup: the runtime's defaults, and these. */
	jb_raw(b, "],\"resources\":{\"devices\":[{\"allow\":false,"
	    "\"access\":\"rwm\"}");
	for (i = 0; i < s->ndevs; i++)
		jb_fmt(b, ",{\"allow\":true,\"type\":\"c\",\"major\":%" PRIu32
		    ",\"minor\":%" PRIu32 ",\"access\":\"%s\"}",
		    s->devs[i].major, s->devs[i].minor,
		    s->devs[i].access != NULL ? s->devs[i].access : "rwm");
	jb_raw(b, "]},\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\","
	    "\"/proc/kcore\",\"/proc/keys\",\"/proc/latency_stats\","
	    "\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\","
	    "\"/sys/firmware\",\"/proc/scsi\"],\"readonlyPaths\":["
	    "\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\","
	    "\"/proc/sysrq-trigger\"]}");
}

static bool
abs_path(const char *p)
{
	return p != NULL && p[0] == '/';
}

int
ocispec_json(const struct ocispec *s, char **out, size_t *len,
    struct cerr *err)
{
	static const char *const proc_o[] = { "nosuid", "noexec", "nodev",
	    NULL };
	static const char *const dev_o[] = { "nosuid", "strictatime",
	    "mode=755", "size=65536k", NULL };
	static const char *const pts_o[] = { "nosuid", "noexec",
	    "newinstance", "ptmxmode=0666", "mode=0620", NULL };
	static const char *const sys_o[] = { "nosuid", "noexec", "nodev",
	    "ro", NULL };
	const char *shm_o[6];
	char shm_size[48];
	struct jbuf b = { NULL, 0, 0, false };
	size_t i;

	*out = NULL;
	*len = 0;
	if (!abs_path(s->rootfs) || !abs_path(s->cwd))
		return cerr_set(err, ERR_INVALID, "the container's root and "
		    "working directory must be absolute paths");
	if (s->argc == 0 || s->argv == NULL || s->argv[0] == NULL)
		return cerr_set(err, ERR_INVALID, "no command to run in the "
		    "container");
	for (i = 0; i < s->nmounts; i++)
		if (!abs_path(s->mounts[i].src) || !abs_path(s->mounts[i].dst))
			return cerr_set(err, ERR_INVALID, "a container mount "
			    "with a relative path");
	for (i = 0; i < s->ndevs; i++)
		if (strncmp(s->devs[i].path, "/dev/", 5) != 0 ||
		    (s->devs[i].access != NULL && (s->devs[i].access[0] ==
		    '\0' || strspn(s->devs[i].access, "rwm") !=
		    strlen(s->devs[i].access))))
			return cerr_set(err, ERR_INVALID, "device %s is not "
			    "under /dev or its access not of rwm",
			    s->devs[i].path);

	snprintf(shm_size, sizeof(shm_size), "size=%" PRIu64,
	    s->shm_bytes > 0 ? s->shm_bytes : (uint64_t)64 << 20);
	shm_o[0] = "nosuid";
	shm_o[1] = "nodev";
	shm_o[2] = "mode=1777";
	shm_o[3] = shm_size;
	shm_o[4] = NULL;

	jb_raw(&b, "{\"ociVersion\":\"1.0.2\",");
	jb_process(&b, s);
	jb_raw(&b, ",\"root\":{\"path\":");
	jb_str(&b, s->rootfs);
	jb_raw(&b, s->writable ? ",\"readonly\":false}" :
	    ",\"readonly\":true}");
	jb_raw(&b, ",\"mounts\":[{\"destination\":\"/proc\",\"type\":"
	    "\"proc\",\"source\":\"proc\",\"options\":[");
	for (i = 0; proc_o[i] != NULL; i++) {
		jb_raw(&b, i > 0 ? "," : "");
		jb_str(&b, proc_o[i]);
	}
	jb_raw(&b, "]}");
	jb_mount(&b, "/dev", "tmpfs", "tmpfs", dev_o);
	jb_mount(&b, "/dev/pts", "devpts", "devpts", pts_o);
	jb_mount(&b, "/dev/shm", "tmpfs", "shm", shm_o);
	jb_mount(&b, "/sys", "sysfs", "sysfs", sys_o);
	jb_binds(&b, s->mounts, s->nmounts);
	jb_raw(&b, "]");
	jb_linux(&b, s);
	jb_raw(&b, "}\n");
	if (b.bad) {
		free(b.p);
		return cerr_set(err, ERR_INTERNAL, "out of memory");
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
