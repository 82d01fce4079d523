// Optimistic lock coupling on a memory server's arena (local_access.h).
#include "core/index/nam/local_access.h"

#include <atomic>
#include <string>

namespace locus::nam {
namespace {
// Spins before the waiter sleeps: a local lock holder never waits while
// holding, so a lock is normally gone within a few hundred loads.
constexpr uint32_t kSpinsBeforeSleep = 256;
constexpr Nanos kSleepNs = 1 * kMicrosecond;
}  // namespace

// The page at p if it is one of these arenas' (inside one, on a page
// boundary), else nullptr: no status and, for a power-of-two page, no
// division, since the lookup that searches in place calls it on every level.
const uint64_t* LocalAccess::in_place(RemotePtr p) const {
  Arena* a = nullptr;
  for (Arena* x : arenas_) {
    if (x->server() == p.server()) a = x;
  }
  return a == nullptr ? nullptr : map_of(*a).words(p);
}

StatusOr<uint64_t*> LocalAccess::words(RemotePtr p) const {
  const uint64_t* w = in_place(p);
  if (w == nullptr) return corruption("nam: node pointer " + std::to_string(p.raw) + " outside the arenas here");
  return const_cast<uint64_t*>(w);  // this access writes the arenas it was given
}

StatusOr<RemotePtr> LocalAccess::allocate(uint8_t level) {
  const uint32_t i = next_server_[level].fetch_add(1, std::memory_order_relaxed) % arenas_.size();
  return arenas_[i]->allocate(level);
}

Status LocalAccess::read(RemotePtr p, Node& out) {
  LOCUS_ASSIGN_OR_RETURN(uint64_t * src, words(p));
  const uint32_t words = page_bytes() / 8;
  auto* dst = reinterpret_cast<uint64_t*>(out.data());
  for (uint32_t spins = 0;; ++spins) {
    const uint64_t v = std::atomic_ref<uint64_t>(src[0]).load(std::memory_order_acquire);
    if ((v & kLockBit) == 0) {
      dst[0] = v;
      for (uint32_t i = 1; i < words; ++i) dst[i] = std::atomic_ref<uint64_t>(src[i]).load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (std::atomic_ref<uint64_t>(src[0]).load(std::memory_order_relaxed) == v) return Status();
    }
    read_retries_.fetch_add(1, std::memory_order_relaxed);
    if (spins >= kSpinsBeforeSleep) clock_.sleep_for(kSleepNs);
  }
}

Status LocalAccess::lock(RemotePtr p, uint64_t version) {
  LOCUS_ASSIGN_OR_RETURN(uint64_t * w, words(p));
  uint64_t expected = version;
  if (std::atomic_ref<uint64_t>(*w).compare_exchange_strong(expected, version | kLockBit, std::memory_order_acquire)) {
    return Status();
  }
  return Status(StatusCode::kAborted, "nam: node changed before its lock");
}

Status LocalAccess::store_words(RemotePtr p, const Node& n, uint32_t from) {
  LOCUS_ASSIGN_OR_RETURN(uint64_t * dst, words(p));
  const auto* src = reinterpret_cast<const uint64_t*>(n.data());
  for (uint32_t i = from; i < page_bytes() / 8; ++i) {
    std::atomic_ref<uint64_t>(dst[i]).store(src[i], std::memory_order_relaxed);
  }
  return Status();
}

Status LocalAccess::install(RemotePtr p, const Node& n) { return store_words(p, n, 1); }

Status LocalAccess::create(RemotePtr p, const Node& n) {
  LOCUS_RETURN_IF_ERROR(store_words(p, n, 0));
  std::atomic_thread_fence(std::memory_order_release);
  return Status();
}

Status LocalAccess::unlock(RemotePtr p, uint64_t held) {
  LOCUS_ASSIGN_OR_RETURN(uint64_t * w, words(p));
  uint64_t expected = held;
  (void)std::atomic_ref<uint64_t>(*w).compare_exchange_strong(expected, held + 1, std::memory_order_release);
  return Status();
}

StatusOr<bool> LocalAccess::swap_root(RemotePtr old_root, RemotePtr new_root) {
  uint64_t expected = old_root.raw;
  return arenas_[0]->word(kRootOffset).compare_exchange_strong(expected, new_root.raw, std::memory_order_acq_rel);
}

}  // namespace locus::nam
