/* The libFuzzer entry point every target defines; tests/fuzz/driver.c
 * provides a main() for builds without libFuzzer. */
#ifndef COHORT_TESTS_FUZZ_H
#define COHORT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
