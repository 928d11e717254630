/* Helpers shared by the fast-route benchmarks (bench_fast.c, bench_fast_mise.c):
 * clocks, the machine record, running a child process (its output captured,
 * its wall time and peak memory measured), "key value" parsing and .npy files.
 * Header-only (static functions) so that each benchmark stays one program. */
#ifndef GFI_BENCH_UTIL_H
#define GFI_BENCH_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

static inline double bu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double bu_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return NAN;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A standard normal draw (Box-Muller over xorshift64 uniforms in (0, 1)),
 * reproducible from the state *s: the benches' own data, no library RNG. */
static inline double bu_nrand(uint64_t *s) {
  double u[2];
  for (int k = 0; k < 2; k++) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    u[k] = ((double)(*s >> 11) + 0.5) * 0x1p-53;
  }
  return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

/* The three load averages, as text. */
static inline void bu_loadavg(char *buf, size_t n) {
  snprintf(buf, n, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  double a, b, c;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

static inline void bu_cpu_model(char *model, size_t n) {
  snprintf(model, n, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *v = strchr(line, ':');
    if (!v) continue;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    snprintf(model, n, "%s", v);
    break;
  }
  fclose(f);
}

/* Memory of the machine, GiB (MemTotal). */
static inline double bu_mem_gib(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return NAN;
  char line[256];
  double kb = NAN;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemTotal: %lf kB", &kb) == 1) break;
  fclose(f);
  return kb / (1024.0 * 1024.0);
}

/* A child process's record: exit status (-1: could not run or killed), wall
 * seconds from fork to exit, its CPU seconds and peak resident memory (MiB). */
typedef struct {
  int rc;
  double wall, cpu, rss_mib;
} bu_proc;

/* Run argv (argv[0] a path) with stdout (and stderr when err_too) captured
 * into buf (at most cap - 1 bytes, NUL-terminated; buf may be NULL to
 * discard). */
static inline bu_proc bu_run(char *const argv[], char *buf, size_t cap, int err_too) {
  bu_proc r = {-1, NAN, NAN, NAN};
  int fd[2];
  if (pipe(fd) != 0) return r;
  fflush(stdout);
  fflush(stderr);
  double t0 = bu_now();
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return r;
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    if (err_too) dup2(fd[1], STDERR_FILENO);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  for (;;) {
    char tmp[4096];
    ssize_t got = read(fd[0], tmp, sizeof tmp);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (buf && cap > 1) {
      size_t take = (size_t)got;
      if (n + take > cap - 1) take = cap - 1 - n;
      memcpy(buf + n, tmp, take);
      n += take;
    }
  }
  if (buf && cap) buf[n] = 0;
  close(fd[0]);
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return r;
  r.wall = bu_now() - t0;
  r.cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
          (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
  r.rss_mib = (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/* Value of a "key value" line; NAN when absent. */
static inline double bu_kv(const char *out, const char *key) {
  size_t L = strlen(key);
  for (const char *p = out; p && *p;) {
    if (strncmp(p, key, L) == 0 && p[L] == ' ') return strtod(p + L + 1, NULL);
    p = strchr(p, '\n');
    if (p) p++;
  }
  return NAN;
}

static inline void bu_kv_str(const char *out, const char *key, char *dst, size_t n) {
  size_t L = strlen(key);
  snprintf(dst, n, "?");
  for (const char *p = out; p && *p;) {
    if (strncmp(p, key, L) == 0 && p[L] == ' ') {
      const char *v = p + L + 1;
      size_t len = strcspn(v, "\n");
      if (len >= n) len = n - 1;
      memcpy(dst, v, len);
      dst[len] = 0;
      return;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
}

/* Write rows x cols float64 values (row-major) as a version 1.0 .npy file;
 * cols = 0 writes a 1-D array of rows values. Returns 0 or -1 (errno). */
static inline int bu_write_npy(const char *path, const double *x, size_t rows, size_t cols) {
  char dict[128];
  if (cols)
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }",
             rows, cols);
  else
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", rows);
  size_t len = strlen(dict), total = 10 + len + 1;
  size_t pad = (64 - total % 64) % 64;
  size_t hlen = len + pad + 1;
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                           (unsigned char)(hlen >> 8)};
  fwrite(pre, 1, 10, f);
  fwrite(dict, 1, len, f);
  for (size_t i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  size_t n = rows * (cols ? cols : 1);
  if (fwrite(x, sizeof *x, n, f) != n) {
    fclose(f);
    return -1;
  }
  return fclose(f);
}

/* Read a little-endian float64, C-order .npy file (any shape) into a new
 * array; *n receives the number of values. NULL on any other format. */
static inline double *bu_read_npy(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char pre[12];
  double *x = NULL;
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) goto out;
  size_t hlen;
  if (pre[6] == 1) {
    hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
  } else {
    if (fread(pre + 10, 1, 2, f) != 2) goto out;
    hlen = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)pre[10] << 16) | ((size_t)pre[11] << 24);
  }
  char *h = malloc(hlen + 1);
  if (!h) goto out;
  if (fread(h, 1, hlen, f) != hlen) {
    free(h);
    goto out;
  }
  h[hlen] = 0;
  if (!strstr(h, "'<f8'") || !strstr(h, "'fortran_order': False")) {
    free(h);
    goto out;
  }
  const char *s = strstr(h, "'shape': (");
  size_t count = 1;
  if (s) {
    s += 10;
    while (*s && *s != ')') {
      char *e;
      unsigned long long v = strtoull(s, &e, 10);
      if (e == s) break;
      count *= (size_t)v;
      s = e;
      while (*s == ',' || *s == ' ') s++;
    }
  }
  free(h);
  x = malloc((count ? count : 1) * sizeof *x);
  if (!x) goto out;
  if (fread(x, sizeof *x, count, f) != count) {
    free(x);
    x = NULL;
    goto out;
  }
  *n = count;
out:
  fclose(f);
  return x;
}

/* Least-squares slope of log y against log x over the pairs with x >= xmin
 * and finite positive y; NAN with fewer than two. */
static inline double bu_loglog_slope(size_t n, const double *x, const double *y, double xmin) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] >= xmin) || !(y[i] > 0) || !isfinite(y[i])) continue;
    double a = log(x[i]), b = log(y[i]);
    sx += a, sy += b, sxx += a * a, sxy += a * b;
    k++;
  }
  if (k < 2) return NAN;
  double den = (double)k * sxx - sx * sx;
  return den > 0 ? ((double)k * sxy - sx * sy) / den : NAN;
}

#endif
