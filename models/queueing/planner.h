// The capacity planner: the cheapest configurations (servers, cores per
// server, clients) that meet a throughput target and a p99 latency target,
// over a space the user bounds, for a platform and workload given as a
// LocalityInput (whose servers, cores and clients fields are overridden).
//
// "Cheapest" without prices is the Pareto frontier: a feasible configuration
// is kept unless another feasible one needs no more servers, no more cores
// per server and no more clients, and fewer of one. Rows are sorted by a
// linear cost (PlanCosts) for display; the frontier does not depend on it.
// Each configuration runs at the split that serves it best (the one that
// meets both targets with the fewest clients, close to p*), searched on a
// grid of splits; the row reports it.
//
// How it stays fast (hundreds of thousands of configurations in well under
// a second, timed by locus_plan_bench and printed by planner_test):
//  1. Screening with approximate MVA (Seidmann): one O(N) sweep per
//     (servers, cores, split) yields every client count at once, and stops
//     as soon as throughput reaches the target (less a margin) or mean
//     latency passes the p99 target; pairs whose saturation bound misses
//     the target skip the sweep. For a fixed split latency grows with
//     clients, so only the first client count reaching the throughput
//     target can qualify, and its p99 decides the split. Screening is
//     optimistic by `screen_margin`, above the approximation's measured
//     error (8-9% on throughput, 7% on p99); where that error is larger
//     (p99 with at most 4 clients per core, ~20%), a near miss is re-checked
//     with exact MVA rather than dropped.
//  2. Verification with exact MVA, in order of increasing (servers, cores),
//     so that any pair that could dominate another has been settled first:
//     a pair is verified only if no verified configuration already
//     dominates its optimistic point (raised, if need be, to the client
//     count Little's law requires of any configuration), and within it the screened splits are
//     tried in order of their optimistic client counts until one meets both
//     targets, which is then refined between grid points.
// Every returned row meets both targets by the exact model. A row is the
// least client count for its (servers, cores) at the best split found on a
// 17-point grid plus refinement; a finer search could occasionally shave a
// client or two off.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/common/status.h"
#include "models/queueing/locality_model.h"

namespace locus::models {

struct IntRange {
  int min = 1;
  int max = 1;
  int step = 1;
  int64_t count() const { return max < min ? 0 : (max - min) / step + 1; }
};

struct PlanSpace {
  IntRange servers{1, 8, 1};
  IntRange cores_per_server{1, 8, 1};
  IntRange clients{1, 512, 1};
};

struct PlanTargets {
  double throughput_ops_per_s = 0;
  double p99_latency_us = 0;
};

// The linear cost rows are sorted by. A server has one NIC (the locality
// model's). Power, where the scenario gives a profile ([platform.power]),
// is each server's idle watts plus its busy cores' at the predicted CPU
// utilisation; per_watt weighs it (0: power not counted).
struct PlanCosts {
  double per_server = 1.0;
  double per_core = 0.1;
  double per_client = 0.01;
  double per_nic = 0.0;
  double per_watt = 0.0;
  double idle_watts_per_server = 0.0;
  double busy_watts_per_core = 0.0;
};

struct PlanOptions {
  int split_grid_points = 17;   // splits screened per (servers, cores), ends included
  // Optimism of screening relative to the targets; must exceed the
  // approximation's error (measured worst case: 8-9%, tests/models/mva_test).
  double screen_margin = 0.15;
  // Verify with exact MVA (rows then meet the targets by the exact model).
  // Off, verification reuses the approximation: several times faster on
  // spaces of tens of servers, rows then good to its error (~8%).
  bool exact_verification = true;
  // The split a selector runs, when not the best one found on the grid:
  // a static selector's share (server-only 1, client-only 0) ...
  std::optional<double> fixed_split;
  // ... or an adaptive selector's rule, giving the split it settles at for
  // one configuration (servers, cores and clients set in the input). With
  // a rule, screening still uses the grid (optimistic: no split does better
  // than the best) and verification searches the client count at the
  // rule's split.
  std::function<StatusOr<double>(const LocalityInput&)> split_rule;
};

struct PlannedConfig {
  int servers = 0;
  int cores_per_server = 0;
  int clients = 0;
  double cost = 0;
  double watts = 0;               // all servers, at the predicted utilisation (0 without a power profile)
  LocalityPrediction prediction;  // exact, at the chosen split
};

struct PlanResult {
  std::vector<PlannedConfig> frontier;  // sorted by cost, then servers, cores, clients
  int64_t configurations_in_space = 0;  // servers x cores x clients
  int64_t configurations_screened = 0;  // (config, split) points given a throughput figure
  int64_t pairs_skipped_by_bound = 0;   // (servers, cores) pairs whose bound misses the target
  int64_t exact_verifications = 0;      // (servers, cores) pairs verified
  int64_t exact_sweeps = 0;             // MVA sweeps those took
  double screening_ms = 0;
  double elapsed_ms = 0;                // screening and verification
};

StatusOr<PlanResult> plan_capacity(const LocalityInput& base, const PlanSpace& space,
                                   const PlanTargets& targets, const PlanCosts& costs = {},
                                   const PlanOptions& options = {});

// a dominates b: no more of each resource and less of one.
bool dominates(const PlannedConfig& a, const PlannedConfig& b);

}  // namespace locus::models
