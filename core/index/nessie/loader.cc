// Loader: see loader.h.
#include "core/index/nessie/loader.h"

#include <cstring>
#include <string>

namespace locus::nessie {
namespace {
// Protocol parameter of the load only: displacements one record's
// insertion may cause before the load gives up. At the paper's load
// factor of 0.4 over three ways a walk is rarely longer than a few.
constexpr uint32_t kMaxLoadKicks = 500;
}  // namespace

Loader::Loader(std::span<const std::unique_ptr<NessieNode>> nodes)
    : nodes_(nodes), g_(nodes.front()->geometry()), loaded_(nodes.size(), 0) {}

std::string_view Loader::key_of(uint64_t ite) {
  const std::byte* d = nodes_[g_.dti_of(ite)]->dte(g_.dte_of(ite));
  DteHeader h;
  std::memcpy(&h, d, sizeof h);
  return {reinterpret_cast<const char*>(d + kDteHeaderBytes), h.key_bytes};
}

Status Loader::insert(std::string_view key, std::string_view value) {
  if (key.size() > g_.key_bytes || value.size() > g_.value_bytes) {
    return invalid_argument("nessie load: a record of " + std::to_string(key.size()) + " + " +
                            std::to_string(value.size()) + " bytes exceeds index.key_bytes = " +
                            std::to_string(g_.key_bytes) + " or index.value_bytes = " + std::to_string(g_.value_bytes));
  }
  // Coupled tables (NessieSD, NessieHY) keep a key's DTE on its owner.
  const uint32_t dti = g_.coupled != 0 ? hash_key(key, g_).slot[0].node : next_node_;
  next_node_ = (next_node_ + 1) % g_.nodes;
  if (loaded_[dti] >= g_.load_entries) {
    return resource_exhausted("nessie load: node " + std::to_string(dti) + "'s data table is full (" +
                              std::to_string(g_.load_entries) + " entries for loaded records" +
                              (g_.coupled != 0 ? "; the keys hash unevenly over the nodes" : "") + ")");
  }
  const uint64_t entry = 1 + loaded_[dti]++;
  write_valid_entry(g_, nodes_[dti]->dte(entry), key, value);
  ++stats_.records;

  uint64_t carried = g_.ite(dti, entry, hash_key(key, g_).filter);
  std::string_view carried_key = key;
  Slot came_from{UINT32_MAX, 0};  // where the carried entry was displaced from
  for (uint32_t kick = 0; kick <= kMaxLoadKicks; ++kick) {
    const KeyHash kh = hash_key(carried_key, g_);
    for (uint32_t w = 0; w < g_.ways; ++w) {
      uint64_t* slot = nodes_[kh.slot[w].node]->ite(kh.slot[w].index);
      if (Geometry::empty(*slot)) {
        *slot = carried;
        return Status();
      }
    }
    // All taken: displace the occupant of a candidate drawn at random
    // (a random walk; a fixed order can cycle), not the one the carried
    // entry just left.
    uint32_t way = static_cast<uint32_t>(walk_.uniform(g_.ways));
    for (uint32_t tries = 0; tries < g_.ways && kh.slot[way] == came_from; ++tries) way = (way + 1) % g_.ways;
    uint64_t* slot = nodes_[kh.slot[way].node]->ite(kh.slot[way].index);
    const uint64_t displaced = *slot;
    *slot = carried;
    carried = displaced;
    carried_key = key_of(displaced);
    came_from = kh.slot[way];
    ++stats_.kicks;
  }
  return resource_exhausted("nessie load: no free index entry after " + std::to_string(kMaxLoadKicks) +
                            " displacements; lower index.load_factor or raise index.index_entries");
}

}  // namespace locus::nessie
