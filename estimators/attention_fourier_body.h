/* The Fourier attention engine, once for both real types: included by
 * attention_fourier.c (float64) and attention_fourier32.c (float32), as
 * FFTW and GSL instantiate their templates. What the two engines compute and
 * how exactly is said at the top of each file; this body holds what they
 * share: the tasks (tables, forward rows, backward key chunks, the reduction
 * of the chunk partials), the scaled products (mantissa and binary exponent,
 * the row's common factor kept current online) and the gradient block
 * (prefix and suffix products).
 *
 * The including file defines, before the #include:
 *   AF_REAL, AF_UINT      the pair loop's real type and its bit pattern type;
 *                         r2u, u2r the bit casts between them
 *   AF_EXP_BITS, AF_SIGN_FRAC, AF_ONE_BITS   exponent field, sign + fraction
 *                         and the bits of 1.0 (for mant)
 *   AF_FABS               |x| of AF_REAL
 *   AF_SHIFT              1: factors may be held scaled by 2^AF_TSHIFT with
 *                         the shift per axis in t (float32's tiny factors)
 *   AF_WCUT               l (e - E) below this gives weight 0
 *   AF_NTAB, AF_NQ        tables per side (D x Lp each per head); reals per
 *                         axis of a query row in the forward
 *   FB, BB, CHUNK, ROW_TILE, ZEXP   block sizes and the zero exponent
 *   AF_TASK               attribute of the pair-loop tasks (GFI_CLONES or empty)
 *   AF_BWD_BLOCK          1: every backward block (D a multiple of CHUNK)
 *                         goes to the including file's bwd_block (the
 *                         factors, grad_block and the lane sums in one; a
 *                         block of fewer than BB keys of the row, or with
 *                         keys masked, with a lane mask: 0 for those lanes,
 *                         whose factors it multiplies by 0 as the generic
 *                         path does;
 *                         needs AF_LANE_SUMS; its dK terms go to a per-lane
 *                         AF_REAL sum over up to DK_ROWS query rows, then
 *                         into double); 0 or undefined: no such path
 *   AF_COEF_T             1: the backward holds its chunk's values V
 *                         transposed (AF_REAL, Dv x tab_stride(CL)) and a row's
 *                         dH in double, and forms a block's coefficients
 *                         dH_i . v_j as BB sums in double over c in order
 *                         (the keys in vector lanes, no horizontal sum);
 *                         0 or undefined: one dot(dH_i, v_j) per key
 *   AF_LANE_SUMS          1: the backward sums a row's dq and dR terms per lane
 *                         over up to LANE_BLOCKS blocks (then in double);
 *                         0: per block (a horizontal sum per block and axis)
 *   AF_Q, AF_K, AF_V, AF_RAD (J)    the job's inputs and radii in AF_REAL
 * and these static functions:
 *   expo(x), pow2(k)      binary exponent of x; 2^k (clamped)
 *   scaled(m, k, wcut)    a weight's base m 2^k (0 below the cut)
 *   rescale(l, E, emax)   the running sums' factor 2^(l (E - emax))
 *   cut2(k)               2^k of a gradient scale (0 below the cut)
 *   dot(a, b, n)          sum of a_c b_c in double
 *   fill_head(X, rs, L, Lp, D, Rd, tab, n)   the tables of one head (table
 *                         t at tab + t n, axis d at d Lp)
 *   query_row(Q, D, Rd, qrow)                a query row's AF_NQ D values
 *   fwd_axis(kt, n, rd, q, nb, m, e)         forward factors of one axis:
 *                         kt the keys' table 0 at the block, n the table
 *                         step, q the row's AF_NQ values of the axis
 *   bwd_axis(qt, nq, kt, nk, rd, nb, s, ds, u, t)   backward factors and
 *                         derivatives of one axis (qt: the query's entry) */

/* x = mant(x) 2^expo(x), |mant| in [1, 2); 0 (and subnormals, which never
 * occur here) give mant 0. Bit operations only, so that the loops
 * vectorise. */
static inline AF_REAL mant(AF_REAL x) {
  AF_UINT b = r2u(x);
  AF_UINT keep = (AF_UINT)0 - (AF_UINT)((b & AF_EXP_BITS) != 0);
  return u2r(((b & AF_SIGN_FRAC) | AF_ONE_BITS) & keep);
}
/* t^l for 0 <= l <= 15 from the binary digits of l: no branch on l. */
static inline AF_REAL ipow(AF_REAL t, int l) {
  AF_REAL t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  AF_REAL a = (l & 1) ? t : (AF_REAL)1, b = (l & 2) ? t2 : (AF_REAL)1;
  AF_REAL c = (l & 4) ? t4 : (AF_REAL)1, d = (l & 8) ? t8 : (AF_REAL)1;
  return (a * b) * (c * d);
}

