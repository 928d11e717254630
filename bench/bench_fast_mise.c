/* bench_fast_mise: cost of the Monte-Carlo MISE (`gfi mise --mc`) against N,
 * through the fast route (`--method fast`) and, as the peer measured in the
 * same run, the direct route (`--method direct`: the empirical characteristic
 * function summed point by point at every quadrature node).
 *
 * For N = 10^4, 10^5, ... up to --nmax (default 10^8; 10^9 with --nmax 1e9)
 * it runs, as a child process,
 *   gfi mise --model normal --dim D --n N --phi pow:4 --R R* --mc REPS --seed 1
 *            --method fast|direct [--no-parts]
 * with R* the MISE-optimal radius for N(0, I) at that N (gfi_ropt), and
 * records the wall seconds, seconds per replication (wall / REPS), CPU
 * seconds and peak resident memory (getrusage of the child: ru_maxrss), and
 * the MISE and its standard error. The direct route runs while its predicted
 * time (from the last two sizes) stays under --direct-max seconds. Where both
 * ran, the two MISE values must agree (same replications, same seed): their
 * relative difference is printed. Slopes of log time against log N are
 * fitted over N >= 10^5 (fast) and all direct sizes.
 *
 * Goal: N = 10^8 with 4 replications in under 4 minutes on 2 cores, RSS under
 * 3 GB. Writes fast_mise.dat into --outdir. Exits 0 whether or not the goal is
 * met; non-zero only when something failed to run.
 *
 * Usage: bench_fast_mise [--smoke] [--nmax N] [--reps K] [--dim D] [--no-parts]
 *                        [--direct-max S] [--outdir DIR] [--gfi PATH]
 * Environment: GFI_CLI (the gfi program). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "gfi/gfi.h"
#include "gfi_version.h"
#include "bench_util.h"

#ifndef GFI_BUILD_ROOT
#define GFI_BUILD_ROOT "build"
#endif
#ifndef GFI_BUILDTYPE
#define GFI_BUILDTYPE "unknown"
#endif
#ifndef GFI_CC_ID
#define GFI_CC_ID "unknown"
#endif

#define KERNEL_L 4
#define GOAL_N 1e8
#define GOAL_S 240.0
#define GOAL_RSS_MIB 3072.0

static char g_gfi[4096];

typedef struct {
  int ok;
  double wall, cpu, rss, mise, se;
  char note[256];
} run_result;

/* The data row of gfi mise's output: n R mise se bias2 var lo95 hi95 reps. */
static int parse_row(const char *out, double *mise, double *se) {
  for (const char *p = out; p && *p;) {
    if (*p != '#' && *p != '\n') {
      double n, R;
      if (sscanf(p, "%lf %lf %lf %lf", &n, &R, mise, se) == 4) return 0;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  return -1;
}

static run_result run_mise(const char *method, size_t D, size_t N, double R, int reps, int parts,
                           int nthreads) {
  run_result r;
  memset(&r, 0, sizeof r);
  r.wall = r.cpu = r.rss = r.mise = r.se = NAN;
  char sD[32], sN[32], sR[64], sreps[32], sth[32];
  snprintf(sD, sizeof sD, "%zu", D);
  snprintf(sN, sizeof sN, "%zu", N);
  snprintf(sR, sizeof sR, "%.17g", R);
  snprintf(sreps, sizeof sreps, "%d", reps);
  snprintf(sth, sizeof sth, "%d", nthreads);
  char *argv[32];
  int a = 0;
  argv[a++] = g_gfi, argv[a++] = "mise", argv[a++] = "--model", argv[a++] = "normal";
  argv[a++] = "--dim", argv[a++] = sD, argv[a++] = "--n", argv[a++] = sN;
  argv[a++] = "--phi", argv[a++] = "pow:4", argv[a++] = "--R", argv[a++] = sR;
  argv[a++] = "--mc", argv[a++] = sreps, argv[a++] = "--seed", argv[a++] = "1";
  argv[a++] = "--threads", argv[a++] = sth;
  if (method) argv[a++] = "--method", argv[a++] = (char *)method;
  if (!parts) argv[a++] = "--no-parts";
  argv[a] = NULL;
  static char out[65536];
  bu_proc p = bu_run(argv, out, sizeof out, 1);
  r.wall = p.wall, r.cpu = p.cpu, r.rss = p.rss_mib;
  if (p.rc != 0) {
    char *nl = strrchr(out, '\n');
    if (nl && nl[1] == 0) *nl = 0;
    nl = strrchr(out, '\n');
    snprintf(r.note, sizeof r.note, "exit %d: %.200s", p.rc, nl ? nl + 1 : out);
    return r;
  }
  if (parse_row(out, &r.mise, &r.se) != 0) {
    snprintf(r.note, sizeof r.note, "no result row");
    return r;
  }
  r.ok = 1;
  return r;
}

static int help_has(const char *cmd, const char *opt) {
  char *argv[] = {g_gfi, (char *)cmd, "--help", NULL};
  static char out[32768];
  bu_proc p = bu_run(argv, out, sizeof out, 1);
  return p.rc == 0 && strstr(out, opt) != NULL;
}

static void usage(FILE *f) {
  fprintf(f, "usage: bench_fast_mise [--smoke] [--nmax N] [--reps K] [--dim D] [--no-parts]\n"
             "                       [--direct-max S] [--threads T] [--outdir DIR] [--gfi PATH]\n");
}

int main(int argc, char **argv) {
  int smoke = 0, reps = 4, parts = 1, nthreads = 0;
  double nmax = 1e8, direct_max = 120;
  size_t D = 1;
  const char *outdir = ".", *cli = getenv("GFI_CLI");
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--smoke")) smoke = 1;
    else if (!strcmp(argv[a], "--nmax") && a + 1 < argc) nmax = atof(argv[++a]);
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--dim") && a + 1 < argc) D = (size_t)atoi(argv[++a]);
    else if (!strcmp(argv[a], "--no-parts")) parts = 0;
    else if (!strcmp(argv[a], "--direct-max") && a + 1 < argc) direct_max = atof(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) nthreads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--outdir") && a + 1 < argc) outdir = argv[++a];
    else if (!strcmp(argv[a], "--gfi") && a + 1 < argc) cli = argv[++a];
    else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (reps < 2 || D < 1 || D > 2) {
    usage(stderr);
    return 2;
  }
  if (smoke) nmax = 1e4, direct_max = 30;
  snprintf(g_gfi, sizeof g_gfi, "%s", cli && *cli ? cli : GFI_BUILD_ROOT "/cli/gfi");
  mkdir(outdir, 0777);

  char model[256], host[256] = "?", load0[64], date[64];
  bu_cpu_model(model, sizeof model);
  gethostname(host, sizeof host);
  host[sizeof host - 1] = 0;
  bu_loadavg(load0, sizeof load0);
  time_t tnow = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tnow));
  int have_method = help_has("mise", "--method");
  char hdr[8192];
  snprintf(hdr, sizeof hdr,
           "gfi bench_fast_mise  (gfi %s, revision %s)\n"
           "date      %s, host %s\n"
           "cpu       %s; %ld cores online, %.1f GiB; load average at start %s\n"
           "compiler  %s; buildtype %s\n"
           "command   %s mise --model normal --dim %zu --n N --phi pow:4 --R R*(N) --mc %d "
           "--seed 1 --threads %d --method fast|direct%s\n"
           "          (R*(N): the MISE-optimal radius for N(0, I) at N; time = wall seconds of the "
           "whole process, RSS = its peak resident memory)\n",
           GFI_VERSION, GFI_GIT_REVISION, date, host, model, sysconf(_SC_NPROCESSORS_ONLN),
           bu_mem_gib(), load0, GFI_CC_ID, GFI_BUILDTYPE, g_gfi, D, reps, nthreads,
           parts ? "" : " --no-parts");
  fputs(hdr, stdout);
  if (!have_method)
    printf("note      %s mise has no --method: the fast route is not in this build; only the "
           "default route runs (as 'direct' below)\n", g_gfi);
  fflush(stdout);

  char path[4096];
  snprintf(path, sizeof path, "%s/fast_mise.dat", outdir);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 2;
  }
  for (char *line = hdr; *line;) {
    size_t L = strcspn(line, "\n");
    fprintf(f, "# %.*s\n", (int)L, line);
    line += L + (line[L] == '\n');
  }
  fprintf(f, "# N R fast_s fast_per_rep_s fast_cpu_s fast_rss_mib fast_mise fast_se direct_s "
             "direct_per_rep_s direct_rss_mib direct_mise rel_diff direct_cpu_s\n");

  gfi_model *m;
  int st = gfi_model_normal(&m, D, NULL, NULL);
  if (st) {
    fprintf(stderr, "gfi_model_normal: %s\n", gfi_strerror(st));
    return 2;
  }
  gfi_mise_opts mo;
  gfi_mise_default_opts(&mo);

  printf("\n%11s %8s %10s %10s %9s %9s %12s %10s %10s %9s %9s %10s\n", "N", "R*", "fast_s",
         "s/rep", "cpu_s", "RSS_MiB", "mise", "direct_s", "s/rep", "cpu_s", "RSS_MiB", "rel_diff");
  double Ns[8] = {0}, tf[8] = {0}, td[8] = {0};
  size_t nn = 0;
  double last_d = NAN, last_dN = NAN, goal_s = NAN, goal_rss = NAN;
  int direct_on = 1, failed = 0;
  double t0 = bu_now();
  for (double Nd = 1e4; Nd <= nmax * 1.0001 && nn < 8; Nd *= 10) {
    size_t N = (size_t)Nd;
    double R;
    gfi_mise_result res;
    gfi_kernel kp;
    gfi_kernel_pow(&kp, KERNEL_L);
    st = gfi_ropt(m, &kp, Nd, NULL, &mo, &R, &res);
    if (st) {
      fprintf(stderr, "gfi_ropt: %s\n", gfi_strerror(st));
      return 2;
    }
    run_result rf = {0}, rd = {0};
    rf.wall = rd.wall = rf.rss = rd.rss = rf.mise = rd.mise = NAN;
    if (have_method) {
      rf = run_mise("fast", D, N, R, reps, parts, nthreads);
      if (!rf.ok) {
        printf("  fast route at N = %zu failed: %s\n", N, rf.note);
        failed = 1;
      }
    }
    /* Direct while its predicted time stays under direct_max (linear in N). */
    if (direct_on && isfinite(last_d) && last_d * (Nd / last_dN) > direct_max) direct_on = 0;
    if (direct_on) {
      rd = run_mise(have_method ? "direct" : NULL, D, N, R, reps, parts, nthreads);
      if (!rd.ok) {
        printf("  direct route at N = %zu failed: %s\n", N, rd.note);
        direct_on = 0;
        failed = 1;
      } else {
        last_d = rd.wall, last_dN = Nd;
      }
    }
    double diff = (rf.ok && rd.ok) ? fabs(rf.mise - rd.mise) / fabs(rd.mise) : NAN;
    /* Same replications: the two routes differ only by the fast route's
     * tolerance (1e-12 on the empirical cf by default). */
    if (isfinite(diff) && diff > 1e-8) {
      printf("  MISMATCH at N = %zu: fast and direct MISE differ by %.2e (relative)\n", N, diff);
      failed = 1;
    } else if (rf.ok && rd.ok && !isfinite(diff)) {
      failed = 1;
    }
    Ns[nn] = Nd;
    tf[nn] = rf.ok ? rf.wall : NAN;
    td[nn] = rd.ok ? rd.wall : NAN;
    nn++;
    printf("%11zu %8.4g %10.4g %10.4g %9.4g %9.1f %12.5e %10.4g %10.4g %9.4g %9.1f %10.2e\n", N,
           R, tf[nn - 1], tf[nn - 1] / reps, rf.ok ? rf.cpu : NAN, rf.ok ? rf.rss : NAN,
           rf.ok ? rf.mise : rd.mise, td[nn - 1], td[nn - 1] / reps, rd.ok ? rd.cpu : NAN,
           rd.ok ? rd.rss : NAN, diff);
    fprintf(f, "%zu %.6g %.6e %.6e %.6e %.1f %.10e %.4e %.6e %.6e %.1f %.10e %.3e %.6e\n", N, R,
            tf[nn - 1], tf[nn - 1] / reps, rf.ok ? rf.cpu : NAN, rf.ok ? rf.rss : NAN,
            rf.ok ? rf.mise : NAN, rf.ok ? rf.se : NAN, td[nn - 1], td[nn - 1] / reps,
            rd.ok ? rd.rss : NAN, rd.ok ? rd.mise : NAN, diff, rd.ok ? rd.cpu : NAN);
    fflush(stdout);
    fflush(f);
    if (fabs(Nd - GOAL_N) < 1 && rf.ok) goal_s = rf.wall, goal_rss = rf.rss;
    if (!rf.ok && !rd.ok) break;
  }
  double sf = bu_loglog_slope(nn, Ns, tf, 1e5), sd = bu_loglog_slope(nn, Ns, td, 1e4);
  printf("\nslope     log time against log N: fast %.3f (N >= 1e5), direct %.3f\n", sf, sd);
  for (size_t i = 0; i < nn; i++)
    if (isfinite(tf[i]) && isfinite(td[i]))
      printf("ratio     N = %.0e: direct / fast = %.1f\n", Ns[i], td[i] / tf[i]);
  fprintf(f, "# slope fast %.4f (N >= 1e5) direct %.4f\n", sf, sd);
  fclose(f);
  printf("table     %s\n", path);
  if (!smoke) {
    if (isfinite(goal_s))
      printf("goal      N = 1e8, %d replications in < %.0f s with RSS < %.0f MiB: %s (%.1f s, %.0f "
             "MiB)\n", reps, GOAL_S, GOAL_RSS_MIB,
             goal_s < GOAL_S && goal_rss < GOAL_RSS_MIB ? "MET" : "NOT MET", goal_s, goal_rss);
    else
      printf("goal      N = 1e8, %d replications in < %.0f s: NOT EVALUATED (no fast run at N = "
             "1e8)\n", reps, GOAL_S);
  }
  char load1[64];
  bu_loadavg(load1, sizeof load1);
  printf("elapsed   %.1f s; load average at start %s, at end %s\n", bu_now() - t0, load0, load1);
  gfi_model_free(m);
  if (failed) printf("FAILED    a run failed or the two routes disagree (see above)\n");
  return failed && smoke ? 1 : 0;
}
