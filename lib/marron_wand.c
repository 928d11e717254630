/* The 15 normal-mixture test densities of Marron & Wand (1992), "Exact mean
 * integrated squared error", Ann. Statist. 20(2), 712-736, Table 1.
 *
 * One row per component, written from the paper's closed forms so that each
 * constant is the correctly rounded value of the exact fraction (the loop
 * index l of the paper's sums is spelled out in the comments). They agree
 * with data/marron_wand.tsv to within 3e-16; tests/test_models.c checks it. */
#include <stdio.h>

#include "gfi/model.h"
#include "model_internal.h"

typedef struct {
  int k;
  double w, mean, sd;
} mw_component;

static const mw_component mw_table[] = {
  /* 1 Gaussian: N(0, 1) */
  {1, 1.0, 0.0, 1.0},
  /* 2 Skewed unimodal: 1/5 N(0,1) + 1/5 N(1/2,(2/3)^2) + 3/5 N(13/12,(5/9)^2) */
  {2, 1.0 / 5.0, 0.0, 1.0},
  {2, 1.0 / 5.0, 1.0 / 2.0, 2.0 / 3.0},
  {2, 3.0 / 5.0, 13.0 / 12.0, 5.0 / 9.0},
  /* 3 Strongly skewed: sum_{l=0}^{7} 1/8 N(3((2/3)^l - 1), (2/3)^(2l)) */
  {3, 1.0 / 8.0, 0.0, 1.0},
  {3, 1.0 / 8.0, -1.0, 2.0 / 3.0},
  {3, 1.0 / 8.0, -5.0 / 3.0, 4.0 / 9.0},
  {3, 1.0 / 8.0, -19.0 / 9.0, 8.0 / 27.0},
  {3, 1.0 / 8.0, -65.0 / 27.0, 16.0 / 81.0},
  {3, 1.0 / 8.0, -211.0 / 81.0, 32.0 / 243.0},
  {3, 1.0 / 8.0, -665.0 / 243.0, 64.0 / 729.0},
  {3, 1.0 / 8.0, -2059.0 / 729.0, 128.0 / 2187.0},
  /* 4 Kurtotic unimodal: 2/3 N(0,1) + 1/3 N(0,(1/10)^2) */
  {4, 2.0 / 3.0, 0.0, 1.0},
  {4, 1.0 / 3.0, 0.0, 1.0 / 10.0},
  /* 5 Outlier: 1/10 N(0,1) + 9/10 N(0,(1/10)^2) */
  {5, 1.0 / 10.0, 0.0, 1.0},
  {5, 9.0 / 10.0, 0.0, 1.0 / 10.0},
  /* 6 Bimodal: 1/2 N(-1,(2/3)^2) + 1/2 N(1,(2/3)^2) */
  {6, 1.0 / 2.0, -1.0, 2.0 / 3.0},
  {6, 1.0 / 2.0, 1.0, 2.0 / 3.0},
  /* 7 Separated bimodal: 1/2 N(-3/2,(1/2)^2) + 1/2 N(3/2,(1/2)^2) */
  {7, 1.0 / 2.0, -3.0 / 2.0, 1.0 / 2.0},
  {7, 1.0 / 2.0, 3.0 / 2.0, 1.0 / 2.0},
  /* 8 Skewed bimodal: 3/4 N(0,1) + 1/4 N(3/2,(1/3)^2) */
  {8, 3.0 / 4.0, 0.0, 1.0},
  {8, 1.0 / 4.0, 3.0 / 2.0, 1.0 / 3.0},
  /* 9 Trimodal: 9/20 N(-6/5,(3/5)^2) + 9/20 N(6/5,(3/5)^2) + 1/10 N(0,(1/4)^2) */
  {9, 9.0 / 20.0, -6.0 / 5.0, 3.0 / 5.0},
  {9, 9.0 / 20.0, 6.0 / 5.0, 3.0 / 5.0},
  {9, 1.0 / 10.0, 0.0, 1.0 / 4.0},
  /* 10 Claw: 1/2 N(0,1) + sum_{l=0}^{4} 1/10 N(l/2 - 1,(1/10)^2) */
  {10, 1.0 / 2.0, 0.0, 1.0},
  {10, 1.0 / 10.0, -1.0, 1.0 / 10.0},
  {10, 1.0 / 10.0, -1.0 / 2.0, 1.0 / 10.0},
  {10, 1.0 / 10.0, 0.0, 1.0 / 10.0},
  {10, 1.0 / 10.0, 1.0 / 2.0, 1.0 / 10.0},
  {10, 1.0 / 10.0, 1.0, 1.0 / 10.0},
  /* 11 Double claw: 49/100 N(-1,(2/3)^2) + 49/100 N(1,(2/3)^2)
   *                 + sum_{l=0}^{6} 1/350 N((l-3)/2,(1/100)^2) */
  {11, 49.0 / 100.0, -1.0, 2.0 / 3.0},
  {11, 49.0 / 100.0, 1.0, 2.0 / 3.0},
  {11, 1.0 / 350.0, -3.0 / 2.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, -1.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, -1.0 / 2.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, 0.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, 1.0 / 2.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, 1.0, 1.0 / 100.0},
  {11, 1.0 / 350.0, 3.0 / 2.0, 1.0 / 100.0},
  /* 12 Asymmetric claw: 1/2 N(0,1)
   *                     + sum_{l=-2}^{2} 2^(1-l)/31 N(l + 1/2,(2^-l/10)^2) */
  {12, 1.0 / 2.0, 0.0, 1.0},
  {12, 8.0 / 31.0, -3.0 / 2.0, 4.0 / 10.0},
  {12, 4.0 / 31.0, -1.0 / 2.0, 2.0 / 10.0},
  {12, 2.0 / 31.0, 1.0 / 2.0, 1.0 / 10.0},
  {12, 1.0 / 31.0, 3.0 / 2.0, 1.0 / 20.0},
  {12, 1.0 / 62.0, 5.0 / 2.0, 1.0 / 40.0},
  /* 13 Asymmetric double claw: sum_{l=0}^{1} 46/100 N(2l-1,(2/3)^2)
   *     + sum_{l=1}^{3} 1/300 N(-l/2,(1/100)^2) + sum_{l=1}^{3} 7/300 N(l/2,(7/100)^2)
   *     (the narrow left claws listed from l = 3 down, as in the tsv) */
  {13, 46.0 / 100.0, -1.0, 2.0 / 3.0},
  {13, 46.0 / 100.0, 1.0, 2.0 / 3.0},
  {13, 1.0 / 300.0, -3.0 / 2.0, 1.0 / 100.0},
  {13, 1.0 / 300.0, -1.0, 1.0 / 100.0},
  {13, 1.0 / 300.0, -1.0 / 2.0, 1.0 / 100.0},
  {13, 7.0 / 300.0, 1.0 / 2.0, 7.0 / 100.0},
  {13, 7.0 / 300.0, 1.0, 7.0 / 100.0},
  {13, 7.0 / 300.0, 3.0 / 2.0, 7.0 / 100.0},
  /* 14 Smooth comb: sum_{l=0}^{5} 2^(5-l)/63 N((65 - 96 (1/2)^l)/21, (32/63)^2/2^(2l)) */
  {14, 32.0 / 63.0, -31.0 / 21.0, 32.0 / 63.0},
  {14, 16.0 / 63.0, 17.0 / 21.0, 16.0 / 63.0},
  {14, 8.0 / 63.0, 41.0 / 21.0, 8.0 / 63.0},
  {14, 4.0 / 63.0, 53.0 / 21.0, 4.0 / 63.0},
  {14, 2.0 / 63.0, 59.0 / 21.0, 2.0 / 63.0},
  {14, 1.0 / 63.0, 62.0 / 21.0, 1.0 / 63.0},
  /* 15 Discrete comb: sum_{l=0}^{2} 2/7 N((12l - 15)/7,(2/7)^2)
   *                   + sum_{l=8}^{10} 1/21 N(2l/7,(1/21)^2) */
  {15, 2.0 / 7.0, -15.0 / 7.0, 2.0 / 7.0},
  {15, 2.0 / 7.0, -3.0 / 7.0, 2.0 / 7.0},
  {15, 2.0 / 7.0, 9.0 / 7.0, 2.0 / 7.0},
  {15, 1.0 / 21.0, 16.0 / 7.0, 1.0 / 21.0},
  {15, 1.0 / 21.0, 18.0 / 7.0, 1.0 / 21.0},
  {15, 1.0 / 21.0, 20.0 / 7.0, 1.0 / 21.0},
};