/* A table's row stride (the step between axes, Lp): n rounded up to whole
 * 64-byte lines, an odd number of them, so that the D rows a block of keys
 * (or a query) is read from fall in different cache sets. At n = 1024
 * floats the step was 4 KB: the 64 axes of a block in one set of the
 * 8-way L1, each read a miss (the float32 backward ran 1.2x slower:
 * docs/attention.md). */
static inline size_t tab_stride(size_t n) {
  const size_t line = 64 / sizeof(AF_REAL);
  n = (n + line - 1) / line * line;
  return (n / line) % 2 ? n : n + line;
}

typedef struct fctx {
  const attn_fjob *J;
  size_t Lqp, Lkp, ntq, nchunk, chunklen;
  /* table t of head bh, axis d: tab + t n + (bh D + d) Lp, Lp = Lqp or Lkp */
  AF_REAL *qtab, *ktab;
  size_t nq, nk;
  const AF_REAL *dH;
  const double *stat, *P, *invS;
  AF_REAL *Hout, *dQ, *dK, *dV;
  double *statout, *ratio, *part, *dRrow;
} fctx;

ATTN_DEFINE_MASK_LANES(mask_lanes, AF_REAL)
ATTN_DEFINE_DROP_LANES(drop_lanes, AF_REAL)

/* Table task t: keys of head t (t < BH), else queries of head t - BH. */
static int fill_task(void *vc, size_t t, void *ws) {
  (void)ws;
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D;
  int keys = t < BH;
  size_t bh = keys ? t : t - BH, L = keys ? J->Lk : J->Lq, Lp = keys ? f->Lkp : f->Lqp;
  const size_t *xs = keys ? J->ks : J->qs;
  const AF_REAL *X = (keys ? AF_K(J) : AF_Q(J)) + attn_fjob_xoff(J, xs, bh);
  AF_REAL *tab = (keys ? f->ktab : f->qtab) + bh * D * Lp;
  fill_head(X, xs[2], L, Lp, D, J->Rd + (bh % J->H) * D, tab, keys ? f->nk : f->nq);
  return GFI_OK;
}

/* H row, saved statistics and ratio of a finished row (see attn_fjob_forward). */
static void finish_row(const attn_fjob *J, size_t nvis, double E, double S, double A, const double *N,
                       AF_REAL *h, double *st, double *ratio) {
  const size_t Dv = J->Dv;
  double inv = 0;
  int k = attn_fjob_row_stats(J, nvis, E, S, A, st, ratio, &inv);
  for (size_t c = 0; c < Dv; c++)
    h[c] = k == 2 ? (AF_REAL)(N[c] * inv) : k == 0 && J->empty_zero ? (AF_REAL)0 : (AF_REAL)NAN;
}

/* Forward of a tile of query rows; ws: Dv doubles (the numerator), then
 * AF_NQ D + 4 FB reals (query row, mantissas, exponents, weights, mask). */
