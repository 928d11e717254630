/* Data slabs over MPI ranks and the block-order reduction (see cli_slab.h). */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "cli_mpi.h"
#include "cli_slab.h"
#include "cli_source.h"
#include "npy_internal.h"
#include "regression_internal.h"

#define MAX_BLOCKS 64
#define TEXT_BLOCK_BYTES ((off_t)1 << 20) /* at least a MiB of text per block */
#define NPY_BLOCK_ROWS 16384             /* at least this many rows per .npy block */
enum { TAG_SLAB = 301 };

int cli_slabs_possible(const char *path) {
  struct stat sb;
  int yes = path && strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
  /* rank 0's view decides for all: a rank that cannot see the file must
   * fail reading it (and say so), not leave the job waiting for it */
  if (cli_mpi_size() > 1 && cli_mpi_bcast(&yes, sizeof yes, 0))
    cli_die(EXIT_RUNTIME, "MPI: cannot agree on reading the data file in slabs");
  return yes;
}

/* An error every rank finds alike (after a collective): rank 0 says it once,
 * and all leave together. */
static _Noreturn void all_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void all_die(const char *fmt, ...) {
  if (cli_mpi_rank() == 0) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gfi %s: ", cli_cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
  cli_mpi_exit(EXIT_RUNTIME, 1);
}

/* floor(b * total / nblk) without overflow (nblk <= MAX_BLOCKS) */
static size_t cut(size_t total, size_t b, size_t nblk) { return total / nblk * b + total % nblk * b / nblk; }

/* The first line start at or after byte `raw` of f (a line starts at 0 and
 * after every newline); the file's size when none. */
static off_t line_start(FILE *f, const char *path, off_t raw, off_t size) {
  if (raw <= 0) return 0;
  if (raw >= size) return size;
  if (fseeko(f, raw - 1, SEEK_SET)) cli_die(EXIT_RUNTIME, "data file %s: cannot seek: %s", path, strerror(errno));
  off_t pos = raw - 1;
  int c;
  while ((c = getc(f)) != EOF) {
    pos++;
    if (c == '\n') return pos;
  }
  if (ferror(f)) cli_die(EXIT_RUNTIME, "data file %s: cannot read: %s", path, strerror(errno));
  return size;
}

static void load_text(FILE *f, const char *path, off_t size, size_t D, cli_slabs *s) {
  s->nblk = (size_t)(size / TEXT_BLOCK_BYTES) + 1;
  if (s->nblk > MAX_BLOCKS) s->nblk = MAX_BLOCKS;
  const size_t P = (size_t)cli_mpi_size(), r = (size_t)cli_mpi_rank();
  s->b0 = cut(s->nblk, r, P);
  s->b1 = cut(s->nblk, r + 1, P);
  size_t nb = s->b1 - s->b0;
  s->n = cli_array(nb ? nb : 1, 1, sizeof *s->n);
  s->x = cli_array(nb ? nb : 1, 1, sizeof *s->x);
  for (size_t b = s->b0; b < s->b1; b++) {
    off_t from = line_start(f, path, (off_t)cut((size_t)size, b, s->nblk), size);
    off_t to = line_start(f, path, (off_t)cut((size_t)size, b + 1, s->nblk), size);
    size_t i = b - s->b0, len = (size_t)(to - from);
    s->n[i] = 0;
    s->x[i] = NULL;
    if (!len) continue;
    char *buf = cli_array(len, 1, 1);
    if (fseeko(f, from, SEEK_SET) || fread(buf, 1, len, f) != len)
      cli_die(EXIT_RUNTIME, "data file %s: cannot read bytes %lld to %lld", path, (long long)from, (long long)to);
    FILE *m = fmemopen(buf, len, "r");
    if (!m) cli_die(EXIT_RUNTIME, "data file %s: out of memory opening a block of %zu bytes", path, len);
    size_t rows = 0, cols = 0;
    double *x = NULL;
    gfi_errinfo e;
    int st = gfi_table_read_stream(m, D, &rows, &cols, &x, &e);
    fclose(m);
    free(buf);
    if (st == GFI_EEMPTY) continue; /* comment lines only */
    if (st) {
      /* the file's own line number: the lines before this block, counted
       * now (an error's cost only) */
      size_t before = 0;
      if (fseeko(f, 0, SEEK_SET) == 0) {
        int c;
        for (off_t at = 0; at < from && (c = getc(f)) != EOF; at++) before += c == '\n';
      }
      if (e.line && e.column)
        cli_die(EXIT_RUNTIME, "data file %s:%zu:%zu: %s", path, before + e.line, e.column, e.msg);
      cli_die(EXIT_RUNTIME, "data file %s:%zu: %s", path, before + e.line, e.msg);
    }
    if (!D) D = cols;
    else if (cols != D)
      cli_die(EXIT_RUNTIME, "data file %s: the lines from byte %lld have %zu columns, earlier lines %zu", path,
              (long long)from, cols, D);
    s->n[i] = rows;
    s->x[i] = x;
  }
  s->D = D;
}

