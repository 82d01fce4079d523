// Two-moment latency tail approximation (see latency_tail.h).
#include "models/queueing/latency_tail.h"

#include <algorithm>
#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>

#include "core/common/check.h"

namespace locus::models {
namespace {

// Double precision throughout: Boost's default promotes to long double,
// several times slower, for accuracy far beyond this model's. Errors become
// NaN/inf rather than exceptions; the callers keep arguments in range.
using FastPolicy = boost::math::policies::policy<
    boost::math::policies::promote_double<false>,
    boost::math::policies::overflow_error<boost::math::policies::errno_on_error>,
    boost::math::policies::domain_error<boost::math::policies::errno_on_error>,
    boost::math::policies::evaluation_error<boost::math::policies::errno_on_error>>;

// Beyond this shape the gamma is near normal and Boost's series overflow;
// Wilson-Hilferty's cube-root normal approximation is accurate there.
constexpr double kLargeShape = 1000;

double gamma_tail(double shape, double x) {
  if (shape > kLargeShape) {
    const double v = 1.0 / (9 * shape);
    const double z = (std::cbrt(x / shape) - (1 - v)) / std::sqrt(v);
    return 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  return boost::math::gamma_q(shape, x, FastPolicy());
}

double gamma_tail_inverse(double shape, double q) {
  if (shape > kLargeShape) {
    const double v = 1.0 / (9 * shape);
    const double z = boost::math::erfc_inv(2 * q, FastPolicy()) * std::sqrt(2.0);
    const double root = 1 - v + z * std::sqrt(v);
    return shape * root * root * root;
  }
  return boost::math::gamma_q_inv(shape, q, FastPolicy());
}

}  // namespace

PathLatency::PathLatency(double fixed_us, std::span<const WaitComponent> waits)
    : fixed_us_(fixed_us) {
  LOCUS_CHECK(fixed_us >= 0);
  double mean = 0, variance = 0, log_no_wait = 0;
  for (const WaitComponent& w : waits) {
    if (w.visits <= 0 || w.mean_wait_us <= 0 || w.wait_probability <= 0) continue;
    const double pi = std::min(1.0, w.wait_probability);
    const double second = w.wait_second_moment_us2 > 0
                              ? w.wait_second_moment_us2
                              : 2.0 * w.mean_wait_us * w.mean_wait_us / pi;
    const double per_visit_variance = std::max(0.0, second - w.mean_wait_us * w.mean_wait_us);
    const double v = w.visits, rho = std::clamp(w.visit_correlation, 0.0, 1.0);
    mean += v * w.mean_wait_us;
    variance += (v + v * std::max(0.0, v - 1) * rho) * per_visit_variance;
    // Fully correlated visits wait all or none: they count as one.
    const double independent_visits = v >= 1 ? 1 + (v - 1) * (1 - rho) : v;
    log_no_wait += pi >= 1.0 ? -INFINITY : independent_visits * std::log1p(-pi);
  }
  mean_wait_us_ = mean;
  no_wait_probability_ = std::exp(log_no_wait);
  if (mean <= 0) {
    no_wait_probability_ = 1.0;
    return;
  }
  const double p_wait = 1.0 - no_wait_probability_;
  const double cond_mean = mean / p_wait;
  const double cond_second = (variance + mean * mean) / p_wait;
  // A variance that vanishes numerically means a near-deterministic wait; a
  // large shape stands in for it.
  const double cond_variance = std::max(cond_second - cond_mean * cond_mean,
                                        cond_mean * cond_mean * 1e-12);
  gamma_shape_ = cond_mean * cond_mean / cond_variance;
  gamma_scale_us_ = cond_variance / cond_mean;
}

double PathLatency::tail(double t_us) const {
  if (t_us < fixed_us_) return 1.0;
  const double p_wait = 1.0 - no_wait_probability_;
  if (p_wait <= 0 || gamma_scale_us_ <= 0) return 0.0;
  return p_wait * gamma_tail(gamma_shape_, (t_us - fixed_us_) / gamma_scale_us_);
}

double PathLatency::quantile_us(double q) const {
  LOCUS_CHECK(q > 0 && q < 1);
  const double p_wait = 1.0 - no_wait_probability_;
  const double beyond = 1.0 - q;
  if (p_wait <= beyond || gamma_scale_us_ <= 0) return fixed_us_;
  return fixed_us_ +
         gamma_scale_us_ * gamma_tail_inverse(gamma_shape_, beyond / p_wait);
}

double mixture_quantile_us(std::span<const PathLatency> paths, std::span<const double> weights,
                           double q) {
  LOCUS_CHECK(paths.size() == weights.size() && !paths.empty());
  LOCUS_CHECK(q > 0 && q < 1);
  int used = 0, last = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (weights[i] > 0) ++used, last = static_cast<int>(i);
  }
  LOCUS_CHECK(used > 0);
  if (used == 1) return paths[last].quantile_us(q);

  auto mixed_tail = [&](double t) {
    double tail = 0;
    for (size_t i = 0; i < paths.size(); ++i) tail += weights[i] * paths[i].tail(t);
    return tail;
  };
  // The quantile lies between the smallest path quantile and the largest.
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (weights[i] <= 0) continue;
    lo = std::min(lo, paths[i].fixed_us());
    hi = std::max(hi, paths[i].quantile_us(q));
  }
  const double beyond = 1.0 - q;
  if (mixed_tail(lo) <= beyond) return lo;
  if (hi - lo <= 1e-12 * hi) return hi;
  // TOMS 748 on the bracket: a handful of tail evaluations where bisection
  // needs dozens; 1e-7 relative is far below the model's own error.
  auto excess = [&](double t) { return mixed_tail(t) - beyond; };
  std::uintmax_t max_iter = 60;
  const auto root = boost::math::tools::toms748_solve(
      excess, lo, hi, [](double a, double b) { return std::fabs(b - a) <= 1e-7 * std::fabs(b); },
      max_iter, FastPolicy());
  return root.second;  // the end where the tail is at most 1 - q
}

}  // namespace locus::models
