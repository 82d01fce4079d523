// AlignedBuffer: an owned, zero-filled, cache-line aligned byte array, the
// backing store of registered regions (RDMA atomics need 8-byte alignment;
// nodes and entries want cache-line alignment). Buffers of 2 MiB and more
// are 2 MiB aligned and asked to be backed by transparent huge pages:
// index regions are read at random, and TLB misses (the CPU's, and the
// NIC's address translation on real hardware) dominate otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <sys/mman.h>

namespace locus {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePage = 2u << 20;

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    const size_t align = bytes >= kHugePage ? kHugePage : kAlignment;
    const size_t rounded = (bytes + align - 1) / align * align;
    data_ = static_cast<std::byte*>(std::aligned_alloc(align, rounded));
    if (data_ == nullptr) {
      size_ = 0;
      return;
    }
    if (align == kHugePage) (void)madvise(data_, rounded, MADV_HUGEPAGE);  // a hint only
    std::memset(data_, 0, rounded);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // False when the allocation failed (or size 0).
  bool valid() const { return data_ != nullptr; }
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace locus
