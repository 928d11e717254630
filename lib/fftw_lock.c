/* The process-wide lock around FFTW's planner (lib/fftw_lock.h). */
#include <pthread.h>
#include "fftw_lock.h"

static pthread_mutex_t fftw_mutex = PTHREAD_MUTEX_INITIALIZER;

void gfi_fftw_lock(void) { pthread_mutex_lock(&fftw_mutex); }
void gfi_fftw_unlock(void) { pthread_mutex_unlock(&fftw_mutex); }
