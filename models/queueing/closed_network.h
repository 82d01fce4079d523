// Closed queueing networks: the description shared by the exact MVA, the
// fast approximate MVA and the CTMC builder, and the per-population results.
//
// A closed network models a fixed population of clients, each with one
// operation outstanding: the operation visits queueing stations (a server's
// cores, its NIC engines) and delay stations (network round trips, client
// think time), then the client issues the next one. Stations that exist once
// per server machine are described once with `copies`: each copy is visited
// visits_per_copy times per operation, which is how uniformly spread load
// over S identical servers is expressed without S entries.
//
// Queueing stations serve first-come-first-served with exponential service
// (a single-server station may equally be read as processor sharing); that
// is what makes MVA exact for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace locus::models {

enum class StationKind : uint8_t {
  kDelay,  // infinite server: no waiting (network latency, think time)
  kQueue,  // `servers` identical servers sharing one FCFS queue
};

struct Station {
  std::string name;
  StationKind kind = StationKind::kQueue;
  int servers = 1;               // per copy; ignored for delay stations
  int copies = 1;                // identical copies visited symmetrically
  double visits_per_copy = 1.0;  // mean visits per operation to each copy
  double service_time_us = 0.0;  // mean per visit
  // Squared coefficient of variation of the service time (0 fixed, 1
  // exponential). MVA's means assume exponential service whatever this
  // says; it shapes only the waiting-time distribution behind percentiles.
  double service_scv = 1.0;

  double demand_us() const { return visits_per_copy * service_time_us; }
};

// The waiting time of one visit, as far as percentiles need it.
struct WaitMoments {
  double probability = 0;          // P(wait > 0)
  double mean_us = 0;
  double second_moment_us2 = 0;    // E[W^2]
};

struct ClosedNetwork {
  std::vector<Station> stations;

  // Non-negative times and visits, at least one server and copy, and some
  // positive demand somewhere (otherwise throughput is unbounded).
  Status validate() const;
};

// Results for every population 0..max_population() of one network, stored
// flat so the planner can sweep thousands of networks without allocating per
// population. Station figures are per copy.
class MvaSweep {
 public:
  MvaSweep() = default;
  // Holds population 0; capacity is reserved for expected_max_population.
  // approximate_tail: see set_tail_anchor().
  MvaSweep(const ClosedNetwork& network, int expected_max_population, bool approximate_tail = false);

  int max_population() const { return max_population_; }
  int station_count() const { return station_count_; }

  // Operations completed per microsecond by the whole population.
  double throughput_per_us(int n) const { return throughput_per_us_[n]; }
  // Time for one operation including every delay station: n / X(n).
  double cycle_time_us(int n) const;
  // Time one operation spends at one copy, summed over its visits there.
  double residence_us(int n, int k) const { return at(residence_us_, n, k); }
  double queue_length(int n, int k) const { return at(queue_length_, n, k); }
  // P(an operation arriving at a copy finds every server busy), from the
  // arrival theorem: what the population n - 1 leaves there.
  double wait_probability(int n, int k) const { return at(wait_probability_, n, k); }
  // Busy fraction of each server of one copy.
  double utilisation(int n, int k) const;
  // Mean time waiting before service, per visit.
  double mean_wait_per_visit_us(int n, int k) const { return at(wait_per_visit_us_, n, k); }
  // Moments of the wait of one visit at population n, from the queue
  // length J an arrival finds (the marginal at n - 1, arrival theorem): with
  // j >= c present it waits for a first departure (a residual service over
  // c) and j - c more departures, each S / c, their variance set by the
  // station's service_scv. O(n): the marginal's tail is rebuilt from the
  // throughput history rather than stored.
  WaitMoments wait_moments(int n, int k) const;

