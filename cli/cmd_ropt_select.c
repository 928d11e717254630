/* gfi ropt --data FILE --select lscv|loocv: the data-driven radius
 * (gfi/select.h), its criterion, and on request the scanned curve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_source.h"

int ropt_select(const char *data, const char *select, const char *range, int per_axis, int curve,
                int regress, size_t D, int dim_given, const char *phi, const gfi_opts *o, size_t nscan);

int ropt_select(const char *data, const char *select, const char *range, int per_axis, int curve,
                int regress, size_t D, int dim_given, const char *phi, const gfi_opts *o, size_t nscan) {
  if (!data) cli_usage("--data", "required with --select");
  if (!select) cli_usage("--select", "required with --data (lscv or loocv)");
  const char *want = regress ? "loocv" : "lscv";
  if (strcmp(select, "lscv") != 0 && strcmp(select, "loocv") != 0)
    cli_usage("--select", "unknown criterion '%s' (expected lscv or loocv)", select);
  if (strcmp(select, want) != 0)
    cli_usage("--select", "%s is for %s; %s", select, regress ? "densities" : "regression (--regress)",
              regress ? "use loocv with --regress" : "use lscv, or loocv with --regress");
  gfi_kernel k;
  cli_phi("--phi", phi, &k);
  gfi_select_opts so;
  gfi_select_default_opts(&so);
  so.base = *o;
  so.nscan = nscan;
  so.per_axis = per_axis;
  if (range) {
    size_t n;
    double *r = cli_list("--R-range", range, &n);
    if (n != 2) cli_usage("--R-range", "expected LO,HI, got %zu numbers", n);
    if (!(r[0] > 0) || !(r[1] > r[0]) || !isfinite(r[1]))
      cli_usage("--R-range", "expected 0 < LO < HI, got %g,%g", r[0], r[1]);
    so.R_lo = r[0];
    so.R_hi = r[1];
    free(r);
  }
  size_t N, cols;
  double *t = cli_read_table("data file", data, 0, &N, &cols);
  if (!dim_given) {
    D = regress ? cols - 1 : cols;
    cli_header_settled("dim", "%zu (from the columns of --data)", D);
  }
  if (regress ? cols <= D : cols != D)
    cli_die(EXIT_RUNTIME, "data file %s: %zu columns, expected %s%zu for --dim %zu", data, cols,
            regress ? "more than " : "", D, D);
  if (per_axis && D > 3) cli_usage("--per-axis", "needs D <= 3, got %zu", D);
  if (N < 2) cli_die(EXIT_RUNTIME, "data file %s: %zu rows, the criteria need at least 2", data, N);
  size_t V = regress ? cols - D : 0;
  double *x = cli_array(N, D, sizeof *x), *y = regress ? cli_array(N, V, sizeof *y) : NULL;
  for (size_t i = 0; i < N; i++) {
    memcpy(x + i * D, t + i * cols, D * sizeof *x);
    if (regress) memcpy(y + i * V, t + i * cols + D, V * sizeof *y);
  }
  free(t);
  double *cv = curve ? cli_array(so.nscan, 2, sizeof *cv) : NULL;
  gfi_select_result r;
  int st = regress ? gfi_select_loocv(&k, N, D, V, x, y, &so, &r, cv) : gfi_select_lscv(&k, N, D, x, &so, &r, cv);
  if (st == GFI_EDENOM)
    cli_die(EXIT_RUNTIME, "every leave-one-out denominator vanishes at every scanned radius");
  cli_check(st, regress ? "leave-one-out CV" : "LSCV");
  const char *cname = regress ? "cv" : "lscv";
  cli_header(stdout);
  cli_meta(stdout, "data", "%s (N = %zu, D = %zu%s)", data, N, D, regress ? ", with responses" : "");
  if (regress) cli_meta(stdout, "responses", "%zu", V);
  cli_meta(stdout, "kernel", "phi %s", phi);
  cli_meta(stdout, "criterion", "%s",
           regress ? "leave-one-out CV of Nadaraya-Watson, mean over rows of |y_i - m_{-i}(x_i)|^2"
                   : "LSCV(R) = int p_hat^2 - 2/(N(N-1)) sum_{i != k} K_R(x_i - x_k)");
  cli_meta(stdout, "scan", "%zu radii log-spaced on [%.17g, %.17g]%s, refined by Brent's method%s", r.nscan,
           r.R_lo, r.R_hi, range ? "" : " (automatic)", per_axis ? ", then per axis" : "");
  cli_meta(stdout, "route", "%s (last evaluation), bound %.3g on |%s - exact|",
           r.route == GFI_METHOD_FAST ? "fast" : "direct", r.bound, cname);
  cli_meta(stdout, "local-minima", "%zu on the scan%s", r.nlocal,
           r.at_edge ? "; the minimum is at an end of the range: widen --R-range" : "");
  fprintf(stdout, "# R_opt:");
  for (size_t j = 0; j < D; j++) fprintf(stdout, " %.17g", r.R[D > 3 ? 0 : j]);
  fprintf(stdout, " (%s = %.17g)\n", cname, r.value);
  if (curve) {
    fprintf(stdout, "# R %s\n", cname);
    gfi_table_write_rows(stdout, r.nscan, 2, cv);
  } else {
    size_t nc = 7 + (regress ? 1 : 0) + D, c = 0;
    double *row = cli_array(nc, 1, sizeof *row);
    row[c++] = (double)N;
    row[c++] = r.R[0];
    row[c++] = r.value;
    row[c++] = r.bound;
    row[c++] = (double)r.nlocal;
    row[c++] = r.at_edge;
    row[c++] = (double)r.evals;
    if (regress) row[c++] = (double)r.nflagged;
    for (size_t j = 0; j < D; j++) row[c++] = r.R[D > 3 ? 0 : j];
    fprintf(stdout, "# n R_opt %s bound nlocal at_edge evals%s", cname, regress ? " nflagged" : "");
    for (size_t j = 0; j < D; j++) fprintf(stdout, " R%zu", j + 1);
    fputc('\n', stdout);
    gfi_table_write_rows(stdout, 1, nc, row);
    free(row);
  }
  cli_finish_output(stdout, "standard output");
  free(cv);
  free(x);
  free(y);
  return 0;
}