static void load_npy(FILE *f, const char *path, off_t size, size_t D, cli_slabs *s) {
  size_t rows, cols;
  int ndims;
  gfi_errinfo e;
  gfi_errinfo_clear(&e);
  int st = npy_read_header(f, D, &rows, &cols, &ndims, &e);
  if (st) all_die("data file %s: %s", path, e.msg[0] ? e.msg : gfi_strerror(st));
  off_t off = ftello(f);
  if ((uintmax_t)(size - off) / sizeof(double) / (cols ? cols : 1) != rows || (size - off) % sizeof(double) ||
      (cols && (uintmax_t)(size - off) / sizeof(double) % cols))
    all_die("data file %s: %lld bytes of values where the shape (%zu, %zu) needs %zu x %zu x 8", path,
            (long long)(size - off), rows, cols, rows, cols);
  if (!rows) all_die("data file %s: no data rows", path);
  s->D = cols;
  s->nblk = (rows + NPY_BLOCK_ROWS - 1) / NPY_BLOCK_ROWS;
  if (s->nblk > MAX_BLOCKS) s->nblk = MAX_BLOCKS;
  const size_t P = (size_t)cli_mpi_size(), r = (size_t)cli_mpi_rank();
  s->b0 = cut(s->nblk, r, P);
  s->b1 = cut(s->nblk, r + 1, P);
  size_t nb = s->b1 - s->b0;
  s->n = cli_array(nb ? nb : 1, 1, sizeof *s->n);
  s->x = cli_array(nb ? nb : 1, 1, sizeof *s->x);
  for (size_t b = s->b0; b < s->b1; b++) {
    size_t i = b - s->b0, r0 = cut(rows, b, s->nblk), r1 = cut(rows, b + 1, s->nblk), cnt = (r1 - r0) * cols;
    s->n[i] = r1 - r0;
    s->x[i] = cli_array(cnt ? cnt : 1, 1, sizeof(double));
    if (fseeko(f, off + (off_t)(r0 * cols * sizeof(double)), SEEK_SET) || fread(s->x[i], sizeof(double), cnt, f) != cnt)
      cli_die(EXIT_RUNTIME, "data file %s: cannot read rows %zu to %zu: %s", path, r0 + 1, r1,
              ferror(f) ? strerror(errno) : "truncated");
    npy_to_host(s->x[i], cnt);
    for (size_t q = 0; q < cnt; q++)
      if (!isfinite(s->x[i][q]))
        cli_die(EXIT_RUNTIME, "data file %s: row %zu, column %zu: NaN or infinite value", path, r0 + q / cols + 1,
                q % cols + 1);
  }
}

