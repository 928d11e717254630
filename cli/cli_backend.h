/* --backend cpu|cuda|auto for the subcommands with a GPU engine. */
#ifndef GFI_CLI_BACKEND_H
#define GFI_CLI_BACKEND_H

#include <stdio.h>

typedef enum { CLI_BACKEND_CPU = 0, CLI_BACKEND_CUDA = 1 } cli_backend;

/* Resolve --backend (NULL = "cpu"). gpu_ok: whether this request has a GPU
 * engine (else `why` names what is missing). cuda: a usage error (exit 2)
 * when gfi was built without libgfi_cuda or gpu_ok is 0, a runtime error
 * (exit 1) when no GPU is usable; auto: the GPU when gpu_ok and one is
 * present, else the CPU. */
cli_backend cli_backend_resolve(const char *arg, int gpu_ok, const char *why);

/* "# backend: cpu" or "# backend: cuda (device name, float64)". */
void cli_backend_meta(FILE *f, cli_backend b);

#endif
