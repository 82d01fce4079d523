// Keys and values for YCSB-style workloads, written into caller buffers so
// the data path never allocates. A key is "user" + the (optionally hashed)
// key number, zero padded like YCSB's buildKeyName; a value is printable
// pseudo-random bytes that depend only on a seed, so a run replays exactly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus::workload {

// FNV-1a 64 over the eight little-endian bytes of `value`.
constexpr uint64_t fnv1a_64(uint64_t value) {
  uint64_t hash = 0xCBF29CE484222325ULL;  // FNV-1a 64 offset basis
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xFF;
    hash *= 0x100000001B3ULL;  // FNV-1a 64 prime
    value >>= 8;
  }
  return hash;
}

// YCSB's Utils.hash: FNV-1a 64 read as a signed Java long, then Math.abs.
// Keeping the abs makes our hashed keys and scrambled-zipfian draws the
// same numbers YCSB produces.
constexpr uint64_t ycsb_hash(uint64_t value) {
  const uint64_t h = fnv1a_64(value);
  return (h >> 63) != 0 ? ~h + 1 : h;
}

// "user" + 20 digits of a 64-bit number, or `zeropadding` digits if more.
constexpr size_t max_key_bytes(uint32_t zeropadding) {
  return 4 + (zeropadding > 20 ? zeropadding : 20);
}

// Writes the key for `keynum` into out[0, cap) without a terminating NUL
// and returns its length, or 0 if it does not fit. `hashed` is
// insertorder=hashed: the key number goes through ycsb_hash first.
size_t build_key(uint64_t keynum, bool hashed, uint32_t zeropadding, char* out, size_t cap);

// Fills out[0, length) with printable ASCII (' ' to '~') determined by
// `seed` alone.
void fill_value_bytes(uint64_t seed, char* out, size_t length);

}  // namespace locus::workload
