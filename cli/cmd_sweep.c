/* gfi sweep: MISE over a grid of (model, D, l, N, R, replications) points,
 * one row per point appended as it finishes; rerunning the same command
 * resumes (missing points only, none duplicated). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"

#define NCOL 11
#define MAXMODELS 64

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
  return (h ^ 0xff) * 0x100000001B3ULL;
}

static void check_model(const char *opt, const char *arg, void *dst) {
  (void)dst;
  if (strpbrk(arg, " \t\n")) cli_usage(opt, "no whitespace in a sweep's model spec");
}

int cmd_sweep(int argc, char **argv) {
  const char *out = NULL, *ds = NULL, *ps = NULL, *ns = NULL, *rs = NULL, *qs = NULL;
  uint64_t seed = 0;
  int nthreads = 0, progress = 0;
  const cli_opt opts[] = {
    {"out", CLI_STR, &out, .arg = "FILE", .help = "the sweep's table (appended to; resumed when it exists)"},
    {"model", CLI_STR, NULL, .arg = "SPEC", .flags = CLI_MULTI, .parse = check_model,
     .help = "truth model (see 'gfi sample --help'), no whitespace"},
    {"dims", CLI_STR, &ds, .arg = "D1[,..]", .help = "dimensions, 1..3"},
    {"phis", CLI_STR, &ps, .arg = "L1[,..]", .help = "powers l of phi(z) = z^l, 1..8"},
    {"ns", CLI_STR, &ns, .arg = "N1[,..]", .help = "sample sizes"},
    {"Rs", CLI_STR, &rs, .arg = "R1[,..]", .help = "radii (the same on every axis)"},
    {"reps", CLI_STR, &qs, .arg = "Q1[,..]", .help = "0 (exact MISE) or >= 2 (Monte Carlo replications)"},
    {"seed", CLI_U64, &seed, .arg = "S", .help = "the sweep's seed"},
    CLI_OPT_THREADS(nthreads),
    {"progress", CLI_FLAG, &progress,
     .help = "show progress (count, rate, ETA) on stderr even when it is not\n"
             "a terminal"},
    {0}};
  const cli_spec cs = {
    "usage: gfi sweep --out FILE --model SPEC [--model SPEC ..] --dims D1[,..] --phis L1[,..]\n"
    "                 --ns N1[,..] --Rs R1[,..] --reps Q1[,..] --seed S [options]\n\n"
    "Exact or Monte-Carlo MISE of the generalized Fourier density estimator over\n"
    "the grid model x dim x l x n x R x reps (reps 0 = the exact MISE; reps >= 2 =\n"
    "Monte Carlo with the Plancherel ISE, streamed through a type-3 NUFFT or direct\n"
    "sums by cost (docs/mise-mc.md); grid ISE for 3-D truths without an exact MISE).\n"
    "Points are numbered in that order (reps fastest):\n"
    "index = ((((model*nD + d)*nL + l)*nN + n)*nR + r)*nQ + q.\n"
    "Point i's replications use seed s_i = splitmix64(S + 0x9E3779B97F4A7C15*(i+1)),\n"
    "replication k on RNG stream (s_i, k): any split of the indices over processes or\n"
    "machines gives the same numbers.\n\n"
    "Rows are appended to FILE (flushed and fsync'ed) as points finish. Running the\n"
    "same command again after an interruption computes only the missing points; a\n"
    "partial last line left by a kill is dropped first. FILE's '# sweep-key' line\n"
    "guards against resuming a different grid (threads and --progress may change).\n",
    opts, "Columns: index model dim l n R reps mise se bias2 var (R applies to every axis).\n"};
  if (cli_parse(&cs, argc, argv)) return 0;
  size_t nm;
  const char *const *models = cli_values("model", &nm);
  if (nm > MAXMODELS) cli_usage("--model", "at most %d models", MAXMODELS);
  if (!out) cli_usage("--out", "required");
  if (!nm) cli_usage("--model", "required (repeat for several)");
  if (!ds) cli_usage("--dims", "required");
  if (!ps) cli_usage("--phis", "required");
  if (!ns) cli_usage("--ns", "required");
  if (!rs) cli_usage("--Rs", "required");
  if (!qs) cli_usage("--reps", "required");
  if (!cli_given("seed")) cli_usage("--seed", "required");
  size_t nD, nL, nN, nR, nQ;
  double *dv = cli_list("--dims", ds, &nD), *lv = cli_list("--phis", ps, &nL);
  double *Nv = cli_list("--ns", ns, &nN), *Rv = cli_list("--Rs", rs, &nR), *Qv = cli_list("--reps", qs, &nQ);
  for (size_t i = 0; i < nD; i++)
    if (dv[i] != floor(dv[i]) || dv[i] < 1 || dv[i] > 3) cli_usage("--dims", "dimensions must be 1, 2 or 3");
  for (size_t i = 0; i < nL; i++)
    if (lv[i] != floor(lv[i]) || lv[i] < 1 || lv[i] > 8) cli_usage("--phis", "powers l must be integers 1..8");
  for (size_t i = 0; i < nN; i++)
    if (Nv[i] != floor(Nv[i]) || Nv[i] < 1 || Nv[i] > 1e15) cli_usage("--ns", "sizes must be integers >= 1");
  for (size_t i = 0; i < nR; i++)
    if (!(Rv[i] > 0)) cli_usage("--Rs", "radii must be > 0");
  for (size_t i = 0; i < nQ; i++)
    if (Qv[i] != floor(Qv[i]) || Qv[i] < 0 || Qv[i] == 1) cli_usage("--reps", "0 (exact) or >= 2 replications");
  gfi_model *mods[MAXMODELS][3] = {{0}};
  for (size_t a = 0; a < nm; a++)
    for (size_t d = 0; d < nD; d++) {
      gfi_model *m = cli_model(models[a], (size_t)dv[d]);
      mods[a][(size_t)dv[d] - 1] = m;
      for (size_t q = 0; q < nQ; q++)
        if ((Qv[q] == 0 || dv[d] <= 2) && !gfi_mise_exact_supported(m))
          cli_usage("--model", "'%s' in %g dimension(s) is not supported by the MISE routes", models[a], dv[d]);
    }
  size_t total = nm, dims[5] = {nD, nL, nN, nR, nQ};
  for (int i = 0; i < 5; i++) {
    if (total > SIZE_MAX / dims[i]) cli_usage("--model", "the grid has too many points");
    total *= dims[i];
  }

  /* the grid's identity */
  char buf[128];
  uint64_t key = 0xcbf29ce484222325ULL;
  for (size_t a = 0; a < nm; a++) key = fnv(key, models[a]);
  const char *lists[5] = {ds, ps, ns, rs, qs};
  for (int i = 0; i < 5; i++) key = fnv(key, lists[i]);
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
  key = fnv(key, buf);
  char keyline[64];
  snprintf(keyline, sizeof keyline, "# sweep-key: %016llx", (unsigned long long)key);

  unsigned char *done = calloc(total, 1);
  if (!done) cli_die(EXIT_RUNTIME, "out of memory");
  size_t ndone = 0;
  FILE *f = fopen(out, "r+");
  if (!f && errno != ENOENT) cli_die(EXIT_RUNTIME, "cannot open %s: %s", out, strerror(errno));
  int fresh = 1;
  if (f) {
    /* resume: check the key, collect finished points, drop a partial tail */
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    long good = 0;
    int have_key = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
      lineno++;
      fresh = 0;
      if (line[len - 1] != '\n') break; /* partial last line from a kill */
      if (line[0] == '#') {
        if (!strncmp(line, "# sweep-key:", 12)) {
          line[len - 1] = '\0';
          if (strcmp(line, keyline) != 0)
            cli_die(EXIT_RUNTIME, "%s:%zu: written by a different sweep (%s, this one %s); use another --out",
                    out, lineno, line + 2, keyline + 2);
          have_key = 1;
        }
        good += len;
        continue;
      }
      char *end;
      unsigned long long idx = strtoull(line, &end, 10);
      int fields = 0;
      for (char *p = line; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        fields++;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
      }
      if (end == line || fields != NCOL || idx >= total)
        cli_die(EXIT_RUNTIME, "%s:%zu:1: not a row of this sweep", out, lineno);
      if (done[idx]) cli_die(EXIT_RUNTIME, "%s:%zu:1: point %llu appears twice", out, lineno, idx);
      done[idx] = 1;
      ndone++;
      good += len;
    }
    free(line);
    if (!fresh && !have_key) cli_die(EXIT_RUNTIME, "%s: no '# sweep-key' line: not a gfi sweep file", out);
    if (fflush(f) || ftruncate(fileno(f), good) != 0)
      cli_die(EXIT_RUNTIME, "cannot truncate %s: %s", out, strerror(errno));
    fclose(f);
  }
  f = fopen(out, "a");
  if (!f) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
  if (fresh) {
    cli_header(f);
    fprintf(f, "%s\n", keyline);
    fprintf(f, "# grid: %zu points = %zu models x dims %s x phis %s x ns %s x Rs %s x reps %s\n", total, nm,
            ds, ps, ns, rs, qs);
    for (size_t a = 0; a < nm; a++) fprintf(f, "# model %zu: %s\n", a, models[a]);
    fprintf(f, "# seed: %llu; point i uses seed splitmix64(seed + 0x9E3779B97F4A7C15*(i+1)), "
               "replication k stream (s_i, k)\n", (unsigned long long)seed);
    fputs("# index model dim l n R reps mise se bias2 var\n", f);
    if (fflush(f) || fsync(fileno(f))) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
  }
  gfi_progress pg;
  gfi_progress_start(&pg, (progress || isatty(2)) ? stderr : NULL, "sweep", total - ndone);
  gfi_mise_opts o;
  gfi_mise_default_opts(&o);
  o.base.nthreads = nthreads;
  for (size_t idx = 0; idx < total; idx++) {
    if (done[idx]) continue;
    size_t r = idx;
    size_t q = r % nQ; r /= nQ;
    size_t ri = r % nR; r /= nR;
    size_t ni = r % nN; r /= nN;
    size_t li = r % nL; r /= nL;
    size_t di = r % nD; r /= nD;
    size_t a = r;
    size_t D = (size_t)dv[di];
    int l = (int)lv[li];
    double R[3] = {Rv[ri], Rv[ri], Rv[ri]};
    o.base.seed = splitmix64(seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(idx + 1));
    gfi_mise_result res;
    int st = Qv[q] == 0 ? gfi_mise_exact(mods[a][D - 1], l, Nv[ni], R, &o, &res)
                        : gfi_mise_mc(mods[a][D - 1], l, (size_t)Nv[ni], R, (size_t)Qv[q], &o, &res, NULL);
    if (st) cli_die(EXIT_RUNTIME, "point %zu (%s, D = %zu, l = %d, N = %g, R = %g, reps = %g): %s", idx,
                    models[a], D, l, Nv[ni], Rv[ri], Qv[q], gfi_strerror(st));
    fprintf(f, "%zu %s %zu %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", idx, models[a], D, l, Nv[ni],
            Rv[ri], Qv[q], res.mise, res.se, res.bias2, res.var);
    if (fflush(f) || fsync(fileno(f))) cli_die(EXIT_RUNTIME, "cannot write %s: %s", out, strerror(errno));
    gfi_progress_add(&pg, 1);
  }
  gfi_progress_end(&pg);
  cli_finish_output(f, out);
  for (size_t a = 0; a < nm; a++)
    for (int d = 0; d < 3; d++) gfi_model_free(mods[a][d]);
  free(done);
  free(dv);
  free(lv);
  free(Nv);
  free(Rv);
  free(Qv);
  return 0;
}
