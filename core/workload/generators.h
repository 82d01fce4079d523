// The simple YCSB number generators: uniform over a range, and hotspot
// (a fixed fraction of operations goes to a fixed fraction of the range).
// The zipfian family is in zipfian.h, insert counters in counters.h. Each
// draw takes the caller's Random, so a client's stream alone decides it.
#pragma once

#include <cstdint>

#include "core/common/check.h"
#include "core/common/random.h"

namespace locus::workload {

class UniformGenerator {
 public:
  // [lo, hi] inclusive.
  UniformGenerator(uint64_t lo, uint64_t hi) : lo_(lo), hi_(hi) { LOCUS_CHECK(lo <= hi); }

  uint64_t next(Random& rng) const { return rng.uniform_between(lo_, hi_); }
  uint64_t lo() const { return lo_; }
  uint64_t hi() const { return hi_; }

 private:
  uint64_t lo_;
  uint64_t hi_;
};

// YCSB's HotspotIntegerGenerator: the hot set is the first
// floor(n * hot_data_fraction) items of [lo, hi]; a hot_op_fraction share of
// draws is uniform over it and the rest uniform over the cold remainder.
class HotspotIntegerGenerator {
 public:
  HotspotIntegerGenerator(uint64_t lo, uint64_t hi, double hot_data_fraction, double hot_op_fraction)
      : lo_(lo),
        hot_op_fraction_(hot_op_fraction) {
    LOCUS_CHECK(lo <= hi);
    LOCUS_CHECK(hot_data_fraction >= 0.0 && hot_data_fraction <= 1.0);
    LOCUS_CHECK(hot_op_fraction >= 0.0 && hot_op_fraction <= 1.0);
    const uint64_t n = hi - lo + 1;
    hot_count_ = static_cast<uint64_t>(static_cast<double>(n) * hot_data_fraction);
    if (hot_count_ > n) hot_count_ = n;
    cold_count_ = n - hot_count_;
  }

  uint64_t next(Random& rng) const {
    // An empty hot (or cold) set would make YCSB divide by zero; send every
    // draw to the other set instead.
    const bool hot = cold_count_ == 0 || (hot_count_ != 0 && rng.uniform_double() < hot_op_fraction_);
    return hot ? lo_ + rng.uniform(hot_count_) : lo_ + hot_count_ + rng.uniform(cold_count_);
  }

  // Hot keys are [lo, lo + hot_count).
  bool is_hot(uint64_t keynum) const { return keynum >= lo_ && keynum - lo_ < hot_count_; }
  uint64_t hot_count() const { return hot_count_; }

 private:
  uint64_t lo_;
  double hot_op_fraction_;
  uint64_t hot_count_ = 0;
  uint64_t cold_count_ = 0;
};

}  // namespace locus::workload
