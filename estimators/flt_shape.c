/* RPE shapes f recovered from g by an inverse FFT (FFTW): the check that a
 * transform pair is right, and FLT Figure 4. */
#include <math.h>
#include <stdlib.h>
#include <fftw3.h>
#include "gfi/flt.h"
#include "../lib/fftw_lock.h"
#include "alloc.h"

int gfi_rpe_invert_fft(const gfi_rpe *rpe, size_t n, double dx, double *x, double *fre, double *fim) {
  if (!rpe || !x || !fre || n == 0 || n % 4 != 0 || !(dx > 0) || !isfinite(dx)) return GFI_EINVAL;
  size_t ell = gfi_rpe_dim(rpe);
  if (ell < 1 || ell > 3) return GFI_EDIM;
  size_t tot = 1;
  for (size_t a = 0; a < ell; a++) tot *= n;
  double dxi = 1 / ((double)n * dx);
  fftw_complex *buf = fftw_malloc(tot * sizeof *buf);
  double *xi = gfi_malloc2(ell, sizeof *xi);
  if (!buf || !xi) {
    fftw_free(buf);
    free(xi);
    return GFI_ENOMEM;
  }
  int dims[3] = {(int)n, (int)n, (int)n};
  /* plan before filling (FFTW_ESTIMATE leaves the data alone) */
  gfi_fftw_lock();
  fftw_plan plan = fftw_plan_dft((int)ell, dims, buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE);
  gfi_fftw_unlock();
  if (!plan) {
    fftw_free(buf);
    free(xi);
    return GFI_ENOMEM;
  }
  /* g(xi_m) (-1)^(sum m): with x_j = (j - n/2) dx, xi_m = (m - n/2) dxi and
   * n % 4 == 0, exp(2 pi i x_j xi_m) = (-1)^(j + m) exp(2 pi i j m / n). */
  for (size_t idx = 0; idx < tot; idx++) {
    size_t r = idx, parity = 0;
    for (size_t a = ell; a-- > 0;) {
      size_t m = r % n;
      r /= n;
      xi[a] = ((double)m - (double)(n / 2)) * dxi;
      parity += m;
    }
    double g;
    gfi_rpe_g(rpe, 1, xi, &g);
    buf[idx][0] = (parity % 2 ? -g : g);
    buf[idx][1] = 0;
  }
  fftw_execute(plan);
  double scale = pow(dxi, (double)ell);
  for (size_t idx = 0; idx < tot; idx++) {
    size_t r = idx, parity = 0;
    for (size_t a = 0; a < ell; a++) {
      parity += r % n;
      r /= n;
    }
    double s = (parity % 2 ? -scale : scale);
    fre[idx] = s * buf[idx][0];
    if (fim) fim[idx] = s * buf[idx][1];
  }
  for (size_t j = 0; j < n; j++) x[j] = ((double)j - (double)(n / 2)) * dx;
  gfi_fftw_lock();
  fftw_destroy_plan(plan);
  gfi_fftw_unlock();
  fftw_free(buf);
  free(xi);
  return GFI_OK;
}
