// Nessie's layout helpers: see layout.h.
#include "core/index/nessie/layout.h"

#include <xxhash.h>

#include <bit>

namespace locus::nessie {

uint32_t bits_for(uint64_t count) { return count <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(count - 1)); }

KeyHash hash_key(std::string_view key, const Geometry& g) {
  KeyHash kh;
  // Seed 0 is the filter's hash, seeds 1..ways the cuckoo functions': the
  // filter bits say nothing about where a key lives.
  kh.filter =
      static_cast<uint32_t>(XXH3_64bits_withSeed(key.data(), key.size(), 0) & ((uint64_t{1} << g.filter_bits) - 1));
  const uint64_t entries = g.global_entries();
  for (uint32_t w = 0; w < g.ways; ++w) {
    const uint64_t h = XXH3_64bits_withSeed(key.data(), key.size(), w + 1);
    if (g.coupled != 0 && w > 0) {
      kh.slot[w] = Slot{kh.slot[0].node, h % g.index_entries};
    } else {
      const uint64_t at = h % entries;
      kh.slot[w] = Slot{static_cast<uint32_t>(at / g.index_entries), at % g.index_entries};
    }
    for (uint32_t v = 0; v < w; ++v) kh.repeat[w] = kh.repeat[w] || kh.slot[v] == kh.slot[w];
  }
  return kh;
}

// On the wire the slice's first entry carries the flag in its top bit
// (entry ids are far below it), so the message keeps its size.
constexpr uint64_t kSliceUsedBit = uint64_t{1} << 63;

void put_layout(const Geometry& g, const NodeTables& t, uint64_t slice_first, bool slice_used, const RingGrant& ring,
                rpc::Writer& w) {
  w.put(g);
  w.put(t.dti);
  rpc::put_region(t.index, w);
  rpc::put_region(t.data, w);
  w.put(slice_first | (slice_used ? kSliceUsedBit : 0));
  rpc::put_region(ring.requests, w);
  w.put(ring.ring);
}

bool get_layout(rpc::Reader& r, Geometry* g, NodeTables* t, uint64_t* slice_first, bool* slice_used,
                RingGrant* ring) {
  uint64_t first = 0;
  const bool ok = r.get(g) && r.get(&t->dti) && rpc::get_region(r, &t->index) && rpc::get_region(r, &t->data) &&
                  r.get(&first) && rpc::get_region(r, &ring->requests) && r.get(&ring->ring) && r.at_end();
  *slice_used = (first & kSliceUsedBit) != 0;
  *slice_first = first & ~kSliceUsedBit;
  return ok && (*slice_first != 0 || !*slice_used);
}

}  // namespace locus::nessie

namespace locus::nessie {
bool geometry_ok(const Geometry& g) {
  return g.nodes >= 1 && g.ways >= 1 && g.ways <= kMaxWays && g.index_entries >= 1 && g.filter_bits <= 32 &&
         g.dte_bits >= 1 && g.dte_bits + g.dti_bits + g.filter_bits <= kIteFieldBits &&
         g.dti_bits >= bits_for(g.nodes) && g.data_entries <= (uint64_t{1} << g.dte_bits) &&
         g.slice_first(g.slices) <= g.data_entries && g.expiry_ns > g.clock_skew_ns && g.coupled <= 1 &&
         (g.coupled == 0 || (g.rings >= 1 && g.ring_bytes >= 64 && g.ring_bytes % 8 == 0));
}
}  // namespace locus::nessie
