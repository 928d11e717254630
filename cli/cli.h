/* Shared helpers of the gfi command-line front end: option parsing with
 * messages that name the option, table reading with file:line:column
 * messages, and the metadata header of every output. */
#ifndef GFI_CLI_H
#define GFI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gfi/gfi.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* The running subcommand's name (for messages) and the full command line. */
extern const char *cli_cmd;
extern int cli_argc;
extern char **cli_argv;

/* ---- Declarative options -------------------------------------------------
 * A subcommand describes every option once, in a table of cli_opt ended by
 * an entry with name NULL. From that table cli_parse() reads the command
 * line, --help is generated, and cli_header() writes one "# --NAME: VALUE"
 * metadata line per option (the given value, "VALUE (default)", "on"/"off"
 * for flags, or "(not given)"). Example:
 *
 *   const char *at = NULL;
 *   size_t n = 0;
 *   int threads;
 *   const cli_opt opts[] = {
 *     {"at", CLI_STR, &at, .arg = "FILE", .help = "query points", .section = "evaluation"},
 *     {"n", CLI_SIZE, &n, .arg = "N", .min = 1, .help = "number of points"},
 *     {"threads", CLI_INT, &threads, .def = "0", .arg = "T", .help = "threads (0 = all cores)"},
 *     {0}};
 *   const cli_spec spec = {"usage: gfi foo --n N [--at FILE]\n\nWhat foo does.\n", opts, NULL};
 *   if (cli_parse(&spec, argc, argv)) return 0;      (--help was printed)
 *   if (!cli_given("n")) cli_usage("--n", "required");
 *
 * Rules: options are --NAME VALUE or --NAME=VALUE (no abbreviations); -h and
 * --help print the help; an unknown option, a missing value, an option given
 * twice (unless CLI_MULTI) and any non-option argument are usage errors
 * (exit 2, naming the option). Values are converted (and checked) in command
 * line order; then each absent option with a default gets its default,
 * converted the same way, so the table is the one place defaults live. */
typedef enum {
  CLI_FLAG,     /* no value; int *dst = 1 when given (0 otherwise) */
  CLI_STR,      /* const char **dst = the argument (or the default) */
  CLI_SIZE,     /* size_t *dst, an integer >= .min (cli_size) */
  CLI_INT,      /* int *dst, an integer >= .min, at most INT_MAX */
  CLI_U64,      /* uint64_t *dst (cli_u64), e.g. seeds */
  CLI_DOUBLE,   /* double *dst, finite (cli_double) */
  CLI_POSITIVE, /* double *dst > 0 (cli_positive) */
  CLI_CUSTOM    /* .parse(opt, arg, dst) converts */
} cli_kind;

#define CLI_MULTI 1u /* may be given several times (see cli_values) */

typedef struct cli_opt {
  const char *name;    /* long name without "--"; NULL ends the table */
  cli_kind kind;
  void *dst;           /* where the converted value goes (may be NULL for CLI_STR + CLI_MULTI) */
  const char *def;     /* default, as text; NULL = none */
  const char *arg;     /* the value's name in --help ("FILE"); NULL = "X" */
  const char *help;    /* help text; '\n' starts an aligned continuation line */
  size_t min;          /* CLI_SIZE, CLI_INT: the smallest value */
  double max;          /* CLI_SIZE: the largest value (0 = CLI_COUNT_MAX; docs/robustness.md) */
  /* CLI_CUSTOM: the converter. Other kinds: an extra check run after the
   * conversion (NULL = none). `opt` is "--NAME" for messages. */
  void (*parse)(const char *opt, const char *arg, void *dst);
  unsigned flags;      /* CLI_MULTI */
  const char *section; /* heading printed before this option in --help */
} cli_opt;

typedef struct cli_spec {
  const char *usage;   /* "usage: gfi CMD ..." lines and a description, printed first */
  const cli_opt *opts; /* the table */
  const char *epilog;  /* printed after the options by --help; NULL = none */
} cli_spec;

/* Parse argv[1..argc-1] (argv[0] is the subcommand) against spec, as above.
 * Returns 1 when --help was printed (the caller returns 0), else 0. The
 * spec and its table must outlive the command (cli_header reads them). */
