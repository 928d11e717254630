/* Errors, output headers and files of the experiments layer (gfi_exp/exp.h). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include "gfi_exp/exp.h"

void gfi_exp_err_clear(gfi_exp_err *e) {
  if (e) memset(e, 0, sizeof *e);
}

int gfi_exp_vfail(gfi_exp_err *e, int status, const char *fmt, va_list ap) {
  if (e) {
    e->status = status;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  }
  return status;
}

int gfi_exp_fail(gfi_exp_err *e, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gfi_exp_vfail(e, status, fmt, ap);
  va_end(ap);
  return status;
}

int gfi_exp_fail_param(gfi_exp_err *e, int status, const char *param, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gfi_exp_vfail(e, status, fmt, ap);
  va_end(ap);
  if (e) snprintf(e->param, sizeof e->param, "%s", param ? param : "");
  return status;
}

void gfi_exp_header(FILE *f, const gfi_exp_ctx *ctx) {
  if (ctx && ctx->header) {
    ctx->header(f, ctx->header_arg);
    return;
  }
  gfi_dat_header(f, ctx && ctx->program ? ctx->program : "gfi", ctx ? ctx->argc : 0, ctx ? ctx->argv : NULL);
}

int gfi_exp_mkdir(const char *path, gfi_exp_err *e) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return gfi_exp_fail(e, GFI_EIO, "cannot create %s: %s", path, strerror(errno));
  return GFI_OK;
}

int gfi_exp_fopen(FILE **f, const char *path, gfi_exp_err *e) {
  *f = fopen(path, "w");
  if (!*f) return gfi_exp_fail(e, GFI_EIO, "cannot write %s: %s", path, strerror(errno));
  return GFI_OK;
}

int gfi_exp_fclose(FILE *f, const char *path, gfi_exp_err *e) {
  if (!f) return GFI_OK;
  if (ferror(f) | fclose(f)) return gfi_exp_fail(e, GFI_EIO, "error writing %s", path);
  return GFI_OK;
}

void gfi_exp_argv_init(gfi_exp_argv *a) {
  memset(a, 0, sizeof *a);
}

void gfi_exp_argv_add(gfi_exp_argv *a, const char *fmt, ...) {
  if (a->argc >= 63 || a->used >= sizeof a->buf) return;
  va_list ap;
  va_start(ap, fmt);
  size_t room = sizeof a->buf - a->used;
  int n = vsnprintf(a->buf + a->used, room, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= room) return;
  a->argv[a->argc++] = a->buf + a->used;
  a->argv[a->argc] = NULL;
  a->used += (size_t)n + 1;
}
