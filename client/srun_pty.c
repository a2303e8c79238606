/* srun --pty's terminal (see srun_pty.h). */
#include "config.h"

#include <sys/ioctl.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "client/srun_pty.h"

static struct termios pty_saved;
static int pty_fd = -1;			/* raw now: restore this one */
static bool pty_registered;
static volatile sig_atomic_t pty_winch;

static void
pty_on_winch(int sig)
{
	(void)sig;
	pty_winch = 1;
}

int
srun_pty_start(int fd)
{
	struct sigaction sa;
	struct termios raw;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pty_on_winch;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a resize wakes srun's wait for keys. */
	sigaction(SIGWINCH, &sa, NULL);
	if (!isatty(fd))
		return 0;
	if (tcgetattr(fd, &pty_saved) == -1)
		return -1;
	if (!pty_registered) {
		atexit(srun_pty_restore);
		pty_registered = true;
	}
	raw = pty_saved;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSADRAIN, &raw) == -1)
		return -1;
	pty_fd = fd;
	return 0;
}

void
srun_pty_restore(void)
{
	int e = errno;

	if (pty_fd >= 0) {
		(void)tcsetattr(pty_fd, TCSADRAIN, &pty_saved);
		pty_fd = -1;
	}
	errno = e;
}

bool
srun_pty_size(int fd, uint16_t *rows, uint16_t *cols)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == -1 || ws.ws_row == 0 ||
	    ws.ws_col == 0)
		return false;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return true;
}

bool
srun_pty_resized(void)
{
	if (!pty_winch)
		return false;
	pty_winch = 0;
	return true;
}
