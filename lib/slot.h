/* Binary search of an array kept sorted by a string key (strcmp order):
 * the controller's tables of users and nodes. */
#ifndef COHORT_SLOT_H
#define COHORT_SLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The index of key among n elements whose keys name(base, i) returns in
 * ascending strcmp order, with *found true; or, *found false, the index
 * where it would go to keep the order. O(log n). */
size_t slot_find(const void *base, size_t n,
    const char *(*name)(const void *base, size_t i), const char *key,
    bool *found);

#endif
