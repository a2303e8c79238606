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
#include <sys/mman.h>
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

/* The bytes as the contents of a file, for parsers that open a path: a
 * memfd named through /proc/self/fd, rewritten for each input (a file on
 * disk would make the kernel's writes most of the cost). */
static inline const char *
fuzz_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd == -1) {
		if ((fd = memfd_create("cohort-fuzz-input", 0)) == -1)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) == -1 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	return path;
}

#endif