AF_TASK static int fwd_task(void *vc, size_t t, void *vws) {
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t D = J->D, Dv = J->Dv, Lq = J->Lq;
  const int l = J->l;
  const AF_REAL wcut = AF_WCUT / (AF_REAL)l;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  const size_t Lp = f->Lkp, n = f->nk;
  const AF_REAL *V = AF_V(J) + attn_fjob_xoff(J, J->vs, bh), *R = AF_RAD(J) + (bh % J->H) * D;
  const double *Rd = J->Rd + (bh % J->H) * D;
  const AF_REAL *kt = f->ktab + bh * D * Lp;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  double *N = vws;
  AF_REAL *qrow = (AF_REAL *)(N + Dv), *m = qrow + AF_NQ * D, *e = m + FB, *w = e + FB, *mk = w + FB;
  for (size_t i = i0; i < i1; i++) {
    query_row(AF_Q(J) + attn_fjob_xoff(J, J->qs, bh) + i * J->qs[2], D, Rd, qrow);
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    for (size_t c = 0; c < Dv; c++) N[c] = 0;
    double E = -INFINITY, S = 0, A = 0;
    size_t nvis = 0;
    const size_t jend = attn_fjob_key_end(J, i);
    for (size_t j0 = 0; j0 < jend; j0 += FB) {
      const size_t nb = jend - j0 < FB ? jend - j0 : FB;
      size_t nv = nb;
      if (kp || mr) {
        nv = mask_lanes(kp, mr, j0, nb, mk);
        if (nv == 0) continue;
      }
      nvis += nv;
      for (size_t b = 0; b < FB; b++) {
        m[b] = 1;
        e[b] = 0;
      }
      for (size_t d = 0; d < D; d++) {
        fwd_axis(kt + d * Lp + j0, n, R[d], qrow + AF_NQ * d, nb, m, e);
        if ((d + 1) % CHUNK == 0 || d + 1 == D) {
#pragma omp simd
          for (size_t b = 0; b < nb; b++) {
            e[b] += expo(m[b]);
            m[b] = mant(m[b]);
          }
        }
      }
      if (nv < nb)
        for (size_t b = 0; b < nb; b++) m[b] *= mk[b];
      AF_REAL emax = ZEXP;
      for (size_t b = 0; b < nb; b++) {
        e[b] = m[b] == 0 ? ZEXP : e[b];
        emax = e[b] > emax ? e[b] : emax;
      }
      if ((double)emax > E) {
        double sc = rescale(l, E, emax); /* 0 on the first block (E = -inf) */
        S *= sc;
        A *= sc;
        for (size_t c = 0; c < Dv; c++) N[c] *= sc;
        E = emax;
      }
      const AF_REAL Er = (AF_REAL)E;
      double bs = 0, ba = 0;
#pragma omp simd reduction(+ : bs, ba)
      for (size_t b = 0; b < nb; b++) {
        AF_REAL tt = ipow(scaled(m[b], e[b] - Er, wcut), l);
        w[b] = tt;
        bs += (double)tt;
        ba += (double)AF_FABS(tt);
      }
      S += bs;
      A += ba;
      if (J->drop_thr) { /* dropout: the numerator only (the weights are normalised without it) */
        drop_lanes(J, bh, i, j0, nb, mk);
        for (size_t b = 0; b < nb; b++) w[b] *= mk[b];
      }
      for (size_t b = 0; b < nb; b++) {
        const double wb = w[b];
        const AF_REAL *restrict v = V + (j0 + b) * J->vs[2];
        if (wb == 0) continue;
#pragma omp simd
        for (size_t c = 0; c < Dv; c++) N[c] += wb * (double)v[c];
      }
    }
    const size_t row = bh * Lq + i;
    finish_row(J, nvis, E, S, A, N, f->Hout + attn_fjob_qrow(J, row) * Dv, f->statout + 2 * row, f->ratio + row);
  }
  return GFI_OK;
}

static int engine_forward(const attn_fjob *J, AF_REAL *Hout, double *stat, double *ratio) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lkp = attn_round8(J->Lk);
  AF_REAL *tab = gfi_malloc4((size_t)AF_NTAB * BH, D, Lkp, sizeof *tab);
  if (!tab) return GFI_ENOMEM;
  fctx f = {.J = J, .Lkp = Lkp, .ntq = (J->Lq + ROW_TILE - 1) / ROW_TILE, .ktab = tab, .nk = BH * D * Lkp,
            .Hout = Hout, .statout = stat, .ratio = ratio};
  par_spec sp0 = {BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  par_spec sp = {BH * f.ntq, J->nthreads, Dv * sizeof(double) + (AF_NQ * D + 4 * FB) * sizeof(AF_REAL), 1, NULL,
                 NULL};
  if (!st) st = par_run(&sp, fwd_task, &f);
  free(tab);
  return st;
}

/* --------------------------------------------------------------- backward */

/* Per-block gradient workspace, each D x BB: s, s', u (= R_d (q - k)), the
 * prefix products that are overwritten by the gradients G, and (AF_SHIFT) t,
 * the shift of factor d; pe holds the prefix exponent per chunk of axes. */
typedef struct {
  AF_REAL *s, *ds, *u, *G, *t, *pe;
  AF_REAL run[BB], rexp[BB], lp[BB], sc[BB], sc2[BB], tsum[BB];
} gblock;

/* From s, s' (and the shifts t) of nb lanes compute G[d][b] = dw~_b/du_d in
 * the row's scale 2^(-l Eb) and the scaled weights wt[b]: w~ = (prod_d s_d
 * 2^-E)^l, dw~/du_d = l (s_d y_d)^(l-1) s'_d y_d, y_d = prod_{e != d} s_e 2^-E
 * from prefix and suffix products. s_d y_d is the full product for every d,
 * so l (s_d y_d)^(l-1) is one number per lane (0 for l >= 2 when some factor
 * is 0, as then every dw~/du_d is; 1 for l = 1). */
