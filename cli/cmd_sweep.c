/* gfi sweep: MISE over a grid of (model, D, l, N, R, replications) points,
 * one row per point appended as it finishes; rerunning the same command
 * resumes (missing points only, none duplicated; every row carries a
 * checksum that resume verifies). Locks on FILE's inode and on FILE.lock keep
 * two sweeps from writing one FILE at once, whatever path each was given. Under MPI (mpirun -np P gfi
 * sweep ...) rank 0 reads and writes FILE and hands the points out one at a
 * time to whichever rank asks (itself included, on a second thread), so
 * cheap and expensive points balance; each point's numbers depend only on
 * its index, so the rows are those of a serial run. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_mpi.h"
#include "commands.h"

#define NCOL 12 /* the 11 columns and the row's checksum */
#define MAXMODELS 64
/* at most this many replications per point (beyond, years of computing);
 * N x reps of a Monte-Carlo point is held to CLI_MC_MAX_POINTS */
#define MAX_REPS 1e9

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
  return (h ^ 0xff) * 0x100000001B3ULL;
}

static void check_model(const char *opt, const char *arg, void *dst) {
  (void)dst;
  if (strpbrk(arg, " \t\n")) cli_usage(opt, "no whitespace in a sweep's model spec");
}

/* ---- the grid ---------------------------------------------------------------- */

typedef struct {
  size_t nm, nD, nL, nN, nR, nQ, total;
  const char *const *models;
  double *dv, *lv, *Nv, *Rv, *Qv;
  gfi_model *mods[MAXMODELS][3];
  uint64_t seed;
  int nthreads;
} grid;

typedef struct {
  size_t a, D;
  int l;
  double N, R, Q;
} point;

static point point_of(const grid *g, size_t idx) {
  size_t r = idx;
  size_t q = r % g->nQ; r /= g->nQ;
  size_t ri = r % g->nR; r /= g->nR;
  size_t ni = r % g->nN; r /= g->nN;
  size_t li = r % g->nL; r /= g->nL;
  size_t di = r % g->nD; r /= g->nD;
  point p = {r, (size_t)g->dv[di], (int)g->lv[li], g->Nv[ni], g->Rv[ri], g->Qv[q]};
  return p;
}

/* Point idx's mise, se, bias2, var; a gfi status. */
static int compute_point(const grid *g, size_t idx, double v[4]) {
  point p = point_of(g, idx);
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = g->nthreads;
  o.base.seed = splitmix64(g->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(idx + 1));
  double R[3] = {p.R, p.R, p.R};
  gfi_mise_result res;
  gfi_kernel k;
  int st = gfi_kernel_pow(&k, p.l);
  if (!st)
    st = p.Q == 0 ? gfi_mise_exact(g->mods[p.a][p.D - 1], &k, p.N, R, &o, &res)
                  : gfi_mise_mc(g->mods[p.a][p.D - 1], &k, (size_t)p.N, R, (size_t)p.Q, &o, &res, NULL);
  v[0] = res.mise;
  v[1] = res.se;
  v[2] = res.bias2;
  v[3] = res.var;
  return st;
}

static void describe_point(const grid *g, size_t idx, char *buf, size_t n) {
  point p = point_of(g, idx);
  snprintf(buf, n, "point %zu (%s, D = %zu, l = %d, N = %g, R = %g, reps = %g)", idx, g->models[p.a], p.D,
           p.l, p.N, p.R, p.Q);
}

/* The point fields of idx's row, as the row writes them. */
static void point_fields(const grid *g, size_t idx, char f[6][64]) {
  point p = point_of(g, idx);
  snprintf(f[0], 64, "%s", g->models[p.a]);
  snprintf(f[1], 64, "%zu", p.D);
  snprintf(f[2], 64, "%d", p.l);
  snprintf(f[3], 64, "%.17g", p.N);
  snprintf(f[4], 64, "%.17g", p.R);
  snprintf(f[5], 64, "%.17g", p.Q);
}

/* A row's checksum: FNV-1a (32 bits) of its first 11 fields joined by single
 * spaces, as 8 hex digits; resume recomputes it, so that a changed digit is
 * caught (the row is dropped and its point computed again). */
static uint32_t row_sum(const char *text) {
  uint32_t h = 2166136261u;
  for (; *text; text++) h = (h ^ (unsigned char)*text) * 16777619u;
  return h;
}

static int g_legacy; /* FILE was begun without the check column: its rows go on without it */

