/* FFTW's planner (fftw_plan_*, fftw_destroy_plan) is not thread-safe: every
 * gfi source that plans FFTW transforms does so between gfi_fftw_lock() and
 * gfi_fftw_unlock(), so the library may be called from several threads at
 * once. fftw_execute* need no lock. Internal (not installed). */
#ifndef GFI_FFTW_LOCK_H
#define GFI_FFTW_LOCK_H

void gfi_fftw_lock(void);
void gfi_fftw_unlock(void);

#endif
