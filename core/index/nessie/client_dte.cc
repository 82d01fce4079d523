// NessieClient's slice of its node's data table (paper sections 4.2.5
// and 4.3.1): free entries for new DTEs, entries named by ITEs, staging
// replaced DTEs for recycling with an expiry time, and reclaiming the
// slice's entries whose expiry time has passed. See client.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/index/nessie/client.h"

namespace locus::nessie {

// Reclaiming: the recycle words of the slice's published entries, read
// kScanBatch at a time; an entry staged for recycling whose expiry time
// (plus the clock skew) has passed is free again.
Status NessieClient::reclaim() {
  const Nanos now = ep_.env().clock->now();
  // Nothing staged after the last scan expires before that scan's time
  // plus the expiry period, and the scan saw when the others expire: no
  // entry can have become free before next_scan_ns_.
  if (now < next_scan_ns_) return Status();
  uint64_t next = static_cast<uint64_t>(now) + g_.expiry_ns;
  uint32_t batch_entries[kScanBatch];
  WorkRequest batch[kScanBatch];
  // The words read into scan_: frees the expired entries.
  auto finish_loaded = [&](uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t word;
      std::memcpy(&word, scan_ + i * 8, 8);
      const uint64_t expiry = word & kDteExpiryMask;
      if ((word & kDteRecycle) == 0) continue;
      if (expiry + g_.clock_skew_ns <= static_cast<uint64_t>(now)) {
        entry_state_[batch_entries[i]] = EntryState::kFree;
        free_.push_back(batch_entries[i]);
        ++stats_.reclaimed;
      } else {
        next = std::min(next, expiry);
      }
    }
  };
  auto finish = [&](uint32_t count) -> Status {
    if (count == 0) return Status();
    stats_.rdma_ops += count;
    LOCUS_RETURN_IF_ERROR(ep_.execute(std::span<const WorkRequest>(batch, count)));
    finish_loaded(count);
    return Status();
  };
  uint32_t count = 0;
  for (uint32_t off = 0; off < g_.slice_entries; ++off) {
    if (entry_state_[off] != EntryState::kPublished) continue;
    const uint64_t at = (slice_first_ + off) * g_.dte_bytes() + kRecycleOffset;
    if (local(home_)) {
      // The slice's recycle words by loads, a batch of one each.
      ++stats_.local_ops;
      const uint64_t word = __atomic_load_n(reinterpret_cast<const uint64_t*>(local_.data + at), __ATOMIC_ACQUIRE);
      std::memcpy(scan_, &word, 8);
      batch_entries[0] = off;
      finish_loaded(1);
      continue;
    }
    batch[count] = request(Opcode::kRead, remote_at(nodes_[home_].data, at), scan_ + count * 8, 8);
    batch_entries[count++] = off;
    if (count == kScanBatch) {
      LOCUS_RETURN_IF_ERROR(finish(count));
      count = 0;
    }
  }
  LOCUS_RETURN_IF_ERROR(finish(count));
  ++stats_.reclaim_scans;
  next_scan_ns_ = static_cast<Nanos>(next + g_.clock_skew_ns);
  return Status();
}

StatusOr<uint64_t> NessieClient::allocate_dte() {
  if (free_.empty()) LOCUS_RETURN_IF_ERROR(reclaim());
  if (free_.empty()) {
    ++stats_.slice_waits;
    return Status(StatusCode::kAborted, "no free data entry among the client's " + std::to_string(g_.slice_entries) +
                                            " (index.client_data_entries): none has expired yet");
  }
  const uint32_t off = free_.back();
  free_.pop_back();
  entry_state_[off] = EntryState::kWritten;
  return slice_first_ + off;
}

void NessieClient::unpublish(uint64_t entry) {
  const uint64_t off = entry - slice_first_;
  entry_state_[off] = EntryState::kFree;
  free_.push_back(static_cast<uint32_t>(off));
}

void NessieClient::publish(uint64_t entry) { entry_state_[entry - slice_first_] = EntryState::kPublished; }

void NessieClient::stage(uint64_t ite) {
  const uint64_t expiry = static_cast<uint64_t>(ep_.env().clock->now()) + g_.expiry_ns;
  // A failed WRITE leaves the entry unreclaimed (a leak, never a reuse).
  if (write_word(ite, kRecycleOffset, kDteRecycle | (expiry & kDteExpiryMask)).is_ok())
    ++stats_.staged;
  else
    ++stats_.stage_failures;
}

}  // namespace locus::nessie