static int write_row(FILE *f, const grid *g, size_t idx, const double v[4]) {
  char pf[6][64], text[1024];
  point_fields(g, idx, pf);
  snprintf(text, sizeof text, "%zu %s %s %s %s %s %s %.17g %.17g %.17g %.17g", idx, pf[0], pf[1], pf[2], pf[3],
           pf[4], pf[5], v[0], v[1], v[2], v[3]);
  if (g_legacy)
    fprintf(f, "%s\n", text);
  else
    fprintf(f, "%s %08x\n", text, (unsigned)row_sum(text));
  return fflush(f) || fsync(fileno(f));
}

/* ---- the lock ------------------------------------------------------------------ */

static char *g_lockpath;
static int g_lockfd = -1;
static int g_filefd = -1; /* FILE itself, locked (its device and inode) */

/* Lock FILE itself: whatever the path (a symbolic or hard link, another
 * spelling), one inode has one holder. FILE is created when absent and must
 * be a regular file: a device (/dev/full reads as endless NULs), a pipe or a
 * directory cannot hold a table that is read back at resume. */
static int file_lock(const char *out, char *msg, size_t n) {
  struct stat sb;
  if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    snprintf(msg, n, "--out %s: not a regular file (a %s): a sweep's table is read back at resume and must be a "
             "regular file", out, S_ISDIR(sb.st_mode) ? "directory" : S_ISCHR(sb.st_mode) ? "character device" :
             S_ISBLK(sb.st_mode) ? "block device" : S_ISFIFO(sb.st_mode) ? "pipe" : S_ISSOCK(sb.st_mode) ?
             "socket" : "special file");
    return 1;
  }
  int fd = open(out, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(msg, n, "cannot open %s: %s", out, strerror(errno));
    return 1;
  }
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    close(fd);
    snprintf(msg, n, "--out %s: not a regular file", out);
    return 1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
      snprintf(msg, n, "%s is being written by another sweep (through this or another path to the same file: "
               "device %llu, inode %llu); wait for it to finish or use another --out", out,
               (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
    else
      snprintf(msg, n, "cannot lock %s: %s", out, strerror(e));
    return 1;
  }
  g_filefd = fd;
  return 0;
}

static void unlock_at_exit(void) {
  if (g_lockfd >= 0) {
    unlink(g_lockpath);
    close(g_lockfd);
    g_lockfd = -1;
  }
}

/* Take FILE.lock (flock, released by the kernel when the process ends, so a
 * killed sweep leaves no stale lock); its text names the holder. The inode
 * check makes the removal at a normal end safe against a sweep starting at
 * that moment. Returns 0, or 1 with msg set. */
static int sweep_lock(const char *out, char *msg, size_t n) {
  size_t len = strlen(out) + 6;
  g_lockpath = cli_array(len, 1, 1);
  snprintf(g_lockpath, len, "%s.lock", out);
  for (int tries = 0; tries < 100; tries++) {
    int fd = open(g_lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      snprintf(msg, n, "cannot create the lock %s: %s", g_lockpath, strerror(errno));
      return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      char who[256] = "";
      ssize_t k = pread(fd, who, sizeof who - 1, 0);
      close(fd);
      if (k > 0) who[k] = '\0';
      who[strcspn(who, "\n")] = '\0';
      if (e == EWOULDBLOCK)
        snprintf(msg, n, "%s is being written by another sweep (%s, lock %s); wait for it to finish or use "
                 "another --out", out, *who ? who : "holder unknown", g_lockpath);
      else
        snprintf(msg, n, "cannot lock %s: %s", g_lockpath, strerror(e));
      return 1;
    }
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(g_lockpath, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
      char host[128] = "?", when[64] = "?", text[400];
      gethostname(host, sizeof host - 1);
      time_t t = time(NULL);
      struct tm tm;
      if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
      int k = snprintf(text, sizeof text, "pid %ld on %s since %s%s\n", (long)getpid(), host, when,
                       cli_mpi_size() > 1 ? ", MPI rank 0" : "");
      if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)k, 0) != k) {
        snprintf(msg, n, "cannot write the lock %s: %s", g_lockpath, strerror(errno));
        close(fd);
        return 1;
      }
      g_lockfd = fd;
      atexit(unlock_at_exit);
      return 0;
    }
    close(fd); /* removed by its holder between our open and flock: again */
  }
  snprintf(msg, n, "cannot take the lock %s", g_lockpath);
  return 1;
}

/* ---- resume -------------------------------------------------------------------- */

static const char colline[] = "# index model dim l n R reps mise se bias2 var check\n";
/* files written before rows had a checksum */
static const char colline_old[] = "# index model dim l n R reps mise se bias2 var\n";

/* A value field: a number, finite (mise, se >= 0); bias2 and var may both
 * be NaN (Monte Carlo without the pooled parts) but not one alone. */
