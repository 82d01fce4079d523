// locus_plan_bench: how fast the capacity planner decides a space, printed,
// never asserted (timing targets live in benchmarks, not tests). The issue
// asks for thousands of configurations in under a second. Each target is
// planned twice: verified with exact MVA (the default) and with the
// approximation only.
//
// Usage: locus_plan_bench [max_servers] [max_cores] [max_clients]
#include <cstdio>
#include <cstdlib>

#include "models/queueing/planner.h"

using namespace locus::models;

int main(int argc, char** argv) {
  const int max_servers = argc > 1 ? std::atoi(argv[1]) : 16;
  const int max_cores = argc > 2 ? std::atoi(argv[2]) : 16;
  const int max_clients = argc > 3 ? std::atoi(argv[3]) : 1024;

  // Cell-like platform (calibration.md): 6.3 us per server-side search,
  // 1.44 M READs/s, 750 K two-way verbs/s, 5 READs per client-side search.
  LocalityInput base;
  base.workload.network_rtt_us = 3.0;
  PlanSpace space;
  space.servers = {1, max_servers, 1};
  space.cores_per_server = {1, max_cores, 1};
  space.clients = {1, max_clients, 1};

  std::printf("%-10s %-9s %10s %10s %8s %7s %9s %10s %11s\n", "target", "p99 (us)", "space",
              "screened", "skipped", "verified", "frontier", "exact ms", "approx ms");
  const double targets_ops[] = {0.5e6, 2e6, 5e6, 10e6};
  const double p99_us[] = {60, 100, 200};
  for (double ops : targets_ops) {
    for (double p99 : p99_us) {
      const auto result = plan_capacity(base, space, {ops, p99});
      PlanOptions approximate;
      approximate.exact_verification = false;
      const auto fast = plan_capacity(base, space, {ops, p99}, {}, approximate);
      if (!result.is_ok() || !fast.is_ok()) {
        std::fprintf(stderr, "plan failed: %s\n", result.status().message().c_str());
        return 1;
      }
      std::printf("%-10.3g %-9.0f %10lld %10lld %8lld %7lld %9zu %10.1f %11.1f\n", ops, p99,
                  static_cast<long long>(result->configurations_in_space),
                  static_cast<long long>(result->configurations_screened),
                  static_cast<long long>(result->pairs_skipped_by_bound),
                  static_cast<long long>(result->exact_verifications), result->frontier.size(),
                  result->elapsed_ms, fast->elapsed_ms);
    }
  }

  // One frontier in full, as `locus plan` will print it.
  const auto result = plan_capacity(base, space, {2e6, 100});
  std::printf("\nfrontier for 2 M ops/s, p99 <= 100 us:\n");
  std::printf("%7s %5s %7s %7s %10s %9s %9s %6s %s\n", "servers", "cores", "clients", "cost",
              "ops/s", "mean us", "p99 us", "p*", "bottleneck");
  for (const PlannedConfig& c : result->frontier) {
    std::printf("%7d %5d %7d %7.2f %10.4g %9.1f %9.1f %6.3f %s\n", c.servers, c.cores_per_server,
                c.clients, c.cost, c.prediction.throughput_ops_per_s, c.prediction.mean_latency_us,
                c.prediction.p99_latency_us, c.prediction.server_side_share,
                c.prediction.bottleneck.c_str());
  }
  return 0;
}
