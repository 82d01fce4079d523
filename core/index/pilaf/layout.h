// Pilaf's remotely readable layout: what a client finds in the server's
// memory and how it checks what it read. Shared by the server (which
// writes it), the client (which reads it over RDMA) and the local lookup.
//
//  * Table region: an array of 32-byte entries, 3-way cuckoo hashed. Each
//    entry is a self-verifying pointer (offset, length and CRC64 of a
//    key-value extent) plus a 32-bit key tag, closed by a CRC64 over the
//    entry itself, so a torn read of an entry is detected.
//  * Extents region: [u32 key_len][u32 value_len][key][value] blocks handed
//    out by a buddy allocator; a pointer's CRC64 detects an extent that was
//    freed or reused after the entry was read.
//  * Meta region: a move sequence (odd while a cuckoo kick chain is being
//    applied) and the layout epoch; a client that misses a key re-checks
//    its probe against the move sequence before reporting "not found".
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/common/crc64.h"
#include "core/memory/extent.h"
#include "core/transport/types.h"

namespace locus::pilaf {

constexpr int kWays = 3;
// The extent format and its helpers are shared with Cell (core/memory/extent.h).
using memory::kExtentHeaderBytes;
using memory::extent_bytes;
using memory::parse_extent;
using memory::write_extent;

struct Entry {
  uint64_t kv_offset = 0;
  uint32_t kv_length = 0;  // 0: the slot is empty
  uint32_t key_tag = 0;
  uint64_t kv_crc = 0;
  uint64_t entry_crc = 0;  // CRC64 of the 24 bytes above

  bool empty() const { return kv_length == 0; }
};
static_assert(sizeof(Entry) == 32, "two entries per cache line");
constexpr uint32_t kEntryBytes = sizeof(Entry);
constexpr uint32_t kEntryCrcBytes = offsetof(Entry, entry_crc);

inline uint64_t entry_checksum(const Entry& e) { return crc64(&e, kEntryCrcBytes); }
inline Entry seal(Entry e) {
  e.entry_crc = entry_checksum(e);
  return e;
}
inline Entry empty_entry() { return seal(Entry{}); }

// A key's 128-bit hash; its slots and tag derive from it, so the server
// can keep it per slot and move keys without re-reading them.
struct Hash128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
};
Hash128 hash128(std::string_view key);

// The three candidate slots of a key and its tag.
struct KeyHash {
  uint64_t slot[kWays];
  uint32_t tag;
};
KeyHash slots_of(Hash128 h, uint64_t bucket_mask);
inline KeyHash hash_key(std::string_view key, uint64_t bucket_mask) {
  return slots_of(hash128(key), bucket_mask);
}
// Whether way w's slot is one an earlier way of the key already named: a
// get reads such a slot once (PilafClient, and the model that counts its
// READs).
inline bool repeats_earlier_way(const KeyHash& kh, int w) {
  return (w >= 1 && kh.slot[w] == kh.slot[0]) || (w == 2 && kh.slot[w] == kh.slot[1]);
}

// The meta object, at offset 0 of the meta region.
struct Meta {
  uint64_t move_seq = 0;  // odd while entries are being moved
  uint64_t epoch = 0;     // bumped whenever a region is replaced
};
constexpr uint32_t kMetaBytes = 64;

// Everything a client needs to read the store; fetched by RPC on connect
// and again whenever a region it used has been replaced.
struct Layout {
  uint64_t epoch = 0;
  uint64_t bucket_count = 0;  // power of two
  uint32_t max_kv_bytes = 0;  // largest extent the server accepts
  RemoteRegion table;
  RemoteRegion extents;
  RemoteRegion meta;
};

}  // namespace locus::pilaf
