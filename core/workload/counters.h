// Insert key counters shared by client threads (or SimGrid actors).
//
// CounterGenerator hands out consecutive key numbers. AcknowledgedCounter
// adds YCSB's acknowledgement: a key number counts as inserted only once
// its insert has finished, and last() is the highest number below which
// every insert has finished. Readers choosing keys (and the 'latest'
// distribution) bound themselves by last(), so they never ask for a key
// whose insert is still in flight on another client.
//
// Both are lock-free: next() is one fetch_add; acknowledge() sets a bit in
// a fixed window and whichever thread wins a try-lock advances last().
// The window bounds how far inserts may run ahead of the oldest one still
// in flight (YCSB: 2^20 and an exception; here 2^22 bits, 512 KB, and an
// error that records nothing, so the caller may retry the acknowledgement
// once the stalled insert finishes).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/common/status.h"

namespace locus::workload {

class CounterGenerator {
 public:
  explicit CounterGenerator(uint64_t start) : next_(start) {}

  uint64_t next() { return next_.fetch_add(1, std::memory_order_relaxed); }
  // The last number handed out (start - 1 before the first next()).
  uint64_t last() const { return next_.load(std::memory_order_relaxed) - 1; }

 private:
  std::atomic<uint64_t> next_;
};

class AcknowledgedCounter {
 public:
  // In-flight inserts allowed beyond last(); a power of two, at least 64.
  static constexpr uint64_t kDefaultWindow = uint64_t{1} << 22;

  // Numbers start at `start` (>= 1, so that last() = start - 1 exists).
  explicit AcknowledgedCounter(uint64_t start, uint64_t window = kDefaultWindow);

  AcknowledgedCounter(const AcknowledgedCounter&) = delete;
  AcknowledgedCounter& operator=(const AcknowledgedCounter&) = delete;

  // The next key number to insert.
  uint64_t next() { return next_.fetch_add(1, std::memory_order_relaxed); }

  // Marks `keynum` (from next()) inserted. Fails with kResourceExhausted
  // (nothing recorded; retry later) if it is more than the window ahead of
  // last(), kInvalidArgument if it was never handed out or is already
  // acknowledged.
  Status acknowledge(uint64_t keynum);

  // Every key number <= last() has been acknowledged.
  uint64_t last() const { return limit_.load(std::memory_order_acquire); }
  // The last number handed out by next(), acknowledged or not.
  uint64_t last_issued() const { return next_.load(std::memory_order_relaxed) - 1; }

 private:
  void advance();

  bool is_done(uint64_t keynum) const;

  const uint64_t window_mask_;
  // Bit (k & mask) is set when k is acknowledged and cleared when last()
  // passes k.
  std::unique_ptr<std::atomic<uint64_t>[]> done_words_;
  std::atomic<uint64_t> next_;
  std::atomic<uint64_t> limit_;
  std::atomic_flag advancing_ = ATOMIC_FLAG_INIT;
};

}  // namespace locus::workload
