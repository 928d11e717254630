/* The density rate checks of FourierFormer's theorems (what `gfi rates`
 * prints), as a data.frame: gfi's experiments layer, libgfi_exp of a build
 * tree (experiments/gfi_exp/rate_checks.h). configure defines
 * GFI_R_HAVE_EXP when it finds that library; an installed libgfi has none,
 * and frates() then signals a gfi_eunsupported condition. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

#include <gfi/gfi.h>

void gfi_r_stop_ext(int st, const char *param, const char *msg);

#ifdef GFI_R_HAVE_EXP
#include "gfi_exp/rate_checks.h"

static const char *verdict_name(int v) {
  static const char *n[] = {"consistent", "faster-than-claimed", "slower-than-claimed", "baseline", "not-measured"};
  return v >= 0 && v < 5 ? n[v] : "unknown";
}

/* theorems, models: character or NULL; l1: integer or NULL; the numbers < 0: the size's value. */
SEXP C_density_rates(SEXP theorems, SEXP models, SEXP dim, SEXP l1, SEXP nums, SEXP mc, SEXP seed, SEXP slack,
                     SEXP full, SEXP threads) {
  gfi_exp_drates_params p;
  gfi_exp_drates_default(&p);
  p.full = Rf_asLogical(full) == TRUE;
  if (!Rf_isNull(theorems)) {
    if (LENGTH(theorems) > 3) gfi_r_stop_ext(GFI_EINVAL, "theorems", "at most 3 theorems");
    for (int i = 0; i < LENGTH(theorems); i++) {
      const gfi_exp_theorem *t = gfi_exp_theorem_find(CHAR(STRING_ELT(theorems, i)));
      if (!t || t->regression) gfi_r_stop_ext(GFI_EINVAL, "theorems", "unknown theorem (expected 1, 3a or 3b)");
      p.theorems[i] = t->id;
    }
    p.ntheorems = (size_t)LENGTH(theorems);
  }
  if (!Rf_isNull(l1)) {
    if (LENGTH(l1) > GFI_EXP_DRATES_MAXL) gfi_r_stop_ext(GFI_EINVAL, "l1", "at most 8 powers");
    for (int i = 0; i < LENGTH(l1); i++) p.l1[i] = INTEGER(l1)[i];
    p.nl1 = (size_t)LENGTH(l1);
  }
  if (!Rf_isNull(models)) {
    if (LENGTH(models) > GFI_EXP_DRATES_MAXMODELS) gfi_r_stop_ext(GFI_EINVAL, "models", "at most 16 models");
    for (int i = 0; i < LENGTH(models); i++) p.models[i] = CHAR(STRING_ELT(models, i));
    p.nmodels = (size_t)LENGTH(models);
  }
  p.D = (size_t)Rf_asInteger(dim);
  p.nmin = REAL(nums)[0];
  p.nmax = REAL(nums)[1];
  p.per_decade = REAL(nums)[2];
  p.fit_decades = REAL(nums)[3];
  p.mc_nmax = REAL(nums)[4];
  p.mc_reps = (long)Rf_asReal(mc);
  p.seed = (uint64_t)Rf_asReal(seed);
  p.slack = Rf_asReal(slack);
  char *argv[] = {(char *)"frates"};
  gfi_exp_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.program = "gfi::frates (R)";
  ctx.argc = 1;
  ctx.argv = argv;
  ctx.nthreads = Rf_asInteger(threads);
  gfi_exp_err e;
  gfi_exp_err_clear(&e);
  gfi_exp_rate_row *rows = NULL;
  size_t n = 0;
  int st = gfi_exp_density_rates(&p, &ctx, NULL, &rows, &n, &e);
  if (st) {
    char msg[1200];
    gfi_exp_rate_rows_free(rows);
    snprintf(msg, sizeof msg, "rate checks: %s", e.msg);
    const char *param = e.param[0] == '-' && e.param[1] == '-' ? e.param + 2 : e.param;
    /* the options' names as frates' arguments */
    if (!strcmp(param, "model")) param = "models";
    else if (!strcmp(param, "per-decade")) param = "per.decade";
    else if (!strcmp(param, "fit-decades")) param = "fit.decades";
    else if (!strcmp(param, "mc-nmax")) param = "mc.nmax";
    gfi_r_stop_ext(st, param, msg);
  }
  const char *nm[] = {"name", "setting", "D", "l", "smooth_class", "order", "N_min", "N_max", "n_fit",
                      "claimed", "classical", "observed", "lo95", "hi95", "claimed_R", "observed_R",
                      "mc_points", "mc_max_z", "verdict", "condition", ""};
  int ncol = 20;
  SEXP df = PROTECT(Rf_mkNamed(VECSXP, nm));
  for (int j = 0; j < ncol; j++) {
    int chr = j == 0 || j == 1 || j == 4 || j == 18 || j == 19;
    SET_VECTOR_ELT(df, j, Rf_allocVector(chr ? STRSXP : REALSXP, (R_xlen_t)n));
  }
  for (size_t i = 0; i < n; i++) {
    const gfi_exp_rate_row *r = &rows[i];
    SET_STRING_ELT(VECTOR_ELT(df, 0), i, Rf_mkChar(r->name));
    SET_STRING_ELT(VECTOR_ELT(df, 1), i, Rf_mkChar(r->setting));
    SET_STRING_ELT(VECTOR_ELT(df, 4), i, Rf_mkChar(r->cls == GFI_SUPERSMOOTH ? "supersmooth"
                                                   : r->cls == GFI_ORDINARY_SMOOTH ? "ordinary" : ""));
    SET_STRING_ELT(VECTOR_ELT(df, 18), i, Rf_mkChar(verdict_name((int)r->verdict)));
    SET_STRING_ELT(VECTOR_ELT(df, 19), i, Rf_mkChar(r->condition));
    double v[] = {0, 0, (double)r->D, r->l, 0, r->order, (double)r->N_min, (double)r->N_max, (double)r->n_fit,
                  r->claimed, r->classical, r->observed, r->lo95, r->hi95, r->claimed_R, r->observed_R,
                  (double)r->mc_points, r->mc_max_z};
    for (int j = 2; j < 18; j++)
      if (j != 4) REAL(VECTOR_ELT(df, j))[i] = v[j];
  }
  gfi_exp_rate_rows_free(rows);
  SEXP rn = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(rn)[0] = NA_INTEGER;
  INTEGER(rn)[1] = -(int)n;
  Rf_setAttrib(df, R_RowNamesSymbol, rn);
  Rf_setAttrib(df, R_ClassSymbol, Rf_mkString("data.frame"));
  UNPROTECT(2);
  return df;
}

SEXP C_have_rates(void) { return Rf_ScalarLogical(1); }

#else

SEXP C_density_rates(SEXP theorems, SEXP models, SEXP dim, SEXP l1, SEXP nums, SEXP mc, SEXP seed, SEXP slack,
                     SEXP full, SEXP threads) {
  (void)theorems, (void)models, (void)dim, (void)l1, (void)nums, (void)mc, (void)seed, (void)slack, (void)full,
      (void)threads;
  gfi_r_stop_ext(GFI_EUNSUPPORTED, "", "the rate checks need gfi's experiments library (libgfi_exp) of a build "
                 "tree: install the package with GFI_BUILD_DIR set to a gfi build folder");
  return R_NilValue;
}

SEXP C_have_rates(void) { return Rf_ScalarLogical(0); }

#endif
