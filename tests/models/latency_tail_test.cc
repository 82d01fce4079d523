// Tests for the p99 method: one waiting station gives back the exact M/M/c
// tail, several saturated visits give the Erlang sum, and mixtures of paths
// take the right quantile.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cmath>

#include "models/queueing/latency_tail.h"
#include "models/queueing/open_queues.h"

using namespace locus::models;

namespace {

double erlang_tail(int k, double rate, double t) {
  double term = std::exp(-rate * t), sum = 0;
  for (int i = 0; i < k; ++i) {
    sum += term;
    term *= rate * t / (i + 1);
  }
  return sum;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(latency_tail)

BOOST_AUTO_TEST_CASE(one_station_is_the_mmc_tail) {
  for (int c : {1, 4, 16}) {
    const double service_us = 6.3, lambda = 0.9 * c / service_us;
    const OpenQueueMetrics m = mmc(lambda, service_us, c);
    const std::array<WaitComponent, 1> waits = {WaitComponent{1.0, m.mean_wait_us, m.wait_probability}};
    const PathLatency path(0.0, waits);
    for (double t : {0.5, 5.0, 50.0}) {
      BOOST_CHECK_CLOSE(path.tail(t), mmc_wait_tail(lambda, service_us, c, t), 1e-6);
    }
    BOOST_CHECK_CLOSE(path.quantile_us(0.99), mmc_wait_quantile_us(lambda, service_us, c, 0.99), 1e-6);
    BOOST_CHECK_CLOSE(path.mean_us(), m.mean_wait_us, 1e-9);
  }
}

BOOST_AUTO_TEST_CASE(saturated_visits_sum_to_an_erlang) {
  // Five visits that always wait an exponential of mean 2 us: Erlang(5).
  const std::array<WaitComponent, 1> waits = {WaitComponent{5.0, 2.0, 1.0}};
  const PathLatency path(10.0, waits);
  BOOST_CHECK_CLOSE(path.mean_us(), 20.0, 1e-9);
  for (double t : {12.0, 20.0, 40.0}) {
    BOOST_CHECK_CLOSE(path.tail(t), erlang_tail(5, 0.5, t - 10.0), 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(no_waiting_is_the_fixed_part) {
  const PathLatency path(7.5, {});
  BOOST_CHECK_EQUAL(path.quantile_us(0.99), 7.5);
  BOOST_CHECK_EQUAL(path.tail(7.4), 1.0);
  BOOST_CHECK_EQUAL(path.tail(7.6), 0.0);
  // A wait taken by fewer than 1% of requests leaves p99 at the fixed part.
  const std::array<WaitComponent, 1> rare = {WaitComponent{1.0, 0.05, 0.005}};
  BOOST_CHECK_EQUAL(PathLatency(7.5, rare).quantile_us(0.99), 7.5);
}

BOOST_AUTO_TEST_CASE(near_deterministic_waits_stay_finite) {
  // A saturated station with a steady queue: the wait is nearly constant,
  // the gamma shape huge (the normal-approximation branch), p99 ~ mean.
  const double mean = 12600, sd = 5;
  const std::array<WaitComponent, 1> waits = {WaitComponent{1.0, mean, 1.0, mean * mean + sd * sd}};
  const PathLatency path(10.0, waits);
  const double p99 = path.quantile_us(0.99);
  BOOST_CHECK(std::isfinite(p99));
  BOOST_CHECK_CLOSE(p99, 10 + mean + 2.326 * sd, 1e-3);
  BOOST_CHECK_CLOSE(path.tail(p99), 0.01, 1.0);
  // Either side of the switch to the approximation the tails agree.
  const double below = 2 * 999.0, above = 2 * 1001.0;  // mean^2 / var = shape with var = mean / 2
  const std::array<WaitComponent, 1> a = {WaitComponent{1.0, below, 1.0, below * below + below / 2}};
  const std::array<WaitComponent, 1> b = {WaitComponent{1.0, above, 1.0, above * above + above / 2}};
  BOOST_CHECK_CLOSE(PathLatency(0, a).quantile_us(0.99) / below, PathLatency(0, b).quantile_us(0.99) / above,
                    0.1);
}

BOOST_AUTO_TEST_CASE(mixture_quantiles) {
  const std::array<PathLatency, 2> paths = {PathLatency(10.0, {}), PathLatency(20.0, {})};
  const std::array<double, 2> even = {0.5, 0.5};
  BOOST_CHECK_CLOSE(mixture_quantile_us(paths, even, 0.99), 20.0, 1e-4);
  BOOST_CHECK_CLOSE(mixture_quantile_us(paths, even, 0.4), 10.0, 1e-4);
  // 0.5% on the slow path: p99 is on the fast one.
  const std::array<double, 2> skewed = {0.995, 0.005};
  BOOST_CHECK_CLOSE(mixture_quantile_us(paths, skewed, 0.99), 10.0, 1e-4);
  // A single weighted path equals its own quantile.
  const std::array<WaitComponent, 1> waits = {WaitComponent{1.0, 3.0, 0.6}};
  const std::array<PathLatency, 2> one = {PathLatency(5.0, waits), PathLatency(100.0, {})};
  const std::array<double, 2> only_first = {1.0, 0.0};
  BOOST_CHECK_CLOSE(mixture_quantile_us(one, only_first, 0.99), one[0].quantile_us(0.99), 1e-9);
  // The mixture's tail at its quantile is 1%.
  const std::array<double, 2> mixed = {0.7, 0.3};
  const std::array<PathLatency, 2> two = {PathLatency(5.0, waits), PathLatency(12.0, waits)};
  const double q = mixture_quantile_us(two, mixed, 0.99);
  BOOST_CHECK_CLOSE(0.7 * two[0].tail(q) + 0.3 * two[1].tail(q), 0.01, 1e-4);
}

BOOST_AUTO_TEST_SUITE_END()
