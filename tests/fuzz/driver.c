/* A main() for the fuzz targets where libFuzzer is not at hand (gcc,
 * make check): run each file given, then ITERATIONS inputs made by
 * mutating them (bit flips, byte changes, insertions, deletions,
 * truncation, splices), from a fixed seed so that a failure repeats.
 *
 *   fuzz_wire ITERATIONS SEED [FILE...]
 *
 * Coverage-guided fuzzing is tests/fuzz/libfuzzer.sh (clang): it builds
 * the same targets with the same link lines (tests/fuzz/local.mk),
 * defining COHORT_LIBFUZZER so that libFuzzer's main() is the one. */
#include "config.h"

#ifndef COHORT_LIBFUZZER

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

#define DRIVER_MAX_INPUT 65536
#define DRIVER_MAX_SEEDS 256

struct input {
	uint8_t *data;
	size_t len;
};

static uint64_t rng;

static uint64_t
next(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
load(const char *path, struct input *in)
{
	FILE *fp;

	if ((fp = fopen(path, "rb")) == NULL)
		return -1;
	in->data = malloc(DRIVER_MAX_INPUT);
	in->len = in->data == NULL ? 0 :
	    fread(in->data, 1, DRIVER_MAX_INPUT, fp);
	fclose(fp);
	return in->data == NULL ? -1 : 0;
}

/* One mutation of buf (len bytes, room for DRIVER_MAX_INPUT). */
static size_t
mutate(uint8_t *buf, size_t len, const struct input *seeds, size_t nseeds)
{
	size_t at, n, k;
	const struct input *o;

	at = len ? next() % len : 0;
	switch (next() % 7) {
	case 0:		/* flip a bit */
		if (len)
			buf[at] ^= (uint8_t)(1u << (next() % 8));
		break;
	case 1:		/* an interesting byte */
		if (len)
			buf[at] = (uint8_t[]){ 0, 0xff, 0x7f, 0x80, '\n', '[',
			    '-', '"' }[next() % 8];
		break;
	case 2:		/* insert random bytes */
		n = 1 + next() % 8;
		if (len + n <= DRIVER_MAX_INPUT) {
			memmove(buf + at + n, buf + at, len - at);
			for (k = 0; k < n; k++)
				buf[at + k] = (uint8_t)next();
			len += n;
		}
		break;
	case 3:		/* delete a run */
		if (len) {
			n = 1 + next() % (len - at);
			memmove(buf + at, buf + at + n, len - at - n);
			len -= n;
		}
		break;
	case 4:		/* truncate */
		len = at;
		break;
	case 5:		/* splice in part of another seed */
		if (nseeds > 0) {
			o = &seeds[next() % nseeds];
			n = o->len ? next() % o->len : 0;
			if (at + (o->len - n) <= DRIVER_MAX_INPUT) {
				memcpy(buf + at, o->data + n, o->len - n);
				len = at + (o->len - n);
			}
		}
		break;
	default:	/* duplicate a run */
		n = len ? 1 + next() % (len - at) : 0;
		if (len + n <= DRIVER_MAX_INPUT) {
			memmove(buf + at + n, buf + at, len - at);
			len += n;
		}
		break;
	}
	return len;
}

/* Each input in a heap block of exactly its size, so that ASan sees a
 * parser that reads one byte past it. */
static void
run(const uint8_t *data, size_t len)
{
	uint8_t *copy;

	if ((copy = malloc(len ? len : 1)) == NULL)
		abort();
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
}

int
main(int argc, char **argv)
{
	struct input seeds[DRIVER_MAX_SEEDS];
	size_t nseeds = 0, len, k, rounds;
	unsigned long long iters;
	uint8_t *buf;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ITERATIONS SEED [FILE...]\n",
		    argv[0]);
		return 2;
	}
	iters = strtoull(argv[1], NULL, 10);
	rng = strtoull(argv[2], NULL, 10);
	for (i = 3; i < argc && nseeds < DRIVER_MAX_SEEDS; i++) {
		if (load(argv[i], &seeds[nseeds]) == -1) {
			fprintf(stderr, "%s: cannot read %s\n", argv[0],
			    argv[i]);
			return 2;
		}
		run(seeds[nseeds].data, seeds[nseeds].len);
		nseeds++;
	}
	if ((buf = malloc(DRIVER_MAX_INPUT)) == NULL)
		return 1;
	while (iters-- > 0) {
		if (nseeds > 0) {
			k = next() % nseeds;
			memcpy(buf, seeds[k].data, seeds[k].len);
			len = seeds[k].len;
		} else {
			len = next() % 64;
			for (k = 0; k < len; k++)
				buf[k] = (uint8_t)next();
		}
		for (rounds = 1 + next() % 4; rounds > 0; rounds--)
			len = mutate(buf, len, seeds, nseeds);
		run(buf, len);
	}
	free(buf);
	for (k = 0; k < nseeds; k++)
		free(seeds[k].data);
	printf("%s: %zu seed file(s), mutations done\n", argv[0], nseeds);
	return 0;
}

#endif /* !COHORT_LIBFUZZER */
