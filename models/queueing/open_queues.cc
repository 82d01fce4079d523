// Closed forms for the open single-station queues (see open_queues.h).
#include "models/queueing/open_queues.h"

#include <cmath>
#include <limits>

#include "core/common/check.h"

namespace locus::models {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

OpenQueueMetrics unstable(double utilisation) {
  OpenQueueMetrics m;
  m.stable = false;
  m.utilisation = utilisation;
  m.wait_probability = 1;
  m.mean_wait_us = m.mean_response_us = kInf;
  m.mean_queue_length = m.mean_number_in_system = kInf;
  return m;
}

// Fills the fields that follow from the mean wait by Little's law.
OpenQueueMetrics finish(double arrival_rate_per_us, double service_time_us, double utilisation,
                        double wait_probability, double mean_wait_us) {
  OpenQueueMetrics m;
  m.utilisation = utilisation;
  m.wait_probability = wait_probability;
  m.mean_wait_us = mean_wait_us;
  m.mean_response_us = mean_wait_us + service_time_us;
  m.mean_queue_length = arrival_rate_per_us * mean_wait_us;
  m.mean_number_in_system = arrival_rate_per_us * m.mean_response_us;
  return m;
}

}  // namespace

double erlang_b(int servers, double offered_load_erlangs) {
  LOCUS_CHECK(servers >= 0 && offered_load_erlangs >= 0);
  double b = 1.0;
  for (int k = 1; k <= servers; ++k) b = offered_load_erlangs * b / (k + offered_load_erlangs * b);
  return b;
}

double erlang_c(int servers, double offered_load_erlangs) {
  LOCUS_CHECK(servers >= 1 && offered_load_erlangs < servers);
  const double b = erlang_b(servers, offered_load_erlangs);
  const double rho = offered_load_erlangs / servers;
  return b / (1.0 - rho * (1.0 - b));
}

OpenQueueMetrics mm1(double arrival_rate_per_us, double service_time_us) {
  return mmc(arrival_rate_per_us, service_time_us, 1);
}

OpenQueueMetrics mmc(double arrival_rate_per_us, double service_time_us, int servers) {
  LOCUS_CHECK(arrival_rate_per_us >= 0 && service_time_us > 0 && servers >= 1);
  const double a = arrival_rate_per_us * service_time_us;
  const double rho = a / servers;
  if (rho >= 1) return unstable(rho);
  const double c = erlang_c(servers, a);
  // Conditional on waiting, the wait is exponential with rate c*mu - lambda.
  const double mean_wait = c * service_time_us / (servers - a);
  return finish(arrival_rate_per_us, service_time_us, rho, c, mean_wait);
}

OpenQueueMetrics mg1(double arrival_rate_per_us, double service_time_us, double service_scv) {
  LOCUS_CHECK(arrival_rate_per_us >= 0 && service_time_us > 0 && service_scv >= 0);
  const double rho = arrival_rate_per_us * service_time_us;
  if (rho >= 1) return unstable(rho);
  // Pollaczek-Khinchine: W = lambda E[S^2] / (2 (1 - rho)), E[S^2] = S^2 (1 + scv).
  const double mean_wait = rho * service_time_us * (1.0 + service_scv) / (2.0 * (1.0 - rho));
  // Poisson arrivals see time averages, so P(wait) is the busy fraction.
  return finish(arrival_rate_per_us, service_time_us, rho, rho, mean_wait);
}

OpenQueueMetrics md1(double arrival_rate_per_us, double service_time_us) {
  return mg1(arrival_rate_per_us, service_time_us, 0.0);
}

double mmc_wait_tail(double arrival_rate_per_us, double service_time_us, int servers,
                     double t_us) {
  const OpenQueueMetrics m = mmc(arrival_rate_per_us, service_time_us, servers);
  if (!m.stable) return 1.0;
  if (t_us < 0) return 1.0;
  const double decay_per_us = servers / service_time_us - arrival_rate_per_us;
  return m.wait_probability * std::exp(-decay_per_us * t_us);
}

double mmc_wait_quantile_us(double arrival_rate_per_us, double service_time_us, int servers,
                            double q) {
  LOCUS_CHECK(q > 0 && q < 1);
  const OpenQueueMetrics m = mmc(arrival_rate_per_us, service_time_us, servers);
  if (!m.stable) return kInf;
  const double tail = 1.0 - q;
  if (m.wait_probability <= tail) return 0.0;
  const double decay_per_us = servers / service_time_us - arrival_rate_per_us;
  return std::log(m.wait_probability / tail) / decay_per_us;
}

double mm1_response_quantile_us(double arrival_rate_per_us, double service_time_us, double q) {
  LOCUS_CHECK(q > 0 && q < 1);
  const double decay_per_us = 1.0 / service_time_us - arrival_rate_per_us;
  if (decay_per_us <= 0) return kInf;
  return -std::log(1.0 - q) / decay_per_us;
}

}  // namespace locus::models
