// dma_copy: see dma_copy.h.
#include "core/common/dma_copy.h"

#include <cstring>

namespace locus {

// GCC only: loop distribution off, so the loop does not become a memcpy
// (clang has no such switch; its builds here are not ThreadSanitizer's).
#if defined(__clang__)
#define LOCUS_DMA_COPY_ATTRIBUTES __attribute__((no_sanitize("thread")))
#else
#define LOCUS_DMA_COPY_ATTRIBUTES __attribute__((no_sanitize("thread"), optimize("no-tree-loop-distribute-patterns")))
#endif

LOCUS_DMA_COPY_ATTRIBUTES void dma_copy(std::byte* dst, const std::byte* src, uint64_t n) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, src + i, 8);
    std::memcpy(dst + i, &w, 8);
  }
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace locus
