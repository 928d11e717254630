/* Scoped silencing of GSL's error handler (gsl_quiet.h). */
#include <pthread.h>
#include <gsl/gsl_errno.h>
#include "gsl_quiet.h"

static pthread_mutex_t quiet_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned quiet_depth;
static gsl_error_handler_t *quiet_saved;

static void quiet_handler(const char *reason, const char *file, int line, int gsl_errno) {
  (void)reason;
  (void)file;
  (void)line;
  (void)gsl_errno;
}

void gfi_gsl_quiet_enter(void) {
  pthread_mutex_lock(&quiet_mutex);
  if (quiet_depth++ == 0) quiet_saved = gsl_set_error_handler(quiet_handler);
  pthread_mutex_unlock(&quiet_mutex);
}

void gfi_gsl_quiet_leave(void) {
  pthread_mutex_lock(&quiet_mutex);
  if (quiet_depth > 0 && --quiet_depth == 0) {
    gsl_error_handler_t *cur = gsl_set_error_handler(quiet_saved);
    if (cur != quiet_handler) gsl_set_error_handler(cur); /* changed by the program meanwhile */
    quiet_saved = NULL;
  }
  pthread_mutex_unlock(&quiet_mutex);
}
