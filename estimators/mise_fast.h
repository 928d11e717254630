/* The empirical cf at the Plancherel nodes by a type-3 NUFFT, and the
 * streamed Monte-Carlo MISE (internal, not installed).
 *
 * Streaming scheme: replication k's N points are the first N draws of RNG
 * stream (seed, k), exactly as gfi_mise_mc's direct route draws them, taken
 * in chunks of PL_CHUNK points (each chunk in sampler calls of at most
 * opts->block points; the samplers keep no state outside the generator, so
 * the points do not depend on how they are split). Pass 1 finds every
 * replication's extent; one node rule (ise_pl_axes on the union's extent)
 * then serves every replication and the pooled sample, whose empirical cf is
 * the mean of the replications' at the same nodes. Pass 2 redraws the same
 * chunks and adds them to the empirical cf: spread by nufft3_add (fast) or by
 * direct sums (ise_pl_ecf_accum). The chunk boundaries depend on N only, so
 * the bits depend neither on opts->block nor on the thread count. */
#ifndef GFI_MISE_FAST_H
#define GFI_MISE_FAST_H

#include "ise_rule.h"

/* Points per streamed chunk (a multiple of PL_PBLOCK). */
#define PL_CHUNK ((size_t)65536)
/* Largest node rule of the streamed route. */
#define ISE_STREAM_MAX_NODES ((size_t)1 << 24)
/* Memory of the streamed MC MISE's replication workers: about
 * MC_NODE_BYTES per node and worker (measured: 2.1 GB for two workers at
 * 1e7 nodes, of which 0.5 GB shared), at most MC_WORKERS_BYTES for all
 * workers together unless one alone needs more. */
#define MC_NODE_BYTES ((size_t)96)
#define MC_WORKERS_BYTES ((size_t)1 << 30)
/* Monte-Carlo MISE under AUTO without the pooled parts: replications of at
 * most this many coordinates (N D) get rules of their own, their points in
 * memory (16 MB a thread); larger ones are streamed on one shared rule. */
#define MC_PER_REP_MAX_COORDS ((size_t)1 << 21)

/* The NUFFT tolerance for a bound tol on the empirical cf's error at each
 * node (GFI_FAST_TOL_DEFAULT when tol <= 0, as every client): bl_ntol(tol, 1, 1). ise_pl_engine
 * and ise_pl_ecf_nufft take the caller's tol and apply it themselves;
 * ise_pl_err_bound takes the NUFFT tolerance. */
double ise_fast_tol(double tol);

/* The engine for N points with half-widths xhalf[D] on the rule's nodes,
 * decided by bl_decide from the two routes' costs (direct_ok 0: the direct
 * sums exceed the caller's cap). GFI_ERANGE / GFI_EUNSUPPORTED as bl_decide. */
int ise_pl_engine(gfi_method asked, const ise_pl_rule *r, const axis_nodes *ax, double N, const double *xhalf,
                  double tol, int direct_ok, gfi_method *engine);

/* The tensor nodes as points (K x D, the order of ise_pl_row), malloc'ed. */
double *ise_pl_targets(const ise_pl_rule *r, const axis_nodes *ax, size_t *K);

/* As ise_pl_ecf_accum (adds the raw sums) by a type-3 NUFFT, the caller's
 * tol mapped by ise_fast_tol (each raw sum within tol N / 2). */
int ise_pl_ecf_nufft(const ise_pl_rule *r, const axis_nodes *ax, size_t N, const double *x,
                     double tol, int nt, double *pr, double *pim);

/* Bound on |ISE - ISE with the exact empirical cf| for transforms at NUFFT
 * tolerance ntol (a cf error <= BL_NUFFT_SAFETY ntol at each node), given
 * sum W K^2 and the node sum s (not scaled). */
double ise_pl_err_bound(const ise_pl_rule *r, double ntol, double swk2, double s);

/* Splitting a Monte-Carlo MISE's replications over cooperating processes
 * (the gfi program fills this in from its MPI layer; the library itself
 * does no communication). Replication k belongs to process k % size; every
 * process runs the same call with the same arguments. Process 0 receives
 * each replication's ISE (and, for the pooled parts, its raw empirical-cf
 * sums) in replication order and folds them exactly as the serial loop
 * does, so its result is the serial result to the bit for any size and any
 * thread count. The other processes return GFI_OK with res->nreps = 0.
 *   minmax: lo[i] = min, hi[i] = max over the processes, in place (n each);
 *   send:   n doubles to process 0 (in the order they are made);
 *   recv:   n doubles from process `from` (on process 0, in replication order).
 * Each returns 0 or a nonzero error (reported as GFI_EINVAL). */
typedef struct mise_split {
  int rank, size;
  void *ctx;
  int (*minmax)(void *ctx, double *lo, double *hi, size_t n);
  int (*send)(void *ctx, const double *buf, size_t n);
  int (*recv)(void *ctx, int from, double *buf, size_t n);
} mise_split;

/* gfi_mise_mc with its replications split as above (split NULL: all here). */
int mise_mc_split(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                  const gfi_mise_opts *opts, const mise_split *split, gfi_mise_result *res,
                  double *ise_out);

/* The Monte-Carlo MISE by the streamed route (see above), opts->method AUTO
 * or FAST, nt threads, replications split by sp (NULL: all here).
 * GFI_EUNSUPPORTED when the rule would exceed ISE_STREAM_MAX_NODES nodes
 * (heavy tails; the same answer on every process). */
int mise_mc_stream(const gfi_model *m, const gfi_kernel *k, size_t N, const double *R, size_t nreps,
                   const gfi_mise_opts *o, int nt, const mise_split *sp, gfi_mise_result *res,
                   double *ise_out);

#endif
