// Tests for the back-off model of Catfish's selector: the closed form
// against a direct simulation of the algorithm under the same assumption
// (independent busy heartbeats), its limits, and the feedback equilibrium.
// The error printed here is the closed form's own; its error against the
// SimGrid runs, where heartbeats and load are coupled, is measured by the
// cross-validation that comes with `locus model`.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "models/queueing/backoff_model.h"

using namespace locus::models;

BOOST_AUTO_TEST_SUITE(backoff)

BOOST_AUTO_TEST_CASE(limits_and_monotonicity) {
  BackoffParams params;  // Catfish: N = 8, T = 95%
  BOOST_CHECK_EQUAL(backoff_offload_share(params, 0.0), 0.0);
  BOOST_CHECK_EQUAL(backoff_offload_share(params, 1.0), 1.0);
  double previous = 0;
  for (int i = 1; i < 100; ++i) {
    const double share = backoff_offload_share(params, i / 100.0);
    BOOST_CHECK_GE(share, previous);
    BOOST_CHECK_LE(share, 1.0);
    previous = share;
  }
}

BOOST_AUTO_TEST_CASE(closed_form_matches_simulation) {
  double worst_abs = 0;
  for (int n : {1, 8, 64}) {
    for (int k : {1, 10, 100, 1000}) {
      for (double b : {0.1, 0.5, 0.9, 0.99}) {
        BackoffParams params;
        params.n = n;
        params.requests_per_heartbeat = k;
        const double model = backoff_offload_share(params, b);
        const double sim = simulate_backoff_offload_share(params, b, 2'000'000, 42 + n + k);
        const double err = std::fabs(model - sim);
        worst_abs = std::max(worst_abs, err);
        BOOST_TEST_CONTEXT("N=" << n << " k=" << k << " b=" << b) {
          // Statistical error of 2 M intervals: well under 1% of the share,
          // plus a small absolute floor for tiny shares.
          BOOST_CHECK_MESSAGE(err <= 0.01 * sim + 2e-4,
                              "model " << model << " vs simulation " << sim);
        }
      }
    }
  }
  BOOST_TEST_MESSAGE("back-off closed form vs direct simulation: worst absolute share error "
                     << worst_abs);
}

BOOST_AUTO_TEST_CASE(busy_probability_from_utilisation) {
  BackoffParams params;
  BOOST_CHECK_CLOSE(heartbeat_busy_probability(params, 0.95), 0.5, 1e-9);
  BOOST_CHECK_LT(heartbeat_busy_probability(params, 0.85), 1e-4);
  BOOST_CHECK_GT(heartbeat_busy_probability(params, 1.0), 0.99);
  params.utilisation_noise = 0;
  BOOST_CHECK_EQUAL(heartbeat_busy_probability(params, 0.951), 1.0);
  BOOST_CHECK_EQUAL(heartbeat_busy_probability(params, 0.95), 0.0);
  params.threshold = 1.0;  // a measured utilisation never exceeds 1
  BOOST_CHECK_EQUAL(heartbeat_busy_probability(params, 1.0), 0.0);
}

BOOST_AUTO_TEST_CASE(equilibrium_with_feedback) {
  BackoffParams params;
  params.requests_per_heartbeat = 200;
  // Light load: nothing to offload.
  const BackoffEquilibrium light = backoff_equilibrium(params, 0.5);
  BOOST_CHECK_SMALL(light.offload_share, 1e-6);
  BOOST_CHECK_CLOSE(light.server_utilisation, 0.5, 1e-3);
  // Twice the server's capacity offered: the selector offloads until the
  // server hovers near T, so about half the requests leave the CPU.
  for (double offered : {1.2, 2.0, 4.0}) {
    const BackoffEquilibrium eq = backoff_equilibrium(params, offered);
    BOOST_TEST_MESSAGE("offered utilisation " << offered << ": offloaded " << eq.offload_share
                       << ", server at " << eq.server_utilisation << ", busy heartbeats "
                       << eq.busy_probability);
    BOOST_CHECK_CLOSE(eq.offload_share,
                      backoff_offload_share_at_utilisation(params, eq.server_utilisation), 1e-3);
    BOOST_CHECK_GT(eq.server_utilisation, params.threshold - 4 * params.utilisation_noise);
    BOOST_CHECK_LE(eq.server_utilisation, 1.0);
    BOOST_CHECK_CLOSE(eq.offload_share, 1 - eq.server_utilisation / offered, 1e-3);
  }
}

BOOST_AUTO_TEST_SUITE_END()
