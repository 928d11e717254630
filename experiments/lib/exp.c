/* Errors, output headers and files of the experiments layer (gfi_exp/exp.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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

/* The outputs open through gfi_exp_fopen: the stream, its temporary and
 * its destination (both malloc'd). */
#define EXP_OUT_MAX 64
static struct {
  FILE *f;
  char *tmp, *dest;
} g_out[EXP_OUT_MAX];
static pthread_mutex_t g_out_lock = PTHREAD_MUTEX_INITIALIZER;

/* Takes f's entry out of the table (1), or 0 when f was opened directly. */
static int out_take(FILE *f, char **tmp, char **dest) {
  int found = 0;
  pthread_mutex_lock(&g_out_lock);
  for (int i = 0; i < EXP_OUT_MAX && !found; i++)
    if (g_out[i].f == f) {
      *tmp = g_out[i].tmp, *dest = g_out[i].dest;
      g_out[i].f = NULL, g_out[i].tmp = g_out[i].dest = NULL;
      found = 1;
    }
  pthread_mutex_unlock(&g_out_lock);
  return found;
}

int gfi_exp_fopen(FILE **f, const char *path, gfi_exp_err *e) {
  *f = NULL;
  if (!path || !path[0]) return gfi_exp_fail(e, GFI_EINVAL, "cannot write a file with an empty name");
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    if (S_ISDIR(sb.st_mode)) return gfi_exp_fail(e, GFI_EIO, "cannot write %s: %s", path, strerror(EISDIR));
    *f = fopen(path, "w"); /* a device or a FIFO cannot be replaced */
    if (!*f) return gfi_exp_fail(e, GFI_EIO, "cannot write %s: %s", path, strerror(errno));
    return GFI_OK;
  }
  struct stat lb;
  char *dest = NULL;
  if (lstat(path, &lb) == 0 && S_ISLNK(lb.st_mode)) dest = realpath(path, NULL);
  if (!dest) dest = strdup(path);
  size_t n = dest ? strlen(dest) : 0;
  char *dcopy = dest ? strdup(dest) : NULL, *bcopy = dest ? strdup(dest) : NULL;
  char *tmp = dest ? malloc(2 * n + 32) : NULL;
  if (!dest || !dcopy || !bcopy || !tmp) {
    free(dest), free(dcopy), free(bcopy), free(tmp);
    return gfi_exp_fail(e, GFI_ENOMEM, "cannot write %s: out of memory", path);
  }
  snprintf(tmp, 2 * n + 32, "%s/.%s.gfi-XXXXXX", dirname(dcopy), basename(bcopy));
  free(dcopy), free(bcopy);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    free(dest), free(tmp);
    return gfi_exp_fail(e, GFI_EIO, "cannot write %s: %s (creating a temporary file in its folder)", path,
                        strerror(err));
  }
  mode_t mode;
  if (stat(dest, &sb) == 0) {
    mode = sb.st_mode & 07777;
  } else {
    mode_t um = umask(0);
    umask(um);
    mode = 0666 & ~um;
  }
  int slot = -1;
  pthread_mutex_lock(&g_out_lock);
  for (int i = 0; i < EXP_OUT_MAX && slot < 0; i++)
    if (!g_out[i].tmp) slot = i;
  if (slot >= 0) g_out[slot].tmp = tmp; /* reserved */
  pthread_mutex_unlock(&g_out_lock);
  FILE *s = slot >= 0 && fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
  if (!s) {
    int err = slot < 0 ? EMFILE : errno;
    close(fd);
    unlink(tmp);
    if (slot >= 0) {
      pthread_mutex_lock(&g_out_lock);
      g_out[slot].tmp = NULL;
      pthread_mutex_unlock(&g_out_lock);
    }
    free(dest), free(tmp);
    return gfi_exp_fail(e, GFI_EIO, "cannot write %s: %s", path, strerror(err));
  }
  pthread_mutex_lock(&g_out_lock);
  g_out[slot].f = s, g_out[slot].dest = dest;
  pthread_mutex_unlock(&g_out_lock);
  *f = s;
  return GFI_OK;
}

int gfi_exp_fclose(FILE *f, const char *path, gfi_exp_err *e) {
  if (!f) return GFI_OK;
  char *tmp = NULL, *dest = NULL;
  int atomic = out_take(f, &tmp, &dest);
  errno = 0;
  int bad = ferror(f) != 0, err = 0;
  if (!bad && fflush(f) != 0) bad = 1, err = errno;
  if (!bad && atomic && fsync(fileno(f)) != 0) bad = 1, err = errno;
  if (fclose(f) != 0 && !bad) bad = 1, err = errno;
  if (!bad && atomic && rename(tmp, dest) != 0) bad = 2, err = errno;
  if (atomic) {
    if (bad) unlink(tmp);
    free(tmp), free(dest);
  }
  if (bad == 2) return gfi_exp_fail(e, GFI_EIO, "cannot replace %s: %s", path, strerror(err));
  if (bad) return gfi_exp_fail(e, GFI_EIO, "error writing %s%s%s", path, err ? ": " : "", err ? strerror(err) : "");
  return GFI_OK;
}

void gfi_exp_fdiscard(FILE *f) {
  if (!f) return;
  char *tmp = NULL, *dest = NULL;
  int atomic = out_take(f, &tmp, &dest);
  fclose(f);
  if (atomic) {
    unlink(tmp);
    free(tmp), free(dest);
  }
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