void cli_slabs_load(const char *path, size_t D, cli_slabs *s) {
  memset(s, 0, sizeof *s);
  FILE *f = fopen(path, "rb");
  if (!f) cli_die(EXIT_RUNTIME, "data file %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb)) cli_die(EXIT_RUNTIME, "data file %s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) cli_die(EXIT_RUNTIME, "data file %s: is a directory, not a file", path);
  s->npy = gfi_npy_sniff(path) == 1;
  if (s->npy) load_npy(f, path, sb.st_size, D, s);
  else load_text(f, path, sb.st_size, D, s);
  fclose(f);
  /* every rank's column count and the number of rows in all */
  double lo = s->D ? (double)s->D : INFINITY, hi = s->D ? (double)s->D : -INFINITY;
  if (cli_mpi_minmax(&lo, &hi, 1)) cli_die(EXIT_RUNTIME, "MPI: cannot combine the column counts");
  if (!isfinite(lo)) all_die("data file %s: no data rows (the file is empty or only comments)", path);
  if (lo != hi) all_die("data file %s: rows of %.0f and of %.0f columns", path, lo, hi);
  s->D = (size_t)lo;
  size_t N = 0;
  for (size_t b = s->b0; b < s->b1; b++) N += s->n[b - s->b0];
  if (cli_mpi_sum_size(&N, 1)) cli_die(EXIT_RUNTIME, "MPI: cannot count the data rows");
  if (!N) all_die("data file %s: no data rows", path);
  s->N = N;
  /* every block's first row in the whole file (for messages naming a row) */
  size_t rows[MAX_BLOCKS] = {0};
  for (size_t b = s->b0; b < s->b1; b++) rows[b] = s->n[b - s->b0];
  if (cli_mpi_sum_size(rows, s->nblk)) cli_die(EXIT_RUNTIME, "MPI: cannot count the data rows");
  s->row0 = cli_array(s->b1 > s->b0 ? s->b1 - s->b0 : 1, 1, sizeof *s->row0);
  size_t r0 = 0;
  for (size_t b = 0; b < s->b1; b++) {
    if (b >= s->b0) s->row0[b - s->b0] = r0;
    r0 += rows[b];
  }
}

void cli_slabs_free(cli_slabs *s) {
  for (size_t b = s->b0; b < s->b1 && s->x; b++) free(s->x[b - s->b0]);
  for (size_t b = s->b0; b < s->b1 && s->y; b++) free(s->y[b - s->b0]);
  free(s->x);
  free(s->y);
  free(s->n);
  free(s->row0);
  memset(s, 0, sizeof *s);
}

void cli_slabs_density(const cli_slabs *s, const gfi_kernel *k, const double *R, const gfi_opts *o, size_t M,
                       const double *x, const double *lo, const double *hi, const size_t *gn, double *p,
                       gfi_fast_info *info) {
  const int P = cli_mpi_size(), rank = cli_mpi_rank();
  size_t nb = s->b1 - s->b0;
  int got_info = 0;
  /* rank 0 folds its blocks (the first ones) into p as it goes; another rank
   * keeps its blocks' results and sends them once all are done */
  double *part = cli_array(rank ? (nb ? nb : 1) : 1, M, sizeof *part);
  if (rank == 0)
    for (size_t q = 0; q < M; q++) p[q] = 0;
  for (size_t b = s->b0; b < s->b1; b++) {
    size_t i = b - s->b0;
    double *pb = part + (rank ? i * M : 0);
    if (!s->n[i]) {
      memset(pb, 0, M * sizeof *pb);
    } else {
      cli_check_phase_rows("the data", s->row0[i], s->n[i], s->D, s->x[i], R);
      gfi_density_plan *plan = NULL;
      gfi_fast_info bi;
      int st = gfi_density_plan_fourier(&plan, k, s->n[i], s->D, s->x[i], NULL, R, o);
      cli_check_route(st, o, "building the estimator of a data block");
      st = lo ? gfi_density_eval_grid(plan, lo, hi, gn, pb, &bi) : gfi_density_eval_info(plan, M, x, pb, &bi);
      cli_check_route(st, o, "evaluating the estimator of a data block");
      gfi_density_destroy(plan);
      if (info && !got_info) *info = bi, got_info = 1; /* rank 0's first block with rows */
      /* the block's estimate weighs n_b / N in the whole */
      const double wb = (double)s->n[i] / (double)s->N;
      for (size_t q = 0; q < M; q++) pb[q] *= wb;
    }
    if (rank == 0) /* p = ((0 + block 0) + block 1) + ... in block order */
      for (size_t q = 0; q < M; q++) p[q] += pb[q];
  }
  if (rank != 0) {
    if (nb && cli_mpi_send(0, TAG_SLAB, part, nb * M * sizeof *part))
      cli_die(EXIT_RUNTIME, "MPI: cannot send the block sums to rank 0");
    free(part);
    return;
  }
  free(part);
  for (int r = 1; r < P; r++) {
    size_t rb0 = cut(s->nblk, (size_t)r, (size_t)P), rb1 = cut(s->nblk, (size_t)r + 1, (size_t)P);
    if (rb1 == rb0) continue;
    double *in = cli_array(rb1 - rb0, M, sizeof *in);
    if (cli_mpi_recv(r, TAG_SLAB, in, (rb1 - rb0) * M * sizeof *in))
      cli_die(EXIT_RUNTIME, "MPI: cannot receive the block sums of rank %d", r);
    for (size_t i = 0; i < rb1 - rb0; i++)
      for (size_t q = 0; q < M; q++) p[q] += in[i * M + q];
    free(in);
  }
}

