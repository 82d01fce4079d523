// Approximate MVA with Seidmann's multi-server decomposition (see
// closed_network.h). This is the planner's workhorse: O(K) per population,
// so a sweep to thousands of clients costs microseconds.
#include <cmath>
#include <vector>

#include "core/common/check.h"
#include "models/queueing/closed_network.h"

namespace locus::models {

MvaSweep solve_mva_seidmann(const ClosedNetwork& network, int max_population, SweepStop stop) {
  LOCUS_CHECK(network.validate().is_ok());
  const int k_count = static_cast<int>(network.stations.size());
  MvaSweep sweep(network, max_population, /*approximate_tail=*/true);

  // Per station: the queueing part's demand, the fixed part's, and the
  // Sakasegawa exponent for its wait probability.
  std::vector<double> queue_demand_us(k_count), fixed_demand_us(k_count), wait_exponent(k_count);
  for (int k = 0; k < k_count; ++k) {
    const Station& s = network.stations[k];
    const double d = s.demand_us();
    if (s.kind == StationKind::kDelay) {
      queue_demand_us[k] = 0;
      fixed_demand_us[k] = d;
      continue;
    }
    const int c = s.servers;
    queue_demand_us[k] = d / c;
    fixed_demand_us[k] = d * (c - 1) / c;
    wait_exponent[k] = std::sqrt(2.0 * (c + 1)) - 1.0;
  }

  std::vector<double> queue(k_count, 0.0);  // queueing part, per copy, at n - 1
  std::vector<double> residence(k_count, 0.0);
  double x_prev = 0;
  for (int n = 1; n <= max_population; ++n) {
    double cycle_us = 0;
    for (int k = 0; k < k_count; ++k) {
      residence[k] = fixed_demand_us[k] + queue_demand_us[k] * (1.0 + queue[k]);
      cycle_us += network.stations[k].copies * residence[k];
    }
    const double xn = n / cycle_us;
    sweep.push_population(xn);
    for (int k = 0; k < k_count; ++k) {
      const Station& s = network.stations[k];
      double wait_probability = 0, wait_per_visit_us = 0;
      // An arrival sees the other n - 1 customers: with fewer than c of them
      // it cannot wait, whatever the stand-in's utilisation says.
      if (queue_demand_us[k] > 0 && n - 1 >= s.servers) {
        // What an arrival sees: the stand-in's utilisation and queue at n - 1.
        const double rho = std::fmin(1.0, x_prev * queue_demand_us[k]);
        wait_probability = s.servers == 1 ? rho : std::pow(rho, wait_exponent[k]);
        if (rho > 0) {
          wait_per_visit_us = wait_probability * (s.service_time_us / s.servers) * queue[k] / rho;
        }
      }
      queue[k] = xn * queue_demand_us[k] * (1.0 + queue[k]);
      sweep.set_station(n, k, residence[k], xn * residence[k], wait_probability, wait_per_visit_us);
      sweep.set_tail_anchor(n, k, std::fmax(0.0, 1.0 - xn * queue_demand_us[k]));
    }
    x_prev = xn;
    const bool checked = n >= stop.check_from && (n - stop.check_from) % stop.check_every == 0;
    if (checked && ((stop.throughput_per_us > 0 && xn >= stop.throughput_per_us) ||
                    (stop.cycle_time_us > 0 && cycle_us >= stop.cycle_time_us))) {
      break;
    }
  }
  return sweep;
}

}  // namespace locus::models
