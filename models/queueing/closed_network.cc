// ClosedNetwork validation and the MvaSweep result store.
#include "models/queueing/closed_network.h"

#include <cmath>
#include <string>

#include "core/common/check.h"

namespace locus::models {

Status ClosedNetwork::validate() const {
  if (stations.empty()) return invalid_argument("closed network has no stations");
  double total_demand_us = 0;
  for (const Station& s : stations) {
    const std::string where = "station '" + s.name + "': ";
    if (!(s.service_time_us >= 0) || !std::isfinite(s.service_time_us)) {
      return invalid_argument(where + "service time must be finite and >= 0");
    }
    if (!(s.visits_per_copy >= 0) || !std::isfinite(s.visits_per_copy)) {
      return invalid_argument(where + "visits must be finite and >= 0");
    }
    if (s.copies < 1) return invalid_argument(where + "copies must be >= 1");
    if (!(s.service_scv >= 0)) return invalid_argument(where + "service scv must be >= 0");
    if (s.kind == StationKind::kQueue && s.servers < 1) {
      return invalid_argument(where + "servers must be >= 1");
    }
    total_demand_us += s.copies * s.demand_us();
  }
  if (!(total_demand_us > 0)) {
    return invalid_argument("closed network has no positive demand: throughput would be unbounded");
  }
  return Status::ok();
}

MvaSweep::MvaSweep(const ClosedNetwork& network, int expected_max_population, bool approximate_tail)
    : stations_(network.stations),
      station_count_(static_cast<int>(network.stations.size())),
      approximate_tail_(approximate_tail) {
  LOCUS_CHECK(expected_max_population >= 0);
  // Reserve without filling: a sweep that stops early never touches the rest.
  const size_t rows = static_cast<size_t>(expected_max_population) + 1;
  throughput_per_us_.reserve(rows);
  for (auto* v : {&residence_us_, &queue_length_, &wait_probability_, &wait_per_visit_us_,
                  &tail_anchor_}) {
    v->reserve(rows * station_count_);
  }
  max_population_ = -1;
  push_population(0.0);
  // Population 0: every station empty.
  for (int k = 0; k < station_count_; ++k) {
    const Station& s = stations_[k];
    const bool anchor_is_empty = approximate_tail_ || s.kind != StationKind::kQueue || s.servers == 1;
    at_mut(tail_anchor_, 0, k) = anchor_is_empty ? 1.0 : 0.0;
  }
}

double MvaSweep::cycle_time_us(int n) const {
  return n == 0 ? 0.0 : n / throughput_per_us_[n];
}

double MvaSweep::utilisation(int n, int k) const {
  const Station& s = stations_[k];
  const int servers = s.kind == StationKind::kQueue ? s.servers : 1;
  return throughput_per_us_[n] * s.demand_us() / servers;
}

void MvaSweep::push_population(double throughput_per_us) {
  ++max_population_;
  throughput_per_us_.push_back(throughput_per_us);
  for (auto* v : {&residence_us_, &queue_length_, &wait_probability_, &wait_per_visit_us_,
                  &tail_anchor_}) {
    v->resize(v->size() + station_count_, 0.0);
  }
}

void MvaSweep::set_station(int n, int k, double residence_us, double queue_length,
                           double wait_probability, double wait_per_visit_us) {
  LOCUS_CHECK(n >= 0 && n <= max_population_);
  const size_t i = static_cast<size_t>(n) * station_count_ + k;
  residence_us_[i] = residence_us;
  queue_length_[i] = queue_length;
  wait_probability_[i] = wait_probability;
  if (wait_per_visit_us < 0) {
    const Station& s = stations_[k];
    const bool waits = s.kind == StationKind::kQueue && s.visits_per_copy > 0;
    wait_per_visit_us = waits ? residence_us / s.visits_per_copy - s.service_time_us : 0.0;
    if (wait_per_visit_us < 0) wait_per_visit_us = 0;  // round-off at n = 1
  }
  wait_per_visit_us_[i] = wait_per_visit_us;
}

WaitMoments MvaSweep::wait_moments(int n, int k) const {
  LOCUS_CHECK(n >= 1 && n <= max_population_);
  const Station& s = stations_[k];
  WaitMoments w;
  if (s.kind != StationKind::kQueue || s.demand_us() <= 0) return w;
  const int c = s.servers;
  const double step_us = s.service_time_us / c;  // time between departures, all busy
  const double scv = s.service_scv;
  // First departure: a residual service over c. Its mean is S (1 + scv) / 2
  // for one server; the variance interpolates the fixed (S^2 / 12) and
  // exponential (S^2) cases, the third moment being unknown.
  const double first_mean = step_us * (1 + scv) / 2;
  const double first_var = step_us * step_us * (1.0 / 12 + 11.0 / 12 * scv);
  const double later_var = step_us * step_us * scv;

  // Walk the tail q = j - c = 0, 1, ... of J ~ p(. | n - 1):
  //   p(c + q | n-1) = prod_{i=0}^{q} (X(n-1-i) D / c) * anchor(n-2-q),
  // (for the approximate stand-in, q counts from j = 1 instead of c).
  const int m = n - 1;
  const double ratio = s.demand_us() / c;
  double weight_sum = 0, mean = 0, second = 0, product = 1;
  for (int q = 0; m - 1 - q >= 0; ++q) {
    product *= throughput_per_us_[m - q] * ratio;
    const double p = product * at(tail_anchor_, m - 1 - q, k);
    if (product < 1e-300) break;  // the rest of the tail is negligible
    const double mean_q = first_mean + q * step_us;
    const double var_q = first_var + q * later_var;
    weight_sum += p;
    mean += p * mean_q;
    second += p * (var_q + mean_q * mean_q);
  }
  if (weight_sum <= 0) return w;
  w.probability = wait_probability(n, k);
  // The exact tail sums to P(wait) already; the stand-in's is a shape only,
  // scaled to the stored probability.
  const double scale = approximate_tail_ ? w.probability / weight_sum : 1.0;
  if (!approximate_tail_) w.probability = std::min(1.0, weight_sum);
  w.mean_us = mean * scale;
  w.second_moment_us2 = second * scale;
  return w;
}

}  // namespace locus::models