void cli_slabs_split(cli_slabs *s, size_t D) {
  const size_t C = s->D;
  if (!D) D = C > 1 ? C - 1 : 1;
  if (C <= D)
    all_die("data file: rows of %zu numbers hold no response after --dim %zu inputs", C, D);
  const size_t V = C - D, nb = s->b1 - s->b0;
  s->y = cli_array(nb ? nb : 1, 1, sizeof *s->y);
  for (size_t i = 0; i < nb; i++) {
    size_t n = s->n[i];
    s->y[i] = NULL;
    if (!n) continue;
    double *x = cli_array(n, D, sizeof *x), *y = cli_array(n, V, sizeof *y);
    for (size_t r = 0; r < n; r++) {
      memcpy(x + r * D, s->x[i] + r * C, D * sizeof *x);
      memcpy(y + r * V, s->x[i] + r * C + D, V * sizeof *y);
    }
    free(s->x[i]);
    s->x[i] = x;
    s->y[i] = y;
  }
  s->D = D;
  s->V = V;
}

size_t cli_slabs_regress(const cli_slabs *s, const gfi_kernel *k, const double *R, const double *H, double denom_tol,
                         const gfi_opts *o, size_t M, const double *q, double *out, unsigned char *flags) {
  const int P = cli_mpi_size(), rank = cli_mpi_rank();
  const size_t W = NW_ACC(s->V), nb = s->b1 - s->b0;
  if (M > SIZE_MAX / W) cli_die(EXIT_RUNTIME, "%zu query points of %zu sums: too many", M, W);
  /* rank 0 gathers every block's accumulators (the common scale needs them all) */
  double *part = cli_array(rank ? (nb ? nb : 1) : s->nblk, M * W, sizeof *part);
  gfi_opts od = *o;
  od.method = GFI_METHOD_DIRECT;
  for (size_t b = s->b0; b < s->b1; b++) {
    size_t i = b - s->b0;
    double *pb = part + i * M * W; /* rank 0's blocks come first, b0 = 0 */
    if (!s->n[i]) {
      for (size_t r = 0; r < M; r++) {
        pb[r * W] = -INFINITY; /* nothing yet */
        for (size_t c = 1; c < W; c++) pb[r * W + c] = 0;
      }
      continue;
    }
    if (k) cli_check_phase_rows("the data", s->row0[i], s->n[i], s->D, s->x[i], R);
    gfi_nw_plan *plan = NULL;
    int st = k ? gfi_nw_plan_fourier(&plan, k, s->n[i], s->D, s->V, s->x[i], s->y[i], R, &od)
               : gfi_nw_plan_gauss(&plan, s->n[i], s->D, s->V, s->x[i], s->y[i], H, &od);
    cli_check(st, "building the estimator of a data block");
    cli_check(nw_block_sums(plan, M, q, pb), "evaluating the estimator of a data block");
    gfi_nw_destroy(plan);
  }
  if (rank != 0) {
    if (nb && cli_mpi_send(0, TAG_SLAB, part, nb * M * W * sizeof *part))
      cli_die(EXIT_RUNTIME, "MPI: cannot send the block sums to rank 0");
    free(part);
    return 0;
  }
  for (int r = 1; r < P; r++) {
    size_t rb0 = cut(s->nblk, (size_t)r, (size_t)P), rb1 = cut(s->nblk, (size_t)r + 1, (size_t)P);
    if (rb1 > rb0 && cli_mpi_recv(r, TAG_SLAB, part + rb0 * M * W, (rb1 - rb0) * M * W * sizeof *part))
      cli_die(EXIT_RUNTIME, "MPI: cannot receive the block sums of rank %d", r);
  }
  size_t nflag = 0;
  int st = nw_sums_finish(k != NULL, s->V, denom_tol, s->nblk, M, part, out, &nflag, flags);
  if (st && st != GFI_EDENOM) cli_check(st, "combining the blocks' sums");
  free(part);
  return nflag;
}