static int parse_values(char *const *fld, double v[4], int *bad) {
  for (int i = 0; i < 4; i++) {
    char *end;
    errno = 0;
    v[i] = strtod(fld[7 + i], &end);
    if (end == fld[7 + i] || *end || errno == ERANGE) {
      *bad = i;
      return 1;
    }
  }
  for (int i = 0; i < 2; i++)
    if (!isfinite(v[i]) || v[i] < 0) {
      *bad = i;
      return 1;
    }
  for (int i = 2; i < 4; i++)
    if (isinf(v[i]) || (isnan(v[i]) != isnan(v[5 - i]))) {
      *bad = i;
      return 1;
    }
  return 0;
}

typedef struct {
  long off, len;
} span;

/* Read FILE: check the key, mark the finished points, drop a partial last
 * line, drop (and say so) rows whose value fields are corrupted so that
 * their points are computed again, and start over when the header itself
 * was cut. Returns 1 when FILE must get a fresh header. */
static int resume(const char *out, const grid *g, const char *keyline, unsigned char *done, size_t *ndone) {
  FILE *f = fopen(out, "r+");
  if (!f && errno == ENOENT) return 1;
  if (!f) cli_die(EXIT_RUNTIME, "cannot open %s: %s", out, strerror(errno));
  char *line = NULL;
  size_t cap = 0, lineno = 0, nrows = 0, nspan = 0, spcap = 0;
  span *drop = NULL;
  long good = 0;
  int have_key = 0, have_cols = 0, ours = 0, any = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    lineno++;
    any = 1;
    if (line[len - 1] != '\n') break; /* partial last line from a kill */
    if (lineno == 1 && !strcmp(line, "# gfi sweep\n")) ours = 1;
    if (line[0] == '#') {
      if (!strncmp(line, "# sweep-key:", 12)) {
        line[len - 1] = '\0';
        if (strcmp(line, keyline) != 0)
          cli_die(EXIT_RUNTIME, "%s:%zu: written by a different sweep (%s, this one %s); use another --out",
                  out, lineno, line + 2, keyline + 2);
        have_key = 1;
      } else if (!strcmp(line, colline)) {
        have_cols = 1;
      } else if (!strcmp(line, colline_old)) {
        have_cols = 2; /* rows of 11 fields, no checksum */
        g_legacy = 1;
      }
      good += len;
      continue;
    }
    if (!have_key || !have_cols)
      cli_die(EXIT_RUNTIME, "%s:%zu: a row before the header's %s line: not a complete gfi sweep file", out,
              lineno, have_key ? "column-name" : "'# sweep-key'");
    /* fields, and the column where each starts */
    char *fld[NCOL + 1];
    size_t col[NCOL + 1];
    int nf = 0;
    for (char *p = line; *p;) {
      while (*p == ' ' || *p == '\t' || *p == '\n') *p++ = '\0';
      if (!*p) break;
      if (nf <= NCOL) {
        fld[nf] = p;
        col[nf] = (size_t)(p - line) + 1;
      }
      nf++;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    }
    const int ncol = have_cols == 2 ? NCOL - 1 : NCOL;
    if (nf != ncol)
      cli_die(EXIT_RUNTIME, "%s:%zu:1: not a row of this sweep (%d fields, expected %d)", out, lineno, nf, ncol);
    char *end;
    errno = 0;
    unsigned long long idx = strtoull(fld[0], &end, 10);
    double v[4];
    int bad, why = 0;
    char text[1024] = "";
    /* a key field (the index, or a point field that does not match the
     * index's point) was edited: the sweep key guarantees the grid, so the
     * row is damaged, not another sweep's; it is dropped and the point (if
     * any) computed again, as the help says */
    char keymsg[512] = "";
    if (*end || fld[0][0] == '-' || errno || idx >= g->total) {
      snprintf(keymsg, sizeof keymsg, "%s:%zu:1: '%.40s' is not a point index of this sweep (0..%zu)", out, lineno,
               fld[0], g->total - 1);
    } else {
      char pf[6][64];
      static const char *pname[6] = {"model", "dim", "l", "n", "R", "reps"};
      point_fields(g, (size_t)idx, pf);
      for (int i = 0; i < 6 && !keymsg[0]; i++)
        if (strcmp(fld[1 + i], pf[i]) != 0)
          snprintf(keymsg, sizeof keymsg, "%s:%zu:%zu: point %llu's %s is '%s' in this sweep, the row says '%.40s'",
                   out, lineno, col[1 + i], idx, pname[i], pf[i], fld[1 + i]);
    }
    if (keymsg[0]) {
      why = 4;
    } else if (done[idx]) {
      why = 1; /* a second row of one point (two writers once shared FILE): the copy goes */
    } else if (parse_values(fld, v, &bad)) {
      why = 2;
    } else if (ncol == NCOL) {
      size_t k = 0;
      for (int i = 0; i < NCOL - 1 && k < sizeof text; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%s", i ? " " : "", fld[i]);
      char want[16];
      snprintf(want, sizeof want, "%08x", (unsigned)row_sum(text));
      if (strcmp(want, fld[NCOL - 1]) != 0) why = 3;
    }
    if (why) {
      static const char *vname[4] = {"mise", "se", "bias2", "var"};
      if (why == 4)
        fprintf(stderr, "gfi sweep: %s (a key field was changed); the row is dropped and its point computed again\n",
                keymsg);
      else if (why == 1)
        fprintf(stderr, "gfi sweep: %s:%zu:1: point %llu's row appears again; the copy is dropped\n", out, lineno,
                idx);
      else if (why == 2)
        fprintf(stderr, "gfi sweep: %s:%zu:%zu: point %llu's %s field '%s' is corrupted (%s); the row is dropped "
                "and the point computed again\n", out, lineno, col[7 + bad], idx, vname[bad], fld[7 + bad],
                bad < 2 ? "not a finite number >= 0" : "bias2 and var must be numbers, or both nan");
      else
        fprintf(stderr, "gfi sweep: %s:%zu:%zu: point %llu's row does not match its checksum %s (a field was "
                "changed); the row is dropped and the point computed again\n", out, lineno, col[NCOL - 1], idx,
                fld[NCOL - 1]);
      if (nspan == spcap) {
        spcap = spcap ? 2 * spcap : 16;
        drop = realloc(drop, spcap * sizeof *drop);
        if (!drop) cli_die(EXIT_RUNTIME, "out of memory");
      }
      drop[nspan++] = (span){good, (long)len};
      good += len;
      continue;
    }
    done[idx] = 1;
    (*ndone)++;
    nrows++;
    good += len;
  }
  free(line);
  if (!any) { /* an empty file */
    fclose(f);
    free(drop);
    return 1;
  }
  if (!have_key || !have_cols) {
    /* no row yet: a header cut while it was written (or by hand) */
    if (!ours) cli_die(EXIT_RUNTIME, "%s: no '# sweep-key' line: not a gfi sweep file", out);
    fprintf(stderr, "gfi sweep: %s: the header is incomplete (no %s line; the file was cut while its header "
            "was written) and holds no row: it is written again\n", out,
            have_key ? "column-name" : "'# sweep-key'");
    if (ftruncate(fileno(f), 0) != 0) cli_die(EXIT_RUNTIME, "cannot truncate %s: %s", out, strerror(errno));
    fclose(f);
    free(drop);
    return 1;
  }
  if (nspan == 0) {
    if (fflush(f) || ftruncate(fileno(f), good) != 0)
      cli_die(EXIT_RUNTIME, "cannot truncate %s: %s", out, strerror(errno));
    fclose(f);
    return 0;
  }
  /* rewrite without the dropped rows: a copy next to FILE, then rename */
  size_t tl = strlen(out) + 8;
  char *tmp = cli_array(tl, 1, 1);
  snprintf(tmp, tl, "%s.tmp", out);
  FILE *t = fopen(tmp, "w");
  if (!t) cli_die(EXIT_RUNTIME, "cannot write %s: %s", tmp, strerror(errno));
  /* the copy becomes FILE: lock its inode before it appears under that name
   * (the lock lasts as long as this descriptor, to the end of the sweep) */
  int keep = dup(fileno(t));
  if (keep < 0 || flock(keep, LOCK_EX | LOCK_NB) != 0)
    cli_die(EXIT_RUNTIME, "cannot lock %s: %s", tmp, strerror(errno));
  char buf[1 << 16];
  long pos = 0;
  if (fseek(f, 0, SEEK_SET)) cli_die(EXIT_RUNTIME, "cannot read %s: %s", out, strerror(errno));
  for (size_t s = 0; s <= nspan; s++) {
    long stop = s < nspan ? drop[s].off : good;
    while (pos < stop) {
      size_t want = (size_t)(stop - pos) < sizeof buf ? (size_t)(stop - pos) : sizeof buf;
      size_t got = fread(buf, 1, want, f);
      if (got == 0) cli_die(EXIT_RUNTIME, "cannot read %s", out);
      if (fwrite(buf, 1, got, t) != got) cli_die(EXIT_RUNTIME, "cannot write %s: %s", tmp, strerror(errno));
      pos += (long)got;
    }
    if (s < nspan) {
      if (fseek(f, drop[s].len, SEEK_CUR)) cli_die(EXIT_RUNTIME, "cannot read %s", out);
      pos += drop[s].len;
    }
  }
  if (fflush(t) || fsync(fileno(t)) || fclose(t)) cli_die(EXIT_RUNTIME, "cannot write %s: %s", tmp, strerror(errno));
  fclose(f);
  if (rename(tmp, out)) cli_die(EXIT_RUNTIME, "cannot replace %s: %s", out, strerror(errno));
  free(tmp);
  free(drop);
  return 0;
}

