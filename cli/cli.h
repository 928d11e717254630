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

/* Read a numeric table with `cols` columns (0 = any); runtime error naming
 * the file, line and column on failure. */
double *cli_read_table(const char *what, const char *path, size_t cols, size_t *rows, size_t *ncols);

/* Metadata: "# gfi CMD", version, git revision, command line, threads; then
 * the caller adds "# key: value" lines and finally the column-name line. */
void cli_header(FILE *f);
void cli_meta(FILE *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "# x1 x2 ... xD" followed by extra names. */
void cli_columns(FILE *f, size_t D, const char *extra);

/* Library status -> runtime error with context. */
void cli_check(int status, const char *what);

/* Write x1..xD and value columns for M points. */
void cli_write_points(FILE *f, size_t M, size_t D, const double *x, const double *v);

/* 1 if `arg` is --help or -h. */
int cli_is_help(const char *arg);

#endif
