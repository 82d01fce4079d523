// Zipfian key generators as YCSB defines them.
//
// ZipfianGenerator is Gray et al.'s closed-form sampler ("Quickly
// Generating Billion-Record Synthetic Databases", SIGMOD 1994): item
// `min` is the most popular, then min+1, and so on. It needs zeta(n, theta),
// a sum over all n items, so zeta is computed once at construction (or
// passed in precomputed) and extended incrementally when the item count
// grows, which is what the 'latest' distribution does on every insert.
//
// ScrambledZipfianGenerator spreads the popular items over the key space:
// a zipfian draw over a fixed space of 10^10 items, hashed with FNV-1a 64,
// modulo the item count. The fixed space keeps popularity stable when the
// item count changes. SkewedLatestGenerator makes the most recently
// inserted key the most popular.
//
// None of them is thread-safe (one per client); all take the caller's Random.
#pragma once

#include <cstdint>

#include "core/common/random.h"

namespace locus::workload {

// zeta(n, theta) = sum_{i=1..n} 1 / i^theta.
double zeta(uint64_t n, double theta);
// zeta(to_n) given zeta(from_n) = zeta_from; from_n <= to_n.
double zeta_extend(uint64_t from_n, uint64_t to_n, double theta, double zeta_from);

class ZipfianGenerator {
 public:
  static constexpr double kDefaultTheta = 0.99;

  // Items [min, max] inclusive; 0 < theta < 1.
  ZipfianGenerator(uint64_t min, uint64_t max, double theta = kDefaultTheta);
  // As above with zeta(max - min + 1, theta) supplied by the caller.
  ZipfianGenerator(uint64_t min, uint64_t max, double theta, double zetan);

  // A draw over the current item count.
  uint64_t next(Random& rng) { return draw(rng.uniform_double()); }
  // A draw over [min, min + item_count): grows zeta incrementally when the
  // count rises; recomputes it (slowly) when the count falls.
  uint64_t next(Random& rng, uint64_t item_count) {
    if (item_count != item_count_) set_item_count(item_count);
    return next(rng);
  }

  uint64_t min() const { return base_; }
  uint64_t item_count() const { return item_count_; }
  double theta() const { return theta_; }
  double zetan() const { return zetan_; }

 private:
  void set_item_count(uint64_t item_count);
  void update_eta();
  uint64_t draw(double u) const;

  uint64_t base_;
  uint64_t item_count_;
  double theta_;
  double alpha_;             // 1 / (1 - theta)
  double zeta2_;             // zeta(2, theta)
  double second_threshold_;  // 1 + 0.5^theta: u*zetan below this picks item 1
  double zetan_;
  double eta_;
};

class ScrambledZipfianGenerator {
 public:
  // The fixed zipfian space YCSB scrambles from.
  static constexpr uint64_t kItemSpace = 10'000'000'000ULL;

  // Items [min, max] inclusive.
  ScrambledZipfianGenerator(uint64_t min, uint64_t max,
                            double theta = ZipfianGenerator::kDefaultTheta);

  uint64_t next(Random& rng);
  uint64_t min() const { return min_; }
  uint64_t item_count() const { return item_count_; }

 private:
  uint64_t min_;
  uint64_t item_count_;
  ZipfianGenerator zipfian_;
};

class SkewedLatestGenerator {
 public:
  explicit SkewedLatestGenerator(double theta = ZipfianGenerator::kDefaultTheta);

  // A key in [0, latest], where `latest` is the newest acknowledged insert:
  // latest itself is the most popular, latest-1 the next, and so on.
  // (YCSB draws from [1, latest], never key 0; we include it.)
  uint64_t next(Random& rng, uint64_t latest) {
    return latest - zipfian_.next(rng, latest + 1);
  }

 private:
  ZipfianGenerator zipfian_;
};

}  // namespace locus::workload
