/* Philox4x32-10 counter-based generator as a GSL rng type, and (seed, stream)
 * streams. Counter layout follows cuRAND's Philox: key = seed, counter words
 * 0-1 = position within the stream, words 2-3 = the stream number. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gfi/rng.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void gfi_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      k0 += PHILOX_W0;
      k1 += PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
    uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

typedef struct {
  uint32_t key[2];
  uint32_t ctr[4];
  uint32_t out[4];
  unsigned idx; /* next unused word of out; 4 = block exhausted */
} philox_state;

static void philox_refill(philox_state *s) {
  gfi_philox4x32_10(s->ctr, s->key, s->out);
  /* advance the 64-bit position counter (words 0-1) */
  if (++s->ctr[0] == 0) ++s->ctr[1];
  s->idx = 0;
}

static inline uint32_t philox_next(philox_state *s) {
  if (s->idx >= 4) philox_refill(s);
  return s->out[s->idx++];
}

static void philox_set(void *vstate, unsigned long seed) {
  philox_state *s = vstate;
  uint64_t sd = (uint64_t)seed;
  memset(s, 0, sizeof *s);
  s->key[0] = (uint32_t)sd;
  s->key[1] = (uint32_t)(sd >> 32);
  s->idx = 4;
}

static unsigned long philox_get(void *vstate) { return philox_next(vstate); }

/* 53 random bits -> [0, 1). */
static double philox_get_double(void *vstate) {
  philox_state *s = vstate;
  uint64_t a = philox_next(s) >> 5, b = philox_next(s) >> 6;
  return (double)(a * 67108864u + b) * (1.0 / 9007199254740992.0);
}

static const gsl_rng_type philox_type = {
  "gfi-philox4x32-10", 0xffffffffUL, 0, sizeof(philox_state),
  philox_set, philox_get, philox_get_double
};

const gsl_rng_type *gfi_rng_philox = &philox_type;

int gfi_rng_reset(gsl_rng *r, uint64_t seed, uint64_t stream) {
  if (!r || r->type != gfi_rng_philox) return GFI_EINVAL;
  philox_state *s = r->state;
  philox_set(s, (unsigned long)seed);
  /* unsigned long is 64-bit on the platforms gfi supports; keep the full
   * seed even where it is not. */
  s->key[0] = (uint32_t)seed;
  s->key[1] = (uint32_t)(seed >> 32);
  s->ctr[2] = (uint32_t)stream;
  s->ctr[3] = (uint32_t)(stream >> 32);
  return GFI_OK;
}

gsl_rng *gfi_rng_stream(uint64_t seed, uint64_t stream) {
  gsl_rng *r = malloc(sizeof *r);
  if (!r) return NULL;
  r->type = gfi_rng_philox;
  r->state = malloc(sizeof(philox_state));
  if (!r->state) {
    free(r);
    return NULL;
  }
  gfi_rng_reset(r, seed, stream);
  return r;
}
