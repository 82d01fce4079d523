// LatencyHistogram: bucket arithmetic, merging and percentile walks.
#include "core/metrics/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace locus::metrics {

// Index layout: a value v with its top bit at position m >= kSubBucketBits
// is shifted right by s = m - kSubBucketBits, leaving a top part in
// [128, 256); its index is (s << 7) + top. Values below 128 have s = 0 and
// index v. The ranges for consecutive s meet exactly, so indexes are dense.
size_t LatencyHistogram::bucket_index(uint64_t value_ns) {
  if (value_ns > kMaxTrackedNs) value_ns = kMaxTrackedNs;
  const int top_bit = 63 - std::countl_zero(value_ns | 1);
  const int shift = top_bit > kSubBucketBits ? top_bit - kSubBucketBits : 0;
  return (static_cast<size_t>(shift) << kSubBucketBits) + static_cast<size_t>(value_ns >> shift);
}

uint64_t LatencyHistogram::bucket_lower_ns(size_t index) {
  if (index < 2 * kSubBucketCount) return index;  // shift 0: one value per bucket
  const uint64_t shift = (index >> kSubBucketBits) - 1;
  const uint64_t top = index - (shift << kSubBucketBits);  // in [128, 256)
  return top << shift;
}

uint64_t LatencyHistogram::bucket_width_ns(size_t index) {
  if (index < 2 * kSubBucketCount) return 1;
  return uint64_t{1} << ((index >> kSubBucketBits) - 1);
}

void LatencyHistogram::cover(size_t lo, size_t hi) {
  // A margin of half a power of two each way, so values spread over a
  // range settle after a few widenings.
  constexpr size_t kMargin = kSubBucketCount / 2;
  if (!buckets_.empty()) {
    lo = std::min(lo, first_);
    hi = std::max(hi, first_ + buckets_.size());
  }
  lo = lo > kMargin ? lo - kMargin : 0;
  hi = std::min(hi + kMargin, kBucketCount);
  std::vector<uint64_t> wider(hi - lo, 0);
  if (!buckets_.empty()) {
    std::copy(buckets_.begin(), buckets_.end(), wider.begin() + static_cast<std::ptrdiff_t>(first_ - lo));
  }
  buckets_ = std::move(wider);
  first_ = lo;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (!other.buckets_.empty()) {
    const size_t end = other.first_ + other.buckets_.size();
    if (buckets_.empty() || other.first_ < first_ || end > first_ + buckets_.size()) cover(other.first_, end);
    for (size_t i = 0; i < other.buckets_.size(); ++i) buckets_[other.first_ + i - first_] += other.buckets_[i];
  }
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::reset() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
  min_ns_ = UINT64_MAX;
  max_ns_ = 0;
  sum_ns_ = 0;
}

Nanos LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) return 0;
  if (!(percent > 0.0)) return min();
  if (percent >= 100.0) return max();
  // The rank (1-based) of the value we want; at least the first value.
  auto rank = static_cast<uint64_t>(std::ceil(percent / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    seen += buckets_[k];
    if (seen >= rank) {
      const size_t i = first_ + k;
      // The midpoint halves the worst-case error; min and max are exact, so
      // the answer never leaves the recorded range.
      const uint64_t mid = bucket_lower_ns(i) + bucket_width_ns(i) / 2;
      return static_cast<Nanos>(std::clamp(mid, min_ns_, max_ns_));
    }
  }
  return max();
}

}  // namespace locus::metrics
