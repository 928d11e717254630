/* gfi attention: Fourier (FourierFormer eq. 15) or softmax attention of
 * given Q, K, V, several heads, forward and (on request) gradients. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"

/* columns [h w, (h + 1) w) of an L x (H w) table */
static void take(const double *src, size_t L, size_t H, size_t w, size_t h, double *dst) {
  for (size_t i = 0; i < L; i++) memcpy(dst + i * w, src + i * H * w + h * w, w * sizeof *dst);
}
static void put_back(const double *src, size_t L, size_t H, size_t w, size_t h, double *dst) {
  for (size_t i = 0; i < L; i++) memcpy(dst + i * H * w + h * w, src + i * w, w * sizeof *dst);
}

/* one gradient table: PREFIX.NAME.npy or a text table PREFIX.NAME */
static void write_grad(const char *prefix, const char *name, int npy, size_t rows, size_t cols, const double *x,
                       const char *what) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%s%s", prefix, name, npy ? ".npy" : "");
  if (npy) {
    gfi_errinfo err;
    gfi_errinfo_clear(&err);
    const char *tmp = cli_atomic_begin("--grad", path);
    int st = gfi_npy_write(tmp, rows, cols, 2, x, &err);
    if (st) cli_die(EXIT_RUNTIME, "--grad %s: %s", path, err.msg[0] ? err.msg : gfi_strerror(st));
    cli_atomic_commit("--grad", tmp);
    return;
  }
  const char *tmp;
  FILE *f = cli_atomic_fopen("--grad", path, &tmp);
  cli_header(f);
  cli_meta(f, "table", "%s: %zu rows x %zu columns (heads side by side)", what, rows, cols);
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < cols; j++) {
      if (j) fputc(' ', f);
      gfi_table_put(f, x[i * cols + j]);
    }
    fputc('\n', f);
  }
  cli_finish_output(f, path);
  cli_atomic_commit("--grad", tmp);
}

/* ---- the batched layout: 4-D .npy arrays (B, H, L, D) ---- */

static double *read_nd(const char *opt, const char *path, int *ndim, size_t *dims, int *f32) {
  gfi_errinfo err;
  double *x = NULL;
  int st = gfi_npy_read_nd(path, ndim, dims, &x, f32, &err);
  if (st) cli_die(EXIT_RUNTIME, "%s %s: %s", opt, path, err.msg[0] ? err.msg : gfi_strerror(st));
  return x;
}
static void shape_str(char *buf, size_t cap, int nd, const size_t *d) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int k = 0; k < nd && n < cap; k++) n += (size_t)snprintf(buf + n, cap - n, "%s%zu", k ? ", " : "", d[k]);
  if (n < cap) snprintf(buf + n, cap - n, ")");
}
/* A 4-D array whose dims match want[] where want[k] != 0. */
static double *read4(const char *opt, const char *path, const size_t *want, const char *layout, size_t *dims) {
  int nd, f32;
  double *x = read_nd(opt, path, &nd, dims, &f32);
  char got[160];
  shape_str(got, sizeof got, nd, dims);
  if (nd != 4) cli_die(EXIT_RUNTIME, "%s %s: shape %s, expected 4 dimensions %s", opt, path, got, layout);
  for (int k = 0; k < 4; k++)
    if (want[k] && dims[k] != want[k])
      cli_die(EXIT_RUNTIME, "%s %s: shape %s, expected %s with %s = %zu (from --q/--k)", opt, path, got, layout,
              k == 0 ? "B" : k == 1 ? "H" : k == 2 ? "the length" : "the last axis", want[k]);
  for (size_t k = 0; k < dims[0] * dims[1] * dims[2] * dims[3]; k++)
    if (!isfinite(x[k])) cli_die(EXIT_RUNTIME, "%s %s: value %zu is not finite", opt, path, k);
  return x;
}
static unsigned char *to_bytes(const double *x, size_t n) {
  unsigned char *b = cli_array(n ? n : 1, 1, 1);
  for (size_t k = 0; k < n; k++) b[k] = x[k] != 0;
  return b;
}
static void write_nd(const char *opt, const char *path, int nd, const size_t *dims, const double *x, int f32) {
  gfi_errinfo err;
  const char *tmp = cli_atomic_begin(opt, path);
  int st = gfi_npy_write_nd(tmp, nd, dims, x, f32, &err);
  if (st) cli_die(EXIT_RUNTIME, "%s %s: %s", opt, path, err.msg[0] ? err.msg : gfi_strerror(st));
  cli_atomic_commit(opt, tmp);
}
/* float64 (exact) or float32 copies for the library, by dtype */
static void *as_dtype(const double *x, size_t n, int f32) {
  if (!f32) {
    double *y = cli_array(n ? n : 1, sizeof *y, 1);
    memcpy(y, x, n * sizeof *y);
    return y;
  }
  float *y = cli_array(n ? n : 1, sizeof *y, 1);
  for (size_t k = 0; k < n; k++) y[k] = (float)x[k];
  return y;
}
static double *from_dtype(const void *x, size_t n, int f32) {
  double *y = cli_array(n ? n : 1, sizeof *y, 1);
  for (size_t k = 0; k < n; k++) y[k] = f32 ? ((const float *)x)[k] : ((const double *)x)[k];
  return y;
}

