/* GFI_CLONES: multi-versioned hot loops (see below). */
#ifndef GFI_CLONES_H
#define GFI_CLONES_H

/* Hot engine tasks are compiled for several x86-64 levels (baseline SSE2,
 * v3 = AVX2 + FMA, v4 = AVX-512) and the best is chosen when the library is
 * loaded. 'flatten' inlines the callees into each clone so the inner loops
 * are compiled for that level too. Results agree to rounding between levels
 * (FMA contraction differs); on one machine they are the same bits for any
 * thread count. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define GFI_CLONES __attribute__((flatten, target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define GFI_CLONES
#endif

#endif
