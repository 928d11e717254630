/* Data sources and query points shared by 'gfi density' and 'gfi regress'. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_source.h"

void cli_source_check(const cli_source *s) {
  int n = cli_given("n"), seed = cli_given("seed");
  if (s->data && s->model) cli_usage("--data", "give either --data or --model, not both");
  if (!s->data && !s->model)
    cli_usage("--data", "required (or --model SPEC%s --n N --seed S)", s->regress ? " --truth F" : "");
  if (s->model && s->regress && !s->truth) cli_usage("--truth", "required with --model");
  if (s->model && !n) cli_usage("--n", "required with --model");
  if (s->model && !seed) cli_usage("--seed", "required with --model");
  if (s->data && s->regress && (n || seed || s->truth || s->noise))
    cli_usage("--n", "--n, --seed, --truth and --noise go with --model, not --data");
  if (s->data && !s->regress && (n || seed)) cli_usage("--n", "--n and --seed go with --model, not --data");
  if (!s->at && !s->grid) cli_usage("--at", "required (or --grid lo:hi:n)");
  if (s->at && s->grid) cli_usage("--at", "give either --at or --grid, not both");
}

static const char *shown(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

static void load_file(const cli_source *s, size_t *D, size_t *N, double **x, size_t *V, double **y) {
  size_t nc;
  if (!s->regress) {
    *x = cli_read_table("data file", s->data, *D, N, &nc);
    *D = nc;
    return;
  }
  double *tab = cli_read_table("data file", s->data, 0, N, &nc);
  if (!*D) *D = nc > 1 ? nc - 1 : 1;
  if (nc <= *D)
    cli_die(EXIT_RUNTIME, "data file %s:1: %zu columns, need D = %zu inputs and at least one response",
            shown(s->data), nc, *D);
  size_t d = *D, v = nc - d;
  *V = v;
  *x = cli_array(*N, d, sizeof **x);
  *y = cli_array(*N, v, sizeof **y);
  for (size_t i = 0; i < *N; i++) {
    memcpy(*x + i * d, tab + i * nc, d * sizeof **x);
    memcpy(*y + i * v, tab + i * nc + d, v * sizeof **y);
  }
  free(tab);
}

void cli_source_load(const cli_source *s, size_t *D, size_t *N, double **x, size_t *V, double **y) {
  *D = s->dim;
  if (s->data) {
    load_file(s, D, N, x, V, y);
    return;
  }
  if (!*D) *D = 1;
  *N = s->n;
  cli_budget("--n", (double)*N, (double)(*D + !!s->regress), s->regress ? "points x (D + 1) columns" : "points x D");
  gfi_model *m = cli_model(s->model, *D);
  gfi_regfun *f = NULL;
  gfi_noise nz;
  if (s->regress) {
    gfi_errinfo err;
    int st = gfi_regfun_parse(&f, s->truth, *D, &err);
    if (st) cli_usage("--truth", "%s", err.msg[0] ? err.msg : gfi_strerror(st));
    if (gfi_noise_parse(&nz, s->noise, &err)) cli_usage("--noise", "%s", err.msg);
  }
  *x = cli_array_for("--n", "points x D", *N, *D, sizeof **x);
  if (s->regress) *y = cli_array_for("--n", "responses", *N, 1, sizeof **y);
  gsl_rng *r = gfi_rng_stream(s->seed, 0);
  if (!r) cli_die(EXIT_RUNTIME, "out of memory for a random-number stream");
  if (s->regress) {
    *V = 1;
    cli_check(gfi_regress_sample(m, f, &nz, r, *N, *x, *y), "sampling");
  } else {
    cli_check(gfi_model_sample(m, r, *N, *x), "sampling");
  }
  gsl_rng_free(r);
  gfi_model_free(m);
  gfi_regfun_free(f);
}

/* One axis spec lo:hi:n. */
static void grid_axis(const char *spec, double *lo, double *hi, size_t *n) {
  char *copy = strdup(spec);
  if (!copy) cli_die(EXIT_RUNTIME, "out of memory copying the grid axis '%s'", spec);
  char *c1 = strchr(copy, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c1 || !c2 || strchr(c2 + 1, ':')) cli_usage("--grid", "expected lo:hi:n, got '%s'", spec);
  *c1 = *c2 = '\0';
  char *end;
  *lo = strtod(copy, &end);
  if (end == copy || *end) cli_usage("--grid", "lo is not a number in '%s'", spec);
  *hi = strtod(c1 + 1, &end);
  if (end == c1 + 1 || *end) cli_usage("--grid", "hi is not a number in '%s'", spec);
  if (!isfinite(*lo) || !isfinite(*hi)) cli_usage("--grid", "lo and hi must be finite in '%s'", spec);
  if (!isfinite(*hi - *lo))
    cli_usage("--grid", "the span hi - lo of '%s' overflows a double (above 1.8e308): use a narrower range", spec);
  if (c2[1] < '0' || c2[1] > '9') cli_usage("--grid", "n must be an integer >= 1 in '%s'", spec);
  *n = cli_size("--grid", c2 + 1, 1);
  free(copy);
}

