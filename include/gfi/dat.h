/* Metadata headers of gfi's tabular outputs (.dat files and CLI output):
 * program, version, git revision, command line and thread count, as '#'
 * lines. Callers add "# key: value" lines and end with the column names. */
#ifndef GFI_DAT_H
#define GFI_DAT_H

#include "export.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "# <program>", "# version: X (git Y)", "# command: argv...", "# threads: T" */
GFI_EXPORT void gfi_dat_header(FILE *f, const char *program, int argc, char **argv);
/* "# key: value" with printf formatting. */
GFI_EXPORT void gfi_dat_meta(FILE *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The git revision the library was built from ("unknown" outside git). */
GFI_EXPORT const char *gfi_git_revision(void);

#ifdef __cplusplus
}
#endif
#endif
