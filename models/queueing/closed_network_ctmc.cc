// The exact CTMC of a small closed network, the referee for MVA in the tests
// and an "exact answer" mode for tiny models.
//
// Copies are expanded into separate stations. Routing is random with the
// visit ratios as stationary routing probabilities: after any service the
// customer joins station k with probability V_k / sum(V). Product-form
// results depend only on demands, so this realises the same network as any
// other routing with those visit ratios. States are the placements of the
// population over the stations, indexed through an ordered map.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/common/check.h"
#include "models/queueing/closed_network.h"
#include "models/queueing/ctmc.h"

namespace locus::models {
namespace {

struct Node {
  int station;             // index in the network's station list
  bool delay;
  int servers;
  double service_rate_per_us;
  double routing_probability;
};

void enumerate(int node, int remaining, std::vector<int>& state,
               std::vector<std::vector<int>>& out) {
  if (node + 1 == static_cast<int>(state.size())) {
    state[node] = remaining;
    out.push_back(state);
    return;
  }
  for (int j = remaining; j >= 0; --j) {
    state[node] = j;
    enumerate(node + 1, remaining - j, state, out);
  }
}

double binomial(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

}  // namespace

StatusOr<CtmcNetworkResult> solve_closed_network_ctmc(const ClosedNetwork& network,
                                                      int population, int max_states) {
  LOCUS_RETURN_IF_ERROR(network.validate());
  if (population < 1) return invalid_argument("CTMC population must be >= 1");

  // Stations that hold customers for a positive time; instantaneous visits
  // change nothing and are dropped.
  std::vector<Node> nodes;
  double total_visits = 0;
  for (int k = 0; k < static_cast<int>(network.stations.size()); ++k) {
    const Station& s = network.stations[k];
    if (s.demand_us() <= 0) continue;
    for (int c = 0; c < s.copies; ++c) {
      nodes.push_back({k, s.kind == StationKind::kDelay, s.servers, 1.0 / s.service_time_us,
                       s.visits_per_copy});
      total_visits += s.visits_per_copy;
    }
  }
  for (Node& node : nodes) node.routing_probability /= total_visits;
  const int m = static_cast<int>(nodes.size());
  const double state_count = binomial(population + m - 1, m - 1);
  if (state_count > max_states) {
    return invalid_argument("CTMC would have " + std::to_string(state_count) +
                            " states, above the limit of " + std::to_string(max_states));
  }

  std::vector<std::vector<int>> states;
  std::vector<int> scratch(m, 0);
  enumerate(0, population, scratch, states);
  std::map<std::vector<int>, int> index;
  for (int i = 0; i < static_cast<int>(states.size()); ++i) index.emplace(states[i], i);

  auto departure_rate = [&](const std::vector<int>& s, int i) {
    const Node& node = nodes[i];
    const int busy = node.delay ? s[i] : std::min(s[i], node.servers);
    return busy * node.service_rate_per_us;
  };

  Ctmc chain(static_cast<int>(states.size()));
  for (int from = 0; from < static_cast<int>(states.size()); ++from) {
    std::vector<int> s = states[from];
    for (int i = 0; i < m; ++i) {
      if (s[i] == 0) continue;
      const double rate = departure_rate(s, i);
      for (int j = 0; j < m; ++j) {
        if (j == i) continue;
        --s[i];
        ++s[j];
        chain.add_rate(from, index.at(s), rate * nodes[j].routing_probability);
        ++s[i];
        --s[j];
      }
    }
  }
  LOCUS_ASSIGN_OR_RETURN(Eigen::VectorXd pi, chain.stationary());

  // Figures per station of the network, averaged over its copies.
  const int k_count = static_cast<int>(network.stations.size());
  CtmcNetworkResult result;
  result.queue_length.assign(k_count, 0.0);
  result.wait_probability.assign(k_count, 0.0);
  result.queue_length_distribution.assign(k_count, std::vector<double>(population + 1, 0.0));
  std::vector<double> arrivals(k_count, 0.0), arrivals_waiting(k_count, 0.0);
  double departures = 0;
  for (int st = 0; st < static_cast<int>(states.size()); ++st) {
    const std::vector<int>& s = states[st];
    for (int i = 0; i < m; ++i) {
      const Node& node = nodes[i];
      const double copies = network.stations[node.station].copies;
      result.queue_length[node.station] += pi(st) * s[i] / copies;
      result.queue_length_distribution[node.station][s[i]] += pi(st) / copies;
      if (s[i] == 0) continue;
      const double rate = pi(st) * departure_rate(s, i);
      departures += rate;
      // The departing customer, in transit, sees the others where they are
      // (including the station it left, should it rejoin that one).
      for (int j = 0; j < m; ++j) {
        const int others_at_j = s[j] - (j == i ? 1 : 0);
        const double flow = rate * nodes[j].routing_probability;
        arrivals[nodes[j].station] += flow;
        if (!nodes[j].delay && others_at_j >= nodes[j].servers) arrivals_waiting[nodes[j].station] += flow;
      }
    }
  }
  result.throughput_per_us = departures / total_visits;
  for (int k = 0; k < k_count; ++k) {
    if (arrivals[k] > 0) result.wait_probability[k] = arrivals_waiting[k] / arrivals[k];
  }
  return result;
}

}  // namespace locus::models
