// Nessie's remotely accessed layout (paper section 4.1), shared by the
// nodes that hold the tables (node.h), the load (loader.h) and the
// clients (client.h).
//
//  * Index table: an array of 64-bit index entries (ITEs) per node. A key
//    hashes to `ways` entries over all nodes' index tables (N-way cuckoo
//    hashing). An ITE is changed only by RDMA CAS, so it is registered for
//    remote atomics; its bits, low to high: the data-table entry id
//    (dte_bits), the data-table id (dti_bits: the node), the filter bits
//    (filter_bits of the key's hash), spare zeros, the empty bit (62) and
//    the watermark bit (63, the last byte a NIC writes). A cleared ITE
//    keeps the reference it held with the empty bit set, so an occupied
//    value never recurs within an attempt: its entry is staged only after
//    the ITE stops naming it and reused an expiry period later, so a
//    reverse pass that finds it unchanged knows it did not change and
//    change back (ABA). An empty value is weaker: cleared(e) may outlive
//    e's expiry, so e, reused at the same slot for a key of the same
//    filter and cleared again, gives the same value within one attempt
//    (each entry at most once an attempt). No interleaving where that
//    breaks a history is known (the concurrency tests' checker finds
//    none); an epoch or generation count in the spare bits would rule it
//    out.
//  * Data table: an array of fixed-size data-table entries (DTEs) per
//    node: a 32-byte header (state word with the valid and watermark bits,
//    recycle word with the recycle bit and expiry time, the previous
//    version's ITE, key and value lengths), then key_bytes of key, then
//    value_bytes of value, so a key and its metadata are read without the
//    value. Entry 0 of every data table is never used: the all-zero
//    reference of a never-written ITE names no entry.
//
// The watermark bits are set in everything written; the transport's
// completions, not polling, tell this implementation that a write landed,
// so nothing polls them. Every aligned 8-byte word (ITE, state, recycle)
// is assumed to be read whole by a READ racing a CAS or WRITE of it, as
// Nessie's ITE reads racing CASes must be.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/rpc/message.h"
#include "core/transport/types.h"

namespace locus::nessie {

// The most hash functions a deployment may use (the paper's default is 3):
// the client keeps per-way state in fixed arrays.
inline constexpr uint32_t kMaxWays = 8;

// ITE bits that are not the reference or filter.
inline constexpr uint64_t kIteWatermark = uint64_t{1} << 63;
inline constexpr uint64_t kIteEmpty = uint64_t{1} << 62;
inline constexpr uint32_t kIteFieldBits = 62;  // reference + filter bits must fit below the empty bit
// The value of an ITE nothing was ever stored in.
inline constexpr uint64_t kIteNeverUsed = kIteWatermark | kIteEmpty;

// Bits of a DTE's state word.
inline constexpr uint64_t kDteValid = 1;
inline constexpr uint64_t kDteWatermark = uint64_t{1} << 63;
// Bits of a DTE's recycle word: the flag, and the expiry time in ns.
inline constexpr uint64_t kDteRecycle = uint64_t{1} << 63;
inline constexpr uint64_t kDteExpiryMask = kDteRecycle - 1;

struct DteHeader {
  uint64_t state = 0;    // kDteValid | kDteWatermark
  uint64_t recycle = 0;  // kDteRecycle | expiry ns, written when the entry is staged for recycling
  uint64_t prev = 0;     // the ITE this entry replaced (previous version); 0: none
  uint32_t key_bytes = 0;
  uint32_t value_bytes = 0;

  bool valid() const { return (state & kDteValid) != 0; }
};
static_assert(sizeof(DteHeader) == 32);
inline constexpr uint32_t kDteHeaderBytes = sizeof(DteHeader);
// The header of a DTE copied to `p` (a READ's destination).
inline DteHeader header_at(const std::byte* p) {
  DteHeader h;
  std::memcpy(&h, p, sizeof h);
  return h;
}
inline constexpr uint32_t kStateOffset = offsetof(DteHeader, state);
inline constexpr uint32_t kRecycleOffset = offsetof(DteHeader, recycle);

// What every node and client agrees on: sizes and the ITE format.
struct Geometry {
  uint32_t nodes = 1;
  uint32_t ways = 3;
  uint32_t filter_bits = 7;
  uint32_t dti_bits = 0;
  uint32_t dte_bits = 1;
  uint64_t index_entries = 0;  // per node
  uint64_t data_entries = 0;   // per node, entry 0 included
  uint64_t load_entries = 0;   // per node: entries 1 .. load_entries hold loaded records
  uint32_t slices = 0;         // per node: client slices after the loaded records
  uint32_t slice_entries = 0;  // entries of one client slice
  uint32_t key_bytes = 0;
  uint32_t value_bytes = 0;
  uint64_t expiry_ns = 0;
  uint64_t clock_skew_ns = 0;
  // NessieSD and NessieHY (paper section 5): a key lives on one node, its
  // owner (way 0's node), whose index table holds every candidate ITE and
  // whose data table holds its DTEs ("partially coupled"); the owner's
  // server thread makes every change. 0: Nessie's decoupled tables.
  uint32_t coupled = 0;
  // Request rings per node (one per client process; 0 in client mode)
  // and the bytes of each (requests.h).
  uint32_t ring_bytes = 0;
  uint32_t rings = 0;
  uint32_t spare_ = 0;

