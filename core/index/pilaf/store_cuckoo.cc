// Store: 3-way cuckoo placement and table growth.
//
// The kick chain is found first by a bounded breadth-first search over
// slots (shortest chain, so fewest moves), then applied from its empty end
// backwards: each key is copied to its new slot before its old slot is
// overwritten, so a concurrent reader always finds it in one or two slots.
// The meta move sequence is odd while a chain is applied; a client that
// misses a key checks it to tell a real miss from one caused by a move.
#include <algorithm>
#include <string>

#include "core/index/pilaf/store.h"

namespace locus::pilaf {

bool Store::find_kick_path(Hash128 h) {
  search_.clear();
  path_.clear();
  const uint64_t mask = bucket_count_ - 1;
  const KeyHash first = slots_of(h, mask);
  for (int w = 0; w < kWays; ++w) {
    if (entry(first.slot[w]).empty()) {
      path_.push_back(first.slot[w]);
      return true;
    }
    search_.push_back({first.slot[w], -1});
  }
  for (size_t i = 0; i < search_.size(); ++i) {
    const uint64_t slot = search_[i].slot;
    const KeyHash alt = slots_of(slot_hash_[slot], mask);
    for (int w = 0; w < kWays; ++w) {
      const uint64_t next = alt.slot[w];
      if (next == slot) continue;
      if (entry(next).empty()) {
        // Chain: root ... slot, next. Built back to front, then reversed.
        path_.push_back(next);
        for (int32_t j = static_cast<int32_t>(i); j >= 0; j = search_[static_cast<size_t>(j)].parent) {
          path_.push_back(search_[static_cast<size_t>(j)].slot);
        }
        std::reverse(path_.begin(), path_.end());
        return true;
      }
      if (search_.size() < options_.max_search_slots) {
        search_.push_back({next, static_cast<int32_t>(i)});
      }
    }
  }
  return false;
}

Status Store::cuckoo_insert(const Entry& e, Hash128 h) {
  if (!find_kick_path(h)) {
    return Status(StatusCode::kAborted, "pilaf: no cuckoo kick chain within " +
                                            std::to_string(options_.max_search_slots) + " slots");
  }
  const size_t n = path_.size();
  if (n > 1) {
    set_move_seq(move_seq_ + 1);  // odd: moving
    for (size_t j = n - 1; j >= 1; --j) {
      publish(path_[j], entry(path_[j - 1]));
      slot_hash_[path_[j]] = slot_hash_[path_[j - 1]];
      ++kicks_;
    }
  }
  publish(path_[0], e);
  slot_hash_[path_[0]] = h;
  if (n > 1) set_move_seq(move_seq_ + 1);  // even: settled
  return Status();
}

Status Store::grow_table() {
  AlignedBuffer old_table = std::move(table_);
  std::vector<Hash128> old_hash = std::move(slot_hash_);
  const uint64_t old_count = bucket_count_;
  uint64_t new_count = old_count * 2;
  // Rebuild into a table no client can see yet; retry larger in the
  // (unlikely) case that the rebuild itself finds no chain.
  while (true) {
    table_ = AlignedBuffer(new_count * kEntryBytes);
    if (!table_.valid()) {
      table_ = std::move(old_table);
      slot_hash_ = std::move(old_hash);
      return resource_exhausted("pilaf: cannot grow the table to " + std::to_string(new_count) +
                                " buckets");
    }
    bucket_count_ = new_count;
    slot_hash_.assign(new_count, Hash128{});
    const Entry empty = empty_entry();
    for (uint64_t s = 0; s < new_count; ++s) std::memcpy(table_.data() + s * kEntryBytes, &empty, kEntryBytes);
    bool ok = true;
    const auto* old_entries = reinterpret_cast<const Entry*>(old_table.data());
    for (uint64_t s = 0; s < old_count && ok; ++s) {
      if (old_entries[s].empty()) continue;
      if (!find_kick_path(old_hash[s])) {
        ok = false;
        break;
      }
      for (size_t j = path_.size() - 1; j >= 1; --j) {
        publish(path_[j], entry(path_[j - 1]));
        slot_hash_[path_[j]] = slot_hash_[path_[j - 1]];
      }
      publish(path_[0], old_entries[s]);
      slot_hash_[path_[0]] = old_hash[s];
    }
    if (ok) break;
    new_count *= 2;
  }
  // Clients must be able to read the new table before it is the table.
  if (publisher_ != nullptr) {
    if (Status st = publisher_->region_moving(RegionKind::kTable, table_.data(), table_bytes()); !st.is_ok()) {
      table_ = std::move(old_table);
      slot_hash_ = std::move(old_hash);
      bucket_count_ = old_count;
      return Status(st.code(), "pilaf: cannot publish a table of " + std::to_string(new_count) +
                                   " buckets: " + st.message());
    }
  }
  ++table_grows_;
  bump_epoch();
  if (publisher_ != nullptr) LOCUS_RETURN_IF_ERROR(publisher_->region_replaced(RegionKind::kTable));
  return Status();  // old_table is freed here, after it became unreachable
}

}  // namespace locus::pilaf
