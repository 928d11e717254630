/* Status codes and their messages. */
#include <string.h>
#include "gfi/status.h"
#include "fail.h"

static const char *const messages[GFI_STATUS_COUNT] = {
  [GFI_OK] = "success",
  [GFI_EINVAL] = "invalid argument",
  [GFI_ENONFINITE] = "NaN or infinite value in input",
  [GFI_EEMPTY] = "too few data points (none, or fewer than the method needs)",
  [GFI_ERADIUS] = "radius R must be finite and > 0",
  [GFI_EORDER] = "kernel power l must be an integer in 1..8",
  [GFI_EDIM] = "dimension is zero, too large or mismatched",
  [GFI_EINFINITE_A] = "A = integral of phi(sinc) is infinite or not positive: phi is unusable for density estimation",
  [GFI_ENOMEM] = "out of memory",
  [GFI_EQUAD] = "numerical quadrature failed to converge",
  [GFI_EMODEL] = "unknown or malformed model specification",
  [GFI_EIO] = "cannot open or read file",
  [GFI_EPARSE] = "malformed input",
  [GFI_ENOTPD] = "matrix is not symmetric positive definite",
  [GFI_EUNSUPPORTED] = "operation not supported for this object",
  [GFI_ERANGE] = "value out of range: the result would overflow, or a phase R*x exceeds 2^52",
  [GFI_EWEIGHT] = "weights must be finite with a positive sum",
  [GFI_EBANDWIDTH] = "bandwidth must be finite, positive (definite)",
  [GFI_EDENOM] = "denominator vanished or changed sign",
  [GFI_ENODEV] = "no usable GPU device",
};

const char *gfi_strerror(int status) {
  if (status < 0 || status >= GFI_STATUS_COUNT || !messages[status])
    return "unknown gfi status";
  return messages[status];
}

void gfi_errinfo_clear(gfi_errinfo *e) {
  if (!e) return;
  e->line = 0;
  e->column = 0;
  e->msg[0] = '\0';
}

/* The thread's last named failure (gfi_error_param). */
static _Thread_local int fail_status;
static _Thread_local const char *fail_name;

int fail_param(int status, const char *name) {
  fail_status = status;
  fail_name = name;
  return status;
}

const char *gfi_error_param(int status) {
  const char *n = status != GFI_OK && status == fail_status && fail_name ? fail_name : "";
  fail_status = GFI_OK;
  fail_name = NULL;
  return n;
}
