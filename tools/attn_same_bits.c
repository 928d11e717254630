/* Same bits before and after a change to the Fourier attention engines: runs
 * a varied set of configurations (B, H, Lq, Lk, D, Dv, l, R scalar, per head
 * or per axis, causal, eps, key padding and general masks, dropout, the
 * (L, B, H, D) layout, empty rows as zeros, 1 or 2 threads; data: normal,
 * far queries, far keys, V beyond 2^500 and 2^64, radii up to 3e5) through
 * two builds of libgfi, float64 and float32, forward and backward, the
 * batched and the single-sequence entry points, and compares a hash of every
 * output byte, the return codes and the diagnostics. Exit 0 when all agree.
 *
 *   gcc -O2 -Iinclude -o /tmp/attn_same_bits tools/attn_same_bits.c -ldl -lm
 *   /tmp/attn_same_bits OLD/libgfi/libgfi.so build/libgfi/libgfi.so [ncases]
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/gfi.h"

typedef struct {
  void (*bdef)(gfi_attn_batch_spec *);
  size_t (*bnp)(const gfi_attn_batch_spec *, size_t, size_t);
  int (*kpow)(gfi_kernel *, int);
  void (*dopts)(gfi_opts *);
  int (*bf)(const gfi_attn_batch_spec *, size_t, size_t, size_t, size_t, size_t, size_t, const void *, const void *,
            const void *, const void *, const unsigned char *, const unsigned char *, const gfi_opts *, void *,
            double *, gfi_attn_info *);
  int (*bb)(const gfi_attn_batch_spec *, size_t, size_t, size_t, size_t, size_t, size_t, const void *, const void *,
            const void *, const void *, const unsigned char *, const unsigned char *, const gfi_opts *,
            const void *, const double *, const void *, void *, void *, void *, void *, gfi_attn_info *);
  void (*sdef)(gfi_attn_spec *);
  int (*pc)(gfi_attn_plan **, const gfi_attn_spec *, size_t, size_t, size_t, const gfi_opts *);
  int (*pf)(const gfi_attn_plan *, const double *, const double *, const double *, const double *, double *, double *,
            gfi_attn_info *);
  int (*pb)(const gfi_attn_plan *, const double *, const double *, const double *, const double *, const double *,
            const double *, const double *, double *, double *, double *, double *, gfi_attn_info *);
  void (*pd)(gfi_attn_plan *);
} lib;

static void load(lib *L, const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); exit(2); }
#define S(f, n) *(void **)&L->f = dlsym(h, n); if (!L->f) { fprintf(stderr, "no %s\n", n); exit(2); }
  S(bdef, "gfi_attn_batch_default_spec") S(bnp, "gfi_attn_batch_nparam") S(kpow, "gfi_kernel_pow")
  S(dopts, "gfi_default_opts") S(bf, "gfi_attn_batch_forward") S(bb, "gfi_attn_batch_backward")
  S(sdef, "gfi_attn_default_spec") S(pc, "gfi_attn_plan_create") S(pf, "gfi_attn_forward")
  S(pb, "gfi_attn_backward") S(pd, "gfi_attn_destroy")
}

static uint64_t rs = 88172645463325252ULL;
static double urand(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (rs >> 11) * 0x1p-53; }
static double nrand(void) { double u = urand() + 1e-300, v = urand(); return sqrt(-2 * log(u)) * cos(6.283185307179586 * v); }

typedef struct { size_t n; unsigned char *p; int rc; } out;
static uint64_t fnv(const void *p, size_t n, uint64_t h) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) { h ^= c[i]; h *= 1099511628211ULL; }
  return h;
}

static unsigned char gkp[4096], gmk[400 * 400];
static int nfail = 0, ncase = 0, nf32diff = 0;

/* one configuration through one lib: returns a hash over every output and rc */
static uint64_t run_batch(const lib *L, int f32, size_t B, size_t H, size_t Lq, size_t Lk, size_t D, size_t Dv, int l,
                          int rmode, int causal, double eps, int empty_zero, int kpadon, int maskon, int lbhd,
                          double drop, int nthreads, const double *Q, const double *K, const double *V,
                          const double *R, const double *dH, int *rcf, int *rcb, int *bad) {
  gfi_attn_batch_spec s;
  L->bdef(&s);
  L->kpow(&s.kernel, l);
  s.rmode = rmode; s.causal = causal; s.eps = eps; s.empty_zero = empty_zero;
  s.dtype = f32 ? GFI_ATTN_F32 : GFI_ATTN_F64; s.layout = lbhd; s.dropout = drop; s.seed = 7;
  gfi_opts o; L->dopts(&o); o.nthreads = nthreads;
  size_t es = f32 ? 4 : 8, nq = B * H * Lq * D, nk = B * H * Lk * D, nv = B * H * Lk * Dv, nh = B * H * Lq * Dv;
  size_t np = L->bnp(&s, H, D);
  void *q = malloc(nq * es), *k = malloc(nk * es), *v = malloc(nv * es), *r = malloc(np * es), *dh = malloc(nh * es);
  for (size_t i = 0; i < nq; i++) if (f32) ((float *)q)[i] = (float)Q[i]; else ((double *)q)[i] = Q[i];
  for (size_t i = 0; i < nk; i++) if (f32) ((float *)k)[i] = (float)K[i]; else ((double *)k)[i] = K[i];
  for (size_t i = 0; i < nv; i++) if (f32) ((float *)v)[i] = (float)V[i]; else ((double *)v)[i] = V[i];
  for (size_t i = 0; i < np; i++) if (f32) ((float *)r)[i] = (float)R[i]; else ((double *)r)[i] = R[i];
  for (size_t i = 0; i < nh; i++) if (f32) ((float *)dh)[i] = (float)dH[i]; else ((double *)dh)[i] = dH[i];
  unsigned char *kp = kpadon ? gkp : NULL, *mk = maskon ? gmk : NULL;
  void *ho = calloc(nh, es); double *saved = calloc(2 * B * H * Lq, 8);
  gfi_attn_info inf; memset(&inf, 0, sizeof inf);
  *rcf = L->bf(&s, B, H, Lq, Lk, D, Dv, q, k, v, r, kp, mk, &o, ho, saved, &inf);
  uint64_t h = 1469598103934665603ULL;
  h = fnv(ho, nh * es, h); h = fnv(saved, 2 * B * H * Lq * 8, h); h = fnv(&inf, sizeof inf, h);
  *rcb = -999;
  if (*rcf == 0 || *rcf == GFI_EDENOM) {
    void *dq = calloc(nq, es), *dk = calloc(nk, es), *dv = calloc(nv, es), *dr = calloc(np, es);
    memset(&inf, 0, sizeof inf);
    *rcb = L->bb(&s, B, H, Lq, Lk, D, Dv, q, k, v, r, kp, mk, &o, ho, saved, dh, dq, dk, dv, dr, &inf);
    h = fnv(dq, nq * es, h); h = fnv(dk, nk * es, h); h = fnv(dv, nv * es, h); h = fnv(dr, np * es, h);
    h = fnv(&inf, sizeof inf, h);
    free(dq); free(dk); free(dv); free(dr);
  }
  (void)bad;
  free(q); free(k); free(v); free(r); free(dh); free(ho); free(saved);
  return h;
}

