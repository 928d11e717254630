/* Naming the parameter at fault: the record behind gfi_error_param. */
#ifndef GFI_FAIL_H
#define GFI_FAIL_H

/* Records, for the calling thread, that the current call fails with
 * `status` because of the parameter `name` (a string literal: the name as
 * the public header spells it), and returns status:
 *     if (!(tol >= 0 && tol < 1)) return fail_param(GFI_EINVAL, "tol"); */
int fail_param(int status, const char *name);

#endif
