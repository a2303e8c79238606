/* LD_PRELOAD shim for t475: at the first write on each TCP socket of the
 * process, note whether TCP_NODELAY is set, in $NODELAY_LOG ("ok" or
 * "MISSING", the program, the peer). Only tests load it. */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFDS 65536
static unsigned char seen[NFDS];

static void
note(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char line[512], addr[INET6_ADDRSTRLEN] = "?", exe[256] = "?";
	int type = 0, nd = 0, lfd, e = errno;
	socklen_t tl = sizeof(type), nl = sizeof(nd);
	const char *log = getenv("NODELAY_LOG");
	ssize_t n;

	if (fd < 0 || fd >= NFDS || seen[fd] || log == NULL)
		goto out;
	seen[fd] = 1;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == -1 ||
	    type != SOCK_STREAM || getpeername(fd, (struct sockaddr *)&ss,
	    &sl) == -1 || (ss.ss_family != AF_INET &&
	    ss.ss_family != AF_INET6))
		goto out;
	getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nd, &nl);
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr,
		    addr, sizeof(addr));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
		    addr, sizeof(addr));
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0)
		exe[n] = '\0';
	snprintf(line, sizeof(line), "%s %s %s:%u\n", nd ? "ok" : "MISSING",
	    strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe, addr,
	    ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if ((lfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) != -1) {
		(void)!write(lfd, line, strlen(line));
		close(lfd);
	}
out:
	errno = e;
}

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (real_##name == NULL) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

ssize_t
write(int fd, const void *buf, size_t len)
{
	REAL(write);
	note(fd);
	return real_write(fd, buf, len);
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	REAL(writev);
	note(fd);
	return real_writev(fd, iov, n);
}

ssize_t
send(int fd, const void *buf, size_t len, int flags)
{
	REAL(send);
	note(fd);
	return real_send(fd, buf, len, flags);
}

ssize_t
sendmsg(int fd, const struct msghdr *m, int flags)
{
	REAL(sendmsg);
	note(fd);
	return real_sendmsg(fd, m, flags);
}

int
close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < NFDS)
		seen[fd] = 0;
	return real_close(fd);
}
