// Exact single-class MVA with multi-server stations (see closed_network.h).
//
// For a c-server copy k of per-copy demand d the residence time is
//   R_k(n) = d / c * (1 + Q_k(n-1) + sum_{j=0}^{c-2} (c-1-j) p_k(j | n-1))
// with the marginal probabilities p_k(j | n) = d X(n) / j * p_k(j-1 | n-1)
// for 1 <= j < c. The usual closing step p_k(0 | n) = 1 - (X d + ...)/c
// subtracts nearly equal numbers once the station saturates, and the error
// is then multiplied by up to c^j / j! on the way up the recursion. Instead
// p_k(0 | n) = G'(n) / G(n) is carried as a product of throughput ratios,
// p_k(0 | n) = p_k(0 | n-1) * X(n) / X'(n), where X' is the throughput of the
// same network with that copy removed: every quantity then keeps a small
// relative error. X' needs its own sweep, with its own complements for the
// multi-server copies it still has; sweeps are memoised by how many copies
// of each multi-server station remain.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/common/check.h"
#include "models/queueing/closed_network.h"

namespace locus::models {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxSweeps = 1e5;  // bound on memoised network variants

bool is_multi_server(const Station& s) {
  return s.kind == StationKind::kQueue && s.servers > 1 && s.demand_us() > 0;
}

class ExactSolver {
 public:
  ExactSolver(const ClosedNetwork& network, int max_population)
      : stations_(network.stations), max_population_(max_population) {}

  // Throughput for n = 0..N of the variant with these copies per station.
  const std::vector<double>& throughput(const std::vector<int>& copies) {
    auto it = memo_.find(copies);
    if (it != memo_.end()) return it->second;
    std::vector<double> x;
    sweep(copies, &x, nullptr);
    return memo_.emplace(copies, std::move(x)).first->second;
  }

  void sweep(const std::vector<int>& copies, std::vector<double>* throughput_out,
             MvaSweep* record);

 private:
  std::vector<Station> stations_;
  int max_population_;
  std::map<std::vector<int>, std::vector<double>> memo_;
};

void ExactSolver::sweep(const std::vector<int>& copies, std::vector<double>* throughput_out,
                        MvaSweep* record) {
  const int k_count = static_cast<int>(stations_.size());
  const int n_max = max_population_;
  std::vector<double>& x = *throughput_out;
  x.assign(n_max + 1, 0.0);

  double total_demand_us = 0;
  for (int k = 0; k < k_count; ++k) total_demand_us += copies[k] * stations_[k].demand_us();
  if (total_demand_us <= 0) {
    // Nothing left to hold a customer up: the complement of the last
    // station. Its throughput is unbounded, so p(0 | n >= 1) = 0 upstream.
    for (int n = 1; n <= n_max; ++n) x[n] = kInf;
    return;
  }

  // Per multi-server station: the marginal p(j | n - 1), j < c, and the
  // complement's throughput sequence.
  std::vector<std::vector<double>> marginal(k_count);
  std::vector<const std::vector<double>*> complement(k_count, nullptr);
  for (int k = 0; k < k_count; ++k) {
    if (copies[k] == 0 || !is_multi_server(stations_[k])) continue;
    marginal[k].assign(stations_[k].servers, 0.0);
    marginal[k][0] = 1.0;
    std::vector<int> fewer = copies;
    --fewer[k];
    complement[k] = &throughput(fewer);
  }

  std::vector<double> queue(k_count, 0.0);     // per copy, at n - 1
  std::vector<double> residence(k_count, 0.0);  // per copy, at n
  for (int n = 1; n <= n_max; ++n) {
    double cycle_us = 0;
    for (int k = 0; k < k_count; ++k) {
      const Station& s = stations_[k];
      const double d = s.demand_us();
      if (copies[k] == 0 || d <= 0) {
        residence[k] = 0;
        continue;
      }
      if (s.kind == StationKind::kDelay) {
        residence[k] = d;
      } else if (s.servers == 1) {
        residence[k] = d * (1.0 + queue[k]);
      } else {
        const int c = s.servers;
        double idle_servers_seen = 0;  // E[(c - 1 - J)^+] for J ~ p(. | n-1)
        for (int j = 0; j <= c - 2; ++j) idle_servers_seen += (c - 1 - j) * marginal[k][j];
        residence[k] = d / c * (1.0 + queue[k] + idle_servers_seen);
      }
      cycle_us += copies[k] * residence[k];
    }
    const double xn = n / cycle_us;
    x[n] = xn;
    if (record) record->push_population(xn);

    for (int k = 0; k < k_count; ++k) {
      const Station& s = stations_[k];
      const double d = s.demand_us();
      double wait_probability = 0;
      if (copies[k] > 0 && d > 0 && s.kind == StationKind::kQueue) {
        if (s.servers == 1) {
          wait_probability = x[n - 1] * d;  // utilisation left by n - 1
        } else {
          double not_all_busy = 0;
          for (double p : marginal[k]) not_all_busy += p;
          wait_probability = not_all_busy >= 1 ? 0.0 : 1.0 - not_all_busy;
        }
      }
      if (record) record->set_station(n, k, residence[k], xn * residence[k], wait_probability);
      queue[k] = xn * residence[k];
    }

    // Advance the marginals from n - 1 to n, top down so each p(j-1 | n-1)
    // is read before it is overwritten.
    for (int k = 0; k < k_count; ++k) {
      if (marginal[k].empty()) continue;
      std::vector<double>& p = marginal[k];
      const double d = stations_[k].demand_us();
      const double p0_prev = p[0];
      for (int j = static_cast<int>(p.size()) - 1; j >= 1; --j) p[j] = d * xn / j * p[j - 1];
      const double xc = (*complement[k])[n];
      p[0] = std::isinf(xc) ? 0.0 : p0_prev * xn / xc;
    }
    if (record) {
      for (int k = 0; k < k_count; ++k) {
        const Station& s = stations_[k];
        if (copies[k] == 0 || s.kind != StationKind::kQueue || s.demand_us() <= 0) continue;
        record->set_tail_anchor(
            n, k, marginal[k].empty() ? std::max(0.0, 1.0 - xn * s.demand_us()) : marginal[k].back());
      }
    }
  }
}

}  // namespace

StatusOr<MvaSweep> solve_mva_exact(const ClosedNetwork& network, int max_population) {
  LOCUS_RETURN_IF_ERROR(network.validate());
  if (max_population < 0) return invalid_argument("population must be >= 0");
  std::vector<int> copies;
  double sweeps = 1;
  for (const Station& s : network.stations) {
    copies.push_back(s.copies);
    if (is_multi_server(s)) sweeps *= s.copies + 1;
  }
  if (sweeps > kMaxSweeps) {
    return invalid_argument("exact MVA would need " + std::to_string(sweeps) +
                            " sweeps (multi-server stations x copies); use the approximate MVA");
  }
  ExactSolver solver(network, max_population);
  MvaSweep sweep(network, max_population);
  std::vector<double> throughput;
  solver.sweep(copies, &throughput, &sweep);
  return sweep;
}

}  // namespace locus::models
