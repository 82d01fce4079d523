// AcknowledgedCounter: the window of done-flags and the advance of last().
#include "core/workload/counters.h"

#include <fmt/format.h>

#include "core/common/check.h"

namespace locus::workload {

AcknowledgedCounter::AcknowledgedCounter(uint64_t start, uint64_t window)
    : window_mask_(window - 1),
      done_words_(new std::atomic<uint64_t>[window / 64]),
      next_(start),
      limit_(start - 1) {
  LOCUS_CHECK(start >= 1);
  LOCUS_CHECK(window >= 64 && (window & (window - 1)) == 0);
  for (uint64_t i = 0; i < window / 64; ++i) done_words_[i].store(0, std::memory_order_relaxed);
}

bool AcknowledgedCounter::is_done(uint64_t keynum) const {
  const uint64_t slot = keynum & window_mask_;
  return ((done_words_[slot / 64].load(std::memory_order_seq_cst) >> (slot % 64)) & 1) != 0;
}

Status AcknowledgedCounter::acknowledge(uint64_t keynum) {
  const uint64_t limit = last();
  if (keynum <= limit || keynum > last_issued()) {
    return invalid_argument(fmt::format(
        "insert counter: key number {} was not handed out or is already acknowledged (last {}, issued up to {})",
        keynum, limit, last_issued()));
  }
  // Slots for limit+1 .. limit+window are distinct; anything further would
  // alias a slot that an earlier, unfinished insert still needs.
  if (keynum - limit > window_mask_ + 1) {
    return resource_exhausted(fmt::format(
        "insert counter: key number {} is more than {} inserts ahead of the oldest unfinished one ({})",
        keynum, window_mask_ + 1, limit + 1));
  }
  const uint64_t slot = keynum & window_mask_;
  done_words_[slot / 64].fetch_or(uint64_t{1} << (slot % 64), std::memory_order_seq_cst);
  advance();
  return Status::ok();
}

void AcknowledgedCounter::advance() {
  // One thread advances at a time; the others leave their bit for it. The
  // holder re-checks the next bit after releasing, so a bit set by a thread
  // whose try-lock failed while the holder was finishing is never stranded
  // (the set, the try-lock, the release and the re-check are all seq_cst,
  // which is what that argument needs).
  for (;;) {
    if (advancing_.test_and_set(std::memory_order_seq_cst)) return;
    uint64_t limit = limit_.load(std::memory_order_relaxed);
    while (is_done(limit + 1)) {
      const uint64_t slot = (limit + 1) & window_mask_;
      // Cleared before limit_ is published, so an acknowledgement that
      // reuses the slot (after reading the new limit) sets it afterwards.
      done_words_[slot / 64].fetch_and(~(uint64_t{1} << (slot % 64)), std::memory_order_relaxed);
      ++limit;
    }
    limit_.store(limit, std::memory_order_release);
    advancing_.clear(std::memory_order_seq_cst);
    if (!is_done(limit + 1)) return;
  }
}

}  // namespace locus::workload
