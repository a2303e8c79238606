#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/daemon.h"
#include "lib/log.h"

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


static void
daemon_usage(FILE *f, const char *name, const char *def_config,
    unsigned opts)
{
	fprintf(f, "usage: %s [-c FILE] [-f] [-v]\n", name);
	if (opts & DAEMON_OPT_BACKUP)
		fprintf(f, "       %s [-c FILE] --backup FILE [--force]\n"
		    "       %s [-c FILE] [-f] [-v] --bootstrap [--restore "
		    "FILE] | --join HOST:PORT\n", name, name);
	fprintf(f, "       %s --version\n"
	    "  -c FILE   configuration file (INI); default %s\n"
	    "  -f        stay in the foreground and log to stderr\n"
	    "  -v        log debug messages (log_level = debug)\n", name,
	    def_config);
	if (opts & DAEMON_OPT_BACKUP)
		fprintf(f, "  --backup FILE  write a consistent copy of the "
		    "database to FILE, check it\n"
		    "                 and exit (while a %s runs, or not)\n"
		    "  --force        with --backup: replace an existing "
		    "FILE\n"
		    "  --bootstrap    [replication]: start a new cluster with "
		    "this replica alone\n"
		    "  --restore FILE with --bootstrap: the new cluster's "
		    "database starts as FILE\n"
		    "                 (a --backup)\n"
		    "  --join ADDR    [replication]: join the cluster whose "
		    "member answers at ADDR\n"
		    "                 (both do nothing once data_dir holds "
		    "a Raft log)\n", name);
}

int
daemon_args(int argc, char **argv, const char *name, const char *def_config,
    struct daemon_args *a)
{
	return daemon_args_opts(argc, argv, name, def_config, 0, a);
}

int
daemon_args_opts(int argc, char **argv, const char *name,
    const char *def_config, unsigned opts, struct daemon_args *a)
{
	static const struct option all_longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "backup", required_argument, NULL, 'B' },
		{ "force", no_argument, NULL, 'F' },
		{ "bootstrap", no_argument, NULL, 'S' },
		{ "join", required_argument, NULL, 'J' },
		{ "restore", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option base_longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct option *longopts = (opts & DAEMON_OPT_BACKUP) ?
	    all_longopts : base_longopts;
	int ch;

	a->config = NULL;
	a->config_default = false;
	a->foreground = a->verbose = false;
	a->backup = NULL;
	a->force = false;
	a->bootstrap = false;
	a->join = NULL;
	a->restore = NULL;
	while ((ch = getopt_long(argc, argv, "c:fvh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'B':
			if (*optarg == '\0') {
				fprintf(stderr, "%s: --backup needs a file "
				    "name\n", name);
				return 2;
			}
			a->backup = optarg;
			break;
		case 'F':
			a->force = true;
			break;
		case 'S':
			a->bootstrap = true;
			break;
		case 'R':
			if (*optarg == '\0') {
				fprintf(stderr, "%s: --restore needs a file "
				    "name\n", name);
				return 2;
			}
			a->restore = optarg;
			break;
		case 'J':
			if (*optarg == '\0') {
				fprintf(stderr, "%s: --join needs HOST:PORT\n",
				    name);
				return 2;
			}
			a->join = optarg;
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'f':
			a->foreground = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'V':
			printf("%s %s\n", name, PACKAGE_VERSION);
			return 0;
		case 'h':
			daemon_usage(stdout, name, def_config, opts);
			return 0;
		default:
			daemon_usage(stderr, name, def_config, opts);
			return 2;
		}
	}
	if (optind != argc) {
		daemon_usage(stderr, name, def_config, opts);
		return 2;
	}
	if (a->bootstrap && a->join != NULL) {
		fprintf(stderr, "%s: --bootstrap starts a new cluster, --join "
		    "enters one: not both\n", name);
		return 2;
	}
	if (a->restore != NULL && !a->bootstrap) {
		fprintf(stderr, "%s: --restore FILE goes with --bootstrap\n",
		    name);
		return 2;
	}
	if (a->backup != NULL && (a->bootstrap || a->join != NULL)) {
		fprintf(stderr, "%s: --backup does not go with --bootstrap or "
		    "--join\n", name);
		return 2;
	}
	if (a->force && a->backup == NULL) {
		fprintf(stderr, "%s: --force goes with --backup FILE\n", name);
		return 2;
	}
	if (a->config == NULL) {
		a->config = def_config;
		a->config_default = true;
		if (access(def_config, F_OK) == -1 && errno == ENOENT) {
			fprintf(stderr, "%s: no configuration file at %s (the "
			    "default); give one with -c FILE\n", name,
			    def_config);
			return 1;
		}
	}
	return -1;
}
