// NodeStore: see node_store.h.
#include "core/index/nessie/node_store.h"

#include <atomic>
#include <cstring>
#include <string>

namespace locus::nessie {

NodeStore::NodeStore(NessieNode& node, uint32_t max_migrate_depth)
    : node_(node), g_(node.geometry()), max_depth_(max_migrate_depth), next_fresh_(g_.slice_first(0)) {
  retired_.resize(g_.data_entries);
  path_.reserve(uint64_t{max_depth_} + 2);
}

uint64_t NodeStore::load_ite(uint64_t index) {
  return std::atomic_ref<uint64_t>(*node_.ite(index)).load(std::memory_order_acquire);
}

// Release: the DTE an ITE names is written before a reader can see the ITE.
void NodeStore::store_ite(uint64_t index, uint64_t value) {
  std::atomic_ref<uint64_t>(*node_.ite(index)).store(value, std::memory_order_release);
}

std::string_view NodeStore::key_of(uint64_t ite) {
  const std::byte* d = node_.dte(g_.dte_of(ite));
  const DteHeader h = header_at(d);
  return {reinterpret_cast<const char*>(d + kDteHeaderBytes), h.key_bytes};
}

int NodeStore::find(std::string_view key, const KeyHash& kh) {
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (kh.repeat[w]) continue;
    const uint64_t ite = load_ite(kh.slot[w].index);
    if (Geometry::empty(ite) || g_.filter_of(ite) != kh.filter) continue;
    if (key_of(ite) == key) return static_cast<int>(w);
  }
  return -1;
}

Status NodeStore::get(std::string_view key, std::string* value) {
  std::lock_guard<ShortMutex> lock(mu_);
  return get_locked(key, value);
}

Status NodeStore::put(std::string_view key, std::string_view value, Nanos now_ns) {
  std::lock_guard<ShortMutex> lock(mu_);
  return put_locked(key, value, now_ns);
}

Status NodeStore::remove(std::string_view key, Nanos now_ns) {
  std::lock_guard<ShortMutex> lock(mu_);
  return remove_locked(key, now_ns);
}

Status NodeStore::get_locked(std::string_view key, std::string* value) {
  ++stats_.gets;
  const KeyHash kh = hash_key(key, g_);
  const int w = find(key, kh);
  if (w < 0) return not_found("nessie get: no such key");
  const std::byte* d = node_.dte(g_.dte_of(load_ite(kh.slot[w].index)));
  value->assign(reinterpret_cast<const char*>(d + g_.meta_bytes()), header_at(d).value_bytes);
  return Status();
}

// A depth-first search for an empty ITE reachable by moving keys: path
// holds ITE indexes, each key moving to the next, the last one empty.
bool NodeStore::find_path(uint64_t index, uint32_t depth, std::vector<uint64_t>* path) {
  path->push_back(index);
  const uint64_t ite = load_ite(index);
  if (Geometry::empty(ite)) return true;
  if (depth < max_depth_) {
    const KeyHash kh = hash_key(key_of(ite), g_);
    for (uint32_t w = 0; w < g_.ways; ++w) {
      if (kh.repeat[w] || kh.slot[w].index == index) continue;
      bool on_path = false;
      for (uint64_t p : *path) on_path = on_path || p == kh.slot[w].index;
      if (!on_path && find_path(kh.slot[w].index, depth + 1, path)) return true;
    }
  }
  path->pop_back();
  return false;
}

int NodeStore::make_room(const KeyHash& kh) {
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (kh.repeat[w]) continue;
    path_.clear();
    if (!find_path(kh.slot[w].index, 0, &path_)) continue;
    // Move from the end: each key is at its destination before its source
    // is overwritten, so readers always find it (or see an ITE change).
    for (size_t i = path_.size() - 1; i > 0; --i) {
      store_ite(path_[i], load_ite(path_[i - 1]));
      ++stats_.migrations;
    }
    return static_cast<int>(w);  // its ITE now duplicates the next one's: free to overwrite
  }
  return -1;
}

StatusOr<uint64_t> NodeStore::allocate(Nanos now_ns) {
  if (retired_count_ > 0 && retired_[retired_head_].free_at_ns <= now_ns) {
    const uint64_t entry = retired_[retired_head_].entry;
    retired_head_ = (retired_head_ + 1) % retired_.size();
    --retired_count_;
    ++stats_.reused;
    return entry;
  }
  if (next_fresh_ < g_.data_entries) return next_fresh_++;
  ++stats_.dte_waits;
  // Aborted: the client backs off and retries, as Nessie's clients do
  // when their slice has nothing expired yet.
  return Status(StatusCode::kAborted, "nessie: node " + std::to_string(node_.dti()) +
                                          " has no free data entry: replaced ones wait out index.expiry_ms "
                                          "(index.client_data_entries per client sizes them)");
}

void NodeStore::retire(uint64_t ite, Nanos now_ns) {
  // Readers of the old DTE fail their attempt within expiry less skew of
  // its start; the skew is added so remote clocks agree it has passed.
  const Nanos free_at = now_ns + static_cast<Nanos>(g_.expiry_ns + g_.clock_skew_ns);
  std::byte* d = node_.dte(g_.dte_of(ite));
  const uint64_t recycle = kDteRecycle | (static_cast<uint64_t>(free_at) & kDteExpiryMask);
  std::memcpy(d + kRecycleOffset, &recycle, sizeof recycle);
  retired_[(retired_head_ + retired_count_) % retired_.size()] = {g_.dte_of(ite), free_at};
  ++retired_count_;
}

Status NodeStore::put_locked(std::string_view key, std::string_view value, Nanos now_ns) {
  ++stats_.puts;
  if (key.size() > g_.key_bytes || value.size() > g_.value_bytes) {
    return invalid_argument("nessie put: a key of " + std::to_string(key.size()) + " bytes and a value of " +
                            std::to_string(value.size()) + " exceed index.key_bytes = " + std::to_string(g_.key_bytes) +
                            " or index.value_bytes = " + std::to_string(g_.value_bytes));
  }
  const KeyHash kh = hash_key(key, g_);
  int w = find(key, kh);
  const bool replaces = w >= 0;
  for (uint32_t v = 0; v < g_.ways && w < 0; ++v) {
    if (!kh.repeat[v] && Geometry::empty(load_ite(kh.slot[v].index))) w = static_cast<int>(v);
  }
  if (w < 0) w = make_room(kh);
  if (w < 0) {
    ++stats_.full;
    return resource_exhausted(
        "nessie put: every candidate index entry is taken and no migration chain of up to "
        "index.max_migrate_depth frees one; lower index.load_factor");
  }
  // After the room is made: moves change no key's value, so a put that
  // then finds no free entry has changed nothing a reader can tell.
  LOCUS_ASSIGN_OR_RETURN(const uint64_t entry, allocate(now_ns));
  write_valid_entry(g_, node_.dte(entry), key, value);
  const uint64_t index = kh.slot[w].index;
  const uint64_t old = load_ite(index);
  store_ite(index, g_.ite(node_.dti(), entry, kh.filter));
  if (replaces) retire(old, now_ns);
  return Status();
}

Status NodeStore::remove_locked(std::string_view key, Nanos now_ns) {
  ++stats_.deletes;
  const KeyHash kh = hash_key(key, g_);
  const int w = find(key, kh);
  if (w < 0) return not_found("nessie delete: no such key");
  const uint64_t index = kh.slot[w].index;
  const uint64_t old = load_ite(index);
  store_ite(index, Geometry::cleared(old));
  retire(old, now_ns);
  return Status();
}

}  // namespace locus::nessie