/* ---- MPI: rank 0 hands out points, every rank computes --------------------------- */

enum { TAG_RESULT = 101, TAG_NEXT = 102 };

typedef struct {
  int64_t idx; /* -1: a rank's first request */
  int32_t status, rank;
  double v[4];
  char why[160];
  double wait; /* seconds the rank waited for this point after returning its previous one */
} sweep_msg;

/* Rank 0's own computing thread, fed by the manager loop through `next`. */
typedef struct {
  const grid *g;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t next;   /* point to compute; -1 = stop */
  int have_next;  /* next is set and not yet taken */
  int have_res;   /* res holds a finished point */
  sweep_msg res;
} local_worker;

static void *local_main(void *vp) {
  local_worker *w = vp;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    while (!w->have_next) pthread_cond_wait(&w->cv, &w->mu);
    int64_t idx = w->next;
    w->have_next = 0;
    pthread_mutex_unlock(&w->mu);
    if (idx < 0) return NULL;
    sweep_msg m = {idx, 0, 0, {0, 0, 0, 0}, "", 0};
    m.status = compute_point(w->g, (size_t)idx, m.v);
    if (m.status) snprintf(m.why, sizeof m.why, "%s", gfi_strerror(m.status));
    pthread_mutex_lock(&w->mu);
    w->res = m;
    w->have_res = 1;
    pthread_mutex_unlock(&w->mu);
  }
}

