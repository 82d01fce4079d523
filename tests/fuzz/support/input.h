// What every fuzz target shares: InputStream, which hands out the fuzzer's
// bytes as fields (zeros past the end, so any length is a valid input),
// and FUZZ_CHECK, an invariant that aborts with a message (libFuzzer saves
// the input as a crash; the replay main shows it in the test log).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>

#define FUZZ_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                   \
      std::fprintf(stderr, "\n");                                                          \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace locus::fuzz {

class InputStream {
 public:
  InputStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }
  template <typename T>
  T get() {
    T v{};
    const size_t n = std::min(sizeof(T), remaining());
    if (n > 0) std::memcpy(&v, data_ + pos_, n);
    pos_ += sizeof(T);
    return v;
  }
  // Up to n bytes (fewer at the end), viewed in place.
  std::span<const std::byte> bytes(size_t n) {
    n = std::min(n, remaining());
    std::span<const std::byte> s(reinterpret_cast<const std::byte*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::span<const std::byte> rest() { return bytes(remaining()); }
  std::string_view text(size_t n) {
    auto b = bytes(n);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline std::span<const std::byte> as_bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

}  // namespace locus::fuzz
