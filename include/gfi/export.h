/* GFI_EXPORT marks the declarations of gfi's public interface. The shared
 * library is compiled with hidden visibility, so only what a public header
 * declares with GFI_EXPORT is exported from libgfi.so; everything else
 * (the engines, the internal helpers) stays inside the library. */
#ifndef GFI_EXPORT_H
#define GFI_EXPORT_H

#ifndef GFI_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define GFI_EXPORT __attribute__((visibility("default")))
#else
#define GFI_EXPORT
#endif
#endif

#endif
