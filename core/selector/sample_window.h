// SampleWindow: mean and standard deviation of the most recent n samples
// (a moving window, the paper's "history of the most recent n samples per
// connection"), and TimedWindow: the samples of the last T nanoseconds.
// Both are fixed-capacity rings allocated once at construction, so adding
// a sample on the data path never allocates.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/common/time.h"

namespace locus::selector {

class SampleWindow {
 public:
  explicit SampleWindow(uint32_t capacity) : ring_(capacity > 0 ? capacity : 1) {}

  void push(double sample) {
    if (count_ == ring_.size()) {
      const double old = ring_[head_];
      sum_ -= old;
      sum_sq_ -= old * old;
    } else {
      ++count_;
    }
    ring_[head_] = sample;
    sum_ += sample;
    sum_sq_ += sample * sample;
    head_ = (head_ + 1) % ring_.size();
    // Running sums drift by rounding; rebuild them once per lap.
    if (head_ == 0) resum();
  }
  void clear() {
    head_ = count_ = 0;
    sum_ = sum_sq_ = 0;
  }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  size_t capacity() const { return ring_.size(); }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  // Population standard deviation of the window.
  double stddev() const {
    if (count_ < 2) return 0.0;
    const double m = mean();
    const double var = sum_sq_ / static_cast<double>(count_) - m * m;
    return var > 0 ? std::sqrt(var) : 0.0;
  }

 private:
  void resum() {
    sum_ = sum_sq_ = 0;
    for (size_t i = 0; i < count_; ++i) {
      sum_ += ring_[i];
      sum_sq_ += ring_[i] * ring_[i];
    }
  }
  std::vector<double> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
  double sum_ = 0;
  double sum_sq_ = 0;
};

// Samples no older than a time window, at most `capacity` of them (the
// oldest give way when a burst exceeds it).
class TimedWindow {
 public:
  TimedWindow(Nanos window_ns, uint32_t capacity)
      : window_ns_(window_ns), ring_(capacity > 0 ? capacity : 1) {}

  void push(Nanos now, double sample) {
    expire(now);
    if (count_ == ring_.size()) pop();
    ring_[(first_ + count_) % ring_.size()] = {now, sample};
    ++count_;
    sum_ += sample;
  }
  void expire(Nanos now) {
    while (count_ > 0 && now - ring_[first_].at > window_ns_) pop();
    if (count_ == 0) sum_ = 0;  // no drift survives an empty window
  }
  void clear() {
    first_ = count_ = 0;
    sum_ = 0;
  }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }

 private:
  struct Sample {
    Nanos at = 0;
    double value = 0;
  };
  void pop() {
    sum_ -= ring_[first_].value;
    first_ = (first_ + 1) % ring_.size();
    --count_;
  }
  Nanos window_ns_;
  std::vector<Sample> ring_;
  size_t first_ = 0;
  size_t count_ = 0;
  double sum_ = 0;
};

}  // namespace locus::selector