static uint64_t run_plan(const lib *L, size_t Ln, size_t D, size_t Dv, int l, int per_axis, int causal, int nthreads,
                         const double *Q, const double *K, const double *V, const double *R, const double *dH,
                         int *rcf, int *rcb) {
  gfi_attn_spec s; L->sdef(&s); L->kpow(&s.kernel, l); s.per_axis_R = per_axis; s.causal = causal;
  gfi_opts o; L->dopts(&o); o.nthreads = nthreads;
  gfi_attn_plan *p = NULL;
  *rcf = L->pc(&p, &s, Ln, D, Dv, &o);
  if (*rcf) return 0;
  double *H = calloc(Ln * Dv, 8), *sv = calloc(2 * Ln, 8), *dq = calloc(Ln * D, 8), *dk = calloc(Ln * D, 8),
         *dv = calloc(Ln * Dv, 8), *dr = calloc(D, 8);
  gfi_attn_info inf; memset(&inf, 0, sizeof inf);
  *rcf = L->pf(p, Q, K, V, R, H, sv, &inf);
  uint64_t h = fnv(H, Ln * Dv * 8, 1469598103934665603ULL); h = fnv(sv, 2 * Ln * 8, h);
  *rcb = L->pb(p, Q, K, V, R, H, sv, dH, dq, dk, dv, dr, &inf);
  h = fnv(dq, Ln * D * 8, h); h = fnv(dk, Ln * D * 8, h); h = fnv(dv, Ln * Dv * 8, h);
  h = fnv(dr, (per_axis ? D : 1) * 8, h);
  L->pd(p); free(H); free(sv); free(dq); free(dk); free(dv); free(dr);
  return h;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: cmp OLD.so NEW.so [ncases]\n"); return 2; }
  lib A, Bl; load(&A, argv[1]); load(&Bl, argv[2]);
  int N = argc > 3 ? atoi(argv[3]) : 400;
  const size_t Ds[] = {1, 2, 3, 5, 8, 16, 64};
  for (int c = 0; c < N; c++) {
    size_t B = 1 + (urand() < 0.3), H = 1 + (size_t)(urand() * 3), D = Ds[(size_t)(urand() * 7)];
    size_t Dv = 1 + (size_t)(urand() * 9), Lq = 1 + (size_t)(urand() * 90), Lk = urand() < 0.5 ? Lq : 1 + (size_t)(urand() * 90);
    if (urand() < 0.1) { Lq = 300; Lk = 300; }
    int l = 1 + (int)(urand() * 8), rmode = (int)(urand() * 3), causal = urand() < 0.4, ez = urand() < 0.5;
    double eps = urand() < 0.3 ? 1e-6 : 0, drop = urand() < 0.2 ? 0.3 : 0;
    int kpad = urand() < 0.2, mask = urand() < 0.2, lbhd = urand() < 0.2, nth = 1 + (urand() < 0.4);
    int kind = (int)(urand() * 6); /* data kind */
    for (size_t i = 0; i < sizeof gkp; i++) gkp[i] = urand() < 0.2;
    for (size_t i = 0; i < sizeof gmk; i++) gmk[i] = urand() < (kind == 0 ? 0.9 : 0.3);
    size_t nq = B * H * Lq * D, nk = B * H * Lk * D, nv = B * H * Lk * Dv, nh = B * H * Lq * Dv;
    double *Q = malloc(nq * 8), *K = malloc(nk * 8), *V = malloc(nv * 8), *R = malloc(H * D * 8), *dH = malloc(nh * 8);
    double sc = kind == 1 ? 5.0 : 1.0;
    for (size_t i = 0; i < nq; i++) Q[i] = sc * nrand();
    for (size_t i = 0; i < nk; i++) K[i] = sc * nrand() + (kind == 2 && urand() < 0.1 ? 40 * nrand() : 0);
    for (size_t i = 0; i < nv; i++) V[i] = nrand() * (kind == 3 ? 0x1p520 : kind == 4 ? 0x1p70 : 1.0);
    for (size_t i = 0; i < nh; i++) dH[i] = nrand();
    for (size_t i = 0; i < H * D; i++) R[i] = kind == 5 ? (urand() < 0.5 ? 3e5 : 50 + 100 * urand()) : 0.3 + 3 * urand();
    if (kind == 1) for (size_t i = 0; i < nq; i++) Q[i] += 1e6 * (urand() < 0.05); /* far queries */
    for (int f32 = 0; f32 < 2; f32++) {
      int a1, a2, b1, b2, bad = 0;
      uint64_t ha = run_batch(&A, f32, B, H, Lq, Lk, D, Dv, l, rmode, causal, eps, ez, kpad, mask, lbhd, drop, nth, Q, K, V, R, dH, &a1, &a2, &bad);
      uint64_t hb = run_batch(&Bl, f32, B, H, Lq, Lk, D, Dv, l, rmode, causal, eps, ez, kpad, mask, lbhd, drop, nth, Q, K, V, R, dH, &b1, &b2, &bad);
      ncase++;
      if (ha != hb || a1 != b1 || a2 != b2) {
        nfail++;
        if (f32) nf32diff++;
        printf("DIFF f32=%d B=%zu H=%zu Lq=%zu Lk=%zu D=%zu Dv=%zu l=%d rmode=%d causal=%d eps=%g ez=%d kpad=%d mask=%d lbhd=%d drop=%g nth=%d kind=%d rc %d/%d vs %d/%d\n",
               f32, B, H, Lq, Lk, D, Dv, l, rmode, causal, eps, ez, kpad, mask, lbhd, drop, nth, kind, a1, a2, b1, b2);
      }
    }
    if (B == 1 && H == 1 && Lq == Lk) {
      int a1, a2, b1, b2, pa = urand() < 0.5;
      uint64_t ha = run_plan(&A, Lq, D, Dv, l, pa, causal, nth, Q, K, V, R, dH, &a1, &a2);
      uint64_t hb = run_plan(&Bl, Lq, D, Dv, l, pa, causal, nth, Q, K, V, R, dH, &b1, &b2);
      ncase++;
      if (ha != hb || a1 != b1 || a2 != b2) { nfail++; printf("DIFF plan L=%zu D=%zu l=%d pa=%d causal=%d kind=%d\n", Lq, D, l, pa, causal, kind); }
    }
    free(Q); free(K); free(V); free(R); free(dH);
  }
  printf("%d runs, %d differ (%d float32)\n", ncase, nfail, nf32diff);
  return nfail != 0;
}
