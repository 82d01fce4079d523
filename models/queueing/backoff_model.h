// A model of Catfish's back-off selector: the long-run share of searches a
// client offloads (does client-side with RDMA READs) for given N, T and
// server utilisation.
//
// The selector (Catfish Algorithm 1, as issue 7 specifies it): every
// heartbeat interval the server reports its CPU utilisation; a client that
// sees it above T increments r_busy and offloads its next n requests, n
// drawn uniformly from [(r_busy - 1) N, r_busy N), replacing any count
// still pending; a heartbeat at or below T resets r_busy to 0 (the pending
// count still runs out). Missing heartbeats are ignored.
//
// Approximation: heartbeats report busy independently, each with
// probability b (a renewal model; it ignores that offloading lowers the next
// heartbeat). Then r_busy at a busy heartbeat is geometric,
// P(r_busy = j) = (1 - b) b^(j-1); the next busy heartbeat comes after a
// geometric number G of intervals; and the requests offloaded per busy
// heartbeat are min(n, k G) with k requests per client per interval, so
//   share = (b / k) E[min(n, k G)],
// summed in closed form over G. The error of that sum against a direct
// simulation of the algorithm is measured in tests/models; its error
// against the SimGrid runs (where b and utilisation are coupled) is what
// the cross-validation must report.
//
// b comes from the mean utilisation u as P(measured > T) with the measured
// heartbeat utilisation ~ Normal(u, noise). backoff_equilibrium() closes the
// loop: offloading a share f leaves the server at u = min(1, u0 (1 - f)),
// where u0 is its utilisation with nothing offloaded.
#pragma once

#include <cstdint>

#include "core/common/status.h"

namespace locus::models {

struct BackoffParams {
  int n = 8;                          // N, in requests (Catfish: 8)
  double threshold = 0.95;            // T, server CPU utilisation (Catfish: 95%)
  int requests_per_heartbeat = 100;   // k: one client's requests per heartbeat interval
  double utilisation_noise = 0.02;    // sd of one heartbeat's measured utilisation

  Status validate() const;
};

// P(a heartbeat reports busy) when the mean utilisation is u.
double heartbeat_busy_probability(const BackoffParams& params, double utilisation);

// Long-run share of requests offloaded when heartbeats are busy with
// probability b, independently.
double backoff_offload_share(const BackoffParams& params, double busy_probability);

// The same at a mean server utilisation (b from heartbeat_busy_probability).
double backoff_offload_share_at_utilisation(const BackoffParams& params, double utilisation);

struct BackoffEquilibrium {
  double offload_share = 0;
  double server_utilisation = 0;
  double busy_probability = 0;
};
// The fixed point share = F(b(min(1, u0 (1 - share)))); unique because the
// right side falls as the share grows.
BackoffEquilibrium backoff_equilibrium(const BackoffParams& params, double offered_utilisation);

// Direct simulation of the selector with independent busy heartbeats, for
// measuring the closed form's error; deterministic for a seed.
double simulate_backoff_offload_share(const BackoffParams& params, double busy_probability,
                                      int64_t intervals, uint64_t seed);

}  // namespace locus::models
