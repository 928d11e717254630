/* Small statistics shared by every measurement: replications on RNG streams
 * (all cores, identical for any thread count), means with standard errors,
 * and weighted least-squares slopes for rate checks. */
#ifndef GFI_STATS_H
#define GFI_STATS_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "status.h"
#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One replication: replication k draws only from r, which is positioned at
 * RNG stream (seed, k); it writes nout numbers to out. Called concurrently
 * from several threads: it must not share mutable state (run any nested gfi
 * evaluation with nthreads = 1). Returns a gfi_status. */
typedef int (*gfi_rep_fn)(size_t k, gsl_rng *r, double *out, void *ctx);

/* Run replications k = 0..nreps-1 on opts->nthreads threads (opts->seed is
 * the seed; NULL = defaults) into out (nreps x nout, row k = replication k).
 * The result does not depend on the thread count. The first failing
 * replication's status is returned (others may not have run). */
GFI_EXPORT int gfi_replicate(size_t nreps, size_t nout, const gfi_opts *opts, gfi_rep_fn fn, void *ctx,
                  double *out);

/* Summary of n values x[0], x[stride], ...: mean, standard error of the
 * mean (sd / sqrt(n), 0 when n < 2) and the normal 95% interval. */
typedef struct gfi_summary {
  size_t n;
  double mean, sd, se, lo95, hi95;
} gfi_summary;
GFI_EXPORT int gfi_summarize(const double *x, size_t n, size_t stride, gfi_summary *s);

/* Weighted least squares y = a + b x with weights 1/sigma^2 (sigma may be
 * NULL: ordinary least squares), fitted on points [first, n). The slope's
 * standard error comes from the weights when sigma is given and from the
 * residual scatter otherwise (or the larger of the two when scale_by_chi2 is
 * set); the interval is a Student-t 95% interval on n - first - 2 degrees of
 * freedom. GFI_EEMPTY with fewer than 3 points. */
typedef struct gfi_linfit {
  size_t npoints;
  double intercept, slope;
  double slope_se, slope_lo95, slope_hi95;
  double intercept_se;
  double chi2_dof; /* weighted residual sum of squares / dof */
} gfi_linfit;
GFI_EXPORT int gfi_fit_line(const double *x, const double *y, const double *sigma, size_t first, size_t n,
                 int scale_by_chi2, gfi_linfit *fit);

#ifdef __cplusplus
}
#endif
#endif
