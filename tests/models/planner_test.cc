// Tests for the capacity planner: every row meets both targets, the rows are
// mutually non-dominated, and on a small space they cover what a brute-force
// search with the exact model finds feasible. The planner's speed on a large
// space is printed (timing targets live in benchmarks, not assertions).
#include "models/queueing/planner.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <vector>

using namespace locus::models;

namespace {

LocalityInput cell_like() {
  LocalityInput in;  // defaults: calibration.md's Cell figures
  in.workload.network_rtt_us = 3.0;
  return in;
}

struct Point {
  int servers, cores, clients;
};

PlanSpace space_of(int servers, int cores, int clients) {
  PlanSpace space;
  space.servers = {1, servers, 1};
  space.cores_per_server = {1, cores, 1};
  space.clients = {1, clients, 1};
  return space;
}

// Brute force with exact MVA: for each (servers, cores) the smallest client
// count for which some split on a fine grid meets both targets.
std::vector<Point> brute_force_minimal(const LocalityInput& base, const PlanSpace& space, const PlanTargets& targets) {
  std::vector<Point> out;
  for (int s = space.servers.min; s <= space.servers.max; s += space.servers.step) {
    for (int c = space.cores_per_server.min; c <= space.cores_per_server.max; c += space.cores_per_server.step) {
      LocalityInput in = base;
      in.platform.servers = s;
      in.platform.cores_per_server = c;
      int best = -1;
      for (int i = 0; i <= 100; ++i) {
        const double p = i / 100.0;
        auto sweep = solve_mva_exact(locality_network(in, p), space.clients.max);
        BOOST_REQUIRE(sweep.is_ok());
        for (int n = space.clients.min; n <= space.clients.max && (best < 0 || n < best); n += space.clients.step) {
          if (sweep->throughput_per_us(n) * 1e6 < targets.throughput_ops_per_s) continue;
          if (prediction_from_sweep(in, p, *sweep, n, true).p99_latency_us <= targets.p99_latency_us) best = n;
          break;  // larger n only adds latency
        }
      }
      if (best > 0) out.push_back({s, c, best});
    }
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planner)

BOOST_AUTO_TEST_CASE(frontier_meets_targets_and_is_non_dominated) {
  const LocalityInput base = cell_like();
  PlanSpace space;
  space.servers = {1, 4, 1};
  space.cores_per_server = {1, 6, 1};
  space.clients = {1, 300, 1};
  for (const PlanTargets targets : {PlanTargets{600e3, 60}, PlanTargets{1.2e6, 40}, PlanTargets{300e3, 25}}) {
    auto result = plan_capacity(base, space, targets);
    BOOST_REQUIRE(result.is_ok());
    const std::vector<PlannedConfig>& frontier = result->frontier;
    BOOST_TEST_MESSAGE("target " << targets.throughput_ops_per_s << " ops/s, p99 <= " << targets.p99_latency_us
                                 << " us: " << frontier.size() << " frontier rows, " << result->exact_verifications
                                 << " exact verifications, " << result->elapsed_ms << " ms");
    BOOST_CHECK(!frontier.empty());
    for (const PlannedConfig& row : frontier) {
      BOOST_TEST_CONTEXT("row " << row.servers << "x" << row.cores_per_server << " cores, " << row.clients
                                << " clients") {
        BOOST_CHECK_GE(row.prediction.throughput_ops_per_s, targets.throughput_ops_per_s);
        BOOST_CHECK_LE(row.prediction.p99_latency_us, targets.p99_latency_us);
        // The row's figures are the exact model's at its split.
        LocalityInput in = base;
        in.platform.servers = row.servers;
        in.platform.cores_per_server = row.cores_per_server;
        in.workload.clients = row.clients;
        auto again = predict_split(in, row.prediction.server_side_share);
        BOOST_REQUIRE(again.is_ok());
        BOOST_CHECK_CLOSE(again->throughput_ops_per_s, row.prediction.throughput_ops_per_s, 1e-9);
        BOOST_CHECK_CLOSE(again->p99_latency_us, row.prediction.p99_latency_us, 1e-9);
      }
      for (const PlannedConfig& other : frontier) BOOST_CHECK(!dominates(other, row));
    }
    BOOST_CHECK(std::is_sorted(frontier.begin(), frontier.end(),
                               [](const PlannedConfig& a, const PlannedConfig& b) { return a.cost < b.cost; }));

    // Every configuration brute force finds feasible is matched or beaten
    // by a row, allowing the planner's coarser split search one client step
    // per 50 clients.
    for (const Point& f : brute_force_minimal(base, space, targets)) {
      const bool covered = std::any_of(frontier.begin(), frontier.end(), [&](const PlannedConfig& row) {
        return row.servers <= f.servers && row.cores_per_server <= f.cores &&
               row.clients <= f.clients + 1 + f.clients / 50;
      });
      BOOST_CHECK_MESSAGE(covered, "brute force finds " << f.servers << "x" << f.cores << " cores with " << f.clients
                                                        << " clients feasible; no row covers it");
    }
  }
}

BOOST_AUTO_TEST_CASE(unreachable_targets_give_an_empty_frontier) {
  PlanSpace space;
  space.servers = {1, 2, 1};
  space.cores_per_server = {1, 2, 1};
  space.clients = {1, 100, 1};
  auto result = plan_capacity(cell_like(), space, {50e6, 100});
  BOOST_REQUIRE(result.is_ok());
  BOOST_CHECK(result->frontier.empty());
  BOOST_CHECK_EQUAL(result->pairs_skipped_by_bound, 4);
  // p99 below the unloaded latency of either path: nothing can meet it.
  auto tight = plan_capacity(cell_like(), space, {1e3, 5});
  BOOST_REQUIRE(tight.is_ok());
  BOOST_CHECK(tight->frontier.empty());
}

BOOST_AUTO_TEST_CASE(rejects_bad_spaces_and_targets) {
  PlanSpace space;
  space.servers = {4, 2, 1};
  BOOST_CHECK(!plan_capacity(cell_like(), space, {1e6, 100}).is_ok());
  BOOST_CHECK(!plan_capacity(cell_like(), PlanSpace{}, {0, 100}).is_ok());
  BOOST_CHECK(!plan_capacity(cell_like(), PlanSpace{}, {1e6, -1}).is_ok());
}

// A static selector's rows run its share and nothing else; every row is the
// least client count at which that share meets both targets (brute force
// with the exact model below it), and none beats the best split's.
BOOST_AUTO_TEST_CASE(a_fixed_split_is_planned_at_that_split) {
  const PlanSpace space = space_of(4, 4, 200);
  const PlanTargets targets{1.5e6, 80};
  PlanOptions server_only;
  server_only.fixed_split = 1.0;
  auto fixed = plan_capacity(cell_like(), space, targets, {}, server_only);
  auto best = plan_capacity(cell_like(), space, targets);
  BOOST_REQUIRE(fixed.is_ok());
  BOOST_REQUIRE(best.is_ok());
  BOOST_REQUIRE(!fixed->frontier.empty());
  for (const PlannedConfig& r : fixed->frontier) {
    BOOST_TEST(r.prediction.server_side_share == 1.0);
    LocalityInput in = cell_like();
    in.platform.servers = r.servers;
    in.platform.cores_per_server = r.cores_per_server;
    in.workload.clients = r.clients - 1;
    auto below = predict_split(in, 1.0);
    BOOST_REQUIRE(below.is_ok());
    BOOST_TEST(below->throughput_ops_per_s < targets.throughput_ops_per_s, "one client fewer also meets it");
    const bool beaten = std::any_of(best->frontier.begin(), best->frontier.end(),
                                    [&](const PlannedConfig& b) { return dominates(r, b); });
    BOOST_TEST(!beaten, "server-only beats the best split at " << r.servers << "x" << r.cores_per_server);
  }
  PlanOptions bad;
  bad.fixed_split = 1.5;
  BOOST_CHECK(!plan_capacity(cell_like(), space, targets, {}, bad).is_ok());
}

// An adaptive selector's rule sets the split per configuration: here a
// rule that leans server-side as clients grow. Each row runs the rule's
// split for its client count and is the least count that meets the
// throughput target at it.
BOOST_AUTO_TEST_CASE(a_split_rule_is_planned_at_the_rules_split) {
  const PlanSpace space = space_of(3, 3, 300);
  const PlanTargets targets{1.2e6, 100};
  auto rule = [](const LocalityInput& in) -> locus::StatusOr<double> {
    return std::min(1.0, 0.3 + in.workload.clients / 400.0);
  };
  PlanOptions options;
  options.split_rule = rule;
  auto r = plan_capacity(cell_like(), space, targets, {}, options);
  BOOST_REQUIRE(r.is_ok());
  BOOST_REQUIRE(!r->frontier.empty());
  for (const PlannedConfig& row : r->frontier) {
    LocalityInput in = cell_like();
    in.platform.servers = row.servers;
    in.platform.cores_per_server = row.cores_per_server;
    in.workload.clients = row.clients;
    BOOST_TEST(row.prediction.server_side_share == *rule(in), 1e-12);
    BOOST_TEST(row.prediction.throughput_ops_per_s >= targets.throughput_ops_per_s);
    BOOST_TEST(row.prediction.p99_latency_us <= targets.p99_latency_us);
    in.workload.clients = row.clients - 1;
    auto below = predict_split(in, *rule(in));
    BOOST_REQUIRE(below.is_ok());
    BOOST_TEST(below->throughput_ops_per_s < targets.throughput_ops_per_s, "one client fewer also meets it");
  }
}

// Power enters the cost at the predicted CPU utilisation of every server.
BOOST_AUTO_TEST_CASE(power_and_nics_are_costed) {
  PlanSpace space;
  space.servers = {2, 2, 1};
  space.cores_per_server = {2, 2, 1};
  space.clients = {1, 100, 1};
  PlanCosts costs;
  costs.per_server = 0;
  costs.per_core = 0;
  costs.per_client = 0;
  costs.per_nic = 3;
  costs.per_watt = 1;
  costs.idle_watts_per_server = 50;
  costs.busy_watts_per_core = 10;
  auto r = plan_capacity(cell_like(), space, {1e5, 100}, costs);
  BOOST_REQUIRE(r.is_ok());
  BOOST_REQUIRE_EQUAL(r->frontier.size(), 1u);
  const PlannedConfig& row = r->frontier.front();
  const double watts = 2 * (50 + 10 * 2 * row.prediction.cpu_utilisation);
  BOOST_TEST(row.watts == watts, 1e-9);
  BOOST_TEST(row.cost == 2 * 3 + watts, 1e-9);
}

BOOST_AUTO_TEST_CASE(planner_speed_is_printed) {
  PlanSpace space;
  space.servers = {1, 16, 1};
  space.cores_per_server = {1, 16, 1};
  space.clients = {1, 1024, 1};
  auto result = plan_capacity(cell_like(), space, {2e6, 100});
  BOOST_REQUIRE(result.is_ok());
  BOOST_TEST_MESSAGE("planner: " << result->configurations_in_space << " configurations in the space, "
                                 << result->configurations_screened << " (configuration, split) points screened, "
                                 << result->pairs_skipped_by_bound
                                 << " of 256 (servers, cores) pairs skipped by the bound, "
                                 << result->exact_verifications << " exact verifications (" << result->exact_sweeps
                                 << " sweeps), " << result->frontier.size() << " frontier rows; screening "
                                 << result->screening_ms << " ms, total " << result->elapsed_ms << " ms");
  BOOST_CHECK(!result->frontier.empty());
}

BOOST_AUTO_TEST_SUITE_END()