static double *grid_points(cli_source *s, size_t D, size_t *M, char *desc, size_t dn) {
  size_t nv, na = 0;
  const char *const *v = cli_values("grid", &nv);
  size_t len = 0;
  for (size_t i = 0; i < nv; i++) len += strlen(v[i]) + 1;
  char *all = cli_array(len + 1, 1, 1);
  all[0] = '\0';
  for (size_t i = 0; i < nv; i++) {
    if (i) strcat(all, ",");
    strcat(all, v[i]);
  }
  for (const char *c = all; *c; c++) na += *c == ',';
  na++;
  if (na != 1 && na != D) cli_usage("--grid", "expected 1 or D = %zu axis specs, got %zu", D, na);
  double *lo = cli_array(D, 2, sizeof *lo), *hi = lo + D;
  size_t *n = cli_array(D, 1, sizeof *n), total = 1;
  char *tok = all;
  for (size_t j = 0; j < na; j++) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    grid_axis(tok, &lo[j], &hi[j], &n[j]);
    tok = comma ? comma + 1 : tok;
  }
  free(all);
  for (size_t j = na; j < D; j++) lo[j] = lo[0], hi[j] = hi[0], n[j] = n[0];
  size_t used = (size_t)snprintf(desc, dn, "grid");
  for (size_t j = 0; j < D; j++) {
    if (total > SIZE_MAX / n[j]) cli_usage("--grid", "too many points");
    total *= n[j];
    if (!CLI_WITHIN_BUDGET(total, D))
      cli_usage("--grid", "%.3g points in %zu dimension(s), above the budget of %.3g values (docs/robustness.md)",
                (double)total, D, CLI_MAX_VALUES);
    if (used < dn)
      used += (size_t)snprintf(desc + used, dn - used, "%s%.17g:%.17g:%zu", j ? " x " : " ", lo[j], hi[j], n[j]);
  }
  if (used < dn) snprintf(desc + used, dn - used, " (%zu points, the last axis fastest)", total);
  /* the points as the library's grid evaluations place them */
  double *x = cli_array_for("--grid", "points x D", total, D, sizeof *x);
  for (size_t g = 0; g < total; g++) {
    size_t r = g;
    for (size_t j = D; j-- > 0;) {
      size_t k = r % n[j];
      r /= n[j];
      x[g * D + j] = n[j] > 1 ? lo[j] + (hi[j] - lo[j]) * (double)k / (double)(n[j] - 1) : lo[j];
    }
  }
  s->lo = lo;
  s->hi = hi;
  s->gn = n;
  *M = total;
  return x;
}

double *cli_source_queries(cli_source *s, size_t D, size_t *M, char *desc, size_t n) {
  if (s->grid) return grid_points(s, D, M, desc, n);
  double *x = cli_read_table("query file", s->at, D, M, NULL);
  snprintf(desc, n, "%s (%zu points)", s->at, *M);
  return x;
}

void cli_source_free(cli_source *s) {
  free(s->lo);
  free(s->gn);
  s->lo = s->hi = NULL;
  s->gn = NULL;
}

void cli_method(const char *method, gfi_opts *o) {
  if (strcmp(method, "auto") == 0)
    o->method = GFI_METHOD_AUTO;
  else if (strcmp(method, "direct") == 0)
    o->method = GFI_METHOD_DIRECT;
  else if (strcmp(method, "fast") == 0)
    o->method = GFI_METHOD_FAST;
  else
    cli_usage("--method", "unknown method '%s' (expected direct, fast or auto)", method);
  /* the options as a whole, by the library's one check */
  int st = gfi_opts_check(o);
  if (st) {
    const char *p = gfi_error_param(st);
    cli_usage(!strcmp(p, "tol") ? "--tol" : !strcmp(p, "nthreads") ? "--threads" : "--method", "%s", gfi_strerror(st));
  }
}

void cli_check_method_dim(const gfi_opts *o, size_t D) {
  if (o->method == GFI_METHOD_FAST && D > 3)
    cli_usage("--method", "fast needs D <= 3 (the band-limited route's NUFFT grids have at most 3 axes), the data "
              "have D = %zu; use --method direct or auto", D);
}

void cli_check_route(int status, const gfi_opts *o, const char *what) {
  if (status == GFI_ERANGE && o->method == GFI_METHOD_FAST)
    cli_die(EXIT_RUNTIME, "%s: --method fast: %s (too many frequency nodes for the kernel's width against the "
            "span of data and queries; --method auto falls back to the direct sum)", what, gfi_strerror(status));
  if (status == GFI_EUNSUPPORTED && o->method == GFI_METHOD_FAST)
    cli_usage("--method", "fast is not available here (%s: it needs D <= 3 and a band-limited kernel); use "
              "--method direct or auto", what);
  if (status == GFI_ENOMEM)
    cli_die(EXIT_RUNTIME, "%s: out of memory; use fewer query points (--at, --grid) or data points", what);
  cli_check(status, what);
}