static void worker_loop(const grid *g) {
  sweep_msg m = {-1, 0, cli_mpi_rank(), {0, 0, 0, 0}, "", 0};
  for (;;) {
    int64_t next;
    double t0 = cli_mpi_time();
    if (cli_mpi_send(0, TAG_RESULT, &m, sizeof m) || cli_mpi_recv(0, TAG_NEXT, &next, sizeof next))
      cli_die(EXIT_RUNTIME, "lost contact with rank 0");
    if (next < 0) return;
    m.wait = m.idx >= 0 ? cli_mpi_time() - t0 : 0; /* the first request's wait is the start-up */
    m.idx = next;
    m.why[0] = '\0';
    m.status = compute_point(g, (size_t)next, m.v);
    if (m.status) snprintf(m.why, sizeof m.why, "%s", gfi_strerror(m.status));
  }
}

typedef struct {
  const grid *g;
  FILE *f;
  const char *out;
  const size_t *pend;
  size_t npend, pos;
  gfi_progress *pg;
  int failed;
  char err[512];
  double wait;  /* the other ranks' waits for their next point, summed */
  size_t nwait; /* and counted */
} manager;

/* A finished point (or a rank's first request): write its row; the next
 * point for that rank, -1 when there is none or a point failed. */
static int64_t manager_take(manager *mg, const sweep_msg *m, int rank) {
  if (m->idx >= 0) {
    if (m->status) {
      if (!mg->failed) {
        char d[256];
        describe_point(mg->g, (size_t)m->idx, d, sizeof d);
        snprintf(mg->err, sizeof mg->err, "%s failed on rank %d: %s", d, rank, m->why);
      }
      mg->failed = 1;
    } else {
      if (write_row(mg->f, mg->g, (size_t)m->idx, m->v))
        cli_die(EXIT_RUNTIME, "cannot write %s: %s", mg->out, strerror(errno));
      gfi_progress_add(mg->pg, 1);
    }
    if (rank != 0 && m->wait > 0) {
      mg->wait += m->wait;
      mg->nwait++;
    }
  }
  if (mg->failed || mg->pos >= mg->npend) return -1;
  return (int64_t)mg->pend[mg->pos++];
}

