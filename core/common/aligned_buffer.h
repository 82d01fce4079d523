// AlignedBuffer: an owned, zero-filled, cache-line aligned byte array, the
// backing store of registered regions (RDMA atomics need 8-byte alignment;
// nodes and entries want cache-line alignment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace locus {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    data_ = static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
    if (data_ == nullptr) {
      size_ = 0;
      return;
    }
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
