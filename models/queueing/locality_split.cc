// Choosing the split: the balanced split of the saturation bound, the
// throughput-optimal p* for a finite population, and the split where Cell's
// JSQ rule is indifferent (see locality_model.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/common/check.h"
#include "models/queueing/locality_model.h"

namespace locus::models {
namespace {

constexpr double kGolden = 0.6180339887498949;

// Maximises a unimodal f on [lo, hi] to within tolerance; returns the argmax.
template <typename F>
double golden_max(F&& f, double lo, double hi, double tolerance) {
  double a = lo, b = hi;
  double x1 = b - kGolden * (b - a), x2 = a + kGolden * (b - a);
  double f1 = f(x1), f2 = f(x2);
  while (b - a > tolerance) {
    if (f1 < f2) {
      a = x1;
      x1 = x2, f1 = f2;
      x2 = a + kGolden * (b - a), f2 = f(x2);
    } else {
      b = x2;
      x2 = x1, f2 = f1;
      x1 = b - kGolden * (b - a), f1 = f(x1);
    }
  }
  return f1 >= f2 ? x1 : x2;
}

// Grid then golden section between the best grid point's neighbours, so a
// maximum at an end of [0, 1] is found exactly and a flat region does not
// send the search astray.
template <typename F>
double grid_then_golden(F&& f, int grid_points, double tolerance) {
  int best = 0;
  double best_value = -INFINITY;
  for (int i = 0; i < grid_points; ++i) {
    const double v = f(static_cast<double>(i) / (grid_points - 1));
    if (v > best_value) best_value = v, best = i;
  }
  const double step = 1.0 / (grid_points - 1);
  const double lo = std::max(0.0, (best - 1) * step), hi = std::min(1.0, (best + 1) * step);
  const double refined = golden_max(f, lo, hi, tolerance);
  const double grid_p = best * step;
  return f(refined) > best_value ? refined : grid_p;
}

}  // namespace

double balanced_split(const LocalityInput& in) {
  LOCUS_CHECK(in.validate().is_ok());
  return grid_then_golden([&](double p) { return saturation_throughput_ops_per_s(in, p); }, 201, 1e-9);
}

StatusOr<double> optimal_split(const LocalityInput& in) {
  LOCUS_RETURN_IF_ERROR(in.validate());
  Status failure;
  auto throughput = [&](double p) {
    StatusOr<MvaSweep> sweep = solve_locality(in, p, in.workload.clients);
    if (!sweep.is_ok()) {
      failure = sweep.status();
      return -std::numeric_limits<double>::infinity();
    }
    return sweep->throughput_per_us(in.workload.clients);
  };
  const double p = grid_then_golden(throughput, 21, 1e-4);
  if (!failure.is_ok()) return failure;
  return p;
}

StatusOr<double> jsq_equilibrium_split(const LocalityInput& in) {
  LOCUS_RETURN_IF_ERROR(in.validate());
  const double m = in.workload.reads_per_client_op;
  const double rtt = in.workload.network_rtt_us;
  // Positive when a client following Cell's rule (1) would pick client-side.
  auto preference = [&](double p) -> StatusOr<double> {
    LOCUS_ASSIGN_OR_RETURN(LocalityPrediction pred, predict_split(in, p));
    const double read_us = pred.nic_slowdown * 1e6 / in.platform.nic_read_rate_ops_per_s;
    const double unloaded_read_us = rtt + read_us;  // the rule's RTT
    // l_r: one READ's latency, its round trip counted once per READ
    // whether or not the traversal issues READs together.
    const double read_latency_us =
        (pred.client_side_latency_us - in.workload.client_cpu_us_per_client_op - in.client_round_trips() * rtt) / m +
        rtt;
    return (pred.server_side_latency_us - unloaded_read_us) - m * (read_latency_us - unloaded_read_us);
  };
  LOCUS_ASSIGN_OR_RETURN(double at_zero, preference(0.0));
  if (at_zero >= 0) return 0.0;
  LOCUS_ASSIGN_OR_RETURN(double at_one, preference(1.0));
  if (at_one <= 0) return 1.0;
  double lo = 0, hi = 1;
  while (hi - lo > 1e-5) {
    const double mid = 0.5 * (lo + hi);
    LOCUS_ASSIGN_OR_RETURN(double g, preference(mid));
    (g < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

StatusOr<LocalityReport> predict_policies(const LocalityInput& in) {
  LOCUS_RETURN_IF_ERROR(in.validate());
  LocalityReport r;
  LOCUS_ASSIGN_OR_RETURN(r.server_only, predict_split(in, 1.0));
  LOCUS_ASSIGN_OR_RETURN(r.client_only, predict_split(in, 0.0));
  LOCUS_ASSIGN_OR_RETURN(double p_star, optimal_split(in));
  LOCUS_ASSIGN_OR_RETURN(r.optimal, predict_split(in, p_star));
  LOCUS_ASSIGN_OR_RETURN(double p_jsq, jsq_equilibrium_split(in));
  LOCUS_ASSIGN_OR_RETURN(r.jsq_equilibrium, predict_split(in, p_jsq));
  r.balanced_split = balanced_split(in);
  r.saturation_throughput_ops_per_s = saturation_throughput_ops_per_s(in, r.balanced_split);
  return r;
}

}  // namespace locus::models
