/* Smoothness classes of truths and the C^2 property the rate theorems ask for. */
#include <math.h>
#include "gfi/model.h"

static int smooth1(const gfi_model *f, gfi_smooth_class *cls, double *order) {
  switch (gfi_model_get_kind(f)) {
  case GFI_MODEL_MIXTURE: *cls = GFI_SUPERSMOOTH; *order = 2; return GFI_OK;
  case GFI_MODEL_CAUCHY:
  case GFI_MODEL_STUDENT_T: *cls = GFI_SUPERSMOOTH; *order = 1; return GFI_OK;
  case GFI_MODEL_LAPLACE: *cls = GFI_ORDINARY_SMOOTH; *order = 2; return GFI_OK;
  default: return GFI_EUNSUPPORTED;
  }
}

int gfi_model_smoothness(const gfi_model *m, gfi_smooth_class *cls, double *order) {
  if (!m || !cls || !order) return GFI_EINVAL;
  if (gfi_model_get_kind(m) != GFI_MODEL_PRODUCT) return smooth1(m, cls, order);
  size_t D;
  const gfi_model *const *f;
  int st = gfi_model_product_factors(m, &D, &f);
  if (st) return st;
  gfi_smooth_class c = GFI_SUPERSMOOTH;
  double o = INFINITY, os = INFINITY;
  for (size_t j = 0; j < D; j++) {
    gfi_smooth_class cj;
    double oj;
    st = smooth1(f[j], &cj, &oj);
    if (st) return st;
    if (cj == GFI_ORDINARY_SMOOTH) {
      c = GFI_ORDINARY_SMOOTH;
      o = fmin(o, oj);
    } else {
      os = fmin(os, oj);
    }
  }
  *cls = c;
  *order = c == GFI_ORDINARY_SMOOTH ? o : os;
  return GFI_OK;
}

static int c2_1(const gfi_model *f) {
  switch (gfi_model_get_kind(f)) {
  case GFI_MODEL_MIXTURE:
  case GFI_MODEL_CAUCHY:
  case GFI_MODEL_STUDENT_T: return 1;
  default: return 0; /* Laplace: kink; uniform: jumps; Beta: not decided (C^2 only for a, b > 3) */
  }
}

int gfi_model_is_c2(const gfi_model *m) {
  if (!m) return 0;
  if (gfi_model_get_kind(m) != GFI_MODEL_PRODUCT) return c2_1(m);
  size_t D;
  const gfi_model *const *f;
  if (gfi_model_product_factors(m, &D, &f) != GFI_OK) return 0;
  for (size_t j = 0; j < D; j++)
    if (!gfi_model_is_c2(f[j])) return 0;
  return 1;
}
