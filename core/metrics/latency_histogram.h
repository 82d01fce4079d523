// LatencyHistogram: nanosecond latencies in fixed memory, HdrHistogram style.
//
// Values below 128 ns get a bucket each; above that every power-of-two
// range [2^k, 2^(k+1)) is split into 128 equal sub-buckets, so a bucket is
// at most 1/128 (0.8%) of the values it holds wide and a reported
// percentile (the bucket's midpoint) is within 0.4% of a recorded value.
// Buckets run to 2^40 ns (about 18 minutes); longer values land in the top
// bucket but min, max, sum and mean stay exact. record() is a handful of
// instructions, so each client thread records into its own histogram and
// the histograms are merged after the run.
//
// Only the buckets between the lowest and highest recorded (plus a margin)
// are stored: a client's latencies span a few powers of two, so its
// histogram is a few KiB, not the 34 KiB of every bucket, which tens of
// thousands of simulated clients (two or more histograms each) would
// multiply into gigabytes. record() allocates only when a value falls
// outside the buckets held so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/common/time.h"

namespace locus::metrics {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per power of two
  static constexpr int kMaxValueBits = 40;  // tracked values are < 2^40 ns
  static constexpr uint64_t kSubBucketCount = uint64_t{1} << kSubBucketBits;
  static constexpr uint64_t kMaxTrackedNs = (uint64_t{1} << kMaxValueBits) - 1;
  static constexpr size_t kBucketCount = static_cast<size_t>(kMaxValueBits - kSubBucketBits + 1) * kSubBucketCount;

  LatencyHistogram() = default;

  // Negative latencies (a clock that stepped back) count as 0.
  void record(Nanos latency_ns) { record(latency_ns, 1); }
  void record(Nanos latency_ns, uint64_t count) {
    if (count == 0) return;
    const uint64_t v = latency_ns < 0 ? 0 : static_cast<uint64_t>(latency_ns);
    const size_t i = bucket_index(v);
    if (i - first_ >= buckets_.size()) cover(i, i + 1);  // below first_ wraps round, too
    buckets_[i - first_] += count;
    count_ += count;
    sum_ns_ += v * count;
    min_ns_ = v < min_ns_ ? v : min_ns_;
    max_ns_ = v > max_ns_ ? v : max_ns_;
  }
  // Afterwards this holds everything either histogram recorded.
  void merge(const LatencyHistogram& other);
  void reset();

  uint64_t count() const { return count_; }
  // The following are 0 for an empty histogram.
  Nanos min() const { return count_ == 0 ? 0 : static_cast<Nanos>(min_ns_); }
  Nanos max() const { return static_cast<Nanos>(max_ns_); }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_ns_) / static_cast<double>(count_); }
  // The value at `percent` (0..100, e.g. 99.9): the smallest recorded value
  // with at least that share of values at or below it, to bucket precision.
  // 0 gives min(), 100 gives max().
  Nanos percentile(double percent) const;
  // Total of all recorded values (for exact means across merges).
  uint64_t sum_ns() const { return sum_ns_; }

  // Bucket geometry, public for tests and for exporters that want the raw
  // distribution.
  static size_t bucket_index(uint64_t value_ns);
  static uint64_t bucket_lower_ns(size_t index);
  static uint64_t bucket_width_ns(size_t index);
  // Buckets held in memory (the rest are known to be 0).
  size_t stored_buckets() const { return buckets_.size(); }
  uint64_t bucket_count_at(size_t index) const {
    return index - first_ < buckets_.size() ? buckets_[index - first_] : 0;
  }

 private:
  // Widens the stored buckets to hold indexes [lo, hi), and a margin.
  void cover(size_t lo, size_t hi);

  std::vector<uint64_t> buckets_;  // buckets first_ .. first_ + size() - 1; the rest are 0
  size_t first_ = 0;
  uint64_t count_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
  uint64_t sum_ns_ = 0;  // overflows only after ~584 years of summed latency
};

}  // namespace locus::metrics
