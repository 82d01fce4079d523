// Closed form and direct simulation of Catfish's back-off selector (see
// backoff_model.h).
#include "models/queueing/backoff_model.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/common/check.h"

namespace locus::models {
namespace {

// E[min(n, k G)] for G ~ Geometric(b) on {1, 2, ...}: the draw is used up
// after h = ceil(n / k) intervals unless a busy heartbeat replaces it first.
//   sum_{g<h} k g b q^(g-1) + n q^(h-1),   q = 1 - b,
// with sum_{g=1}^{h-1} g b q^(g-1) = (1 - h q^(h-1) + (h-1) q^h) / b.
double expected_used(double n, double k, double b) {
  if (n <= 0) return 0.0;
  const double h = std::ceil(n / k);
  const double q = 1.0 - b;
  const double q_h1 = std::pow(q, h - 1);
  const double partial = (1.0 - h * q_h1 + (h - 1) * q_h1 * q) / b;
  return k * partial + n * q_h1;
}

}  // namespace

Status BackoffParams::validate() const {
  if (n < 1) return invalid_argument("back-off N must be >= 1");
  if (!(threshold >= 0 && threshold <= 1)) return invalid_argument("back-off T must lie in [0, 1]");
  if (requests_per_heartbeat < 1) return invalid_argument("requests per heartbeat must be >= 1");
  if (!(utilisation_noise >= 0)) return invalid_argument("utilisation noise must be >= 0");
  return Status::ok();
}

double heartbeat_busy_probability(const BackoffParams& params, double utilisation) {
  // A measured utilisation cannot exceed 1, so T >= 1 is never crossed.
  if (params.threshold >= 1) return 0.0;
  if (params.utilisation_noise == 0) return utilisation > params.threshold ? 1.0 : 0.0;
  return 0.5 * std::erfc((params.threshold - utilisation) / (params.utilisation_noise * std::sqrt(2.0)));
}

double backoff_offload_share(const BackoffParams& params, double b) {
  LOCUS_CHECK(params.validate().is_ok());
  LOCUS_CHECK(b >= 0 && b <= 1);
  if (b <= 0) return 0.0;
  if (b >= 1 - 1e-12) return 1.0;  // r_busy grows without bound: all offloaded
  const double big_n = params.n;
  const double k = params.requests_per_heartbeat;
  double per_busy_heartbeat = 0;  // E[requests offloaded per busy heartbeat]
  double level_mass = 1.0 - b;    // P(r_busy = 1)
  double covered = 0;
  for (int level = 1; covered < 1.0 - 1e-13 && level_mass > 0; ++level) {
    double used = 0;
    for (int i = 0; i < params.n; ++i) used += expected_used((level - 1) * big_n + i, k, b);
    per_busy_heartbeat += level_mass * used / big_n;
    covered += level_mass;
    level_mass *= b;
  }
  return std::min(1.0, b * per_busy_heartbeat / k);
}

double backoff_offload_share_at_utilisation(const BackoffParams& params, double utilisation) {
  return backoff_offload_share(params, heartbeat_busy_probability(params, utilisation));
}

BackoffEquilibrium backoff_equilibrium(const BackoffParams& params, double offered_utilisation) {
  LOCUS_CHECK(offered_utilisation >= 0);
  auto utilisation_at = [&](double share) { return std::min(1.0, offered_utilisation * (1 - share)); };
  auto excess = [&](double share) {
    return backoff_offload_share_at_utilisation(params, utilisation_at(share)) - share;
  };
  double lo = 0, hi = 1;
  if (excess(0) <= 0) hi = 0;
  while (hi - lo > 1e-9) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) > 0 ? lo : hi) = mid;
  }
  BackoffEquilibrium eq;
  eq.offload_share = 0.5 * (lo + hi);
  eq.server_utilisation = utilisation_at(eq.offload_share);
  eq.busy_probability = heartbeat_busy_probability(params, eq.server_utilisation);
  return eq;
}

double simulate_backoff_offload_share(const BackoffParams& params, double busy_probability,
                                      int64_t intervals, uint64_t seed) {
  LOCUS_CHECK(params.validate().is_ok() && intervals > 0);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution busy(busy_probability);
  std::uniform_int_distribution<int> offset(0, params.n - 1);
  int64_t r_busy = 0, r_off = 0, offloaded = 0, total = 0;
  for (int64_t t = 0; t < intervals; ++t) {
    if (busy(rng)) {
      ++r_busy;
      r_off = (r_busy - 1) * params.n + offset(rng);
    } else {
      r_busy = 0;
    }
    const int64_t used = std::min<int64_t>(r_off, params.requests_per_heartbeat);
    r_off -= used;
    offloaded += used;
    total += params.requests_per_heartbeat;
  }
  return static_cast<double>(offloaded) / static_cast<double>(total);
}

}  // namespace locus::models
