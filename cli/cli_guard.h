/* The output guard: no row with a non-finite number leaves gfi.
 *
 * Standard output (and every text file of --out) is a stream that passes on
 * complete lines only, after checking each row ('#' lines are metadata and
 * pass as they are): a token that reads as an infinity or a NaN stops the
 * output there (that line and everything after it are dropped), and
 * cli_finish_output, which every command ends its output with, turns it
 * into a runtime error (exit 1) naming the output's line and column. The
 * commands check their inputs and results where they can name the option or
 * file at fault; this is the one place that holds for every command. */
#ifndef GFI_CLI_GUARD_H
#define GFI_CLI_GUARD_H

#include <stdio.h>

/* Put the guard on standard output (from main, before any output). */
void cli_guard_stdout(void);
/* A guarded stream writing to `real` (an opened file, closed with it);
 * `what` names it in messages and must outlive it. */
FILE *cli_guard_file(FILE *real, const char *what);
/* The errno of the first write that failed through a guard (0: none). */
int cli_guard_errno(void);
/* What the rows may not hold: 0 (the default) NaN and infinities; 1
 * infinities (commands whose tables mark flagged rows or "not available" by
 * nan in documented columns); 2 nothing (prose: --help; documented inf). */
void cli_guard_level(int level);
/* 1 when the level lets NaN through (.npy outputs apply the same rule). */
int cli_guard_nan_allowed(void);
/* The message of a refused row, or NULL when none was refused. */
const char *cli_guard_tripped(void);

#endif
