// Epoch-based reclamation across compute servers (remote_epochs.h).
#include "core/index/nam/remote_epochs.h"

#include <algorithm>
#include <string>

#include "core/index/nam/arena.h"

namespace locus::nam {
namespace {

constexpr uint64_t kOffsetMask = (uint64_t{1} << kFreeTagShift) - 1;
// CASes lost to other collectors or allocators before a push or pop gives
// up for now (a push is tried again at the next advance, a pop takes a
// fresh page instead).
constexpr int kListTries = 16;

uint64_t tagged(uint64_t head, uint64_t offset) { return ((head >> kFreeTagShift) + 1) << kFreeTagShift | offset; }
// A slot's epoch (its holder is in the bits a lock word keeps it in).
uint64_t epoch_of(uint64_t slot) { return without_holder(slot); }

}  // namespace

StatusOr<std::unique_ptr<RemoteEpochs>> RemoteEpochs::attach_tree(RemoteAccess& access, BlinkTree& tree,
                                                                  const NamConfig& config) {
  LOCUS_ASSIGN_OR_RETURN(auto epochs, attach(access, config.gc_epoch_every_ops,
                                             static_cast<Nanos>(config.gc_epoch_lease_ms * 1e6)));
  if (epochs != nullptr) LOCUS_RETURN_IF_ERROR(tree.set_reclaimer(epochs.get()));
  return epochs;
}

StatusOr<std::unique_ptr<RemoteEpochs>> RemoteEpochs::attach(RemoteAccess& access, uint32_t refresh_every_ops,
                                                             Nanos lease_ns) {
  uint64_t catalog[2] = {0, 0};  // kSlotTableOffset, kSlotCountOffset
  LOCUS_RETURN_IF_ERROR(access.read_words(0, kSlotTableOffset, catalog));
  if (catalog[0] == 0 || catalog[1] == 0) return std::unique_ptr<RemoteEpochs>();
  if (catalog[1] > (1u << 20)) return corruption("nam: memory server 0 names " + std::to_string(catalog[1]) + " epoch slots");
  std::unique_ptr<RemoteEpochs> e(new RemoteEpochs(access, catalog[0], static_cast<uint32_t>(catalog[1]),
                                                   std::max<uint32_t>(refresh_every_ops, 1), lease_ns));
  e->empty_at_.assign(access.servers(), 1);  // nothing is pushed before the first epoch ends
  return e;
}

StatusOr<uint32_t> RemoteEpochs::join() {
  if (slot_ != kNoSlot) return invalid_argument("nam: a tree object joined the epochs twice");
  LOCUS_RETURN_IF_ERROR(claim());
  return slot_;
}

Status RemoteEpochs::claim() {
  rejoins_seen_ = access_.rejoins();
  std::vector<uint64_t> slots(slots_);
  LOCUS_RETURN_IF_ERROR(access_.read_words(0, table_, slots));
  uint64_t epoch = 0;
  LOCUS_RETURN_IF_ERROR(access_.read_words(0, kEpochOffset, {&epoch, 1}));
  for (uint32_t i = 0; i < slots_; ++i) {
    if (slots[i] != 0) continue;
    LOCUS_ASSIGN_OR_RETURN(const uint64_t old,
                           access_.word_atomic(0, table_ + 8 * uint64_t{i}, Opcode::kCas, 0, mine_ | epoch));
    if (old != 0) continue;  // another client took it meanwhile
    slot_ = i;
    announced_ = epoch;
    ops_since_ = 0;
    return Status();
  }
  return resource_exhausted("nam: every one of memory server 0's " + std::to_string(slots_) +
                            " epoch slots is held by a client (index.gc_epoch_slots)");
}

Status RemoteEpochs::rejoin() {
  // Each memory server that fenced us fails our first request to it with
  // kAborted (and is rejoined): one try more than there are servers.
  Status s;
  for (uint32_t attempt = 0; attempt <= access_.servers(); ++attempt) {
    if (slot_ != kNoSlot) {
      // Still ours unless a collector broke it; either way it is not used again.
      auto old = access_.word_atomic(0, table_ + 8 * uint64_t{slot_}, Opcode::kCas, mine_ | announced_, 0);
      if (!old.is_ok()) {
        s = old.status();
        continue;
      }
      slot_ = kNoSlot;
    }
    s = claim();
    if (s.is_ok()) {
      ++stats_.rejoins;
      return s;
    }
    if (s.code() != StatusCode::kAborted) break;
  }
  return Status(StatusCode::kUnavailable, "nam: no epoch slot after this client was fenced: " + s.message());
}

Status RemoteEpochs::enter(uint32_t) {
  if (slot_ == kNoSlot || access_.rejoins() != rejoins_seen_) return rejoin();
  if (++ops_since_ < refresh_every_ops_) return Status();
  ops_since_ = 0;
  const Status s = announce();
  // Fenced (kAborted), or the slot is no longer ours: it may be broken.
  if (s.code() == StatusCode::kAborted || s.code() == StatusCode::kInternal) return rejoin();
  // Any other failure leaves the slot at its older epoch: pages wait longer.
  if (!s.is_ok()) ++stats_.announce_failures;
  return Status();
}

Status RemoteEpochs::reenter() {
  if (slot_ == kNoSlot || access_.rejoins() != rejoins_seen_) return rejoin();
  return Status();
}

Status RemoteEpochs::announce() {
  ++stats_.announces;
  uint64_t epoch = 0;
  LOCUS_RETURN_IF_ERROR(access_.read_words(0, kEpochOffset, {&epoch, 1}));
  if (epoch <= announced_) return Status();
  LOCUS_ASSIGN_OR_RETURN(const uint64_t old, access_.word_atomic(0, table_ + 8 * uint64_t{slot_}, Opcode::kCas,
                                                                 mine_ | announced_, mine_ | epoch));
  if (old != (mine_ | announced_)) {
    return internal_error("nam: epoch slot " + std::to_string(slot_) + " held " + std::to_string(old) +
                          ", not the epoch this client announced (" + std::to_string(announced_) + ")");
  }
  announced_ = epoch;
  return Status();
}

void RemoteEpochs::retire(RemotePtr page, uint8_t) {
  retired_.push_back({page, 0});
  ++stats_.retired;
}

uint64_t RemoteEpochs::advance() {
  if (slot_ == kNoSlot || access_.rejoins() != rejoins_seen_) {
    if (!rejoin().is_ok()) return 0;
  }
  auto before = access_.word_atomic(0, kEpochOffset, Opcode::kFaa, 1, 0);
  if (!before.is_ok()) return 0;  // the pages keep epoch 0: tagged by the next advance
  for (Retired& r : retired_) {
    if (r.epoch == 0) r.epoch = *before;
  }
  // Our own slot: the collector is between operations.
  if (!announce().is_ok()) ++stats_.announce_failures;
  std::vector<uint64_t> slots(slots_);
  if (!access_.read_words(0, table_, slots).is_ok()) return 0;
  break_stale(slots);
  uint64_t oldest = UINT64_MAX;
  for (const uint64_t s : slots) {
    if (s != 0) oldest = std::min(oldest, epoch_of(s));
  }
  uint64_t freed = 0;
  std::erase_if(retired_, [&](const Retired& r) {
    if (r.epoch == 0 || r.epoch >= oldest) return false;
    if (!push(r.page).is_ok()) {
      ++stats_.free_failures;
      return false;
    }
    ++freed;
    return true;
  });
  stats_.freed += freed;
  stats_.held_back = retired_.size();
  return freed;
}

void RemoteEpochs::break_stale(std::vector<uint64_t>& slots) {
  uint64_t newest_retired = 0;
  for (const Retired& r : retired_) newest_retired = std::max(newest_retired, r.epoch);
  seen_.resize(slots_);
  const Nanos now = access_.clock().now();
  for (uint32_t i = 0; i < slots_; ++i) {
    const uint64_t v = slots[i];
    if (v != seen_[i].value) seen_[i] = {v, now};
    if (v == 0 || i == slot_ || epoch_of(v) > newest_retired || now - seen_[i].since < lease_ns_) continue;
    const uint32_t holder = holder_of(v);
    if (holder == 0 || holder - 1 == access_.node_id()) continue;  // never ourselves (nor a node sharing our id)
    // Fenced first: from here on the holder reads nothing it read before.
    if (!access_.fence_everywhere(holder - 1).is_ok()) continue;
    auto old = access_.word_atomic(0, table_ + 8 * uint64_t{i}, Opcode::kCas, v, 0);
    if (!old.is_ok() || *old != v) continue;  // it announced meanwhile: still counted
    ++stats_.slots_broken;
    slots[i] = 0;
    seen_[i] = {0, now};
  }
}

Status RemoteEpochs::push(RemotePtr page) {
  const uint32_t server = page.server();
  for (int tries = 0; tries < kListTries; ++tries) {
    uint64_t head = 0;
    LOCUS_RETURN_IF_ERROR(access_.read_words(server, kFreeListOffset, {&head, 1}));
    LOCUS_RETURN_IF_ERROR(access_.write_word(server, page.offset() + 8, head & kOffsetMask));
    LOCUS_ASSIGN_OR_RETURN(const uint64_t old, access_.word_atomic(server, kFreeListOffset, Opcode::kCas, head,
                                                                   tagged(head, page.offset())));
    if (old == head) return Status();
  }
  return Status(StatusCode::kAborted, "nam: a free list's head kept changing");
}

RemotePtr RemoteEpochs::take(uint8_t level) {
  if (slot_ == kNoSlot || level >= next_server_.size()) return {};
  const uint32_t server = next_server_[level]++ % access_.servers();
  if (empty_at_[server] == announced_) return {};
  for (int tries = 0; tries < kListTries; ++tries) {
    uint64_t head = 0;
    if (!access_.read_words(server, kFreeListOffset, {&head, 1}).is_ok()) return {};
    const uint64_t first = head & kOffsetMask;
    if (first == 0) {
      empty_at_[server] = announced_;
      return {};
    }
    uint64_t next = 0;
    if (!access_.read_words(server, first + 8, {&next, 1}).is_ok()) return {};
    auto old = access_.word_atomic(server, kFreeListOffset, Opcode::kCas, head, tagged(head, next & kOffsetMask));
    if (!old.is_ok()) return {};
    if (*old != head) continue;
    ++stats_.reused;
    return RemotePtr::make(server, first);
  }
  return {};
}

Status RemoteEpochs::release() {
  Status s;
  for (uint32_t attempt = 0; slot_ != kNoSlot && attempt <= access_.servers(); ++attempt) {
    // A slot a collector broke (and another client may hold now) is left.
    auto old = access_.word_atomic(0, table_ + 8 * uint64_t{slot_}, Opcode::kCas, mine_ | announced_, 0);
    s = old.status();
    if (s.code() != StatusCode::kAborted) slot_ = kNoSlot;
  }
  return s;
}

}  // namespace locus::nam
