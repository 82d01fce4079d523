// NessieClient's slice of its node's data table (paper sections 4.2.5
// and 4.3.1): free entries for new DTEs, entries named by ITEs, staging
// replaced DTEs for recycling with an expiry time, and reclaiming the
// slice's entries whose expiry time has passed. See client.h.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/index/nessie/client.h"

namespace locus::nessie {

// One word (`offset` into the DTE) of each slice entry `want(off)` picks,
// kScanBatch at a time: READ into scan_ and handed to got(off, word), or
// (kWrite) overwritten with zero. By loads and stores when the slice is
// in this process's memory.
template <typename Want, typename Got>
Status NessieClient::slice_words(Opcode op, uint32_t offset, Want want, Got got) {
  uint32_t batch_entries[kScanBatch];
  WorkRequest batch[kScanBatch];
  std::byte* zero = words_ + 24;
  std::memset(zero, 0, 8);
  auto finish = [&](uint32_t count) -> Status {
    if (count == 0) return Status();
    stats_.rdma_ops += count;
    LOCUS_RETURN_IF_ERROR(ep_.execute(std::span<const WorkRequest>(batch, count)));
    for (uint32_t i = 0; op == Opcode::kRead && i < count; ++i) {
      uint64_t word;
      std::memcpy(&word, scan_ + i * 8, 8);
      got(batch_entries[i], word);
    }
    return Status();
  };
  uint32_t count = 0;
  for (uint32_t off = 0; off < g_.slice_entries; ++off) {
    if (!want(off)) continue;
    const uint64_t at = (slice_first_ + off) * g_.dte_bytes() + offset;
    if (local(home_)) {
      ++stats_.local_ops;
      auto* word = reinterpret_cast<uint64_t*>(local_.data + at);
      if (op == Opcode::kRead) {
        got(off, __atomic_load_n(word, __ATOMIC_ACQUIRE));
      } else {
        __atomic_store_n(word, uint64_t{0}, __ATOMIC_RELEASE);
      }
      continue;
    }
    batch[count] = op == Opcode::kRead
                       ? request(Opcode::kRead, remote_at(nodes_[home_].data, at), scan_ + count * 8, 8)
                       : request(Opcode::kWrite, remote_at(nodes_[home_].data, at), zero, 8);
    batch_entries[count++] = off;
    if (count == kScanBatch) {
      LOCUS_RETURN_IF_ERROR(finish(count));
      count = 0;
    }
  }
  return finish(count);
}

// Reclaiming: the recycle words of the slice's published entries; an
// entry staged for recycling whose expiry time (plus the clock skew) has
// passed is free again.
Status NessieClient::reclaim() {
  const Nanos now = ep_.env().clock->now();
  // Nothing staged after the last scan expires before that scan's time
  // plus the expiry period, and the scan saw when the others expire: no
  // entry can have become free before next_scan_ns_.
  if (now < next_scan_ns_) return Status();
  uint64_t next = static_cast<uint64_t>(now) + g_.expiry_ns;
  LOCUS_RETURN_IF_ERROR(slice_words(
      Opcode::kRead, kRecycleOffset, [&](uint32_t off) { return entry_state_[off] == EntryState::kPublished; },
      [&](uint32_t off, uint64_t word) {
        const uint64_t expiry = word & kDteExpiryMask;
        if ((word & kDteRecycle) == 0) return;
        if (expiry + g_.clock_skew_ns <= static_cast<uint64_t>(now)) {
          entry_state_[off] = EntryState::kFreeDirty;
          free_.push_back(off);
          ++stats_.reclaimed;
        } else {
          next = std::min(next, expiry);
        }
      }));
  ++stats_.reclaim_scans;
  next_scan_ns_ = static_cast<Nanos>(next + g_.clock_skew_ns);
  return Status();
}

// A slice an earlier client held: an entry whose state word is not zero
// may be named by an ITE (or staged, which reclaim() then finds), so it is
// taken as published; the earlier client zeroed its free entries' words
// before giving the slice back (close()).
Status NessieClient::adopt_slice() {
  free_.clear();
  LOCUS_RETURN_IF_ERROR(slice_words(
      Opcode::kRead, kStateOffset, [](uint32_t) { return true; },
      [&](uint32_t off, uint64_t word) {
        entry_state_[off] = word == 0 ? EntryState::kFree : EntryState::kPublished;
        if (word != 0) ++stats_.adopted;
      }));
  for (uint32_t i = g_.slice_entries; i > 0; --i) {
    if (entry_state_[i - 1] == EntryState::kFree) free_.push_back(i - 1);
  }
  return Status();
}

Status NessieClient::close() {
  if (closed_ || rpc_ == nullptr) return Status();
  closed_ = true;
  Status first;
  if (slice_first_ != 0) {
    // Free entries that were written: their state words back to zero, so
    // the slice's next client takes them as free (adopt_slice()).
    first = slice_words(
        Opcode::kWrite, kStateOffset, [&](uint32_t off) { return entry_state_[off] == EntryState::kFreeDirty; },
        [](uint32_t, uint64_t) {});
  }
  for (size_t i = 0; i < servers_.size(); ++i) {
    const bool slice = first.is_ok() && slice_first_ != 0 && i == home_;
    const uint32_t ring = i < channels_.size() ? channels_[i].grant.ring : kNoRing;
    if (!slice && ring == kNoRing) continue;
    rpc::Writer w(rpc_->payload_buffer());
    w.put<uint8_t>(kLayoutRelease);
    w.put<uint64_t>(slice ? slice_first_ : 0);
    w.put<uint32_t>(ring);
    auto done = rpc_->call(servers_[i], kLayoutRpcType, w.size());
    if (!done.is_ok() && first.is_ok()) first = done.status();
  }
  return first;
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
  entry_state_[off] = EntryState::kFreeDirty;
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