static inline void grad_block(size_t D, int l, size_t nb, AF_REAL Eb, gblock *g, AF_REAL *wt) {
  AF_REAL *restrict run = g->run, *restrict rexp = g->rexp;
  const AF_REAL wcut = AF_WCUT / (AF_REAL)l;
#if AF_SHIFT
  AF_REAL *restrict tsum = g->tsum;
#endif
  for (size_t b = 0; b < BB; b++) {
    run[b] = 1;
    rexp[b] = 0;
#if AF_SHIFT
    tsum[b] = 0;
#endif
  }
  /* prefix: G[d] = prod_{e<d} s_e relative to 2^pe[d / CHUNK] */
  for (size_t d = 0; d < D; d++) {
    const AF_REAL *restrict s = g->s + d * BB;
#if AF_SHIFT
    const AF_REAL *restrict t = g->t + d * BB;
#endif
    AF_REAL *restrict pm = g->G + d * BB;
    if (d % CHUNK == 0) {
      AF_REAL *restrict pe = g->pe + (d / CHUNK) * BB;
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expo(run[b]);
        run[b] = mant(run[b]);
        pe[b] = rexp[b];
      }
    }
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
      pm[b] = run[b];
      run[b] *= s[b];
#if AF_SHIFT
      tsum[b] += t[b];
#endif
    }
  }
  /* the full product, exactly as the forward forms it, and l times its
   * (l-1)-th power */
  AF_REAL *restrict lp = g->lp, *restrict sc = g->sc;
#pragma omp simd
  for (size_t b = 0; b < nb; b++) {
    AF_REAL k = rexp[b] + expo(run[b]) - Eb, m = mant(run[b]);
#if AF_SHIFT
    k -= tsum[b];
#endif
    AF_REAL x = scaled(m, k, wcut);
    wt[b] = ipow(x, l); /* m = 0: 0 */
    lp[b] = (AF_REAL)l * ipow(x, l - 1);
  }
  /* suffix, combined with the prefix into y_d and the gradient */
  for (size_t b = 0; b < BB; b++) {
    run[b] = 1;
    rexp[b] = 0;
  }
  for (size_t dd = D; dd-- > 0;) {
    const AF_REAL *restrict s = g->s + dd * BB, *restrict ds = g->ds + dd * BB;
    const AF_REAL *restrict pe = g->pe + (dd / CHUNK) * BB;
    AF_REAL *restrict G = g->G + dd * BB;
    const int new_suffix = (D - 1 - dd) % CHUNK == 0;
    if (new_suffix) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        rexp[b] += expo(run[b]);
        run[b] = mant(run[b]);
      }
    }
    /* the scale 2^(pe + rexp - E) changes only where the prefix chunk or the
     * suffix exponent does; with shifts, y_dd's scale also removes those of
     * the factors other than dd: sc when factor dd is not shifted, sc2 when
     * it is */
    if (new_suffix || dd % CHUNK == CHUNK - 1 || dd + 1 == D) {
#pragma omp simd
      for (size_t b = 0; b < nb; b++) {
        AF_REAL k = pe[b] + rexp[b] - Eb;
#if AF_SHIFT
        k -= tsum[b];
        g->sc2[b] = cut2(k + AF_TSHIFT);
#endif
        sc[b] = cut2(k);
      }
    }
#if AF_SHIFT
    const AF_REAL *restrict t = g->t + dd * BB, *restrict sc2 = g->sc2;
#endif
#pragma omp simd
    for (size_t b = 0; b < nb; b++) {
#if AF_SHIFT
      AF_REAL y = (G[b] * run[b]) * (t[b] != 0 ? sc2[b] : sc[b]);
#else
      AF_REAL y = (G[b] * run[b]) * sc[b];
#endif
      /* y is finite (pow2 is clamped); lp = 0 makes the gradient exactly 0 */
      G[b] = lp[b] * (ds[b] * y);
      run[b] *= s[b];
    }
  }
}

#if AF_LANE_SUMS
/* dq, dr += the lane sums lq, lr (D x BB, lanes in order), which are zeroed. */
static inline void lane_flush(size_t D, AF_REAL *lq, AF_REAL *lr, double *dq, double *dr) {
  for (size_t d = 0; d < D; d++) {
    double sq = 0, sr = 0;
    for (size_t b = 0; b < BB; b++) {
      sq += (double)lq[d * BB + b];
      sr += (double)lr[d * BB + b];
    }
    dq[d] += sq;
    dr[d] += sr;
  }
  memset(lq, 0, 2 * D * BB * sizeof *lq);
}
#endif