static void manager_loop(manager *mg, int P) {
  local_worker w = {.g = mg->g, .next = -1, .have_next = 1};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  sweep_msg hello = {-1, 0, 0, {0, 0, 0, 0}, "", 0};
  w.next = manager_take(mg, &hello, 0);
  int active = P; /* ranks (rank 0's thread included) still computing */
  int local_on = w.next >= 0;
  if (!local_on) active--;
  pthread_t th;
  if (pthread_create(&th, NULL, local_main, &w)) cli_die(EXIT_RUNTIME, "cannot start a thread");
  while (active > 0) {
    int busy = 0, from;
    sweep_msg m;
    if (cli_mpi_try_recv(TAG_RESULT, &m, sizeof m, &from)) {
      busy = 1;
      int64_t next = manager_take(mg, &m, from);
      if (cli_mpi_send(from, TAG_NEXT, &next, sizeof next)) cli_die(EXIT_RUNTIME, "lost contact with rank %d", from);
      if (next < 0) active--;
    }
    if (local_on) {
      pthread_mutex_lock(&w.mu);
      if (w.have_res) {
        busy = 1;
        w.have_res = 0;
        m = w.res;
        pthread_mutex_unlock(&w.mu);
        int64_t next = manager_take(mg, &m, 0);
        pthread_mutex_lock(&w.mu);
        w.next = next;
        w.have_next = 1;
        pthread_cond_signal(&w.cv);
        if (next < 0) {
          active--;
          local_on = 0;
        }
      }
      pthread_mutex_unlock(&w.mu);
    }
    if (!busy) {
      struct timespec ts = {0, 200000}; /* 0.2 ms: waiting costs no core */
      nanosleep(&ts, NULL);
    }
  }
  pthread_join(th, NULL);
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);
}

/* Expensive points first (replications x N; exact points are cheap), so the
 * last points to finish are short ones. */
static const grid *g_sort;
static int by_cost(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  point x = point_of(g_sort, a), y = point_of(g_sort, b);
  double ca = x.Q > 0 ? x.Q * x.N : 0, cb = y.Q > 0 ? y.Q * y.N : 0;
  if (ca != cb) return ca > cb ? -1 : 1;
  return a < b ? -1 : a > b;
}

