/* gfi's experiments layer: the studies behind gfi reproduce, gfi rates,
 * gfi regress-rates and flt_study, as functions the command-line program and
 * the experiment programs call in-process. Not part of the installed
 * library: it is the repository's own experiment code, built as the static
 * library gfi_experiments.
 *
 * Conventions: every function returns a gfi status (gfi/status.h) and never
 * exits or aborts; on failure it fills a gfi_exp_err with the step that
 * failed (if any), the parameter at fault (for invalid settings) and a
 * message. Nothing is global: what a study needs travels in a gfi_exp_ctx
 * and the study's parameter struct. Studies write their files into the
 * folders their parameters name; tables and progress go to the streams the
 * caller passes (NULL: none). */
#ifndef GFI_EXP_EXP_H
#define GFI_EXP_EXP_H

#include <stdarg.h>
#include <stdio.h>
#include "gfi/gfi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What went wrong, for the caller to print. */
typedef struct gfi_exp_err {
  int status;      /* the gfi status returned */
  char step[160];  /* the step that failed ("" when not inside a step) */
  char param[32];  /* the parameter at fault, named like the command-line option ("--truth"); "" otherwise */
  char msg[1024];  /* the reason, always NUL-terminated */
} gfi_exp_err;

void gfi_exp_err_clear(gfi_exp_err *e);
/* Fill e (may be NULL) with status and a message; returns status. */
int gfi_exp_fail(gfi_exp_err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gfi_exp_vfail(gfi_exp_err *e, int status, const char *fmt, va_list ap);
/* The same naming the parameter at fault. */
int gfi_exp_fail_param(gfi_exp_err *e, int status, const char *param, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

/* Where a study's output headers say they come from, and how it reports. */
typedef struct gfi_exp_ctx {
  const char *program; /* first header line, e.g. "gfi rates" */
  int argc;            /* the command line shown in the headers */
  char **argv;
  int nthreads;        /* 0 = all cores */
  FILE *progress;      /* progress lines (NULL: silent) */
  /* Writes an output file's metadata header instead of the default (e.g.
   * the CLI's, which adds the parsed options); NULL: the default. */
  void (*header)(FILE *f, void *arg);
  void *header_arg;
  FILE *live;          /* progress within a long piece of work, rewritten in place
                          (count, rate, ETA): a terminal, or NULL */
} gfi_exp_ctx;

/* Metadata header of an output file: ctx->header, else gfi_dat_header with
 * ctx's program and command line. */
void gfi_exp_header(FILE *f, const gfi_exp_ctx *ctx);

/* mkdir unless it exists; GFI_EIO with the reason in e otherwise. */
int gfi_exp_mkdir(const char *path, gfi_exp_err *e);
/* An output file that is never seen half-written: gfi_exp_fopen opens a
 * temporary ".NAME.gfi-XXXXXX" in PATH's folder (with the permissions the
 * file would get, or those of the file it replaces; through a symbolic
 * link, beside the file it names); gfi_exp_fclose flushes, syncs and closes
 * it with every write checked and renames it over PATH; on any failure, or
 * through gfi_exp_fdiscard, the temporary is removed and PATH keeps what it
 * held (or stays absent). A device or FIFO (/dev/null) is written directly.
 * GFI_EIO with "cannot write PATH: reason" / "error writing PATH: reason";
 * GFI_EINVAL for an empty name. f may be NULL in fclose and fdiscard.
 * Thread-safe (the open outputs are kept under a lock). */
int gfi_exp_fopen(FILE **f, const char *path, gfi_exp_err *e);
int gfi_exp_fclose(FILE *f, const char *path, gfi_exp_err *e);
void gfi_exp_fdiscard(FILE *f);

/* An argument vector built from pieces (for the command line shown in the
 * headers of a study that another study runs): up to 63 arguments of at
 * most 4095 characters in all. */
typedef struct gfi_exp_argv {
  int argc;
  char *argv[64];
  char buf[4096];
  size_t used;
} gfi_exp_argv;
void gfi_exp_argv_init(gfi_exp_argv *a);
/* Append one argument (printf format); silently truncated when full. */
void gfi_exp_argv_add(gfi_exp_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