#if AF_BWD_BLOCK
/* dkT[d CL + j] -= the fused blocks' dK sums dkf (D x CL) of keys j < n,
 * which are zeroed. */
static inline void dk_flush(size_t D, size_t CL, size_t n, AF_REAL *dkf, double *dkT) {
  for (size_t d = 0; d < D; d++) {
    AF_REAL *restrict a = dkf + d * CL;
    double *restrict o = dkT + d * CL;
#pragma omp simd
    for (size_t j = 0; j < n; j++) {
      o[j] -= (double)a[j];
      a[j] = 0;
    }
  }
}
#endif

static size_t gblock_reals(size_t D) { return ((4 + AF_SHIFT) * D + (D + CHUNK - 1) / CHUNK) * BB; }

/* Backward, one task: head bh, keys [k0, k1) (chunk c), over every query row
 * that sees them. For each pair block the factors, their derivatives and the
 * prefix/suffix products are formed once and give all three gradients: the
 * query row's dq and dR partials (to part, this chunk's slot; summed over the
 * chunks in chunk order afterwards), and dK, dV of the chunk's keys (owned by
 * this task, summed over query rows in row order). ws: the gblock, 4 BB
 * reals, then doubles: 2 D (dq, dR of a row), D CL (dK^T of the chunk), CL Dv
 * (dV of the chunk). */
