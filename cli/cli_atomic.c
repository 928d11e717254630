/* Every file gfi creates for an output option (--out, --grad) is written
 * under a temporary name in the destination's folder and renamed over the
 * destination only once it is complete, flushed and synced (cli.h,
 * cli_atomic_begin). On any failure the temporary is removed (at exit, or
 * by the handler of a terminating signal) and the destination keeps what it
 * held before. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

#define MAX_PENDING 16

typedef struct {
  char *tmp;  /* the temporary's name, NULL when the slot is free */
  char *dest; /* the destination */
  int fd;     /* kept open from creation to the sync */
} pending;

static pending g_pend[MAX_PENDING];
static volatile sig_atomic_t g_installed;

static void unlink_pending(void) {
  for (int i = 0; i < MAX_PENDING; i++)
    if (g_pend[i].tmp) unlink(g_pend[i].tmp); /* async-signal-safe */
}

static void on_exit_unlink(void) {
  unlink_pending();
  for (int i = 0; i < MAX_PENDING; i++) {
    if (g_pend[i].tmp && g_pend[i].fd >= 0) close(g_pend[i].fd);
    free(g_pend[i].tmp), free(g_pend[i].dest);
    g_pend[i].tmp = g_pend[i].dest = NULL;
  }
}

static void on_signal(int sig) {
  unlink_pending();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install(void) {
  if (g_installed) return;
  g_installed = 1;
  atexit(on_exit_unlink);
  int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    struct sigaction old;
    if (sigaction(sigs[k], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue; /* keep an ignored one ignored */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[k], &sa, NULL);
  }
}

static pending *find(const char *tmp) {
  for (int i = 0; i < MAX_PENDING; i++)
    if (g_pend[i].tmp && (g_pend[i].tmp == tmp || strcmp(g_pend[i].tmp, tmp) == 0)) return g_pend + i;
  return NULL;
}

void cli_check_out_name(const char *opt, const char *path) {
  if (path && !path[0]) cli_usage(opt, "the file name is empty");
}

const char *cli_atomic_begin(const char *opt, const char *dest) {
  cli_check_out_name(opt, dest);
  struct stat sb;
  /* a device, a FIFO or a socket (/dev/null, /dev/stdout, a pipe) is
   * written directly: it cannot be replaced, and renaming over it would
   * remove it */
  if (stat(dest, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    if (S_ISDIR(sb.st_mode)) cli_die(EXIT_RUNTIME, "%s: cannot write %s: %s", opt, dest, strerror(EISDIR));
    return dest;
  }
  /* through a symbolic link: replace the file it names, not the link */
  char *real = NULL;
  struct stat lb;
  if (lstat(dest, &lb) == 0 && S_ISLNK(lb.st_mode)) real = realpath(dest, NULL);
  const char *target = real ? real : dest;
  size_t n = strlen(target);
  char *dcopy = cli_array(n + 1, 1, 1), *bcopy = cli_array(n + 1, 1, 1);
  memcpy(dcopy, target, n + 1), memcpy(bcopy, target, n + 1);
  const char *dir = dirname(dcopy), *base = basename(bcopy);
  size_t tl = strlen(dir) + strlen(base) + 32;
  char *tmp = cli_array(tl, 1, 1);
  snprintf(tmp, tl, "%s/.%s.gfi-XXXXXX", dir, base);
  free(dcopy), free(bcopy);
  pending *p = NULL;
  for (int i = 0; i < MAX_PENDING && !p; i++)
    if (!g_pend[i].tmp) p = g_pend + i;
  if (!p) cli_die(EXIT_RUNTIME, "internal error: more than %d outputs open at once", MAX_PENDING);
  install();
  int fd = mkstemp(tmp);
  if (fd < 0) cli_die(EXIT_RUNTIME, "%s: cannot write %s: %s (creating a temporary file in its folder)", opt, dest,
                      strerror(errno));
  p->tmp = tmp, p->fd = fd;
  p->dest = real ? real : strdup(target);
  if (!p->dest) cli_die(EXIT_RUNTIME, "%s %s: out of memory", opt, dest);
  /* the permissions a new file would get (0666 less the umask), or those of
   * the file replaced */
  mode_t mode;
  if (stat(p->dest, &sb) == 0) {
    mode = sb.st_mode & 07777;
  } else {
    mode_t um = umask(0);
    umask(um);
    mode = 0666 & ~um;
  }
  if (fchmod(fd, mode) != 0) cli_die(EXIT_RUNTIME, "%s %s: %s", opt, dest, strerror(errno));
  return tmp;
}

FILE *cli_atomic_fopen(const char *opt, const char *dest, const char **tmp) {
  *tmp = cli_atomic_begin(opt, dest);
  pending *p = find(*tmp);
  FILE *f;
  if (!p) {
    f = fopen(dest, "w");
  } else {
    int fd = dup(p->fd);
    f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f && fd >= 0) close(fd);
  }
  if (!f) cli_die(EXIT_RUNTIME, "%s: cannot write %s: %s", opt, dest, strerror(errno));
  return f;
}

void cli_atomic_commit(const char *opt, const char *tmp) {
  pending *p = find(tmp);
  if (!p) return; /* written directly (cli_atomic_begin) */
  errno = 0;
  int bad = fsync(p->fd) != 0;
  int err = errno;
  if (close(p->fd) != 0 && !bad) bad = 1, err = errno;
  p->fd = -1;
  if (bad) cli_die(EXIT_RUNTIME, "%s: writing %s: %s", opt, p->dest, strerror(err ? err : EIO));
  if (rename(p->tmp, p->dest) != 0)
    cli_die(EXIT_RUNTIME, "%s: cannot replace %s: %s", opt, p->dest, strerror(errno));
  /* the rename itself reaches the disk with the folder */
  size_t n = strlen(p->dest);
  char *dcopy = cli_array(n + 1, 1, 1);
  memcpy(dcopy, p->dest, n + 1);
  int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY);
  free(dcopy);
  if (dfd >= 0) {
    fsync(dfd); /* some file systems refuse to sync a folder: the file is already whole */
    close(dfd);
  }
  free(p->tmp), free(p->dest);
  p->tmp = p->dest = NULL;
}
