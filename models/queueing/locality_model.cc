// The locality model's network and how a prediction is read off a sweep
// (see locality_model.h); the split searches are in locality_split.cc.
#include "models/queueing/locality_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/common/check.h"
#include "models/queueing/latency_tail.h"

namespace locus::models {
namespace {

constexpr double kUsPerS = 1e6;
// Correlation of the waits of one request's successive visits to one NIC
// engine (its m READs, its two messages); see latency_tail.h.
constexpr double kSameNicCorrelation = 1.0;

double read_service_us(const LocalityInput& in) { return kUsPerS / in.platform.nic_read_rate_ops_per_s; }
double verb_service_us(const LocalityInput& in) { return kUsPerS / in.platform.nic_verb_rate_msgs_per_s; }

}  // namespace

Status LocalityInput::validate() const {
  const LocalityPlatform& p = platform;
  const LocalityWorkload& w = workload;
  if (p.servers < 1) return invalid_argument("platform.servers must be >= 1");
  if (p.cores_per_server < 1) return invalid_argument("platform.cores_per_server must be >= 1");
  if (!(p.server_op_service_time_us > 0)) {
    return invalid_argument("platform.server_op_service_time_us must be > 0");
  }
  if (!(p.nic_read_rate_ops_per_s > 0)) return invalid_argument("platform.nic_read_rate_ops_per_s must be > 0");
  if (!(p.nic_verb_rate_msgs_per_s > 0)) {
    return invalid_argument("platform.nic_verb_rate_msgs_per_s must be > 0");
  }
  const double fr = p.nic_read_share_with_verbs, fv = p.nic_verb_share_with_reads;
  if (!(fr > 0 && fr <= 1 && fv > 0 && fv <= 1)) {
    return invalid_argument("NIC independence shares must lie in (0, 1]");
  }
  if (fr + fv < 1) {
    return invalid_argument("NIC independence shares must sum to >= 1 (1 means READs and verbs fully share the NIC)");
  }
  if (w.clients < 1) return invalid_argument("workload.clients must be >= 1");
  if (!(w.think_time_us >= 0)) return invalid_argument("workload.think_time_us must be >= 0");
  if (!(w.network_rtt_us >= 0)) return invalid_argument("workload.network_rtt_us must be >= 0");
  if (!(w.reads_per_client_op > 0)) return invalid_argument("workload.reads_per_client_op must be > 0");
  if (!(w.round_trips_per_client_op >= 0 && w.round_trips_per_client_op <= w.reads_per_client_op)) {
    return invalid_argument(
        "workload.round_trips_per_client_op must lie in [0, reads_per_client_op] (0: one per READ)");
  }
  if (!(w.messages_per_server_op >= 0)) {
    return invalid_argument("workload.messages_per_server_op must be >= 0");
  }
  if (!(w.client_cpu_us_per_client_op >= 0)) {
    return invalid_argument("workload.client_cpu_us_per_client_op must be >= 0");
  }
  return Status::ok();
}

double LocalityInput::client_round_trips() const {
  return workload.round_trips_per_client_op > 0 ? workload.round_trips_per_client_op : workload.reads_per_client_op;
}

double nic_slowdown(const LocalityInput& in, double p) {
  const double read_demand = (1 - p) * in.workload.reads_per_client_op * read_service_us(in);
  const double verb_demand = p * in.workload.messages_per_server_op * verb_service_us(in);
  const double own_limit = std::max(read_demand, verb_demand);
  if (own_limit <= 0) return 1.0;
  const double joint_limit =
      (read_demand + verb_demand) / (in.platform.nic_read_share_with_verbs + in.platform.nic_verb_share_with_reads);
  return std::max(1.0, joint_limit / own_limit);
}

ClosedNetwork locality_network(const LocalityInput& in, double p) {
  LOCUS_CHECK(p >= 0 && p <= 1);
  const LocalityPlatform& pl = in.platform;
  const LocalityWorkload& w = in.workload;
  const double m = w.reads_per_client_op;
  const double r = in.client_round_trips();
  const double s = pl.servers;
  const double phi = nic_slowdown(in, p);
  ClosedNetwork net;
  net.stations.resize(kLocalityStationCount);
  net.stations[kNetworkDelay] = {"network", StationKind::kDelay, 1, 1, p + (1 - p) * r, w.network_rtt_us};
  net.stations[kClientCpuDelay] = {"client cpu", StationKind::kDelay, 1, 1, 1 - p, w.client_cpu_us_per_client_op};
  net.stations[kThinkDelay] = {"think", StationKind::kDelay, 1, 1, 1.0, w.think_time_us};
  net.stations[kServerCpu] = {"server cpu", StationKind::kQueue,         pl.cores_per_server, pl.servers,
                              p / s,        pl.server_op_service_time_us};
  net.stations[kNicRead] = {"nic read", StationKind::kQueue, 1, pl.servers, (1 - p) * m / s, phi * read_service_us(in)};
  net.stations[kNicVerbs] = {
      "nic verbs", StationKind::kQueue, 1, pl.servers, p * w.messages_per_server_op / s, phi * verb_service_us(in)};
  for (int k : {kServerCpu, kNicRead, kNicVerbs}) net.stations[k].service_scv = pl.service_scv;
  return net;
}

LocalityPrediction prediction_from_sweep(const LocalityInput& in, double p, const MvaSweep& sweep, int clients,
                                         bool with_p99) {
  LOCUS_CHECK(clients >= 1 && clients <= sweep.max_population());
  const LocalityPlatform& pl = in.platform;
  const LocalityWorkload& w = in.workload;
  const double m = w.reads_per_client_op;
  const double msgs = w.messages_per_server_op;
  const double phi = nic_slowdown(in, p);
  const double read_us = phi * read_service_us(in);
  const double verb_us = phi * verb_service_us(in);
  const double x_per_us = sweep.throughput_per_us(clients);

  LocalityPrediction out;
  out.server_side_share = p;
  out.nic_slowdown = phi;
  out.throughput_ops_per_s = x_per_us * kUsPerS;
  out.mean_latency_us = sweep.cycle_time_us(clients) - w.think_time_us;

  const double cpu_wait = sweep.mean_wait_per_visit_us(clients, kServerCpu);
  const double read_wait = sweep.mean_wait_per_visit_us(clients, kNicRead);
  const double verb_wait = sweep.mean_wait_per_visit_us(clients, kNicVerbs);
  const double server_fixed = w.network_rtt_us + pl.server_op_service_time_us + msgs * verb_us;
  const double client_fixed = in.client_round_trips() * w.network_rtt_us + m * read_us + w.client_cpu_us_per_client_op;
  out.server_side_latency_us = server_fixed + cpu_wait + msgs * verb_wait;
  out.client_side_latency_us = client_fixed + m * read_wait;

  out.cpu_utilisation = sweep.utilisation(clients, kServerCpu);
  out.nic_read_utilisation = x_per_us * (1 - p) * m * read_service_us(in) / pl.servers;
  out.nic_verb_utilisation = x_per_us * p * msgs * verb_service_us(in) / pl.servers;
  // Busiest station, counting the NIC engines at their slowed-down rate.
  const double read_busy = phi * out.nic_read_utilisation;
  const double verb_busy = phi * out.nic_verb_utilisation;
  const double busiest = std::max({out.cpu_utilisation, read_busy, verb_busy});
  out.bottleneck = busiest < 0.5                    ? "clients"
                   : busiest == out.cpu_utilisation ? "server cpu"
                   : busiest == read_busy           ? "nic read"
                                                    : "nic verbs";

  if (with_p99) {
    auto component = [&](int station, double visits, double correlation) {
      const WaitMoments w = sweep.wait_moments(clients, station);
      return WaitComponent{visits, w.mean_us, w.probability, w.second_moment_us2, correlation};
    };
    const std::array<WaitComponent, 2> server_waits = {component(kServerCpu, 1.0, 0.0),
                                                       component(kNicVerbs, msgs, kSameNicCorrelation)};
    const std::array<WaitComponent, 1> client_waits = {component(kNicRead, m, kSameNicCorrelation)};
    const std::array<PathLatency, 2> paths = {PathLatency(server_fixed, server_waits),
                                              PathLatency(client_fixed, client_waits)};
    const std::array<double, 2> weights = {p, 1 - p};
    out.p99_latency_us = mixture_quantile_us(paths, weights, 0.99);
  }
  return out;
}

StatusOr<LocalityPrediction> predict_split(const LocalityInput& in, double p) {
  LOCUS_RETURN_IF_ERROR(in.validate());
  if (!(p >= 0 && p <= 1)) return invalid_argument("server-side share must lie in [0, 1]");
  LOCUS_ASSIGN_OR_RETURN(MvaSweep sweep, solve_mva_exact(locality_network(in, p), in.workload.clients));
  return prediction_from_sweep(in, p, sweep, in.workload.clients, true);
}

double saturation_throughput_ops_per_s(const LocalityInput& in, double p) {
  // The busiest station's demand per server bounds throughput; computed
  // directly rather than through locality_network() because the planner
  // asks for it hundreds of times per configuration.
  const double phi = nic_slowdown(in, p);
  const double servers = in.platform.servers;
  const double cpu_us = p * in.platform.server_op_service_time_us / (servers * in.platform.cores_per_server);
  const double read_us = phi * (1 - p) * in.workload.reads_per_client_op * read_service_us(in) / servers;
  const double verb_us = phi * p * in.workload.messages_per_server_op * verb_service_us(in) / servers;
  return kUsPerS / std::max({cpu_us, read_us, verb_us});
}

}  // namespace locus::models
