/* The libFuzzer entry point every target defines; tests/fuzz/driver.c
 * provides a main() for builds without libFuzzer. The helpers below are
 * shared by the targets that multiplex several parsers. */
#ifndef COHORT_TESTS_FUZZ_H
#define COHORT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A multiplexing target's parsers: the input's first byte picks one
 * (modulo the count), which gets the rest. Appending an entry keeps the
 * seeds' choices; reordering would not. */
struct fuzz_entry {
	const char *name;
	void (*run)(const uint8_t *data, size_t size);
};

static inline void
fuzz_dispatch(const struct fuzz_entry *e, size_t n, const uint8_t *data,
    size_t size)
{
	if (size > 0)
		e[data[0] % n].run(data + 1, size - 1);
}

/* The bytes as a C string (malloc'd; cut at any NUL, as argv would be). */
static inline char *
fuzz_str(const uint8_t *data, size_t size)
{
	char *s;

	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static inline char *
fuzz_file_path(void)
{
	static char path[4096];

	return path;
}

static inline void
fuzz_file_remove(void)
{
	unlink(fuzz_file_path());
}

/* The bytes as the contents of a file, for parsers that open a path: one
 * file per process (removed at exit), rewritten for each input. */
static inline const char *
fuzz_file(const uint8_t *data, size_t size)
{
	char *path = fuzz_file_path();
	const char *tmp = getenv("TMPDIR");
	FILE *fp;
	int fd;

	if (path[0] == '\0') {
		snprintf(path, 4096, "%s/cohort-fuzz-input.XXXXXX",
		    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
		if ((fd = mkstemp(path)) == -1)
			abort();
		close(fd);
		atexit(fuzz_file_remove);
	}
	if ((fp = fopen(path, "wb")) == NULL ||
	    fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		abort();
	return path;
}

#endif
