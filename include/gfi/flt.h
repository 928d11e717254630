/* FLT: random-feature approximation of an RPE mask N = [f(r_i - r_j)]
 * (Choromanski, Li et al.; docs/theory.md section 5), its error measurements,
 * FLT attention (Algorithm 1) with FAVOR+ (gfi_favor_*, attention.h) and the exact RPE attention
 * (Definition 3.1), and RPE shapes recovered from g by an inverse FFT.
 *
 * Features. Draw xi_1..xi_r iid from p and set w_k = g(xi_k)/p(xi_k). Then
 *   complex: N_hat_ij = (1/r) sum_k w_k exp(2 pi i (r_i - r_j).xi_k) = N1 N2^T with
 *            N1[i,k] = sqrt(w_k/r) exp(2 pi i r_i.xi_k), N2[j,k] = sqrt(w_k/r) exp(-2 pi i r_j.xi_k)
 *            (complex square root: sqrt(w) = i sqrt(|w|) for w < 0); E N_hat = N (FLT Thm 4.1).
 *   real:    N_hat_ij = (1/r) sum_k w_k cos(2 pi (r_i - r_j).xi_k) = N1 N2^T with 2r real
 *            columns [cos, sin](2 pi r.xi_k) sqrt(|w_k|/r), the sign of w_k on N1;
 *            E N_hat = Re N (= N when f is real).
 * Both N_hat are functions of r_i - r_j only, so every error metric is
 * computed over the distinct differences of the positions with their
 * multiplicities (a line: 2L - 1 of them, a grid: (2n1-1)(2n2-1)) — exactly
 * the same numbers as over the L x L matrix (tests compare with N1 N2^T).
 *
 * Randomness: trial k of every measurement draws its features from RNG stream
 * (seed, k), r features in sequence (so the first r' < r features of trial k
 * are the features of trial k at r'); results are identical for any thread
 * count. */
#ifndef GFI_FLT_H
#define GFI_FLT_H

#include "export.h"
#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "status.h"
#include "opts.h"
#include "rpe.h"
#include "progress.h"
#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GFI_FLT_COMPLEX = 0, GFI_FLT_REAL = 1 } gfi_flt_features;

/* ---- positions and their difference set ---- */
typedef struct gfi_flt_positions gfi_flt_positions;

/* r_i = i, i = 0..L-1 (ell = 1). */
GFI_EXPORT int gfi_flt_positions_line(gfi_flt_positions **out, size_t L);
/* n1 x n2 integer grid (ell = 2), L = n1 n2, r = (a, b), row-major in a. */
GFI_EXPORT int gfi_flt_positions_grid(gfi_flt_positions **out, size_t n1, size_t n2);
/* Arbitrary points (L x ell, copied), e.g. a 3-D point cloud: L(L-1)/2 + 1 differences. */
GFI_EXPORT int gfi_flt_positions_points(gfi_flt_positions **out, size_t L, size_t ell, const double *pos);
GFI_EXPORT void gfi_flt_positions_free(gfi_flt_positions *p);
GFI_EXPORT size_t gfi_flt_positions_L(const gfi_flt_positions *p);
GFI_EXPORT size_t gfi_flt_positions_ell(const gfi_flt_positions *p);
/* The positions themselves (L x ell, owned by the object). */
GFI_EXPORT const double *gfi_flt_positions_coords(const gfi_flt_positions *p);
/* Number of distinct differences d (one of each pair d, -d). */
GFI_EXPORT size_t gfi_flt_positions_ndiff(const gfi_flt_positions *p);
/* Difference k (ell numbers) and its multiplicity among the L^2 pairs. */
GFI_EXPORT const double *gfi_flt_positions_diff(const gfi_flt_positions *p, size_t k, double *mult);

/* ---- features ---- */

/* Draw r frequencies (r x ell) from p and their weights w_k = g/p (computed
 * as sign(g) exp(log|g| - log p), no 0/0). */
GFI_EXPORT int gfi_flt_draw(const gfi_rpe *rpe, const gfi_proposal *p, gsl_rng *rng, size_t r, double *xi, double *w);

/* The factors for L positions (L x ell). Complex: N1, N2 are L x r complex
 * numbers stored interleaved (re, im), 2 L r doubles each. Real: L x 2r. */
GFI_EXPORT int gfi_flt_factors(gfi_flt_features kind, size_t L, size_t ell, const double *pos, size_t r,
                    const double *xi, const double *w, double *N1, double *N2);

/* Exact mask N (L x L, real and imaginary parts; im may be NULL). */
GFI_EXPORT int gfi_flt_mask(const gfi_rpe *rpe, size_t L, size_t ell, const double *pos, double *Nre, double *Nim);

