// CRC64 for Pilaf's self-verifying structures: every hash-table entry and
// every extent carries a CRC64 of its bytes, so a client that fetched them
// with RDMA READs while the server was writing can tell a torn read from a
// good one and retry, without any lock the server would have to honour.
//
// The variant is CRC-64/XZ (ECMA-182 polynomial, reflected, init and final
// XOR all ones), computed by isa-l's carry-less-multiply kernels so that a
// client checks a multi-kilobyte value at memory speed. isa-l's header stays
// out of this one: only core/common/crc64.cc sees it, and nothing that
// includes this header needs isa-l on its include path.
//
// Incremental use: the CRC of a concatenation is the CRC of the second part
// seeded with the CRC of the first, so
//   crc64_extend(crc64(a, na), b, nb) == crc64(a||b, na + nb).
// That lets an entry be checked field by field without copying it together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace locus {

// CRC of `len` bytes at `data`, continuing from `seed` (the CRC of whatever
// came before; 0 for a fresh computation). `data` may be null when len == 0.
uint64_t crc64(const void* data, size_t len, uint64_t seed = 0);

// The same with the running CRC first, which reads better in a chain.
inline uint64_t crc64_extend(uint64_t crc_so_far, const void* data, size_t len) {
  return crc64(data, len, crc_so_far);
}

inline uint64_t crc64(std::span<const std::byte> bytes, uint64_t seed = 0) {
  return crc64(bytes.data(), bytes.size(), seed);
}

inline uint64_t crc64(std::string_view text, uint64_t seed = 0) {
  return crc64(text.data(), text.size(), seed);
}

// A running CRC over pieces that arrive one at a time (e.g. the key, then
// the value, then the length fields of a Pilaf entry).
class Crc64Accumulator {
 public:
  Crc64Accumulator& add(const void* data, size_t len) {
    crc_ = crc64(data, len, crc_);
    return *this;
  }
  Crc64Accumulator& add(std::string_view text) { return add(text.data(), text.size()); }
  template <typename T>
  Crc64Accumulator& add_value(const T& value) {  // trivially copyable fields, host byte order
    return add(&value, sizeof(value));
  }
  uint64_t value() const { return crc_; }

 private:
  uint64_t crc_ = 0;
};

}  // namespace locus
