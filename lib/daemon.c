#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

int
daemon_detach(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) == -1)
		return -1;
	if ((pid = fork()) == -1)
		return -1;
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	*ready_fd = p[1];
	return 0;
}

void
daemon_ready(int ready_fd)
{
	int fd;

	if (ready_fd < 0)
		return;
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	if (write(ready_fd, "1", 1) != 1)
		log_warn("cannot tell the parent we are ready");
	close(ready_fd);
}

