/* The blocks of freed plans kept for the next plan (alloc.h: gfi_big_take,
 * gfi_big_give). */
#include "alloc.h"

#include "gfi/opts.h"

#include <pthread.h>

/* At most GFI_BIG_SLOTS blocks, GFI_BIG_KEEP bytes in all. */
#define GFI_BIG_SLOTS 4
#define GFI_BIG_KEEP ((size_t)256 << 20)

static struct {
  void *p;
  size_t cap;
} big_slot[GFI_BIG_SLOTS];
static size_t big_kept;
static pthread_mutex_t big_mutex = PTHREAD_MUTEX_INITIALIZER;

void *gfi_big_take(size_t n, size_t *cap) {
  *cap = 0;
  if (n < GFI_HUGE_MIN) return malloc(n ? n : 1);
  pthread_mutex_lock(&big_mutex);
  int best = -1;
  for (int k = 0; k < GFI_BIG_SLOTS; k++) /* the smallest kept block that holds n, at most twice n */
    if (big_slot[k].p && big_slot[k].cap >= n && big_slot[k].cap / 2 <= n &&
        (best < 0 || big_slot[k].cap < big_slot[best].cap))
      best = k;
  if (best >= 0) {
    void *p = big_slot[best].p;
    *cap = big_slot[best].cap;
    big_kept -= *cap;
    big_slot[best].p = NULL;
    big_slot[best].cap = 0;
    pthread_mutex_unlock(&big_mutex);
    return p;
  }
  pthread_mutex_unlock(&big_mutex);
  /* whole huge pages, so that the hint covers all of the block */
  const size_t r = (n + GFI_HUGE_PAGE - 1) & ~(GFI_HUGE_PAGE - 1);
  if (r < n) return NULL;
  void *p = gfi_malloc_big(r);
  if (p) *cap = r;
  return p;
}

void gfi_big_give(void *p, size_t cap) {
  if (!p) return;
  if (cap < GFI_HUGE_MIN || cap > GFI_BIG_KEEP) {
    free(p);
    return;
  }
  pthread_mutex_lock(&big_mutex);
  /* a free slot, else the smallest block kept if it is smaller than p */
  int k = 0, small = 0;
  while (k < GFI_BIG_SLOTS && big_slot[k].p) k++;
  if (k == GFI_BIG_SLOTS) {
    for (int j = 1; j < GFI_BIG_SLOTS; j++)
      if (big_slot[j].cap < big_slot[small].cap) small = j;
    k = big_slot[small].cap < cap ? small : -1;
  }
  void *drop[GFI_BIG_SLOTS + 1];
  int nd = 0;
  if (k < 0) {
    drop[nd++] = p;
  } else {
    if (big_slot[k].p) {
      drop[nd++] = big_slot[k].p;
      big_kept -= big_slot[k].cap;
    }
    big_slot[k].p = p;
    big_slot[k].cap = cap;
    big_kept += cap;
    /* over the limit: free the other blocks, largest first */
    while (big_kept > GFI_BIG_KEEP) {
      int l = -1;
      for (int j = 0; j < GFI_BIG_SLOTS; j++)
        if (j != k && big_slot[j].p && (l < 0 || big_slot[j].cap > big_slot[l].cap)) l = j;
      if (l < 0) break;
      drop[nd++] = big_slot[l].p;
      big_kept -= big_slot[l].cap;
      big_slot[l].p = NULL;
      big_slot[l].cap = 0;
    }
  }
  pthread_mutex_unlock(&big_mutex);
  for (int j = 0; j < nd; j++) free(drop[j]);
}

size_t gfi_memory_release(void) {
  const size_t k = gfi_big_kept();
  gfi_big_release();
  return k;
}

void gfi_big_release(void) {
  void *drop[GFI_BIG_SLOTS];
  pthread_mutex_lock(&big_mutex);
  for (int k = 0; k < GFI_BIG_SLOTS; k++) {
    drop[k] = big_slot[k].p;
    big_slot[k].p = NULL;
    big_slot[k].cap = 0;
  }
  big_kept = 0;
  pthread_mutex_unlock(&big_mutex);
  for (int k = 0; k < GFI_BIG_SLOTS; k++) free(drop[k]);
}

size_t gfi_big_kept(void) {
  pthread_mutex_lock(&big_mutex);
  const size_t k = big_kept;
  pthread_mutex_unlock(&big_mutex);
  return k;
}