/* ---- errors ---- */
typedef struct gfi_flt_err {
  double max_abs;  /* max_ij |N_hat - N| (complex modulus; real features: against Re N) */
  double max_re;   /* max_ij |Re N_hat - Re N| */
  double frob;     /* ||N_hat - N||_F over all L^2 entries */
  double rel;      /* frob / ||N||_F */
} gfi_flt_err;

#define GFI_FLT_NMETRICS 4

/* Options of the trial measurements. */
typedef struct gfi_flt_opts {
  gfi_opts base;          /* nthreads, seed */
  gfi_flt_features features;
  gfi_progress *progress; /* NULL: none; counts finished trials */
} gfi_flt_opts;
GFI_EXPORT void gfi_flt_default_opts(gfi_flt_opts *o);

/* ntrials trials of r_max = rs[nr-1] features each; trial t reports the
 * metrics of its first rs[i] features for every i (rs strictly increasing).
 * out: ntrials x nr x GFI_FLT_NMETRICS doubles, in gfi_flt_err field order. */
GFI_EXPORT int gfi_flt_error_trials(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *pos,
                         size_t nr, const size_t *rs, size_t ntrials, const gfi_flt_opts *o, double *out);

/* Per-difference moments over ntrials draws of r features: mean of N_hat
 * (mean_re, mean_im: ndiff each; mean_im may be NULL), the per-entry variance
 * E|N_hat - E N_hat|^2 (var: ndiff; unbiased sample variance), and the
 * exact f at each difference (f_re, f_im: ndiff, may be NULL). */
GFI_EXPORT int gfi_flt_moments(const gfi_rpe *rpe, const gfi_proposal *p, const gfi_flt_positions *pos, size_t r,
                    size_t ntrials, const gfi_flt_opts *o, double *mean_re, double *mean_im, double *var,
                    double *f_re, double *f_im);

/* Theorem 4.2's feature count r = 4 c^2 / eps^2 log(4 L^2 / delta) (INFINITY when c is). */
GFI_EXPORT double gfi_flt_thm42_r(double c, double eps, double delta, size_t L);

/* Sample complexity from a ladder of trials: err[t * nr + i] is the max-norm
 * error of trial t with its first rs[i] features. Returns the smallest ladder
 * index i such that the fraction of trials with error <= eps is >= 1 - delta
 * at i and at every larger index (so noise cannot end the search early), or
 * nr when the ladder never gets there; *phat (may be NULL) gets the success
 * fraction at the returned index. */
GFI_EXPORT size_t gfi_flt_rstar(const double *err, size_t ntrials, size_t nr, double eps, double delta, double *phat);

/* ---- attention ---- */

/* FLT attention (Algorithm 1): Q_hat = [N1, Q d^-1/4], K_hat = [N2, K d^-1/4]
 * with the real factors of r features from p (drawn from rng), then FAVOR+
 * with m features (orthogonal or iid, drawn from rng after the xi).
 * Approximates exp(N + Q K^T / sqrt(d)) attention with N real (Re f). */
GFI_EXPORT int gfi_flt_attention(const gfi_rpe *rpe, const gfi_proposal *p, size_t L, size_t ell, const double *pos,
                      size_t d, const double *Q, const double *K, size_t dv, const double *V, size_t r,
                      size_t m, int orthogonal, gsl_rng *rng, int nthreads, double *out, size_t *bytes);

/* Exact RPE attention (FLT Definition 3.1): D^-1 A V with
 * A = exp(Re N + Q K^T / sqrt(d)); rpe NULL gives plain softmax attention.
 * materialise = 1 forms the L x L matrix A (the usual implementation, O(L^2)
 * memory); 0 streams rows (O(L) memory per thread). nthreads as gfi_opts. */
GFI_EXPORT int gfi_rpe_attention_exact(const gfi_rpe *rpe, size_t L, size_t ell, const double *pos, size_t d,
                            const double *Q, const double *K, size_t dv, const double *V, int materialise,
                            int nthreads, double *out, size_t *bytes);

/* ---- shapes: f from g by an inverse FFT ---- */

/* f on the grid x_j = (j - n/2) dx per axis (n a multiple of 4, ell = 1..3):
 * f(x) ~ sum_m g(xi_m) exp(2 pi i x.xi_m) dxi^ell with xi_m = (m - n/2) dxi,
 * dxi = 1/(n dx), by FFTW. x gets the n axis coordinates; fre, fim n^ell
 * values (row-major, last axis fastest). */
GFI_EXPORT int gfi_rpe_invert_fft(const gfi_rpe *rpe, size_t n, double dx, double *x, double *fre, double *fim);

#ifdef __cplusplus
}
#endif
#endif
