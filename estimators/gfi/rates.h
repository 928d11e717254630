/* Smoothness of truth models, the hypotheses of FourierFormer's rate
 * theorems (docs/theory.md section 4): supersmooth or ordinary smooth of an
 * order (Def. 3), and twice continuous differentiability. The theorems
 * themselves, their claimed rates and the rate checks are experiment code
 * (experiments/gfi_exp/theorems.h). */
#ifndef GFI_RATES_H
#define GFI_RATES_H

#include <stddef.h>
#include "status.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GFI_SUPERSMOOTH = 1, GFI_ORDINARY_SMOOTH = 2 } gfi_smooth_class;

/* Smoothness of a truth (FourierFormer Def. 3): normal mixtures are
 * supersmooth with alpha = 2, Cauchy and Student-t supersmooth with alpha = 1
 * (|psi| ~ exp(-c|t|)), Laplace ordinary smooth with beta = 2. Products take
 * the weakest factor. GFI_EUNSUPPORTED for other kinds. */
int gfi_model_smoothness(const gfi_model *m, gfi_smooth_class *cls, double *order);

/* 1 when the truth's density has two continuous derivatives on R^D
 * (Theorem 1's hypothesis): normal mixtures, Cauchy, Student-t; not Laplace
 * (a kink) or uniform (jumps); Beta is reported as not C^2 (it is only for
 * a, b > 3, and the exact MISE does not cover Beta truths); products when
 * every factor is. */
int gfi_model_is_c2(const gfi_model *m);

#ifdef __cplusplus
}
#endif
#endif
