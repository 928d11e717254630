/* Internal: a scope in which GSL reports errors only through the status
 * codes its routines return.
 *
 * GSL's error handler is one process-wide pointer, and its default aborts.
 * gfi never switches it off for the process: code that calls a GSL routine
 * whose error report is part of normal operation (an adaptive quadrature
 * that hits rounding) brackets the
 * calls with gfi_gsl_quiet_enter / gfi_gsl_quiet_leave. The first thread in
 * installs a handler that does nothing and the last one out restores the
 * caller's, under a mutex, so gfi's threads can nest and overlap such
 * scopes. If the program itself changed the handler meanwhile, its choice
 * is kept. What cannot be helped: while a scope is open, GSL calls the
 * program makes from its other threads do not reach its handler either.
 * Everything else checks its arguments so that GSL has nothing to report
 * (or computes without GSL: estimators/chol.h). */
#ifndef GFI_GSL_QUIET_H
#define GFI_GSL_QUIET_H

void gfi_gsl_quiet_enter(void);
void gfi_gsl_quiet_leave(void);

#endif