int cmd_sweep(int argc, char **argv) {
  const char *out = NULL, *ds = NULL, *ps = NULL, *ns = NULL, *rs = NULL, *qs = NULL;
  uint64_t seed = 0;
  int nthreads = 0, progress = 0;
  const cli_opt opts[] = {
    {"out", CLI_STR, &out, .arg = "FILE", .help = "the sweep's table (appended to; resumed when it exists)"},
    {"model", CLI_STR, NULL, .arg = "SPEC", .flags = CLI_MULTI, .parse = check_model,
     .help = "truth model (see 'gfi sample --help'), no whitespace"},
    {"dims", CLI_STR, &ds, .arg = "D1[,..]", .help = "dimensions, 1..3"},
    {"phis", CLI_STR, &ps, .arg = "L1[,..]", .help = "powers l of phi(z) = z^l, 1..8"},
    {"ns", CLI_STR, &ns, .arg = "N1[,..]", .help = "sample sizes"},
    {"Rs", CLI_STR, &rs, .arg = "R1[,..]", .help = "radii (the same on every axis)"},
    {"reps", CLI_STR, &qs, .arg = "Q1[,..]", .help = "0 (exact MISE) or >= 2 (Monte Carlo replications)"},
    {"seed", CLI_U64, &seed, .arg = "S", .help = "the sweep's seed"},
    CLI_OPT_THREADS(nthreads),
    {"progress", CLI_FLAG, &progress,
     .help = "show progress (count, rate, ETA) on stderr even when it is not\n"
             "a terminal"},
    {0}};
  const cli_spec cs = {
    "usage: gfi sweep --out FILE --model SPEC [--model SPEC ..] --dims D1[,..] --phis L1[,..]\n"
    "                 --ns N1[,..] --Rs R1[,..] --reps Q1[,..] --seed S [options]\n\n"
    "Exact or Monte-Carlo MISE of the generalized Fourier density estimator over\n"
    "the grid model x dim x l x n x R x reps (reps 0 = the exact MISE; reps >= 2 =\n"
    "Monte Carlo with the Plancherel ISE, streamed through a type-3 NUFFT or direct\n"
    "sums by cost (docs/mise-mc.md); grid ISE for 3-D truths without an exact MISE).\n"
    "Points are numbered in that order (reps fastest):\n"
    "index = ((((model*nD + d)*nL + l)*nN + n)*nR + r)*nQ + q.\n"
    "Point i's replications use seed s_i = splitmix64(S + 0x9E3779B97F4A7C15*(i+1)),\n"
    "replication k on RNG stream (s_i, k): any split of the indices over processes or\n"
    "machines gives the same numbers.\n\n"
    "Rows are appended to FILE (flushed and fsync'ed) as points finish. Running the\n"
    "same command again after an interruption computes only the missing points; a\n"
    "partial last line left by a kill is dropped first, a row whose numbers are\n"
    "corrupted or do not match the row's checksum (the last column) is dropped (with\n"
    "a message) and its point computed again, so is a row whose index or point\n"
    "fields (model, dim, l, n, R, reps) were edited; a second copy of a row is\n"
    "dropped, a header cut before its column-name line is written again. FILE's\n"
    "'# sweep-key' line guards against resuming a different grid (threads and\n"
    "--progress may change). A lock on FILE itself (its device and inode, whatever\n"
    "path names it) and FILE.lock keep a second sweep from writing FILE at the same\n"
    "time: it exits 1 naming the holder (the locks go with the process, so a killed\n"
    "sweep leaves none).\n"
    "FILE must be a regular file. Monte-Carlo points are held to N x reps <= 1e11\n"
    "and reps <= 1e9 (docs/robustness.md).\n\n"
    "Under MPI ('mpirun -np P gfi sweep ...', or srun) rank 0 reads and writes FILE\n"
    "and hands the points out one at a time, most expensive first, to whichever rank\n"
    "asks (its own second thread included): the rows and numbers are those of the\n"
    "serial run, in another order. --threads applies to every rank (docs/cluster.md).\n",
    opts, "Columns: index model dim l n R reps mise se bias2 var check (R applies to every\n"
              "axis; check: FNV-1a of the row's other fields, 8 hex digits).\n"};
  if (cli_parse(&cs, argc, argv)) return 0;
  size_t nm;
  const char *const *models = cli_values("model", &nm);
  if (nm > MAXMODELS) cli_usage("--model", "at most %d models", MAXMODELS);
  if (!out) cli_usage("--out", "required");
  if (!nm) cli_usage("--model", "required (repeat for several)");
  if (!ds) cli_usage("--dims", "required");
  if (!ps) cli_usage("--phis", "required");
  if (!ns) cli_usage("--ns", "required");
  if (!rs) cli_usage("--Rs", "required");
  if (!qs) cli_usage("--reps", "required");
  if (!cli_given("seed")) cli_usage("--seed", "required");
  size_t nD, nL, nN, nR, nQ;
  grid g = {0};
  g.models = models;
  g.nm = nm;
  g.seed = seed;
  g.nthreads = nthreads;
  double *dv = cli_list("--dims", ds, &nD), *lv = cli_list("--phis", ps, &nL);
  double *Nv = cli_list("--ns", ns, &nN), *Rv = cli_list("--Rs", rs, &nR), *Qv = cli_list("--reps", qs, &nQ);
  for (size_t i = 0; i < nD; i++)
    if (dv[i] != floor(dv[i]) || dv[i] < 1 || dv[i] > 3) cli_usage("--dims", "dimensions must be 1, 2 or 3");
  for (size_t i = 0; i < nL; i++)
    if (lv[i] != floor(lv[i]) || lv[i] < 1 || lv[i] > 8) cli_usage("--phis", "powers l must be integers 1..8");
  for (size_t i = 0; i < nN; i++)
    if (Nv[i] != floor(Nv[i]) || Nv[i] < 1 || Nv[i] > 1e15) cli_usage("--ns", "sizes must be integers >= 1");
  for (size_t i = 0; i < nR; i++)
    if (!(Rv[i] > 0)) cli_usage("--Rs", "radii must be > 0");
  for (size_t i = 0; i < nQ; i++)
    if (Qv[i] != floor(Qv[i]) || Qv[i] < 0 || Qv[i] == 1) cli_usage("--reps", "0 (exact) or >= 2 replications");
    else if (Qv[i] > MAX_REPS)
      cli_usage("--reps", "%g replications: at most %.0e (the budget of docs/robustness.md)", Qv[i], MAX_REPS);
  /* the Monte-Carlo points' work, before any starts (as mise --mc) */
  for (size_t i = 0; i < nN; i++)
    for (size_t q = 0; q < nQ; q++)
      if (Qv[q] > 0 && Nv[i] * Qv[q] > CLI_MC_MAX_POINTS)
        cli_usage(nQ > 1 || nN == 1 ? "--reps" : "--ns", "the point N = %g, reps = %g draws and sums N x reps = %.3g "
                  "points, above the budget of %.0e (hours to years of computing; docs/robustness.md): lower --ns or "
                  "--reps (reps 0 gives the exact MISE at any N)", Nv[i], Qv[q], Nv[i] * Qv[q], CLI_MC_MAX_POINTS);
  gfi_model *(*mods)[3] = g.mods;
  for (size_t a = 0; a < nm; a++)
    for (size_t d = 0; d < nD; d++) {
      gfi_model *m = cli_model(models[a], (size_t)dv[d]);
      mods[a][(size_t)dv[d] - 1] = m;
      for (size_t q = 0; q < nQ; q++)
        if ((Qv[q] == 0 || dv[d] <= 2) && !gfi_mise_exact_supported(m))
          cli_usage("--model", "'%s' in %g dimension(s) is not supported by the MISE routes", models[a], dv[d]);
    }
  size_t total = nm, dims[5] = {nD, nL, nN, nR, nQ};
  for (int i = 0; i < 5; i++) {
    if (total > SIZE_MAX / dims[i]) cli_usage("--model", "the grid has too many points");
    total *= dims[i];
  }

  g.nD = nD, g.nL = nL, g.nN = nN, g.nR = nR, g.nQ = nQ, g.total = total;
  g.dv = dv, g.lv = lv, g.Nv = Nv, g.Rv = Rv, g.Qv = Qv;

  /* the grid's identity */
  char buf[128];
  uint64_t key = 0xcbf29ce484222325ULL;
  for (size_t a = 0; a < nm; a++) key = fnv(key, models[a]);
  const char *lists[5] = {ds, ps, ns, rs, qs};
  for (int i = 0; i < 5; i++) key = fnv(key, lists[i]);
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
  key = fnv(key, buf);
  char keyline[64];
  snprintf(keyline, sizeof keyline, "# sweep-key: %016llx", (unsigned long long)key);

  /* rank 0 (the only rank without MPI): lock, resume, the points to do */
  const int rank = cli_mpi_rank(), P = cli_mpi_size();
  FILE *f = NULL;
  size_t *pend = NULL, npend = 0;
  char msg[1024];
  int locked = 1;
  if (rank == 0) {
    locked = sweep_lock(out, msg, sizeof msg) == 0 && file_lock(out, msg, sizeof msg) == 0;
    if (!locked && P == 1) cli_die(EXIT_RUNTIME, "%s", msg);
  }
  if (P > 1 && cli_mpi_bcast(&locked, sizeof locked, 0)) cli_die(EXIT_RUNTIME, "MPI broadcast failed");
  if (!locked) {
    if (rank == 0) fprintf(stderr, "gfi sweep: %s\n", msg);
    cli_mpi_exit(EXIT_RUNTIME, 1);
  }
  if (rank == 0) {
    unsigned char *done = cli_array(total, 1, 1);
    memset(done, 0, total);
    size_t ndone = 0;
    int fresh = resume(out, &g, keyline, done, &ndone);
    f = fopen(out, "a");
    if (!f) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
    if (fresh) {
      cli_header(f);
      fprintf(f, "%s\n", keyline);
      fprintf(f, "# grid: %zu points = %zu models x dims %s x phis %s x ns %s x Rs %s x reps %s\n", total, nm,
              ds, ps, ns, rs, qs);
      for (size_t a = 0; a < nm; a++) fprintf(f, "# model %zu: %s\n", a, models[a]);
      fprintf(f, "# seed: %llu; point i uses seed splitmix64(seed + 0x9E3779B97F4A7C15*(i+1)), "
                 "replication k stream (s_i, k)\n", (unsigned long long)seed);
      fputs(colline, f);
      if (fflush(f) || fsync(fileno(f))) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
    }
    pend = cli_array(total - ndone, 1, sizeof *pend);
    for (size_t idx = 0; idx < total; idx++)
      if (!done[idx]) pend[npend++] = idx;
    free(done);
  }

  gfi_progress pg;
  if (rank == 0) gfi_progress_start(&pg, (progress || isatty(2)) ? stderr : NULL, "sweep", npend);
  if (P == 1) {
    for (size_t i = 0; i < npend; i++) {
      double v[4];
      int st = compute_point(&g, pend[i], v);
      if (st) {
        describe_point(&g, pend[i], msg, sizeof msg);
        free(pend);
        cli_die(EXIT_RUNTIME, "%s: %s", msg, gfi_strerror(st));
      }
      if (write_row(f, &g, pend[i], v)) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
      gfi_progress_add(&pg, 1);
    }
  } else if (rank == 0) {
    g_sort = &g;
    qsort(pend, npend, sizeof *pend, by_cost);
    manager mg = {&g, f, out, pend, npend, 0, &pg, 0, "", 0, 0};
    manager_loop(&mg, P);
    if (mg.nwait)
      fprintf(stderr, "gfi sweep: %d ranks; a rank waited %.3f ms on average from returning a point to receiving "
              "the next (the MPI bookkeeping per point, %zu hand-outs)\n", P, 1e3 * mg.wait / (double)mg.nwait,
              mg.nwait);
    if (mg.failed) {
      gfi_progress_end(&pg);
      cli_finish_output(f, out);
      fprintf(stderr, "gfi sweep: %s; %s holds every point finished before it and resumes\n", mg.err, out);
      cli_mpi_exit(EXIT_RUNTIME, 1);
    }
  } else {
    worker_loop(&g);
  }
  if (rank == 0) {
    gfi_progress_end(&pg);
    cli_finish_output(f, out);
  }
  for (size_t a = 0; a < nm; a++)
    for (int d = 0; d < 3; d++) gfi_model_free(mods[a][d]);
  free(pend);
  free(dv);
  free(lv);
  free(Nv);
  free(Rv);
  free(Qv);
  return 0;
}
