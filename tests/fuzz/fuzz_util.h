/* Shared by the libFuzzer harnesses: the input as a NUL-terminated string. */
#ifndef GFI_FUZZ_UTIL_H
#define GFI_FUZZ_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'ed copy of data[0..n) with a NUL appended (NULL when out of
 * memory); an embedded NUL ends the string early, as it would on a command
 * line. */
static inline char *fuzz_string(const uint8_t *data, size_t n) {
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, data, n);
  s[n] = '\0';
  return s;
}

/* A failed property: abort, which libFuzzer reports as a finding. */
#define FUZZ_REQUIRE(cond)                                                     \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                 \
    }                                                                          \
  } while (0)
#endif
