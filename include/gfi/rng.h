/* Reproducible random-number streams.
 *
 * A (seed, stream) pair names an independent generator: gfi's Philox4x32-10
 * counter-based generator (Salmon et al., SC'11) keyed by the 64-bit seed,
 * with the stream number in the upper 64 bits of the 128-bit counter. Streams
 * never overlap (each has 2^66 outputs), so replication k drawn from stream k
 * is the same whatever the thread or rank count. The generator is exposed as
 * a gsl_rng, so every GSL sampler works on it. */
#ifndef GFI_RNG_H
#define GFI_RNG_H

#include "export.h"
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GSL type of gfi's Philox generator ("gfi-philox4x32-10"). */
GFI_EXPORT extern const gsl_rng_type *gfi_rng_philox;

/* A new generator for stream `stream` of `seed`; NULL when out of memory.
 * Free with gsl_rng_free. */
GFI_EXPORT gsl_rng *gfi_rng_stream(uint64_t seed, uint64_t stream);

/* Re-position an existing gfi Philox generator at the start of (seed, stream).
 * GFI_EINVAL if r is not a gfi Philox generator. */
GFI_EXPORT int gfi_rng_reset(gsl_rng *r, uint64_t seed, uint64_t stream);

/* The raw Philox4x32-10 block function: out = Philox(ctr, key). */
GFI_EXPORT void gfi_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

#ifdef __cplusplus
}
#endif
#endif
