// dma_copy and dma_read: see dma_copy.h.
#include "core/common/dma_copy.h"

#include <algorithm>
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

namespace {

// One load of [src, src+n) (n <= one line) into `out`, front to back;
// `at` is the offset of src within the whole READ, for the hook.
LOCUS_DMA_COPY_ATTRIBUTES void load_line(std::byte* out, const std::byte* src, uint64_t n, uint64_t at,
                                         uint32_t load, DmaLoadHook hook, void* ctx) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, src + i, 8);
    std::memcpy(out + i, &w, 8);
    if (hook != nullptr) hook(ctx, at + i, load);
  }
  for (; i < n; ++i) {
    out[i] = src[i];
    if (hook != nullptr) hook(ctx, at + i, load);
  }
}

}  // namespace

LOCUS_DMA_COPY_ATTRIBUTES void dma_read(std::byte* dst, const std::byte* src, uint64_t n, DmaLoadHook after_load,
                                        void* hook_ctx) {
  std::byte first[kDmaLineBytes], second[kDmaLineBytes];
  for (uint64_t at = 0; at < n;) {
    const uint64_t into_line = reinterpret_cast<uintptr_t>(src + at) % kDmaLineBytes;
    const uint64_t len = std::min(n - at, kDmaLineBytes - into_line);
    std::byte* last = first;
    std::byte* next = second;
    load_line(last, src + at, len, at, 0, after_load, hook_ctx);
    for (uint32_t load = 1;; ++load) {
      load_line(next, src + at, len, at, load, after_load, hook_ctx);
      if (std::memcmp(last, next, len) == 0) break;
      std::swap(last, next);
    }
    dma_copy(dst + at, last, len);
    at += len;
  }
}

}  // namespace locus
