/* Metadata headers of tabular outputs. */
#include <stdarg.h>
#include "gfi/dat.h"
#include "gfi/opts.h"
#include "gfi/status.h"
#include "gfi_version.h"

const char *gfi_git_revision(void) { return GFI_GIT_REVISION; }

void gfi_dat_header(FILE *f, const char *program, int argc, char **argv) {
  fprintf(f, "# %s\n", program);
  fprintf(f, "# version: %s (git %s)\n", GFI_VERSION, GFI_GIT_REVISION);
  fprintf(f, "# command:");
  for (int i = 0; i < argc; i++) fprintf(f, " %s", argv[i]);
  fputc('\n', f);
  fprintf(f, "# threads: %d (openmp %s)\n", gfi_threads_available(), gfi_have_openmp() ? "on" : "off");
}

void gfi_dat_meta(FILE *f, const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(f, "# %s: ", key);
  vfprintf(f, fmt, ap);
  fputc('\n', f);
  va_end(ap);
}