enum { MW_ROWS = sizeof mw_table / sizeof mw_table[0], MW_MAX_K = 16 };

static const char *const mw_names[16] = {
  NULL, "gaussian", "skewed_unimodal", "strongly_skewed", "kurtotic_unimodal",
  "outlier", "bimodal", "separated_bimodal", "skewed_bimodal", "trimodal",
  "claw", "double_claw", "asymmetric_claw", "asymmetric_double_claw",
  "smooth_comb", "discrete_comb",
};

const char *gfi_marron_wand_name(int k) {
  return (k >= 1 && k <= 15) ? mw_names[k] : NULL;
}

int gfi_model_marron_wand(gfi_model **out, int k) {
  if (!out) return GFI_EINVAL;
  *out = NULL;
  if (k < 1 || k > 15) return GFI_EINVAL;
  double w[MW_MAX_K], mean[MW_MAX_K], var[MW_MAX_K];
  size_t K = 0;
  for (size_t r = 0; r < MW_ROWS; r++) {
    if (mw_table[r].k != k || K == MW_MAX_K) continue;
    w[K] = mw_table[r].w;
    mean[K] = mw_table[r].mean;
    var[K] = mw_table[r].sd * mw_table[r].sd;
    K++;
  }
  gfi_model *m;
  int st = gfi_model_mixture(&m, 1, K, w, mean, var);
  if (st) return st;
  char desc[64];
  snprintf(desc, sizeof desc, "marron_wand(%d,%s)", k, mw_names[k]);
  if ((st = gfi_model_set_description(m, desc))) {
    gfi_model_free(m);
    return st;
  }
  *out = m;
  return GFI_OK;
}