AF_TASK static int bwd_task(void *vc, size_t t, void *vws) {
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  const size_t CL = f->chunklen;
  const int l = J->l;
  const size_t bh = t / f->nchunk, c = t % f->nchunk;
  const size_t k0 = c * CL, k1 = k0 + CL < Lk ? k0 + CL : Lk;
  const size_t PW = D + (J->per_axis ? D : 1); /* a row's partials: dq (D), dR (D or 1) */
  double *part = f->part + (c * BH + bh) * Lq * PW;
  memset(part, 0, Lq * PW * sizeof *part);
  if (k0 >= k1) return GFI_OK;
  const size_t rs = attn_fjob_rs(J);
  const size_t Lqp = f->Lqp, Lkp = f->Lkp;
  const AF_REAL *V = AF_V(J) + attn_fjob_xoff(J, J->vs, bh), *R = AF_RAD(J) + (bh % J->H) * D;
  const double *Rd = J->Rd + (bh % J->H) * D;
  const AF_REAL *qt = f->qtab + bh * D * Lqp, *kt = f->ktab + bh * D * Lkp;
  const AF_REAL *dH = f->dH + attn_fjob_hoff(J, bh, Lq) * Dv;
  const double *stat = f->stat + 2 * bh * Lq, *P = f->P + bh * Lq, *invS = f->invS + bh * Lq;
  const unsigned char *kp = attn_fjob_kpad_row(J, bh);
  gblock g;
  AF_REAL *fw = vws;
  g.s = fw;
  g.ds = g.s + D * BB;
  g.u = g.ds + D * BB;
  g.G = g.u + D * BB;
  g.t = g.G + D * BB; /* AF_SHIFT 0: no t rows, pe starts here */
  g.pe = g.t + AF_SHIFT * D * BB;
  AF_REAL *coef = fw + gblock_reals(D), *wt = coef + BB, *mk = wt + BB, *z = mk + BB;
#if AF_LANE_SUMS
  AF_REAL *lq = z + BB, *lr = lq + D * BB; /* per-lane partial sums of dq and dR, D x BB */
  double *dq = (double *)(lr + D * BB);
#else
  double *dq = (double *)(z + BB);
#endif
  double *dr = dq + D, *dkT = dr + D, *dv = dkT + D * CL;
  memset(dkT, 0, D * CL * sizeof *dkT);
  memset(dv, 0, CL * Dv * sizeof *dv);
#if AF_COEF_T
  double *dhd = dv + CL * Dv; /* the row's dH in double */
  AF_REAL *vT = (AF_REAL *)(dhd + Dv); /* the chunk's V transposed, Dv x CLs, zero beyond k1 */
  const size_t CLs = tab_stride(CL);
  for (size_t cc = 0; cc < Dv; cc++) {
    AF_REAL *restrict o = vT + cc * CLs;
    for (size_t j = k0; j < k1; j++) o[j - k0] = V[j * J->vs[2] + cc];
    for (size_t j = k1 - k0; j < CLs; j++) o[j] = 0;
  }
  AF_REAL *vend = vT + Dv * CLs;
#else
  AF_REAL *vend = (AF_REAL *)(dv + CL * Dv);
#endif
#if AF_BWD_BLOCK
  AF_REAL *dkf = vend; /* the fused blocks' dK terms, D x CL, over up to DK_ROWS rows */
  memset(dkf, 0, D * CL * sizeof *dkf);
  size_t dkrows = 0, dkn = 0; /* rows held in dkf; keys touched (from k0) */
#else
  (void)vend;
#endif
  for (size_t i = attn_fjob_query_begin(J, k0); i < Lq; i++) {
    if (invS[i] == 0) continue; /* flagged, empty or underflowed row: no gradient */
    const size_t je = attn_fjob_key_end(J, i), jend = je < k1 ? je : k1;
    if (jend <= k0) continue;
    const unsigned char *mr = attn_fjob_mask_row(J, bh, i);
    const AF_REAL *dh = dH + i * rs * Dv;
    const double Pi = P[i], iS = invS[i];
    const AF_REAL Eb = (AF_REAL)stat[2 * i];
    for (size_t d = 0; d < D; d++) dq[d] = dr[d] = 0;
#if AF_COEF_T
    for (size_t cc = 0; cc < Dv; cc++) dhd[cc] = (double)dh[cc];
#endif
#if AF_LANE_SUMS
    memset(lq, 0, 2 * D * BB * sizeof *lq);
    size_t nlane = 0; /* blocks held in the lane sums */
#endif
    for (size_t j0 = k0; j0 < jend; j0 += BB) {
      const size_t nb = jend - j0 < BB ? jend - j0 : BB;
      size_t nv = nb;
      if (kp || mr) {
        nv = mask_lanes(kp, mr, j0, nb, mk);
        if (nv == 0) continue;
      }
      /* dL/dw_ij = (z_ij dH_i . v_j - P_i) / T_i, z_ij the dropout factor (1 without) */
      if (J->drop_thr)
        drop_lanes(J, bh, i, j0, nb, z);
      else
        for (size_t b = 0; b < nb; b++) z[b] = 1;
#if AF_COEF_T
      {
        double acc[BB];
        for (size_t b = 0; b < BB; b++) acc[b] = 0;
        for (size_t cc = 0; cc < Dv; cc++) {
          const double h = dhd[cc];
          const AF_REAL *restrict vr = vT + cc * CLs + (j0 - k0);
#pragma omp simd
          for (size_t b = 0; b < BB; b++) acc[b] += h * (double)vr[b];
        }
        for (size_t b = 0; b < nb; b++) coef[b] = (AF_REAL)(((double)z[b] * acc[b] - Pi) * iS);
      }
#else
      for (size_t b = 0; b < nb; b++)
        coef[b] = (AF_REAL)(((double)z[b] * dot(dh, V + (j0 + b) * J->vs[2], Dv) - Pi) * iS);
#endif
      double *dk0 = dkT + (j0 - k0);
#if AF_BWD_BLOCK
      if (D % CHUNK == 0) { /* the including file's fused form; a partial or masked block with its lanes masked */
        const AF_REAL *lm = NULL; /* NULL: every lane a key of the row */
        if (nv < BB) {
          for (size_t b = 0; b < BB; b++) {
            const AF_REAL m = b >= nb ? (AF_REAL)0 : nv < nb ? mk[b] : (AF_REAL)1;
            coef[b] = b < nb ? coef[b] * m : (AF_REAL)0;
            mk[b] = m;
          }
          lm = mk;
        }
        bwd_block(D, l, Eb, qt + i, f->nq, Lqp, kt + j0, f->nk, Lkp, R, coef, lm, g.s, g.ds, g.u, g.G, g.t, g.pe,
                  g.run, g.rexp, g.lp, g.tsum, wt, lq, lr, dkf + (j0 - k0), CL);
        if (j0 + BB - k0 > dkn) dkn = j0 + BB - k0;
        goto block_sums_done;
      }
#endif
      for (size_t d = 0; d < D; d++) {
        AF_REAL *restrict s = g.s + d * BB, *restrict ds = g.ds + d * BB;
        bwd_axis(qt + d * Lqp + i, f->nq, kt + d * Lkp + j0, f->nk, R[d], nb, s, ds, g.u + d * BB,
                 g.t + AF_SHIFT * d * BB);
        if (nv < nb)
          for (size_t b = 0; b < nb; b++) {
            s[b] *= mk[b]; /* an excluded key: weight and gradient exactly 0 */
            ds[b] *= mk[b];
          }
      }
      if (nv < nb)
        for (size_t b = 0; b < nb; b++) coef[b] *= mk[b];
      grad_block(D, l, nb, Eb, &g, wt);
#if AF_LANE_SUMS
      /* the row's dq and dR terms summed per lane (a horizontal sum per
       * block and axis cost as much as the block's factors), into double
       * every LANE_BLOCKS blocks and at the row's end, lanes in order */
      for (size_t d = 0; d < D; d++) {
        const AF_REAL *restrict G = g.G + d * BB, *restrict u = g.u + d * BB;
        AF_REAL *restrict aq = lq + d * BB, *restrict ar = lr + d * BB;
        double *restrict dk = dk0 + d * CL;
#pragma omp simd
        for (size_t b = 0; b < nb; b++) {
          AF_REAL tt = coef[b] * G[b];
          aq[b] += tt;
          ar[b] += tt * u[b];
          dk[b] -= (double)tt;
        }
      }
#if AF_BWD_BLOCK
    block_sums_done:
#endif
      if (++nlane == LANE_BLOCKS) {
        lane_flush(D, lq, lr, dq, dr);
        nlane = 0;
      }
#else
      for (size_t d = 0; d < D; d++) {
        const AF_REAL *restrict G = g.G + d * BB, *restrict u = g.u + d * BB;
        double *restrict dk = dk0 + d * CL;
        AF_REAL acc = 0, accr = 0;
#pragma omp simd reduction(+ : acc, accr)
        for (size_t b = 0; b < nb; b++) {
          AF_REAL tt = coef[b] * G[b];
          acc += tt;
          accr += tt * u[b];
          dk[b] -= (double)tt;
        }
        dq[d] += acc;
        dr[d] += accr;
      }
#endif
      for (size_t b = 0; b < nb; b++) {
        const double a = (double)wt[b] * iS * (double)z[b];
        if (a == 0) continue;
        double *restrict dvj = dv + (j0 + b - k0) * Dv;
#if AF_COEF_T
#pragma omp simd
        for (size_t cc = 0; cc < Dv; cc++) dvj[cc] += a * dhd[cc];
#else
#pragma omp simd
        for (size_t cc = 0; cc < Dv; cc++) dvj[cc] += a * (double)dh[cc];
#endif
      }
    }
#if AF_LANE_SUMS
    if (nlane) lane_flush(D, lq, lr, dq, dr);
#endif
#if AF_BWD_BLOCK
    if (dkn && ++dkrows == DK_ROWS) {
      dk_flush(D, CL, dkn, dkf, dkT);
      dkrows = dkn = 0;
    }
#endif
    /* du_d/dR_d = q_id - k_jd = u_d / R_d */
    double rsum = 0;
    for (size_t d = 0; d < D; d++) {
      part[i * PW + d] = dq[d];
      if (J->per_axis)
        part[i * PW + D + d] = dr[d] / Rd[d];
      else
        rsum += dr[d] / Rd[d];
    }
    if (!J->per_axis) part[i * PW + D] = rsum;
  }
#if AF_BWD_BLOCK
  if (dkn) dk_flush(D, CL, dkn, dkf, dkT);
#endif
  AF_REAL *dK = f->dK + attn_fjob_hoff(J, bh, Lk) * D, *dV = f->dV + attn_fjob_hoff(J, bh, Lk) * Dv;
  for (size_t j = k0; j < k1; j++) {
    for (size_t d = 0; d < D; d++) dK[j * rs * D + d] = (AF_REAL)(Rd[d] * dkT[d * CL + (j - k0)]);
    for (size_t cc = 0; cc < Dv; cc++) dV[j * rs * Dv + cc] = (AF_REAL)dv[(j - k0) * Dv + cc];
  }
  return GFI_OK;
}

