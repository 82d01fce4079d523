// Open single-station queues in steady state: M/M/1, M/M/c (Erlang C),
// M/D/1 and M/G/1 (Pollaczek-Khinchine).
//
// These are the textbook building blocks the locality model is checked
// against and the vocabulary the planner's latency estimates are phrased in.
// Times are in microseconds and rates in operations per microsecond, so a
// service time of 6.3 us and an arrival rate of 0.1 per us compose without
// conversions. An unstable queue (utilisation >= 1) is reported as such,
// with infinite waits, rather than as an error: a planner sweeping a space
// meets unstable points routinely.
#pragma once

namespace locus::models {

struct OpenQueueMetrics {
  bool stable = true;
  double utilisation = 0;            // per server: arrival rate * service time / servers
  double wait_probability = 0;       // P(an arrival waits before service)
  double mean_wait_us = 0;           // time in queue before service starts
  double mean_response_us = 0;       // wait plus service
  double mean_queue_length = 0;      // customers waiting, not in service
  double mean_number_in_system = 0;  // waiting plus in service
};

// Erlang's loss formula B(c, a) for c servers offered a Erlangs, by the
// stable recursion B(k) = a B(k-1) / (k + a B(k-1)) (no factorials).
double erlang_b(int servers, double offered_load_erlangs);
// Erlang's delay formula C(c, a): the probability an arrival waits in M/M/c.
// Requires a < c.
double erlang_c(int servers, double offered_load_erlangs);

OpenQueueMetrics mm1(double arrival_rate_per_us, double service_time_us);
OpenQueueMetrics mmc(double arrival_rate_per_us, double service_time_us, int servers);
// M/G/1 by Pollaczek-Khinchine; service_scv is the squared coefficient of
// variation of the service time (0 deterministic, 1 exponential).
OpenQueueMetrics mg1(double arrival_rate_per_us, double service_time_us, double service_scv);
OpenQueueMetrics md1(double arrival_rate_per_us, double service_time_us);

// M/M/c waiting-time tail, exact: P(W > t) = C(c, a) exp(-(c mu - lambda) t).
double mmc_wait_tail(double arrival_rate_per_us, double service_time_us, int servers, double t_us);
// The q-quantile of the M/M/c waiting time (0 when P(W > 0) <= 1 - q).
double mmc_wait_quantile_us(double arrival_rate_per_us, double service_time_us, int servers,
                            double q);
// The q-quantile of the M/M/1 response time, exponential with rate mu - lambda.
double mm1_response_quantile_us(double arrival_rate_per_us, double service_time_us, double q);

}  // namespace locus::models
