/* A job's checkpoint and progress files (watch.h). Both are read on the
 * agent's heartbeat: LATEST is one short line, and the progress file is
 * only stat()ed. */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/agent/watch.h"
#include "lib/text.h"

/* LATEST is "STEP PATH\n": anything longer is not a checkpoint. */
#define WATCH_LATEST_MAX (WATCH_PATH_MAX + 32)

int
watch_parse_latest(const char *buf, size_t len, uint64_t *step, char *path,
    size_t pathlen)
{
	const char *p = buf, *end = buf + len, *s;
	uint64_t v = 0;
	unsigned d;

	if (buf == NULL || len == 0 || pathlen == 0)
		goto bad;
	/* One line: a single trailing newline (or CRLF) is allowed. */
	if (end[-1] == '\n') {
		end--;
		if (end > p && end[-1] == '\r')
			end--;
	}
	if (memchr(p, '\n', (size_t)(end - p)) != NULL ||
	    memchr(p, '\0', (size_t)(end - p)) != NULL)
		goto bad;
	if (p == end || *p < '0' || *p > '9')
		goto bad;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			goto bad;
		v = v * 10 + d;
	}
	/* Blanks, then the path: the rest of the line, blanks and all. */
	if (p == end || (*p != ' ' && *p != '\t'))
		goto bad;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	s = p;
	if (s == end || (size_t)(end - s) >= pathlen)
		goto bad;
	memcpy(path, s, (size_t)(end - s));
	path[end - s] = '\0';
	/* Sent to the controller as a protobuf string and shown to people:
	 * text without control characters, or no checkpoint at all. */
	if (!text_utf8_valid(path) || text_control_at(path) != -1)
		goto bad;
	*step = v;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int
watch_read_latest(const char *dir, uint64_t *step, char *path,
    size_t pathlen)
{
	char file[WATCH_PATH_MAX + 16], buf[WATCH_LATEST_MAX + 1];
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, e;

	if (dir == NULL || snprintf(file, sizeof(file), "%s/LATEST", dir) >=
	    (int)sizeof(file)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* O_NONBLOCK: a FIFO named LATEST must not hang the agent. */
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > WATCH_LATEST_MAX) {
		errno = EINVAL;
		return -1;
	}
	return watch_parse_latest(buf, len, step, path, pathlen);
}

int64_t
watch_progress_changed(const char *path)
{
	struct stat st;

	if (path == NULL || stat(path, &st) == -1)
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000 +
	    st.st_mtim.tv_nsec / 1000000;
}
