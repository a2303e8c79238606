/* Batch scripts: the "#COHORT <options>" lines at the top of a script act
 * like command-line flags, as #SBATCH lines do for sbatch; "#SBATCH"
 * lines themselves are read by the same rules (client/script_sbatch.h
 * says what they may hold). They are read after the "#!" line, among
 * comment and blank lines, up to the first line of code; a directive
 * after that is ignored, as sbatch ignores one. Words are split
 * as a POSIX shell would split them without expansions: single quotes,
 * double quotes (with \" \\ \$ \` escapes) and backslash escapes. */
#ifndef COHORT_CLIENT_SCRIPT_H
#define COHORT_CLIENT_SCRIPT_H

#include <stddef.h>

#include "lib/err.h"

enum script_tag {
	SCRIPT_TAG_COHORT = 0,	/* Cohort's own options */
	SCRIPT_TAG_SBATCH = 1,	/* Slurm's, translated (script_sbatch.h) */
};

/* One directive line of the header block. */
struct script_line {
	enum script_tag tag;
	size_t lineno;		/* 1-based, for "SCRIPT:LINE: ..." */
	char **argv;		/* its words, NULL-terminated */
	size_t argc;
};

/* The #COHORT and #SBATCH lines of text's header block, in the order
 * written, into *lines (free with script_lines_free(*lines, *n)).
 * Returns 0, or -1 with err ("line N: unterminated quote", ...). */
int script_lines(const char *text, size_t len, struct script_line **lines,
    size_t *n, struct cerr *err);
/* Free what script_lines returned; lines may be NULL. */
void script_lines_free(struct script_line *lines, size_t n);

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
