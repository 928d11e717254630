/* Naming the parameter at fault: the record behind gfi_error_param. */
#ifndef GFI_FAIL_H
#define GFI_FAIL_H

/* Records, for the calling thread, that the current call fails with
 * `status` because of the parameter `name` (a string literal: the name as
 * the public header spells it), and returns status:
 *     if (!(tol >= 0 && tol < 1)) return fail_param(GFI_EINVAL, "tol"); */
int fail_param(int status, const char *name);

/* The status of a check on the parameter `name`, named when it failed
 * (allocation failures name nothing):
 *     if ((st = fail_named(gfi_check_finite(x, N * D, NULL), "x"))) return st; */
static inline int fail_named(int status, const char *name) {
  return status && status != 8 /* GFI_ENOMEM */ ? fail_param(status, name) : status;
}

#endif
