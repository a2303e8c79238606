/* Batch scripts: the "#COHORT <options>" lines at the top of a script act
 * like command-line flags, as #SBATCH lines do for sbatch. They are read
 * after the "#!" line, among comment and blank lines, up to the first
 * line of code; a "#COHORT" line after that is ignored. Words are split
 * as a POSIX shell would split them without expansions: single quotes,
 * double quotes (with \" \\ \$ \` escapes) and backslash escapes. */
#ifndef COHORT_CLIENT_SCRIPT_H
#define COHORT_CLIENT_SCRIPT_H

#include <stddef.h>

#include "lib/err.h"

/* Collect the option words of text's #COHORT lines into *argv (a
 * NULL-terminated malloc'd vector of malloc'd strings, freed with
 * strv_free(argv, argc)) and *argc. Returns 0, or -1 with err
 * (ERR_INVALID, "line N: unterminated quote", ...). */
int script_options(const char *text, size_t len, char ***argv, size_t *argc,
    struct cerr *err);

/* Split one line into words (the rules above). Same return. */
int script_split(const char *line, char ***argv, size_t *argc,
    struct cerr *err);

#endif