/* dQ and the per-row dR partials of a tile of rows: the chunk partials summed
 * in chunk order. */
static int bwd_reduce(void *vc, size_t t, void *ws) {
  (void)ws;
  const fctx *f = vc;
  const attn_fjob *J = f->J;
  const size_t BH = J->B * J->H, D = J->D, Lq = J->Lq, np = J->per_axis ? D : 1;
  size_t bh = t / f->ntq, i0 = (t % f->ntq) * ROW_TILE;
  size_t i1 = i0 + ROW_TILE < Lq ? i0 + ROW_TILE : Lq;
  const double *Rd = J->Rd + (bh % J->H) * D;
  for (size_t i = i0; i < i1; i++) {
    const size_t row = bh * Lq + i;
    AF_REAL *dq = f->dQ + attn_fjob_qrow(J, row) * D;
    double *drow = f->dRrow + row * np;
    for (size_t k = 0; k < np; k++) drow[k] = 0;
    if (isnan(f->stat[2 * row + 1])) { /* flagged row */
      for (size_t d = 0; d < D; d++) dq[d] = (AF_REAL)NAN;
      continue;
    }
    const size_t PW = D + np;
    for (size_t d = 0; d < PW; d++) {
      double a = 0;
      for (size_t c = 0; c < f->nchunk; c++) a += f->part[((c * BH + bh) * Lq + i) * PW + d];
      if (d < D)
        dq[d] = (AF_REAL)(Rd[d] * a);
      else
        drow[d - D] = a;
    }
  }
  return GFI_OK;
}