typedef struct {
  const char *qpath, *kpath, *vpath, *Rs, *grad, *dhpath, *outpath, *kpadpath, *maskpath, *empty;
  gfi_kernel kern;
  int causal, nthreads, f32;
  double tol, eps;
} batch_args;

static int attention_batched(const batch_args *a) {
  size_t qd[8], kd[8], vd[8], hd[8], any[4] = {0, 0, 0, 0};
  double *Q = read4("--q", a->qpath, any, "(B, H, Lq, D)", qd);
  const size_t B = qd[0], H = qd[1], Lq = qd[2], D = qd[3];
  size_t wk[4] = {B, H, 0, D};
  double *K = read4("--k", a->kpath, wk, "(B, H, Lk, D)", kd);
  const size_t Lk = kd[2];
  size_t wv[4] = {B, H, Lk, 0};
  double *V = read4("--v", a->vpath, wv, "(B, H, Lk, Dv)", vd);
  const size_t Dv = vd[3];
  /* an axis of length 0, named by the file it comes from */
  if (!B || !H || !Lq || !D || !Lk || !Dv) {
    const char *opt = !B || !H || !Lq || !D ? "--q" : !Lk ? "--k" : "--v";
    const char *path = !B || !H || !Lq || !D ? a->qpath : !Lk ? a->kpath : a->vpath;
    const char *axis = !B ? "B" : !H ? "H" : !Lq ? "Lq" : !D ? "D" : !Lk ? "Lk" : "Dv";
    cli_die(EXIT_RUNTIME, "%s %s: the axis %s has length 0 (B = %zu, H = %zu, Lq = %zu, Lk = %zu, D = %zu, Dv = %zu)",
            opt, path, axis, B, H, Lq, Lk, D, Dv);
  }
  const size_t nq = B * H * Lq * D, nk = B * H * Lk * D, nv = B * H * Lk * Dv, nh = B * H * Lq * Dv;
  gfi_attn_batch_spec sp;
  gfi_attn_batch_default_spec(&sp);
  sp.kernel = a->kern;
  sp.causal = a->causal;
  sp.denom_tol = a->tol;
  sp.eps = a->eps;
  sp.empty_zero = strcmp(a->empty, "zero") == 0;
  sp.dtype = a->f32 ? GFI_ATTN_F32 : GFI_ATTN_F64;
  size_t nR = 0;
  double *R = cli_list("--R", a->Rs, &nR);
  if (nR == 1)
    sp.rmode = GFI_ATTN_R_SCALAR;
  else if (nR == H)
    sp.rmode = GFI_ATTN_R_HEAD;
  else if (nR == H * D)
    sp.rmode = GFI_ATTN_R_HEAD_AXIS;
  else
    cli_usage("--R", "expected 1, %zu (per head) or %zu (per head and axis, R[h*D + d]) radii, got %zu", H, H * D, nR);
  for (size_t k = 0; k < nR; k++)
    if (!(R[k] > 0)) cli_usage("--R", "radii must be > 0, got %g", R[k]);
  unsigned char *kpad = NULL, *mask = NULL;
  if (a->kpadpath) {
    int nd;
    size_t d[8];
    double *x = read_nd("--key-pad", a->kpadpath, &nd, d, NULL);
    char got[160];
    shape_str(got, sizeof got, nd, d);
    if (nd != 2 || d[0] != B || d[1] != Lk)
      cli_die(EXIT_RUNTIME, "--key-pad %s: shape %s, expected (B, Lk) = (%zu, %zu)", a->kpadpath, got, B, Lk);
    kpad = to_bytes(x, B * Lk);
    free(x);
  }
  if (a->maskpath) {
    int nd;
    size_t d[8];
    double *x = read_nd("--mask", a->maskpath, &nd, d, NULL);
    char got[160];
    shape_str(got, sizeof got, nd, d);
    size_t mb = nd == 3 ? d[0] : 1;
    if (!((nd == 2 && d[0] == Lq && d[1] == Lk) || (nd == 3 && (d[0] == 1 || d[0] == B) && d[1] == Lq && d[2] == Lk)))
      cli_die(EXIT_RUNTIME, "--mask %s: shape %s, expected (Lq, Lk), (1, Lq, Lk) or (B, Lq, Lk) with B = %zu, Lq = %zu, Lk = %zu",
              a->maskpath, got, B, Lq, Lk);
    sp.mask_batch = mb;
    mask = to_bytes(x, mb * Lq * Lk);
    free(x);
  }
  double *dH = NULL;
  if (a->grad && a->dhpath) {
    size_t wd[4] = {B, H, Lq, Dv};
    dH = read4("--dh", a->dhpath, wd, "(B, H, Lq, Dv)", hd);
  } else if (a->grad) {
    dH = cli_array(nh, sizeof *dH, 1);
    for (size_t k = 0; k < nh; k++) dH[k] = 1;
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = a->nthreads;
  void *q = as_dtype(Q, nq, a->f32), *k = as_dtype(K, nk, a->f32), *v = as_dtype(V, nv, a->f32);
  void *r = as_dtype(R, nR, a->f32), *h = cli_array(nh, a->f32 ? sizeof(float) : sizeof(double), 1);
  /* the converted copies are what the calls use: free the originals now, so
   * that an error exit below leaves no unreachable block behind */
  free(Q), free(K), free(V), free(R);
  Q = K = V = R = NULL;
  double *saved = cli_array(gfi_attn_batch_saved_size(B, H, Lq), sizeof *saved, 1);
  gfi_attn_info info;
  int st = gfi_attn_batch_forward(&sp, B, H, Lq, Lk, D, Dv, q, k, v, r, kpad, mask, &o, h, saved, &info);
  if (st != GFI_EDENOM) cli_check(st, "attention forward");
  if (info.nempty && !sp.empty_zero)
    cli_die(EXIT_RUNTIME, "%zu rows see no key (first: batch %zu, head %zu, query %zu): use --empty zero to write "
            "them as zeros, or change the masks", info.nempty, info.first_empty / (H * Lq), info.first_empty / Lq % H,
            info.first_empty % Lq);
  if (info.nflagged)
    cli_die(EXIT_RUNTIME, "%zu rows have a vanishing or negative denominator sum_j w_ij (first: batch %zu, head %zu, "
            "query %zu; odd --l or a polynomial --phi): their H is undefined", info.nflagged, info.first_flagged / (H * Lq),
            info.first_flagged / Lq % H, info.first_flagged % Lq);
  double *Hd = from_dtype(h, nh, a->f32);
  size_t dims[4] = {B, H, Lq, Dv};
  if (a->grad) {
    void *dh = as_dtype(dH, nh, a->f32);
    size_t es = a->f32 ? sizeof(float) : sizeof(double);
    void *gq = cli_array(nq, es, 1), *gk = cli_array(nk, es, 1), *gv = cli_array(nv, es, 1), *gr = cli_array(nR, es, 1);
    cli_check(gfi_attn_batch_backward(&sp, B, H, Lq, Lk, D, Dv, q, k, v, r, kpad, mask, &o, h, saved, dh, gq, gk, gv,
                                      gr, NULL), "attention backward");
    char path[4096];
    const char *names[4] = {"dQ", "dK", "dV", "dR"};
    void *arrs[4] = {gq, gk, gv, gr};
    size_t n[4] = {nq, nk, nv, nR};
    size_t sh[4][4] = {{B, H, Lq, D}, {B, H, Lk, D}, {B, H, Lk, Dv}, {nR}};
    for (int t = 0; t < 4; t++) {
      snprintf(path, sizeof path, "%s.%s.npy", a->grad, names[t]);
      double *x = from_dtype(arrs[t], n[t], a->f32);
      write_nd("--grad", path, t == 3 ? 1 : 4, sh[t], x, a->f32);
      free(x);
      free(arrs[t]);
    }
    free(dh);
  }
  write_nd("--out", a->outpath, 4, dims, Hd, a->f32);
  free(Q), free(K), free(V), free(R), free(dH), free(kpad), free(mask), free(q), free(k), free(v), free(r), free(h);
  free(saved), free(Hd);
  return 0;
}

int cmd_attention(int argc, char **argv) {
  const char *qpath = NULL, *kpath = NULL, *vpath = NULL, *kind = NULL, *Rs = NULL, *grad = NULL, *dhpath = NULL;
  const char *outpath = NULL, *kpadpath = NULL, *maskpath = NULL, *dtype = NULL, *empty = NULL;
  double eps = 0;
  size_t heads = 1;
  int l = 4, causal = 0, nthreads = 0, grad_npy = 0;
  const char *phi = NULL;
  double scale = 0, tol = 1e-8;
  const cli_opt opts[] = {
    {"q", CLI_STR, &qpath, .arg = "FILE", .section = "inputs (text tables or .npy float64 arrays, L rows)",
     .help = "queries: L x (heads * D)"},
    {"k", CLI_STR, &kpath, .arg = "FILE", .help = "keys: L x (heads * D)"},
    {"v", CLI_STR, &vpath, .arg = "FILE", .help = "values: L x (heads * Dv)"},
    {"heads", CLI_SIZE, &heads, .def = "1", .arg = "H", .min = 1,
     .help = "heads: head h uses columns h*D .. (h+1)*D - 1 (h*Dv .. for V)"},
    {"kind", CLI_STR, &kind, .def = "fourier", .arg = "K", .section = "attention",
     .help = "fourier: w_ij = prod_d sinc(R_d (q_id - k_jd))^l (FourierFormer eq. 15);\n"
             "softmax: w_ij = exp(scale q_i.k_j) (scaled dot-product attention)"},
    {"l", CLI_INT, &l, .def = "4", .arg = "L", .min = 1, .help = "fourier: phi(z) = z^L, L = 1..8"},
    {"phi", CLI_STR, &phi, .arg = "pow:L|poly:a1,..",
     .help = "fourier: phi as gfi density's --phi takes it (instead of --l): pow:L, or\n"
             "poly:a1,..,ad for phi(z) = a1 z + .. + ad z^d (d <= 8, a_j >= 0); the weight\n"
             "prod_d phi(sinc(R_d (q_d - k_d))) (a polynomial: a float64 per-pair engine)"},
    {"R", CLI_STR, &Rs, .arg = "R[,..]",
     .help = "fourier: one radius, D radii (per axis, every head) or heads*D\n"
             "radii (per head and axis); all > 0 (required for fourier)"},
    {"scale", CLI_POSITIVE, &scale, .arg = "S", .help = "softmax: the logit scale (default 1/sqrt(D))"},
    {"causal", CLI_FLAG, &causal, .help = "row i sees keys j <= i only"},
    {"denom-tol", CLI_DOUBLE, &tol, .def = "1e-8", .arg = "T",
     .help = "fourier: flag a row (NaN) when sum_j w_ij <= T sum_j |w_ij| (odd l, polynomials)"},
    {"key-pad", CLI_STR, &kpadpath, .arg = "FILE", .section = "batched layout (4-D .npy inputs)",
     .help = "with --q/--k/--v of shapes (B, H, Lq, D), (B, H, Lk, D), (B, H, Lk, Dv):\n"
             "key padding, a (B, Lk) .npy array (bool, uint8 or float); nonzero = key excluded"},
    {"mask", CLI_STR, &maskpath, .arg = "FILE",
     .help = "a general mask, (Lq, Lk), (1, Lq, Lk) or (B, Lq, Lk) .npy; nonzero = excluded\n"
             "(--causal offsets the diagonal by Lk - Lq: query i sees keys j <= i + Lk - Lq)"},
    {"eps", CLI_DOUBLE, &eps, .def = "0", .arg = "E",
     .help = "FourierFormer's normalisation H = N / (S + E) (their code: 1e-6); 0 = exact"},
    {"empty", CLI_STR, &empty, .def = "error", .arg = "error|zero",
     .help = "rows that see no key: an error (default) or zero rows"},
    {"dtype", CLI_STR, &dtype, .def = "float64", .arg = "T",
     .help = "float64 or float32: the library call's dtype and the storage of H and the\n"
             "gradients written (float32: float32 pair loop, float64 row sums; docs/attention.md)"},
    {"grad", CLI_STR, &grad, .arg = "PREFIX", .section = "gradients",
     .help = "also write the gradients of sum(dH * H): PREFIX.dQ, PREFIX.dK, PREFIX.dV\n"
             "and, for fourier, PREFIX.dR (as many values as --R has)"},
    {"dh", CLI_STR, &dhpath, .arg = "FILE", .help = "dH, L x (heads * Dv) (default: all ones, the gradient of sum H)"},
    {"grad-npy", CLI_FLAG, &grad_npy, .help = "write the gradients as PREFIX.dQ.npy, ... (float64)"},
    CLI_OPT_THREADS(nthreads),
    CLI_OPT_OUT(outpath),
    {0}};
  const cli_spec spec = {
    "usage: gfi attention --q FILE --k FILE --v FILE [--kind fourier|softmax] [--R R,..] [--heads H]\n"
    "                     [--grad PREFIX [--dh FILE]] [--out FILE]\n"
    "       gfi attention --q Q.npy --k K.npy --v V.npy --R R,.. --out H.npy [--causal]\n"
    "                     [--key-pad P.npy] [--mask M.npy] [--eps E] [--dtype float32] [--grad PREFIX]\n\n"
    "Attention of the given queries, keys and values, head by head:\n"
    "  H_i = sum_j w_ij v_j / sum_j w_ij\n"
    "with Fourier weights (FourierFormer's generalized Fourier integral kernel,\n"
    "phi = z^l; exact, O(L D) memory) or softmax weights. Prints H, L rows x\n"
    "(heads * Dv) columns (the heads side by side). With --grad, the exact gradients\n"
    "of sum(dH * H) with respect to Q, K, V (and the radii) go to files.\n"
    "Batched layout: when --q is a 4-D .npy array (B, H, Lq, D), K and V are\n"
    "(B, H, Lk, D) and (B, H, Lk, Dv) (Lk may differ from Lq: memory keys), H goes\n"
    "to --out as a (B, H, Lq, Dv) .npy and the gradients to PREFIX.dQ.npy, ...;\n"
    "--R takes 1, H or H*D radii (fourier only).\n",
    opts, NULL};
  if (cli_parse(&spec, argc, argv)) return 0;
  if (!qpath) cli_usage("--q", "required");
  if (!kpath) cli_usage("--k", "required");
  if (!vpath) cli_usage("--v", "required");
  if (strcmp(dtype, "float64") != 0 && strcmp(dtype, "float32") != 0)
    cli_usage("--dtype", "expected float64 or float32, got '%s'", dtype);
  if (strcmp(empty, "error") != 0 && strcmp(empty, "zero") != 0)
    cli_usage("--empty", "expected error or zero, got '%s'", empty);
  if (!(eps >= 0 && isfinite(eps))) cli_usage("--eps", "must be >= 0 and finite");
  gfi_kernel kern;
  if (phi) {
    if (cli_given("l")) cli_usage("--phi", "give --phi or --l, not both");
    cli_phi("--phi", phi, &kern);
    if (kern.kind != GFI_PHI_POW && kern.kind != GFI_PHI_POLY)
      cli_usage("--phi", "attention takes pow:L or poly:a1,..,ad (phi of sinc), got '%s'", phi);
  } else {
    if (l > 8) cli_usage("--l", "expected 1..8");
    gfi_kernel_pow(&kern, l);
  }
  int batched = 0;
  if (gfi_npy_sniff(qpath)) {
    int nd;
    size_t d[8];
    double *x = read_nd("--q", qpath, &nd, d, NULL);
    free(x);
    batched = nd == 4;
  }
  if (!batched) {
    const char *only[] = {"key-pad", "mask", "eps", "empty", "dtype"};
    for (int t = 0; t < 5; t++)
      if (cli_given(only[t]))
        cli_usage(t == 0 ? "--key-pad" : t == 1 ? "--mask" : t == 2 ? "--eps" : t == 3 ? "--empty" : "--dtype",
                  "only with the batched layout: --q a 4-D .npy array (B, H, Lq, D)");
  } else {
    if (strcmp(kind, "fourier") != 0) cli_usage("--kind", "the batched layout is Fourier attention only");
    if (cli_given("heads")) cli_usage("--heads", "not with 4-D inputs (the heads are their second axis)");
    if (!Rs) cli_usage("--R", "required for --kind fourier");
    if (!outpath) cli_usage("--out", "required with 4-D inputs (H is written as a .npy array)");
    if (!(tol >= 0 && tol < 1)) cli_usage("--denom-tol", "must be in [0, 1)");
    if (!grad && (cli_given("dh") || grad_npy)) cli_usage(cli_given("dh") ? "--dh" : "--grad-npy", "needs --grad");
    batch_args a = {qpath, kpath, vpath, Rs, grad, dhpath, outpath, kpadpath, maskpath, empty,
                    kern, causal, nthreads, strcmp(dtype, "float32") == 0, tol, eps};
    return attention_batched(&a);
  }
  int fourier = strcmp(kind, "fourier") == 0;
  if (!fourier && strcmp(kind, "softmax") != 0) cli_usage("--kind", "expected fourier or softmax, got '%s'", kind);
  if (!(tol >= 0 && tol < 1)) cli_usage("--denom-tol", "must be in [0, 1)");
  if (!fourier && cli_given("R")) cli_usage("--R", "only for --kind fourier");
  if (fourier && cli_given("scale")) cli_usage("--scale", "only for --kind softmax");
  if (!fourier && (phi || cli_given("l"))) cli_usage(phi ? "--phi" : "--l", "only for --kind fourier");
  if (!grad && (cli_given("dh") || grad_npy)) cli_usage(cli_given("dh") ? "--dh" : "--grad-npy", "needs --grad");
  size_t Lq, Lk, Lv, cq, ck, cv;
  double *Q = cli_read_table("--q", qpath, 0, &Lq, &cq);
  double *K = cli_read_table("--k", kpath, 0, &Lk, &ck);
  double *V = cli_read_table("--v", vpath, 0, &Lv, &cv);
  if (Lq == 0) cli_die(EXIT_RUNTIME, "--q %s: no rows", qpath);
  if (Lk != Lq || Lv != Lq)
    cli_die(EXIT_RUNTIME, "--k/--v: %zu and %zu rows, but --q %s has %zu (one row per position)", Lk, Lv, qpath, Lq);
  if (ck != cq) cli_die(EXIT_RUNTIME, "--k %s: %zu columns, but --q has %zu", kpath, ck, cq);
  if (cq % heads || cv % heads)
    cli_usage("--heads", "%zu heads do not divide the %zu query/key columns and %zu value columns", heads, cq, cv);
  const size_t L = Lq, H = heads, D = cq / heads, Dv = cv / heads;
  double *dH = NULL;
  if (grad) {
    if (dhpath) {
      size_t Ld, cd;
      dH = cli_read_table("--dh", dhpath, 0, &Ld, &cd);
      if (Ld != L || cd != H * Dv)
        cli_die(EXIT_RUNTIME, "--dh %s: %zu x %zu, expected %zu x %zu (the shape of H)", dhpath, Ld, cd, L, H * Dv);
    } else {
      dH = cli_array(L, H * Dv, sizeof *dH);
      for (size_t k = 0; k < L * H * Dv; k++) dH[k] = 1;
    }
  }
  /* radii: 1, D or H D values */
  size_t nR = 0;
  double *R = NULL;
  int per_axis = 0;
  if (fourier) {
    if (!Rs) cli_usage("--R", "required for --kind fourier");
    R = cli_list("--R", Rs, &nR);
    if (nR != 1 && nR != D && nR != H * D)
      cli_usage("--R", "expected 1, %zu (per axis) or %zu (per head and axis) radii, got %zu", D, H * D, nR);
    for (size_t k = 0; k < nR; k++)
      if (!(R[k] > 0)) cli_usage("--R", "radii must be > 0, got %g", R[k]);
    per_axis = nR > 1;
  } else if (!cli_given("scale")) {
    scale = 1 / sqrt((double)D);
  }
  gfi_opts o;
  gfi_default_opts(&o);
  o.nthreads = nthreads;
  double *out = cli_array(L, H * Dv, sizeof *out);
  double *q = cli_array(L, D, sizeof *q), *k = cli_array(L, D, sizeof *k), *v = cli_array(L, Dv, sizeof *v);
  double *h = cli_array(L, Dv, sizeof *h), *dh = grad ? cli_array(L, Dv, sizeof *dh) : NULL;
  double *gQ = NULL, *gK = NULL, *gV = NULL, *gR = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
  if (grad) {
    gQ = cli_array(L, H * D, sizeof *gQ), gK = cli_array(L, H * D, sizeof *gK), gV = cli_array(L, H * Dv, sizeof *gV);
    dq = cli_array(L, D, sizeof *dq), dk = cli_array(L, D, sizeof *dk), dv = cli_array(L, Dv, sizeof *dv);
    gR = cli_array(nR ? nR : 1, 1, sizeof *gR);
  }
  gfi_attn_plan *plan = NULL;
  double *saved = NULL;
  if (fourier) {
    gfi_attn_spec sp;
    gfi_attn_default_spec(&sp);
    sp.kind = GFI_ATTN_FOURIER;
    sp.kernel = kern;
    sp.per_axis_R = per_axis;
    sp.causal = causal;
    sp.denom_tol = tol;
    cli_check(gfi_attn_plan_create(&plan, &sp, L, D, Dv, &o), "attention plan");
    saved = cli_array(gfi_attn_saved_size(plan), 1, sizeof *saved);
  }
  size_t flagged = 0;
  for (size_t hd = 0; hd < H; hd++) {
    take(Q, L, H, D, hd, q);
    take(K, L, H, D, hd, k);
    take(V, L, H, Dv, hd, v);
    if (grad) take(dH, L, H, Dv, hd, dh);
    /* values beyond 2^500 are scaled by a power of 2 (exactly) so that the
     * sums over j cannot overflow; H and the gradients in Q, K, R are linear
     * in V and are scaled back, dV does not depend on V */
    double vmax = 0, vs = 1;
    for (size_t a = 0; a < L * Dv; a++) vmax = fmax(vmax, fabs(v[a]));
    if (vmax > 0x1p500) {
      int e;
      frexp(vmax, &e);
      vs = ldexp(1, e - 1); /* finite for every finite vmax */
      for (size_t a = 0; a < L * Dv; a++) v[a] /= vs;
    }
    size_t head_flagged = 0;
    if (fourier) {
      double *r = R + (nR == H * D && H > 1 ? hd * D : 0);
      double r1[1] = {R[0]};
      if (nR == 1) r = r1;
      /* the phases R_d q and R_d k (as density and regress check R x) */
      double rr[GFI_MAX_DIM];
      for (size_t d = 0; d < D && d < GFI_MAX_DIM; d++) rr[d] = nR == 1 ? R[0] : r[d];
      if (D <= GFI_MAX_DIM) {
        cli_check_phase(qpath, L, D, q, rr);
        cli_check_phase(kpath, L, D, k, rr);
      }
      gfi_attn_info info;
      int st = gfi_attn_forward(plan, q, k, v, r, h, saved, &info);
      if (st != GFI_EDENOM) cli_check(st, "attention forward");
      flagged += info.nflagged;
      head_flagged = info.nflagged;
      if (grad) {
        double dr[GFI_MAX_DIM];
        st = gfi_attn_backward(plan, q, k, v, r, h, saved, dh, dq, dk, dv, dr, NULL);
        if (st != GFI_EDENOM) cli_check(st, "attention backward");
        size_t np = gfi_attn_nparam(plan);
        for (size_t a = 0; a < np; a++) dr[a] *= vs;
        for (size_t a = 0; a < np; a++)
          if (!isfinite(dr[a]) && !head_flagged)
            cli_die(EXIT_RUNTIME, "--grad: the gradient dR of head %zu overflows a double (values of --v %s up to "
                    "%g): rescale V or dH", hd + 1, vpath, vmax);
        if (nR == H * D && H > 1)
          memcpy(gR + hd * D, dr, D * sizeof *dr);
        else
          for (size_t a = 0; a < np; a++) gR[a] = (hd ? gR[a] : 0) + dr[a];
      }
    } else {
      /* the logits scale q_i.k_j must be finite: |scale| D max|q| max|k| bounds them */
      double qm = 0, km = 0;
      for (size_t a = 0; a < L * D; a++) qm = fmax(qm, fabs(q[a])), km = fmax(km, fabs(k[a]));
      if (!(scale * (double)D * qm * km < 1e300))
        cli_die(EXIT_RUNTIME, "--q %s, --k %s: the softmax logits scale q.k may overflow a double (head %zu: "
                "|q| up to %g, |k| up to %g, --scale %g, D = %zu): rescale Q or K, or lower --scale", qpath, kpath,
                hd + 1, qm, km, scale, D);
      cli_check(gfi_attn_softmax_forward(L, D, Dv, q, k, v, scale, causal, &o, h), "softmax attention");
      if (grad)
        cli_check(gfi_attn_softmax_backward(L, D, Dv, q, k, v, scale, causal, &o, dh, dq, dk, dv),
                  "softmax attention backward");
    }
    if (vs != 1) {
      for (size_t a = 0; a < L * Dv; a++) h[a] *= vs;
      if (grad) {
        for (size_t a = 0; a < L * D; a++) dq[a] *= vs, dk[a] *= vs;
      }
    }
    /* a result that overflows is an error naming the input, never a row of
     * inf (flagged rows are NaN by design, and only they) */
    size_t nanrows = 0;
    for (size_t i = 0; i < L; i++) {
      int rownan = 0;
      for (size_t c = 0; c < Dv; c++) {
        double x = h[i * Dv + c];
        if (isinf(x))
          cli_die(EXIT_RUNTIME, "--v %s: the attention output overflows a double at row %zu, column %zu (head %zu; "
                  "values up to %g): rescale V", vpath, i + 1, hd * Dv + c + 1, hd + 1, vmax);
        rownan |= isnan(x);
      }
      nanrows += (size_t)rownan;
    }
    if (nanrows > head_flagged)
      cli_die(EXIT_RUNTIME, "--v %s: the attention output of head %zu is NaN in %zu unflagged rows (values up to "
              "%g overflow the sums): rescale V", vpath, hd + 1, nanrows - head_flagged, vmax);
    if (grad) {
      const double *gg[3] = {dq, dk, dv};
      const size_t gn[3] = {L * D, L * D, L * Dv};
      static const char *gname[3] = {"dQ", "dK", "dV"};
      for (int t = 0; t < 3; t++)
        for (size_t a = 0; a < gn[t]; a++)
          if (isinf(gg[t][a]) || (isnan(gg[t][a]) && !head_flagged))
            cli_die(EXIT_RUNTIME, "--grad: the gradient %s of head %zu overflows a double at row %zu (values of "
                    "--v %s up to %g, of --dh up to the given): rescale V or dH", gname[t], hd + 1,
                    a / (t == 2 ? Dv : D) + 1, vpath, vmax);
    }
    put_back(h, L, H, Dv, hd, out);
    if (grad) {
      put_back(dq, L, H, D, hd, gQ);
      put_back(dk, L, H, D, hd, gK);
      put_back(dv, L, H, Dv, hd, gV);
    }
  }
  cli_output oo;
  cli_output_open(&oo, outpath);
  cli_header(oo.f);
  cli_meta(oo.f, "shape", "L = %zu, heads = %zu, D = %zu, Dv = %zu", L, H, D, Dv);
  if (fourier) {
    cli_meta_values(oo.f, "R", "", nR, R);
    cli_meta(oo.f, "flagged", "%zu rows (NaN: the denominator vanished or changed sign)", flagged);
  } else {
    cli_meta(oo.f, "scale", "%.17g", scale);
  }
  if (grad)
    cli_meta(oo.f, "gradients", "%s.dQ, %s.dK, %s.dV%s%s%s: d sum(dH * H) (dH %s)", grad, grad, grad,
             fourier ? ", " : "", fourier ? grad : "", fourier ? ".dR" : "", dhpath ? dhpath : "all ones");
  cli_output_meta(&oo, L, 0, H * Dv, 0);
  fprintf(oo.f, "# H: %zu columns, head h in columns h*%zu+1 .. (h+1)*%zu\n", H * Dv, Dv, Dv);
  cli_output_rows(&oo, L, 0, NULL, H * Dv, out, 0);
  if (grad) {
    write_grad(grad, "dQ", grad_npy, L, H * D, gQ, "dQ");
    write_grad(grad, "dK", grad_npy, L, H * D, gK, "dK");
    write_grad(grad, "dV", grad_npy, L, H * Dv, gV, "dV");
    if (fourier) write_grad(grad, "dR", grad_npy, 1, nR, gR, "dR (one per --R value)");
  }
  cli_output_close(&oo);
  gfi_attn_destroy(plan);
  free(saved);
  free(Q), free(K), free(V), free(dH), free(R), free(out), free(q), free(k), free(v), free(h), free(dh);
  free(gQ), free(gK), free(gV), free(gR), free(dq), free(dk), free(dv);
  return 0;
}
