// Tests for the open single-station queues: textbook values, and the CTMC of
// each queue (truncated far beyond its probable states) as the referee for
// Erlang C, the M/M/c waiting-time tail and Pollaczek-Khinchine.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "models/queueing/ctmc.h"
#include "models/queueing/open_queues.h"

using namespace locus::models;

namespace {

// Stationary number-in-system of M/M/c from its birth-death CTMC.
std::vector<double> mmc_distribution(double lambda, double service_us, int c, int cap) {
  Ctmc chain(cap + 1);
  for (int j = 0; j < cap; ++j) {
    chain.add_rate(j, j + 1, lambda);
    chain.add_rate(j + 1, j, std::min(j + 1, c) / service_us);
  }
  auto pi = chain.stationary();
  BOOST_REQUIRE(pi.is_ok());
  return std::vector<double>(pi->data(), pi->data() + pi->size());
}

// Relative agreement, with an absolute floor for probabilities so small that
// the CTMC's round-off dominates them.
void check_near(double model, double reference, double relative, double absolute = 1e-10) {
  BOOST_CHECK_MESSAGE(std::fabs(model - reference) <= relative * std::fabs(reference) + absolute,
                      "model " << model << " vs reference " << reference);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(open_queues)

BOOST_AUTO_TEST_CASE(mm1_matches_textbook) {
  const OpenQueueMetrics m = mm1(0.08, 10.0);  // rho = 0.8
  BOOST_CHECK(m.stable);
  BOOST_CHECK_CLOSE(m.utilisation, 0.8, 1e-12);
  BOOST_CHECK_CLOSE(m.mean_wait_us, 40.0, 1e-10);
  BOOST_CHECK_CLOSE(m.mean_response_us, 50.0, 1e-10);
  BOOST_CHECK_CLOSE(m.mean_number_in_system, 4.0, 1e-10);
  BOOST_CHECK_CLOSE(m.mean_queue_length, 3.2, 1e-10);
  BOOST_CHECK_CLOSE(m.wait_probability, 0.8, 1e-10);
  // Response time is exponential with rate mu - lambda = 0.02 per us.
  BOOST_CHECK_CLOSE(mm1_response_quantile_us(0.08, 10.0, 0.99), std::log(100.0) / 0.02, 1e-10);
}

BOOST_AUTO_TEST_CASE(erlang_formulas_match_hand_values) {
  // c = 2, a = 1: B = 1/5, C = 1/3.
  BOOST_CHECK_CLOSE(erlang_b(2, 1.0), 0.2, 1e-12);
  BOOST_CHECK_CLOSE(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
  BOOST_CHECK_CLOSE(erlang_c(1, 0.7), 0.7, 1e-12);  // M/M/1: P(wait) = rho
  // Large c stays finite (no factorials): 500 servers at 95%.
  const double c500 = erlang_c(500, 475.0);
  BOOST_CHECK(c500 > 0 && c500 < 1);
}

BOOST_AUTO_TEST_CASE(unstable_queues_are_flagged) {
  BOOST_CHECK(!mm1(0.2, 5.0).stable);
  BOOST_CHECK(!mmc(1.0, 4.0, 4).stable);
  BOOST_CHECK(std::isinf(md1(0.3, 4.0).mean_wait_us));
}

BOOST_AUTO_TEST_CASE(mmc_matches_its_ctmc) {
  for (int c : {1, 2, 4, 16}) {
    for (double rho : {0.3, 0.85, 0.97}) {
      const double service_us = 6.3;
      const double lambda = rho * c / service_us;
      const std::vector<double> pi = mmc_distribution(lambda, service_us, c, 4000);
      double p_wait = 0, lq = 0, l = 0;
      for (size_t j = 0; j < pi.size(); ++j) {
        if (static_cast<int>(j) >= c) p_wait += pi[j], lq += (j - c) * pi[j];
        l += j * pi[j];
      }
      const OpenQueueMetrics m = mmc(lambda, service_us, c);
      BOOST_TEST_CONTEXT("c=" << c << " rho=" << rho) {
        check_near(m.wait_probability, p_wait, 1e-7, 1e-9);
        check_near(m.mean_queue_length, lq, 1e-7, 1e-9);
        check_near(m.mean_number_in_system, l, 1e-7, 1e-9);
        // Waiting-time tail: an arrival finding j >= c waits for j - c + 1
        // departures at rate c mu (PASTA: it sees pi).
        for (double t : {1.0, 10.0, 50.0}) {
          // P(Erlang(k, r) > t) grows by e^{-rt} (rt)^{k-1} / (k-1)! per k.
          const double rt = c / service_us * t;
          double term = std::exp(-rt), erlang = 0, tail = 0;
          for (size_t j = c; j < pi.size(); ++j) {
            const int k = static_cast<int>(j) - c + 1;
            erlang += term;
            term *= rt / k;
            tail += pi[j] * erlang;
          }
          check_near(mmc_wait_tail(lambda, service_us, c, t), tail, 1e-6);
        }
        const double q99 = mmc_wait_quantile_us(lambda, service_us, c, 0.99);
        if (q99 > 0) BOOST_CHECK_CLOSE(mmc_wait_tail(lambda, service_us, c, q99), 0.01, 1e-8);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(md1_is_half_of_mm1) {
  // Pollaczek-Khinchine with deterministic service halves the M/M/1 wait.
  const OpenQueueMetrics d = md1(0.15, 6.3);
  const OpenQueueMetrics e = mm1(0.15, 6.3);
  BOOST_CHECK_CLOSE(d.mean_wait_us, e.mean_wait_us / 2, 1e-10);
  const double rho = 0.15 * 6.3;
  BOOST_CHECK_CLOSE(d.mean_wait_us, rho * 6.3 / (2 * (1 - rho)), 1e-10);
  // scv = 1 is M/M/1.
  BOOST_CHECK_CLOSE(mg1(0.15, 6.3, 1.0).mean_wait_us, e.mean_wait_us, 1e-10);
}

BOOST_AUTO_TEST_CASE(mg1_matches_erlang_k_service_ctmc) {
  // M/E_k/1: service is k exponential phases of rate k / S, scv = 1 / k.
  // States: 0 empty, else (j customers, phase of the one in service).
  const int k = 4, cap = 600;
  const double service_us = 6.3, lambda = 0.85 / service_us;
  auto index = [&](int j, int phase) { return 1 + (j - 1) * k + phase; };
  Ctmc chain(1 + cap * k);
  const double phase_rate = k / service_us;
  chain.add_rate(0, index(1, 0), lambda);
  for (int j = 1; j <= cap; ++j) {
    for (int ph = 0; ph < k; ++ph) {
      if (j < cap) chain.add_rate(index(j, ph), index(j + 1, ph), lambda);
      if (ph + 1 < k) chain.add_rate(index(j, ph), index(j, ph + 1), phase_rate);
      else chain.add_rate(index(j, ph), j == 1 ? 0 : index(j - 1, 0), phase_rate);
    }
  }
  auto pi = chain.stationary();
  BOOST_REQUIRE(pi.is_ok());
  double l = 0;
  for (int j = 1; j <= cap; ++j) {
    for (int ph = 0; ph < k; ++ph) l += j * (*pi)(index(j, ph));
  }
  const double wait_from_ctmc = l / lambda - service_us;  // Little's law
  BOOST_CHECK_CLOSE(mg1(lambda, service_us, 1.0 / k).mean_wait_us, wait_from_ctmc, 1e-5);
}

BOOST_AUTO_TEST_SUITE_END()
