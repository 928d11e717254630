/* Data-driven radii for the CLI (cli_select.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_select.h"

int cli_R_is_select(const char *Rs) {
  return Rs && (strcmp(Rs, "lscv") == 0 || strcmp(Rs, "loocv") == 0);
}

double *cli_select_radii(const char *Rs, const char *want, const gfi_kernel *k, size_t N, size_t D,
                         size_t V, const double *x, const double *y, const gfi_opts *o,
                         gfi_select_result *res) {
  if (strcmp(Rs, want) != 0)
    cli_usage("--R", "'%s' is not a criterion of this command (expected radii or %s)", Rs, want);
  /* LSCV: every band-limited family; LOO-CV (regression): the sinc families */
  if (gfi_kernel_check_band(k) != GFI_OK || (y && k->kind != GFI_PHI_POW && k->kind != GFI_PHI_POLY))
    cli_usage("--R", "%s needs phi = pow:L or poly:a1,..,ad%s", want, y ? "" : " or flattop:c");
  if (N < 2) cli_die(EXIT_RUNTIME, "--R %s: needs at least 2 data points, got %zu", want, N);
  gfi_select_opts so;
  gfi_select_default_opts(&so);
  so.base = *o;
  int st = y ? gfi_select_loocv(k, N, D, V, x, y, &so, res, NULL) : gfi_select_lscv(k, N, D, x, &so, res, NULL);
  cli_check(st, y ? "choosing the radius by leave-one-out CV" : "choosing the radius by LSCV");
  double *R = cli_array(D, 1, sizeof *R);
  for (size_t j = 0; j < D; j++) R[j] = res->R[D > 3 ? 0 : j];
  return R;
}

int cli_bw_is_select(const char *bw) {
  return bw && (!strcmp(bw, "ns") || !strcmp(bw, "lscv") || !strcmp(bw, "pi") || !strcmp(bw, "pi-diag"));
}

double *cli_select_bandwidth(const char *bw, size_t N, size_t D, const double *x, const double *w,
                             const gfi_opts *o, char *note, size_t nnote) {
  if (note && nnote) note[0] = 0;
  if (w) cli_usage("--bandwidth", "%s weighs the data points equally; not with --weights", bw);
  if (strcmp(bw, "ns") != 0 && D > 2)
    cli_usage("--bandwidth", "%s is for D <= 2 (D = %zu); use ns, scott or silverman", bw, D);
  if (N < 2) cli_die(EXIT_RUNTIME, "--bandwidth %s: needs at least 2 data points, got %zu", bw, N);
  double *H = cli_array(D, D, sizeof *H);
  int st;
  const char *what;
  if (!strcmp(bw, "ns")) {
    st = gfi_bw_normal_ref(N, D, x, H);
    what = "the normal-reference bandwidth";
  } else if (!strcmp(bw, "lscv")) {
    st = gfi_bw_lscv(N, D, x, o, H);
    what = "the LSCV bandwidth";
  } else {
    gfi_hpi_info in;
    int diag = strcmp(bw, "pi") != 0;
    st = diag ? gfi_bw_hpi_diag(N, D, x, o, H, &in) : gfi_bw_hpi(N, D, x, o, H, &in);
    what = diag ? "the diagonal plug-in bandwidth" : "the plug-in bandwidth";
    if (!st && D == 2 && note && nnote)
      snprintf(note, nnote, "%s, pilots g6 = %.6g, g4 = %.6g, functionals %s", bw, in.g6, in.g4,
               in.fast ? "by the empirical cf" : "by the pair sums");
    if (!st && D == 2 && note && nnote && in.fast) {
      size_t l = strlen(note);
      snprintf(note + l, nnote - l, " (error bound %.2g of the largest)", in.bound);
    }
  }
  cli_check(st, what);
  return H;
}

void cli_select_meta(FILE *f, const char *crit, const gfi_select_result *res, size_t D) {
  fprintf(f, "# R-select: %s, R =", crit);
  for (size_t j = 0; j < D; j++) fprintf(f, " %.17g", res->R[D > 3 ? 0 : j]);
  fprintf(f, ", %s = %.17g (bound %.3g, %s route), scan %zu radii on [%.6g, %.6g], %zu local minima%s",
          strcmp(crit, "loocv") == 0 ? "cv" : "lscv", res->value, res->bound,
          res->route == GFI_METHOD_FAST ? "fast" : "direct", res->nscan, res->R_lo, res->R_hi,
          res->nlocal, res->at_edge ? ", at the edge of the range" : "");
  if (strcmp(crit, "loocv") == 0) fprintf(f, ", %zu rows left out", res->nflagged);
  fputc('\n', f);
}