  // Writers for the solvers: append population max_population() + 1, then
  // fill its stations. The wait per visit defaults to residence / visits -
  // service time.
  void push_population(double throughput_per_us);
  void set_station(int n, int k, double residence_us, double queue_length,
                   double wait_probability, double wait_per_visit_us = -1);
  // The marginal's anchor at population n: p(c - 1 | n) for the exact
  // solver; with approximate_tail, p(0 | n) of a single-server stand-in of
  // demand D / c, whose tail then only shapes the wait given it waits. The
  // tail beyond follows as p(j | n) = X(n) D / c * p(j - 1 | n - 1).
  void set_tail_anchor(int n, int k, double probability) { at_mut(tail_anchor_, n, k) = probability; }

 private:
  double at(const std::vector<double>& v, int n, int k) const {
    return v[static_cast<size_t>(n) * station_count_ + k];
  }
  double& at_mut(std::vector<double>& v, int n, int k) {
    return v[static_cast<size_t>(n) * station_count_ + k];
  }

  std::vector<Station> stations_;
  int max_population_ = 0;
  int station_count_ = 0;
  std::vector<double> throughput_per_us_;
  std::vector<double> residence_us_;
  std::vector<double> queue_length_;
  std::vector<double> wait_probability_;
  std::vector<double> wait_per_visit_us_;
  std::vector<double> tail_anchor_;
  bool approximate_tail_ = false;
};

// Exact Mean Value Analysis, single class, for delay, single-server and
// multi-server stations. Multi-server stations use the load-dependent
// recursion on the marginal probabilities p(j | n), j < servers; p(0 | n) is
// obtained as p(0 | n - 1) X(n) / X'(n), where X' is the throughput of the
// network without that station, instead of by the textbook subtraction
// 1 - sum(...), which cancels catastrophically near saturation and makes
// the recursion unstable. Cost: one sweep per combination of remaining
// copies of multi-server stations, i.e. (copies + 1) sweeps of O(N (K + c))
// each for one replicated multi-server station.
StatusOr<MvaSweep> solve_mva_exact(const ClosedNetwork& network, int max_population);

// When an approximate sweep may stop early: once throughput reaches a target
// or the cycle time passes a bound (both only grow with the population),
// checked only at the populations check_from + i * check_every, so a sweep
// over a stepped client range stops at a population of that range.
struct SweepStop {
  double throughput_per_us = 0;  // 0: never stop on throughput
  double cycle_time_us = 0;      // 0: never stop on cycle time
  int check_from = 1;
  int check_every = 1;
};

// Approximate MVA after Seidmann et al.: a c-server station of demand D is
// replaced by a single server of demand D / c plus a delay of D (c - 1) / c.
// Exact for c = 1 and at both population extremes; in between, on the
// locality networks, within 8-9% of exact MVA on throughput and cycle time
// (worst near the knee, a few clients per core; mva_test measures it).
// O(N K), independent of c and of the number of copies. Wait probabilities
// at c-server stations use Sakasegawa's rho^(sqrt(2 (c + 1)) - 1) form of
// Erlang C (zero while fewer than c others are present), and the mean wait
// per visit is that probability times the single-server stand-in's wait
// given busy: Seidmann's own wait, (D / c) Q, overstates the waits of a
// many-server station by about rho / C(c, a), which would wreck tail
// estimates (the means and throughput keep Seidmann's figures).
// Input must validate.
MvaSweep solve_mva_seidmann(const ClosedNetwork& network, int max_population,
                            SweepStop stop = {});

// The exact answer by building and solving the CTMC of the network (copies
// expanded, routing random with the given visit ratios, exponential
// service). Only for small networks: states grow as C(N + K - 1, K - 1) and
// sparse LU fill-in with K (see ctmc.h), hence the default limit.
struct CtmcNetworkResult {
  double throughput_per_us = 0;
  std::vector<double> queue_length;      // per station (per copy)
  std::vector<double> wait_probability;  // per station (per copy), arrival-weighted
  std::vector<std::vector<double>> queue_length_distribution;  // per station (per copy)
};
StatusOr<CtmcNetworkResult> solve_closed_network_ctmc(const ClosedNetwork& network,
                                                      int population, int max_states = 20000);

}  // namespace locus::models
