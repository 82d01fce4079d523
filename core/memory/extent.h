// Key-value extents: the variable-length [u32 key_len][u32 value_len][key]
// [value] blocks that Pilaf and Cell keep in a remotely readable extents
// region (handed out by the BuddyAllocator). A pointer to an extent carries
// its length and the CRC64 of its bytes, so a client that fetched it with
// an RDMA READ while the server was freeing or rewriting it can tell (the
// self-verifying pointers of the Pilaf paper). The helpers live here, not
// in one index, so every design shares one format and one parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace locus::memory {

constexpr uint32_t kExtentHeaderBytes = 8;

inline uint32_t extent_bytes(std::string_view key, std::string_view value) {
  return kExtentHeaderBytes + static_cast<uint32_t>(key.size() + value.size());
}

inline void write_extent(std::byte* out, std::string_view key, std::string_view value) {
  const uint32_t kl = static_cast<uint32_t>(key.size());
  const uint32_t vl = static_cast<uint32_t>(value.size());
  std::memcpy(out, &kl, 4);
  std::memcpy(out + 4, &vl, 4);
  std::memcpy(out + 8, key.data(), kl);
  if (vl > 0) std::memcpy(out + 8 + kl, value.data(), vl);
}

// Parses a verified extent of `length` bytes; false if its header lies.
inline bool parse_extent(const std::byte* in, uint32_t length, std::string_view* key,
                         std::string_view* value) {
  if (length < kExtentHeaderBytes) return false;
  uint32_t kl, vl;
  std::memcpy(&kl, in, 4);
  std::memcpy(&vl, in + 4, 4);
  if (uint64_t{kl} + vl + kExtentHeaderBytes != length) return false;
  *key = std::string_view(reinterpret_cast<const char*>(in + 8), kl);
  *value = std::string_view(reinterpret_cast<const char*>(in + 8 + kl), vl);
  return true;
}

}  // namespace locus::memory
