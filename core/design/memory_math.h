// Arithmetic for memory estimates (IndexDriver::server_memory and
// client_memory): sizes grown from user settings saturate at UINT64_MAX,
// so an absurd setting yields an absurd estimate, which the runner
// refuses, never a small wrapped one or std::bit_ceil's undefined case.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace locus::design {

inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

// std::bit_ceil(x), or 2^63 for an x above it (where bit_ceil has no answer).
inline uint64_t saturating_bit_ceil(uint64_t x) {
  constexpr uint64_t kTop = uint64_t{1} << 63;
  return x > kTop ? kTop : std::bit_ceil(x);
}

}  // namespace locus::design