  bool operator==(const Geometry&) const = default;

  uint32_t dte_bytes() const { return (kDteHeaderBytes + key_bytes + value_bytes + 7) / 8 * 8; }
  uint32_t meta_bytes() const { return kDteHeaderBytes + key_bytes; }
  uint64_t global_entries() const { return uint64_t{nodes} * index_entries; }
  uint64_t slice_first(uint32_t slice) const { return 1 + load_entries + uint64_t{slice} * slice_entries; }

  // An ITE referring to entry `dte` of data table `dti`.
  uint64_t ite(uint32_t dti, uint64_t dte, uint32_t filter) const {
    return kIteWatermark | (uint64_t{filter} << (dte_bits + dti_bits)) | (uint64_t{dti} << dte_bits) | dte;
  }
  uint32_t dti_of(uint64_t ite) const {
    return static_cast<uint32_t>((ite >> dte_bits) & ((uint64_t{1} << dti_bits) - 1));
  }
  uint64_t dte_of(uint64_t ite) const { return ite & ((uint64_t{1} << dte_bits) - 1); }
  uint32_t filter_of(uint64_t ite) const {
    return static_cast<uint32_t>((ite >> (dte_bits + dti_bits)) & ((uint64_t{1} << filter_bits) - 1));
  }
  static bool empty(uint64_t ite) { return (ite & kIteEmpty) != 0; }
  static uint64_t cleared(uint64_t ite) { return ite | kIteEmpty; }
  // Whether an occupied ITE names an entry that exists.
  bool names_entry(uint64_t ite) const { return dti_of(ite) < nodes && dte_of(ite) != 0 && dte_of(ite) < data_entries; }
};

// Writes a valid DTE with no previous version at `d` by CPU stores (the
// load, and NessieSD/NessieHY's server threads, before an ITE names it).
inline void write_valid_entry(const Geometry& g, std::byte* d, std::string_view key, std::string_view value) {
  DteHeader h;
  h.state = kDteValid | kDteWatermark;
  h.key_bytes = static_cast<uint32_t>(key.size());
  h.value_bytes = static_cast<uint32_t>(value.size());
  std::memcpy(d, &h, sizeof h);
  if (!key.empty()) std::memcpy(d + kDteHeaderBytes, key.data(), key.size());
  if (!value.empty()) std::memcpy(d + g.meta_bytes(), value.data(), value.size());
}

// Bits needed to number `count` things (0 for one).
uint32_t bits_for(uint64_t count);

// An ITE's place: node and entry index.
struct Slot {
  uint32_t node = 0;
  uint64_t index = 0;
  bool operator==(const Slot&) const = default;
};

// A key's candidate ITEs (ways that land on an earlier way's slot are
// marked duplicates and skipped) and its filter bits. Coupled tables put
// every candidate on way 0's node, the key's owner.
struct KeyHash {
  Slot slot[kMaxWays];
  bool repeat[kMaxWays] = {};
  uint32_t filter = 0;
};
KeyHash hash_key(std::string_view key, const Geometry& g);

// One node's tables as a client reaches them.
struct NodeTables {
  uint32_t dti = 0;
  RemoteRegion index;
  RemoteRegion data;
};

// The one RPC of a node (node.h), and the name its work is charged under.
inline constexpr uint16_t kLayoutRpcType = 1;
inline constexpr const char* kLayoutWork = "nessie.layout";

// The layout message ("nessie.layout"): the geometry, the node's tables,
// the first entry of the client slice granted (0: none asked or left) and
// whether an earlier client held that slice (its entries' state words
// then tell which are in use: 0, free). In coupled modes also the node's
// request region and the ring granted (requests.h; ring == kNoRing: none
// asked or left).
inline constexpr uint32_t kNoRing = UINT32_MAX;
struct RingGrant {
  RemoteRegion requests;  // the node's request region, rings of g.ring_bytes
  uint32_t ring = kNoRing;
};
void put_layout(const Geometry& g, const NodeTables& t, uint64_t slice_first, bool slice_used, const RingGrant& ring,
                rpc::Writer& w);
bool get_layout(rpc::Reader& r, Geometry* g, NodeTables* t, uint64_t* slice_first, bool* slice_used,
                RingGrant* ring);

// The layout RPC's requests, by their first byte: kLayoutOnly and
// kLayoutAndSlice (each optionally followed by a ring request: u8 1 and
// the client's response ring, or u8 2 and the ring to start over), and
// kLayoutRelease, followed by u64 the first entry of the slice given back
// (0: none) and u32 the ring given back (kNoRing: none): a client that
// ends gives its slice and rings back for a later client (a later `locus
// run` against the same `locus serve`). Answered with an empty message.
inline constexpr uint8_t kLayoutOnly = 0;
inline constexpr uint8_t kLayoutAndSlice = 1;
inline constexpr uint8_t kLayoutRelease = 2;

}  // namespace locus::nessie

namespace locus::nessie {
// Whether a geometry (from a layout message) is one this code can use:
// the reference and filter fit an ITE, the entry ids fit their bits.
bool geometry_ok(const Geometry& g);
}  // namespace locus::nessie
