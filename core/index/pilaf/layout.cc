// Key hashing for Pilaf (xxHash's XXH3, 128 bits per key).
#include "core/index/pilaf/layout.h"

#include <xxhash.h>

namespace locus::pilaf {

Hash128 hash128(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return Hash128{h.low64, h.high64};
}

KeyHash slots_of(Hash128 h, uint64_t bucket_mask) {
  KeyHash k;
  // Three slots from independent bit ranges of the 128-bit hash; the third
  // mixes both halves so it is not a function of either one alone.
  k.slot[0] = h.lo & bucket_mask;
  k.slot[1] = (h.hi >> 16) & bucket_mask;
  k.slot[2] = ((h.lo >> 32) ^ (h.hi * 0x9E3779B97F4A7C15ULL) >> 21) & bucket_mask;
  k.tag = static_cast<uint32_t>(h.hi >> 32) ^ static_cast<uint32_t>(h.lo >> 40);
  return k;
}

}  // namespace locus::pilaf
