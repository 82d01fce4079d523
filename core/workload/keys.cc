// Key and value builders: fixed-size stack work only, no allocation.
#include "core/workload/keys.h"

#include <array>
#include <charconv>
#include <cstring>

namespace locus::workload {

size_t build_key(uint64_t keynum, bool hashed, uint32_t zeropadding, char* out, size_t cap) {
  if (hashed) keynum = ycsb_hash(keynum);
  char digits[20];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), keynum);
  if (ec != std::errc()) return 0;
  const size_t digit_count = static_cast<size_t>(end - digits);
  const size_t fill = zeropadding > digit_count ? zeropadding - digit_count : 0;
  const size_t length = 4 + fill + digit_count;
  if (length > cap) return 0;
  std::memcpy(out, "user", 4);
  std::memset(out + 4, '0', fill);
  std::memcpy(out + 4 + fill, digits, digit_count);
  return length;
}

namespace {
// The next word of the splitmix64 stream.
inline uint64_t splitmix_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

// Each byte value folded onto the 95 printable characters.
constexpr std::array<char, 256> kPrintable = [] {
  std::array<char, 256> t{};
  for (int x = 0; x < 256; ++x) t[x] = static_cast<char>(' ' + x % 95);
  return t;
}();

void fill_value_bytes(uint64_t seed, char* out, size_t length) {
  // splitmix64 as a counter-mode stream: each 64-bit word gives 8 bytes,
  // lowest first, each folded onto the 95 printable characters (the slight
  // bias toward the first 66 characters does not matter for value
  // content). The fold is a table lookup: loading a store is mostly this.
  uint64_t state = seed;
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    const uint64_t z = splitmix_next(state);
    for (int b = 0; b < 8; ++b) out[i + b] = kPrintable[(z >> (8 * b)) & 0xFF];
  }
  if (i < length) {
    const uint64_t z = splitmix_next(state);
    for (int b = 0; i < length; ++b, ++i) out[i] = kPrintable[(z >> (8 * b)) & 0xFF];
  }
}

}  // namespace locus::workload
