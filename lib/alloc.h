/* Allocation of arrays whose size is a product of counts, with the product
 * checked: every such allocation in lib/, estimators/ and cli/ goes through
 * these, so that no size wraps around size_t into a small buffer that is
 * then overrun. On overflow they return NULL, as on exhausted memory, and
 * callers report GFI_ENOMEM. Internal (not installed). */
#ifndef GFI_ALLOC_H
#define GFI_ALLOC_H

#include <stddef.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* *out = a * b * c * d; 1 when the product overflows size_t (then *out = 0). */
static inline int gfi_size_prod(size_t *out, size_t a, size_t b, size_t c, size_t d) {
  size_t p;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p) ||
      __builtin_mul_overflow(p, d, &p)) {
    *out = 0;
    return 1;
  }
  *out = p;
  return 0;
}

/* Blocks of GFI_HUGE_MIN bytes or more (the data's copies, phase tables,
 * coefficient columns: megabytes at N = 1e6) are aligned to 2 MB and marked
 * for transparent huge pages where the system offers them (Linux's
 * MADV_HUGEPAGE; a hint, ignored elsewhere or when refused): their first
 * touch then takes one fault per 2 MB instead of one per 4 KB. A density
 * plan over 1e6 points spent most of its 9 ms in those faults (2.6 ms with
 * huge pages). Such blocks are freed, and may be reallocated, as any other. */
#define GFI_HUGE_MIN ((size_t)4 << 20)
#define GFI_HUGE_PAGE ((size_t)2 << 20)
static inline void *gfi_malloc_big(size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (n >= GFI_HUGE_MIN) {
    void *p = NULL;
    if (posix_memalign(&p, GFI_HUGE_PAGE, n)) return NULL;
    (void)madvise(p, n & ~(GFI_HUGE_PAGE - 1), MADV_HUGEPAGE);
    return p;
  }
#endif
  return malloc(n);
}

/* Blocks that plans hold for their lifetime (the data's copies) are taken
 * from, and given back to, a small store of the blocks of freed plans: a
 * fit that follows another of about the same size then reuses memory whose
 * pages are already there instead of faulting fresh ones in (zeroed by the
 * kernel: at N = 1e6 a third of a 1-D fit + grid evaluation with
 * copy=True). At most 4 blocks and 256 MiB are kept; a block is reused for
 * a request of at least half its size. gfi_big_take returns a block of at
 * least n bytes (NULL on exhausted memory) and its size in *cap (0 for
 * blocks below GFI_HUGE_MIN, plain malloc); gfi_big_give(p, cap) keeps or
 * frees it (p from gfi_big_take, cap as returned); gfi_big_release frees
 * every kept block. Thread-safe. */
void *gfi_big_take(size_t n, size_t *cap);
void gfi_big_give(void *p, size_t cap);
void gfi_big_release(void);
/* The bytes kept now (for tests). */
size_t gfi_big_kept(void);

/* malloc(a * b [* c [* d]]) */
static inline void *gfi_malloc4(size_t a, size_t b, size_t c, size_t d) {
  size_t n;
  return gfi_size_prod(&n, a, b, c, d) ? NULL : gfi_malloc_big(n);
}
static inline void *gfi_malloc2(size_t a, size_t b) { return gfi_malloc4(a, b, 1, 1); }
static inline void *gfi_malloc3(size_t a, size_t b, size_t c) { return gfi_malloc4(a, b, c, 1); }

/* calloc(a [* b [* c]], size): zeroed */
static inline void *gfi_calloc4(size_t a, size_t b, size_t c, size_t size) {
  size_t n;
  return gfi_size_prod(&n, a, b, c, size) ? NULL : calloc(n ? a * b * c : 0, size);
}
static inline void *gfi_calloc3(size_t a, size_t b, size_t size) { return gfi_calloc4(a, b, 1, size); }

/* realloc(p, a * b [* c]); p is left alone on failure */
static inline void *gfi_realloc3(void *p, size_t a, size_t b, size_t c) {
  size_t n;
  return gfi_size_prod(&n, a, b, c, 1) ? NULL : realloc(p, n);
}
static inline void *gfi_realloc2(void *p, size_t a, size_t b) { return gfi_realloc3(p, a, b, 1); }

#endif
