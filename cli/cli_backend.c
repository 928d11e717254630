/* --backend: CPU engines or libgfi_cuda (when gfi was built with it). */
#include <string.h>
#include "cli.h"
#include "cli_backend.h"
#ifdef GFI_HAVE_CUDA
#include "gfi_cuda.h"
#endif

cli_backend cli_backend_resolve(const char *arg, int gpu_ok, const char *why) {
  if (!arg || strcmp(arg, "cpu") == 0) return CLI_BACKEND_CPU;
  int want = strcmp(arg, "cuda") == 0, autom = strcmp(arg, "auto") == 0;
  if (!want && !autom) cli_usage("--backend", "unknown backend '%s' (expected cpu, cuda or auto)", arg);
#ifdef GFI_HAVE_CUDA
  if (!gpu_ok) {
    if (want) cli_usage("--backend", "cuda: no GPU engine for %s", why);
    return CLI_BACKEND_CPU;
  }
  if (!gfi_cuda_available()) {
    if (want) cli_die(EXIT_RUNTIME, "--backend cuda: %s (cudaGetDeviceCount found none)",
                      gfi_strerror(GFI_ENODEV));
    return CLI_BACKEND_CPU;
  }
  return CLI_BACKEND_CUDA;
#else
  (void)gpu_ok;
  (void)why;
  if (want) cli_usage("--backend", "cuda: this gfi was built without CUDA (libgfi_cuda; needs nvcc)");
  return CLI_BACKEND_CPU;
#endif
}

void cli_backend_meta(FILE *f, cli_backend b) {
#ifdef GFI_HAVE_CUDA
  if (b == CLI_BACKEND_CUDA) {
    char name[256] = "?";
    gfi_cuda_device_info(0, name, sizeof name, NULL, NULL, NULL, NULL);
    cli_meta(f, "backend", "cuda (device 0: %s, float64)", name);
    return;
  }
#endif
  (void)b;
  cli_meta(f, "backend", "cpu");
}
