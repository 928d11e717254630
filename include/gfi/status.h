/* gfi status codes: one enum shared by every gfi library (CPU and GPU). */
#ifndef GFI_STATUS_H
#define GFI_STATUS_H

#include "export.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GFI_VERSION "0.1.0"

/* Every gfi function that can fail returns one of these (0 = success).
 * The library never prints, aborts or exits. */
typedef enum gfi_status {
  GFI_OK = 0,
  GFI_EINVAL = 1,       /* invalid argument (NULL pointer, bad option value) */
  GFI_ENONFINITE = 2,   /* NaN or Inf in input data */
  GFI_EEMPTY = 3,       /* N = 0 or M = 0 where at least one point is needed */
  GFI_ERADIUS = 4,      /* radius R <= 0 or not finite */
  GFI_EORDER = 5,       /* kernel power l outside 1..8 */
  GFI_EDIM = 6,         /* dimension 0, too large, or mismatched */
  GFI_EINFINITE_A = 7,  /* A = int phi(sinc) is infinite, zero or not finite */
  GFI_ENOMEM = 8,       /* allocation failed */
  GFI_EQUAD = 9,        /* numerical quadrature did not converge */
  GFI_EMODEL = 10,      /* unknown or malformed model specification */
  GFI_EIO = 11,         /* file could not be opened or read */
  GFI_EPARSE = 12,      /* malformed number or row in a text file */
  GFI_ENOTPD = 13,      /* matrix is not symmetric positive definite */
  GFI_EUNSUPPORTED = 14,/* operation not available for this object */
  GFI_ERANGE = 15,      /* result would overflow double precision */
  GFI_EWEIGHT = 16,     /* weights not finite or with a non-positive sum */
  GFI_EBANDWIDTH = 17,  /* bandwidth not positive / not finite */
  GFI_EDENOM = 18,      /* a denominator vanished (regression, attention) */
  GFI_ENODEV = 19,      /* no usable GPU device */
  GFI_STATUS_COUNT = 20
} gfi_status;

/* Human-readable text for a status code; never NULL. */
GFI_EXPORT const char *gfi_strerror(int status);

/* Where a text-file or option error sits; filled by functions that parse. */
typedef struct gfi_errinfo {
  size_t line;      /* 1-based line number, 0 if not applicable */
  size_t column;    /* 1-based column (field) number, 0 if not applicable */
  char msg[256];    /* short description, always NUL-terminated */
} gfi_errinfo;

GFI_EXPORT void gfi_errinfo_clear(gfi_errinfo *e);

/* The parameter at fault. When a check at a public entry point refuses a
 * parameter, the library records the parameter's name (as the header
 * spells it: "nscan", "denom_tol", "resolution", "tol", ...) with the
 * status it returns, in a record of the calling thread (each thread has its
 * own: calls in other threads never change it).
 *
 * gfi_error_param(status) returns that name when the thread's last recorded
 * failure returned `status`, and "" otherwise (no record, another status, or
 * a failure that named no parameter); it then clears the record. Call it
 * right after the call that failed, with the status that call returned.
 * Never NULL; the string is static. */
GFI_EXPORT const char *gfi_error_param(int status);

#ifdef __cplusplus
}
#endif
#endif