/* --method fast: a warning when the cost model put the fast route at more
 * than CLI_FAST_COST_WARN times the direct sum's cost and at more than
 * CLI_FAST_COST_MIN of its units (about 5 ms in 1-D, 0.1 s in 3-D: the
 * fixed cost of a fast evaluation, up to 3e7 units, never warns alone). */
#define CLI_FAST_COST_WARN 100.0
#define CLI_FAST_COST_MIN 1e8

static const char *reason(int r) {
  switch (r) {
    case GFI_ROUTE_REQUESTED: return "requested";
    case GFI_ROUTE_COST: return "auto: the cost model";
    case GFI_ROUTE_NODES: return "auto: too many frequency nodes or too large a NUFFT grid";
    case GFI_ROUTE_KERNEL: return "the kernel is not band-limited";
    case GFI_ROUTE_DIM: return "D > 3";
    case GFI_ROUTE_BOUND: return "auto: the fast route's bound missed tol (far points)";
  }
  return "?";
}

static void axes(FILE *f, const size_t *v, size_t D) {
  for (size_t j = 0; j < D && j < 3; j++) fprintf(f, "%s%zu", j ? " x " : "", v[j]);
}

void cli_method_meta(FILE *f, const gfi_opts *o, const gfi_fast_info *info) {
  static const char *names[] = {"auto", "direct", "fast"};
  if (!info) {
    cli_meta(f, "method", "direct (the GPU engine; %s requested)", names[o->method]);
    return;
  }
  if (info->route != GFI_METHOD_FAST) {
    cli_meta(f, "method", "direct (%s)", reason(info->reason));
    return;
  }
  size_t D = info->dim;
  if (info->bins[0]) {
    fprintf(f, "# method: fast, binned (%s), tol %.3g; a lattice of ", reason(info->reason), info->tol);
    axes(f, info->bins, D);
    fprintf(f, " cells (%s binning, one FFT convolution per axis)", info->bin_order == 6 ? "quintic" : "cubic");
  } else {
    fprintf(f, "# method: fast (%s), tol %.3g; %zu frequency nodes (", reason(info->reason), info->tol,
            info->nodes_total);
    axes(f, info->nodes, D);
    fputc(')', f);
  }
  if (info->grid_fwd[0]) {
    fputs(", NUFFT grids ", f);
    axes(f, info->grid_fwd, D);
    if (info->grid_bwd[0]) {
      fputs(" and ", f);
      axes(f, info->grid_bwd, D);
    }
    fprintf(f, " at tol %.2g", info->nufft_tol);
  }
  if (info->reused) fputs(", the plan's transform reused", f);
  fprintf(f, "; error bound %.3g (%.3g relative to %.6g)", info->bound_abs, info->bound, info->scale);
  if (info->rows_direct) fprintf(f, "; %zu rows by the direct sum", info->rows_direct);
  fputc('\n', f);
  /* what the header says but a user may not read: on stderr */
  if (info->bound > 1)
    fprintf(stderr, "gfi: warning: the fast route's error bound is %.3g relative to %.3g (the '# method:' "
            "line's scale): the values may be all error; --method direct computes them exactly\n", info->bound,
            info->scale);
  if (info->reason == GFI_ROUTE_REQUESTED && info->cost_direct > 0 &&
      info->cost_fast > CLI_FAST_COST_WARN * info->cost_direct && info->cost_fast > CLI_FAST_COST_MIN)
    fprintf(stderr, "gfi: warning: --method fast ran at an estimated %.3g times the direct sum's cost; "
            "--method auto would have taken the direct sum\n", info->cost_fast / info->cost_direct);
}

int cli_kernel_choice(const char *kernel, const char *R, const char *bandwidth) {
  int gauss = 0;
  if (strcmp(kernel, "gauss") == 0)
    gauss = 1;
  else if (strcmp(kernel, "fourier") != 0)
    cli_usage("--kernel", "unknown kernel '%s' (expected fourier or gauss)", kernel);
  if (!gauss) {
    if (!R) cli_usage("--R", "required for the Fourier estimator");
    if (bandwidth) cli_usage("--bandwidth", "only for --kernel gauss");
  } else {
    if (!bandwidth) cli_usage("--bandwidth", "required for --kernel gauss");
    if (R) cli_usage("--R", "only for --kernel fourier");
    if (cli_given("phi")) cli_usage("--phi", "only for --kernel fourier (the Gaussian kernel has no phi)");
  }
  return gauss;
}
