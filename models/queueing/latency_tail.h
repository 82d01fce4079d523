// Latency percentiles from mean-value results: the p99 estimate.
//
// MVA yields means, but capacity targets are stated as p99. The method, per
// request path (e.g. "server-side search", "client-side traversal"):
//   latency = fixed part + total waiting time,
// where the fixed part (network delays and service times) is taken as
// deterministic, as the calibration costs are, and the waiting time is the
// sum of the waits at the queueing stations the path visits. Each visit's
// wait is described by P(wait), E[W] and E[W^2]; closed-network solvers take
// them from the queue length an arrival finds (MvaSweep::wait_moments), and
// an open M/M/c queue gives them in closed form. The path's total wait has
// an atom at zero, of mass prod (1 - pi)^visits for independent visits, and
// given it is positive is approximated by a gamma distribution matching its
// first two moments. A single exponential wait comes back exactly (the
// M/M/c tail); a sum of saturated visits comes out Erlang-like.
// Repeated visits of one request to the same station (m READs at one NIC)
// see similar queues, so their waits may be given a correlation, which adds
// variance and lowers the chance that none of them waits.
// A mix of paths (a split policy) is the probability mixture of the paths.
#pragma once

#include <span>

namespace locus::models {

// Waiting at one station along a path.
struct WaitComponent {
  double visits = 0;            // visits along the path (may be fractional)
  double mean_wait_us = 0;      // mean wait per visit, waiting or not
  double wait_probability = 0;  // P(a visit waits at all)
  // E[W^2] per visit; 0 means "exponential given it waits": 2 E[W]^2 / pi.
  double wait_second_moment_us2 = 0;
  double visit_correlation = 0;  // between the waits of this path's visits here
};

class PathLatency {
 public:
  PathLatency() = default;
  PathLatency(double fixed_us, std::span<const WaitComponent> waits);

  double fixed_us() const { return fixed_us_; }
  double mean_us() const { return fixed_us_ + mean_wait_us_; }
  double wait_probability() const { return 1.0 - no_wait_probability_; }
  // P(latency > t_us).
  double tail(double t_us) const;
  // The q-quantile of latency, 0 < q < 1.
  double quantile_us(double q) const;

 private:
  double fixed_us_ = 0;
  double mean_wait_us_ = 0;
  double no_wait_probability_ = 1;
  double gamma_shape_ = 1;      // of the wait given it is positive
  double gamma_scale_us_ = 0;
};

// The q-quantile of a mixture: path i taken with probability weights[i].
double mixture_quantile_us(std::span<const PathLatency> paths, std::span<const double> weights,
                           double q);

}  // namespace locus::models