int cli_parse(const cli_spec *spec, int argc, char **argv);
/* How many times option NAME was given on the command line (0 = absent,
 * default or not). NAME must be in the parsed table. */
int cli_given(const char *name);
/* The arguments of a CLI_MULTI option in command-line order (*n of them);
 * the array lives until the program ends. */
const char *const *cli_values(const char *name, size_t *n);
/* Write the parsed spec's --help text to f. */
void cli_help(FILE *f, const cli_spec *spec);

/* Print "gfi CMD: message" to stderr and exit with the given code. */
_Noreturn void cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Usage error about option `opt`; appends "(see gfi CMD --help)". */
_Noreturn void cli_usage(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict number parsing; a bad value is a usage error naming `opt`. */
double cli_double(const char *opt, const char *s);
double cli_positive(const char *opt, const char *s);
size_t cli_size(const char *opt, const char *s, size_t min);
uint64_t cli_u64(const char *opt, const char *s);
/* Comma-separated doubles: *n gets the count; result malloc'ed. */
double *cli_list(const char *opt, const char *s, size_t *n);
/* --R: one radius for every axis or D radii, all > 0; malloc'ed D values. */
double *cli_radii(const char *opt, const char *s, size_t D);
/* --bandwidth for Gaussian kernels, as a D x D matrix H (malloc'ed):
 * "scott" | "silverman" (rules on the data covariance; data may be NULL when
 * no data exists yet, then the rules are a usage error) | h (H = h^2 I) |
 * h1,..,hD (H = diag h_j^2) | D*D numbers (H itself). */
double *cli_bandwidth(const char *opt, const char *s, size_t D, size_t N, const double *data,
                      const double *weights);
/* "pow:L" -> kernel; usage error otherwise. */
void cli_phi(const char *opt, const char *s, gfi_kernel *k);
/* Model spec for dimension D; usage error (naming --model) when malformed. */
gfi_model *cli_model(const char *spec, size_t D);

/* Read a numeric table with `cols` columns (0 = any): a text table, or a
 * NumPy .npy array (float64, shape (N, cols) or (N,)) when the name ends in
 * .npy or the file starts with the .npy magic ('-' = stdin, either kind).
 * Runtime error naming the file (and line and column for text) on failure;
 * NaN and infinite values are errors in both kinds. */
double *cli_read_table(const char *what, const char *path, size_t cols, size_t *rows, size_t *ncols);

/* Metadata: "# gfi CMD", version, git revision, command line, threads,
 * then "# --NAME: VALUE" for every option of the parsed table (if any); the
 * caller adds "# key: value" lines and finally the column-name line. */
void cli_header(FILE *f);
/* An option not given whose value the command settled itself (e.g. --dim
 * from the columns of a file): cli_header shows "# --NAME: TEXT" instead of
 * the default. */
void cli_header_settled(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define cli_meta gfi_dat_meta /* "# key: value" */
/* "# x1 x2 ... xD" followed by extra names. */
void cli_columns(FILE *f, size_t D, const char *extra);

/* "# key: prefix v1 v2 ..." with 17 significant digits (prefix may be ""). */
void cli_meta_values(FILE *f, const char *key, const char *prefix, size_t n, const double *v);

/* --tol: a check for CLI_POSITIVE entries, the value must be < 1. */
void cli_check_tol(const char *opt, const char *arg, void *dst);

/* Library status -> runtime error with context, and the parameter the
 * library named (gfi_error_param) when it named one. */
void cli_check(int status, const char *what);

/* cli_check for a computation whose size the user chose: when the library
 * ran out of memory (or a size product overflowed) the message names the
 * size asked for (SIZE, e.g. "1000 replications of 100 points in 3
 * dimension(s)") and the options that change it (MEM_HINT, e.g. "--mc or
 * --n"); when it refused a rule or table too large to build
 * (GFI_EUNSUPPORTED, GFI_ERANGE) and RULE_HINT is not NULL, the options that
 * make it smaller (RULE_HINT). */
void cli_check_size(int status, const char *what, const char *size, const char *mem_hint, const char *rule_hint);

/* The budget (docs/robustness.md), checked before any work starts, each
 * refusal naming the option or file:
 * - any count given as an option (CLI_SIZE): at most CLI_COUNT_MAX unless its
 *   table entry says less (.max);
 * - any array whose size follows from options or a file's header (points x
 *   dimensions, grid points, rows x columns): at most CLI_MAX_VALUES values
 *   (64 GiB of doubles); a .npy file must hold the values its header
 *   announces before anything is allocated;
 * - Monte-Carlo work: CLI_MC_MAX_POINTS, CLI_KDE_MC_MAX_PAIRS below. */
#define CLI_COUNT_MAX 1e15
#define CLI_MAX_VALUES 8589934592.0
/* 1 when a x b values (a product of counts) are within CLI_MAX_VALUES. */
#define CLI_WITHIN_BUDGET(a, b) ((double)(a) * (double)(b) <= CLI_MAX_VALUES)
/* A x B values (WHAT: "points x dimensions") beyond CLI_MAX_VALUES: a usage
 * error naming OPT, before anything is allocated. */
void cli_budget(const char *opt, double a, double b, const char *what);

/* Monte Carlo on the CPU: at most this many points drawn and summed in all
 * (N x replications); beyond, hours of computing. */
#define CLI_MC_MAX_POINTS GFI_MISE_MC_MAX_POINTS
/* The Gaussian KDE's Monte-Carlo MISE: at most this many pairs (N^2 x
 * replications); the library's budget. */
#define CLI_KDE_MC_MAX_PAIRS GFI_MISE_GAUSS_MC_MAX_PAIRS

/* --out FILE: where a command's rows go. No FILE (or '-'): standard
 * output, text. FILE ending in .npy: a NumPy float64 array there, and the
 * '#' metadata on standard output. Any other FILE: the whole text output
 * there. Commands write their '#' lines to o.f. */
typedef struct {
  const char *path; /* NULL = standard output */
  int npy;          /* 1: .npy */
  FILE *f;          /* text output and metadata */
  const char *tmp;  /* where the file is written until it is complete (cli_atomic_begin) */
} cli_output;

/* Output files are never left half-written. cli_atomic_begin creates an
 * empty temporary in DEST's folder (".NAME.gfi-XXXXXX", with the permissions
 * DEST would get) and returns its name: write the whole output there, close
 * it with its errors checked, then cli_atomic_commit syncs it and renames it
 * over DEST. Until then DEST is untouched; if the command stops (any exit,
 * or SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ) the temporary is removed.
 * An empty DEST is a usage error naming OPT; a DEST that exists and is not a
 * regular file (/dev/null, a FIFO) is written directly and returned as is.
 * cli_atomic_fopen does the same and opens the temporary for writing. */
const char *cli_atomic_begin(const char *opt, const char *dest);
FILE *cli_atomic_fopen(const char *opt, const char *dest, const char **tmp);
void cli_atomic_commit(const char *opt, const char *tmp);
/* An output file name given as '' is a usage error naming OPT. */
void cli_check_out_name(const char *opt, const char *path);
/* Table entries several commands share (dst is the variable, not its address). */
#define CLI_OPT_DIM(v) {"dim", CLI_SIZE, &(v), .def = "1", .arg = "D", .min = 1, .help = "dimension"}
#define CLI_OPT_SEED(v) {"seed", CLI_U64, &(v), .def = "1", .arg = "S", .help = "random seed"}
#define CLI_OPT_THREADS(v)                                                                    \
  {"threads", CLI_INT, &(v), .def = "0", .arg = "T",                                          \
   .help = "threads (0 = all cores); results do not depend on T"}
#define CLI_OPT_PHI(v)                                                                              \
  {"phi", CLI_STR, &(v), .def = "pow:4", .arg = "pow:L|poly:a1,..,ad|flattop:c",                     \
   .help = "phi(z) = z^L (L = 1..8), or a1 z + .. + ad z^d (d <= 8, every a >= 0), or the\n"     \
           "flat-top kernel (transform 1 on |t| <= c R, linear to 0 at R; 0 < c < 1)"}
/* --method and --tol of the sums over data (see cli_method). */
#define CLI_OPT_METHOD(v)                                                                     \
  {"method", CLI_STR, &(v), .def = "auto", .arg = "M",                                        \
   .help = "direct (the plain sums over the data), fast (the band-limited route:\n"           \
           "quadrature in frequency and NUFFTs; Fourier kernels with phi = pow:L)\n"          \
           "or auto (the cheaper of the two by the library's cost model)"}
#define CLI_OPT_TOL(v)                                                                        \
  {"tol", CLI_POSITIVE, &(v), .arg = "EPS", .parse = cli_check_tol,                           \
   .help = "fast route: error bound relative to the largest |value| (default: the\n"          \
           "library's, 1e-10)"}
/* --out and --npy-table (see cli_output). */
#define CLI_OPT_OUT(path)                                                                     \
  {"out", CLI_STR, &(path), .arg = "FILE",                                                    \
   .help = "write the rows to FILE instead of standard output: text, or a NumPy\n"            \
           "float64 array when FILE ends in .npy (the '#' lines stay on standard output)"}
#define CLI_OPT_NPY_TABLE(flag)                                                               \
  {"npy-table", CLI_FLAG, &(flag),                                                            \
   .help = "with --out FILE.npy: the whole table, shape (M, D + k) with the x columns,\n"     \
           "instead of the values alone, shape (M,) (or (M, k) for k value columns)"}
int cli_is_npy_path(const char *path);
/* --npy-table without --out FILE.npy: a usage error (the flag would be
 * ignored). */
void cli_check_npy_table(int npy_table, const char *out);
void cli_output_open(cli_output *o, const char *path);
/* M rows of x1..xD (x: M x D) then k values (v: M x k). Text: all columns.
 * .npy: the values only, shape (M,) for k = 1 and (M, k) otherwise, or with
 * points = 1 (or k = 0) the whole table, shape (M, D + k). */
void cli_output_rows(cli_output *o, size_t M, size_t D, const double *x, size_t k, const double *v, int points);
/* .npy: a "# out:" line saying what the file holds (nothing for text). */
void cli_output_meta(cli_output *o, size_t M, size_t D, size_t k, int points);
/* Check and close the output and standard output (cli_finish_output). */
void cli_output_close(cli_output *o);

/* The Fourier estimators need |R_j x_ij| <= 2^52 (beyond, the phase R x is
 * not resolved): a usage error naming --R, the row and column of `what`
 * ("data file F") and the product when some point breaks it. */
void cli_check_phase(const char *what, size_t n, size_t D, const double *x, const double *R);
/* The same for rows row0 + 1 .. row0 + n of `what` (a slab of a file). */
void cli_check_phase_rows(const char *what, size_t row0, size_t n, size_t D, const double *x, const double *R);

/* rows x cols values (row-major) about to be printed as `what`: a NaN or
 * an infinity is a runtime error (exit 1) naming the row and column, so that
 * no non-finite number goes out with exit status 0. */
void cli_require_finite(const char *what, size_t rows, size_t cols, const double *v);

/* malloc(a * b * size) with the product checked: on overflow or failure a
 * runtime error "out of memory for a x b values". Never NULL; a zero size
 * gets one byte. */
void *cli_array(size_t a, size_t b, size_t size);
/* The same, the failure naming the option that set the size: "OPT: out of
 * memory for a x b values (WHAT); lower OPT". */
void *cli_array_for(const char *opt, const char *what, size_t a, size_t b, size_t size);

/* Flush and close an output stream (stdout included), checking every
 * write: a failed one (a full disk) is a runtime error (exit 1) naming
 * `what`. Every subcommand ends its output with this. */
void cli_finish_output(FILE *f, const char *what);
/* 1 once cli_finish_output closed standard output. */
int cli_stdout_closed(void);
/* fflush with the same check, for output that goes out as it is made. */
void cli_flush(FILE *f, const char *what);

/* 1 if `arg` is --help or -h. */
int cli_is_help(const char *arg);

#endif
