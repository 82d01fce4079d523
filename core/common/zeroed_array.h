// ZeroedArray<T>: an array of trivially copyable T whose elements start as
// all-zero bytes, held in an AlignedBuffer. A large one is an anonymous
// mapping the kernel zeroes page by page as it is first touched, so
// elements no one writes cost neither memory nor the time to clear them,
// where std::vector writes every element it creates (a Pilaf store's
// allocator bookkeeping was a tenth of the page faults of a 1024-server
// simulation's set-up; docs/simulator.md, "Scale").
#pragma once

#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/common/aligned_buffer.h"

namespace locus {

template <class T>
  requires std::is_trivially_copyable_v<T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  // n zeroed elements; size() is 0 if the memory could not be had.
  explicit ZeroedArray(size_t n) { (void)grow(n); }

  // Grows to n elements, keeping the present ones and zeroing the new ones.
  // False, and nothing changed, if the memory could not be had. Never
  // shrinks (an n below size() changes nothing).
  [[nodiscard]] bool grow(size_t n) {
    if (n <= size_) return true;
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) return false;
    AlignedBuffer bigger(n * sizeof(T));
    if (!bigger.valid()) return false;
    if (size_ > 0) std::memcpy(bigger.data(), buffer_.data(), size_ * sizeof(T));
    buffer_ = std::move(bigger);
    size_ = n;
    return true;
  }

  size_t size() const { return size_; }
  T& operator[](size_t i) { return reinterpret_cast<T*>(buffer_.data())[i]; }
  const T& operator[](size_t i) const { return reinterpret_cast<const T*>(buffer_.data())[i]; }

 private:
  AlignedBuffer buffer_;
  size_t size_ = 0;
};

}  // namespace locus
