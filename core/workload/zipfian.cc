// Zipfian samplers: zeta sums and Gray et al.'s inversion.
#include "core/workload/zipfian.h"

#include <cmath>

#include "core/common/check.h"
#include "core/workload/keys.h"

namespace locus::workload {

namespace {

// Ranges longer than this are summed exactly only up to kTailStart and in
// closed form after it. Summing 10^10 terms (ScrambledZipfian's space) term
// by term takes about a minute; the Euler-Maclaurin tail below is accurate
// to ~1e-16 relative once the terms start past a few thousand.
constexpr uint64_t kExactTerms = uint64_t{1} << 22;
constexpr uint64_t kTailStart = 4096;

// sum_{k=first..last} k^-theta, exactly.
double sum_exact(uint64_t first, uint64_t last, double theta) {
  double sum = 0;
  for (uint64_t k = first; k <= last; ++k) sum += std::pow(static_cast<double>(k), -theta);
  return sum;
}

// sum_{k=a..b} k^-theta by Euler-Maclaurin: integral + endpoint terms + the
// first two Bernoulli corrections. The remainder is O(a^-(theta+5)).
double sum_euler_maclaurin(uint64_t a_int, uint64_t b_int, double theta) {
  const double a = static_cast<double>(a_int);
  const double b = static_cast<double>(b_int);
  const double integral = (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  const double ends = (std::pow(a, -theta) + std::pow(b, -theta)) / 2;
  // f'(x) = -theta x^(-theta-1); f'''(x) = -theta(theta+1)(theta+2) x^(-theta-3).
  const double d1 = -theta * (std::pow(b, -theta - 1) - std::pow(a, -theta - 1));
  const double d3 = -theta * (theta + 1) * (theta + 2) * (std::pow(b, -theta - 3) - std::pow(a, -theta - 3));
  return integral + ends + d1 / 12 - d3 / 720;
}

}  // namespace

double zeta_extend(uint64_t from_n, uint64_t to_n, double theta, double zeta_from) {
  LOCUS_CHECK(from_n <= to_n);
  if (from_n == to_n) return zeta_from;
  uint64_t first = from_n + 1;  // the terms still missing are first..to_n
  if (to_n - from_n <= kExactTerms) return zeta_from + sum_exact(first, to_n, theta);
  double sum = zeta_from;
  if (first < kTailStart) {
    sum += sum_exact(first, kTailStart - 1, theta);
    first = kTailStart;
  }
  return sum + sum_euler_maclaurin(first, to_n, theta);
}

double zeta(uint64_t n, double theta) { return zeta_extend(0, n, theta, 0.0); }

ZipfianGenerator::ZipfianGenerator(uint64_t min, uint64_t max, double theta)
    : ZipfianGenerator(min, max, theta, zeta(max - min + 1, theta)) {}

ZipfianGenerator::ZipfianGenerator(uint64_t min, uint64_t max, double theta, double zetan)
    : base_(min),
      item_count_(max - min + 1),
      theta_(theta),
      alpha_(1.0 / (1.0 - theta)),
      zeta2_(zeta(2, theta)),
      second_threshold_(1.0 + std::pow(0.5, theta)),
      zetan_(zetan) {
  LOCUS_CHECK(min <= max && theta > 0.0 && theta < 1.0);
  update_eta();
}

void ZipfianGenerator::update_eta() {
  // YCSB recomputes eta with the item count it was built with even after
  // the count grows; we use the current count, as Gray et al.'s formula has it.
  const double n = static_cast<double>(item_count_);
  eta_ = (1 - std::pow(2.0 / n, 1 - theta_)) / (1 - zeta2_ / zetan_);
}

void ZipfianGenerator::set_item_count(uint64_t item_count) {
  LOCUS_CHECK(item_count > 0);
  zetan_ = item_count > item_count_ ? zeta_extend(item_count_, item_count, theta_, zetan_)
                                    : zeta(item_count, theta_);
  item_count_ = item_count;
  update_eta();
}

uint64_t ZipfianGenerator::draw(double u) const {
  // Items 0 and 1 have closed-form cut points; for the rest the inverse of
  // the approximated CDF. With one or two items eta is 0/0 but never used.
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < second_threshold_ || item_count_ <= 2) return base_ + 1;
  const double n = static_cast<double>(item_count_);
  auto offset = static_cast<uint64_t>(n * std::pow(eta_ * u - eta_ + 1, alpha_));
  if (offset >= item_count_) offset = item_count_ - 1;  // guard rounding at u -> 1
  return base_ + offset;
}

namespace {

// zeta over the scrambled item space: thousands of pow() calls, and every
// client of a simulation builds a generator, so the default theta's value
// is computed once per process (an immutable constant, thread-safe init).
double item_space_zeta(uint64_t items, double theta) {
  static const double kDefault = zeta(ScrambledZipfianGenerator::kItemSpace, ZipfianGenerator::kDefaultTheta);
  if (items == ScrambledZipfianGenerator::kItemSpace && theta == ZipfianGenerator::kDefaultTheta) return kDefault;
  return zeta(items, theta);
}

}  // namespace

ScrambledZipfianGenerator::ScrambledZipfianGenerator(uint64_t min, uint64_t max, double theta)
    : min_(min),
      item_count_(max - min + 1),
      zipfian_(0, kItemSpace - 1, theta, item_space_zeta(kItemSpace, theta)) {
  LOCUS_CHECK(min <= max);
}

uint64_t ScrambledZipfianGenerator::next(Random& rng) {
  return min_ + ycsb_hash(zipfian_.next(rng)) % item_count_;
}

SkewedLatestGenerator::SkewedLatestGenerator(double theta) : zipfian_(0, 0, theta) {}

}  // namespace locus::workload