static int engine_backward(const attn_fjob *J, const AF_REAL *H, const double *stat, const AF_REAL *dH,
                           AF_REAL *dQ, AF_REAL *dK, AF_REAL *dV, double *dRrow) {
  const size_t BH = J->B * J->H, D = J->D, Dv = J->Dv, Lq = J->Lq, Lk = J->Lk;
  const size_t Lqp = tab_stride(Lq), Lkp = tab_stride(Lk);
  const size_t nchunk = attn_fjob_key_chunks(BH, Lk);
  size_t chunklen = (Lk + nchunk - 1) / nchunk;
  chunklen = (chunklen + BB - 1) / BB * BB;
  /* tables (AF_NTAB per side); P and 1/T per row, chunk partials of dq and dR */
  size_t ntab = 0, npart = 0;
  if (gfi_size_prod(&ntab, (size_t)AF_NTAB * BH, D, Lqp + Lkp, 1) ||
      gfi_size_prod(&npart, nchunk, BH, Lq, D + (J->per_axis ? D : 1) + 2) || ntab > SIZE_MAX / 16 ||
      npart > SIZE_MAX / 16)
    return GFI_ENOMEM;
  AF_REAL *tab = gfi_malloc2(ntab ? ntab : 1, sizeof *tab);
  double *dtab = gfi_malloc2(npart, sizeof *dtab);
  if (!tab || !dtab) {
    free(tab);
    free(dtab);
    return GFI_ENOMEM;
  }
  double *P = dtab, *invS = P + BH * Lq, *part = invS + BH * Lq; /* npart >= 2 BH Lq + the partials */
  for (size_t r = 0; r < BH * Lq; r++) {
    double T = stat[2 * r + 1];
    int ok = isfinite(T);
    double p = 0;
    if (ok)
      for (size_t c = 0; c < Dv; c++) {
        const size_t m = attn_fjob_qrow(J, r) * Dv + c;
        p += (double)dH[m] * (double)H[m];
      }
    P[r] = p;
    invS[r] = ok ? 1.0 / T : 0.0;
  }
  const size_t nq = BH * D * Lqp;
  fctx f = {.J = J, .Lqp = Lqp, .Lkp = Lkp, .ntq = (Lq + ROW_TILE - 1) / ROW_TILE, .nchunk = nchunk,
            .chunklen = chunklen, .qtab = tab, .nq = nq, .ktab = tab + (size_t)AF_NTAB * nq, .nk = BH * D * Lkp,
            .dH = dH, .stat = stat, .P = P, .invS = invS, .part = part, .dRrow = dRrow, .dQ = dQ, .dK = dK,
            .dV = dV};
  par_spec sp0 = {2 * BH, J->nthreads, 0, 1, NULL, NULL};
  int st = par_run(&sp0, fill_task, &f);
  size_t ws = (gblock_reals(D) + 4 * BB + 2 * AF_LANE_SUMS * D * BB) * sizeof(AF_REAL) + (2 * D + D * chunklen + chunklen * Dv) * sizeof(double);
#if AF_COEF_T
  ws += Dv * sizeof(double) + Dv * tab_stride(chunklen) * sizeof(AF_REAL); /* dhd, vT */
#endif
#if AF_BWD_BLOCK
  ws += D * chunklen * sizeof(AF_REAL); /* dkf */
#endif
  par_spec sp1 = {BH * nchunk, J->nthreads, ws, 1, NULL, NULL};
  if (!st) st = par_run(&sp1, bwd_task, &f);
  par_spec sp2 = {BH * f.ntq, J->nthreads, 0, 4, NULL, NULL};
  if (!st) st = par_run(&sp2, bwd_reduce, &f);
  free(tab);
  free(dtab);
  return st;
}
