// The locality model's network and how a prediction is read off a sweep
// (see locality_model.h); the split searches are in locality_split.cc.
#include "models/queueing/locality_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

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

// READs of the mean operation at split p, both paths.
double reads_per_op(const LocalityInput& in, double p) {
  return (1 - p) * in.workload.reads_per_client_op + p * in.workload.reads_per_server_op;
}

}  // namespace

Status LocalityInput::validate() const {
  const LocalityPlatform& p = platform;
  const LocalityWorkload& w = workload;
  if (p.servers < 1) return invalid_argument("platform.servers must be >= 1");
  if (p.cores_per_server < 1) return invalid_argument("platform.cores_per_server must be >= 1");
  if (!(p.link_us_per_read >= 0)) return invalid_argument("platform.link_us_per_read must be >= 0");
  if (!(p.link_us_per_rpc >= 0)) return invalid_argument("platform.link_us_per_rpc must be >= 0");
  if (p.client_hosts < 0) return invalid_argument("platform.client_hosts must be >= 0");
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
  if (!(w.reads_per_server_op >= 0)) return invalid_argument("workload.reads_per_server_op must be >= 0");
  if (!(w.messages_per_server_op >= 0)) {
    return invalid_argument("workload.messages_per_server_op must be >= 0");
  }
  if (!(w.client_cpu_us_per_client_op >= 0)) {
    return invalid_argument("workload.client_cpu_us_per_client_op must be >= 0");
  }
  for (const auto& [name, v] : {std::pair{"work", &shares.work}, std::pair{"read", &shares.read}}) {
    if (v->empty()) continue;
    if (v->size() != static_cast<size_t>(p.servers)) {
      return invalid_argument(std::string("server shares: ") + std::to_string(v->size()) + " " + name +
                              " shares for platform.servers = " + std::to_string(p.servers));
    }
    double sum = 0;
    for (double x : *v) {
      if (!(x >= 0)) return invalid_argument(std::string("server shares: a negative ") + name + " share");
      sum += x;
    }
    if (std::abs(sum - 1) > 1e-6) {
      return invalid_argument(std::string("server shares: the ") + name + " shares sum to " + std::to_string(sum) +
                              ", not 1");
    }
  }
  return Status::ok();
}

// The server's outgoing link serves READ responses behind its READ engine:
// when it is the faster of the two, the engine's fixed service spaces the
// responses wider than the link needs and nothing queues there, so it
// stays a delay (its time is in the fixed latency); product form would
// queue there. When it is as slow or slower (a line-rate NIC curve), it is
// a station.
double server_link_station_us(const LocalityInput& in, double phi) {
  return in.platform.link_us_per_read >= phi * read_service_us(in) ? in.platform.link_us_per_read : 0.0;
}

int stations_per_server_class(const LocalityInput& in) {
  return in.platform.link_us_per_read > 0 || in.platform.link_us_per_rpc > 0 ? 4 : 3;
}

namespace {
// A link station's visits (READ responses and RPC responses) and mean
// service per visit, given each kind's visits and service.
std::pair<double, double> link_visits(double reads, double read_us, double rpcs, double rpc_us) {
  const double visits = reads + rpcs;
  return {visits, visits > 0 ? (reads * read_us + rpcs * rpc_us) / visits : 0.0};
}
}  // namespace

std::vector<ServerClass> server_classes(const LocalityInput& in) {
  const int n = in.platform.servers;
  const double even = 1.0 / n;
  if (in.shares.work.empty() && in.shares.read.empty()) return {{n, even, even}};
  std::vector<ServerClass> out;
  for (int i = 0; i < n; ++i) {
    const double work = in.shares.work.empty() ? even : in.shares.work[i];
    const double read = in.shares.read.empty() ? even : in.shares.read[i];
    auto same = std::find_if(out.begin(), out.end(), [&](const ServerClass& c) {
      return std::abs(c.work - work) < 1e-12 && std::abs(c.read - read) < 1e-12;
    });
    if (same != out.end()) {
      ++same->count;
    } else {
      out.push_back({1, work, read});
    }
  }
  return out;
}

LocalityInput with_servers(const LocalityInput& base, int servers) {
  LocalityInput in = base;
  if (servers == base.platform.servers) return in;
  in.platform.servers = servers;
  in.shares = base.shares_for ? base.shares_for(servers) : ServerShares{};
  return in;
}

double LocalityInput::client_round_trips() const {
  return workload.round_trips_per_client_op > 0 ? workload.round_trips_per_client_op : workload.reads_per_client_op;
}

double LocalityInput::rpc_round_trip_us() const {
  return workload.rpc_network_rtt_us >= 0 ? workload.rpc_network_rtt_us : workload.network_rtt_us;
}

int LocalityInput::cpu_servers() const {
  return platform.server_threads > 0 ? std::min(platform.server_threads, platform.cores_per_server)
                                     : platform.cores_per_server;
}

double LocalityInput::busy_cores(double utilisation) const {
  return platform.server_threads > 0 ? cpu_servers() : platform.cores_per_server * utilisation;
}

double nic_slowdown(const LocalityInput& in, double p, double work, double read) {
  const double read_demand = read * reads_per_op(in, p) * read_service_us(in);
  const double verb_demand = work * p * in.workload.messages_per_server_op * verb_service_us(in);
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
  const double r = in.client_round_trips();
  const std::vector<ServerClass> classes = server_classes(in);
  const int per_class = stations_per_server_class(in);
  const bool links = per_class == 4;
  ClosedNetwork net;
  net.stations.resize(kServerCpu + per_class * classes.size() + (links ? 1 : 0));
  // A server link left a delay (faster than its READ engine) still takes
  // its time: in the network delay, as the READ's latency counts it.
  double link_delay_us = 0;
  for (const ServerClass& c : classes) {
    link_delay_us += c.count * c.read * reads_per_op(in, p) *
                     (pl.link_us_per_read - server_link_station_us(in, nic_slowdown(in, p, c.work, c.read)));
  }
  net.stations[kNetworkDelay] = {"network",
                                 StationKind::kDelay,
                                 1,
                                 1,
                                 1,
                                 p * (in.rpc_round_trip_us() + w.reads_per_server_op * w.network_rtt_us) +
                                     (1 - p) * r * w.network_rtt_us + link_delay_us};
  net.stations[kClientCpuDelay] = {"client cpu", StationKind::kDelay, 1, 1, 1 - p, w.client_cpu_us_per_client_op};
  net.stations[kThinkDelay] = {"think", StationKind::kDelay, 1, 1, 1.0, w.think_time_us};
  for (size_t j = 0; j < classes.size(); ++j) {
    const ServerClass& c = classes[j];
    const double phi = nic_slowdown(in, p, c.work, c.read);
    const int k = kServerCpu + per_class * static_cast<int>(j);
    net.stations[k] = {"server cpu", StationKind::kQueue, in.cpu_servers(),
                       c.count,      p * c.work,          pl.server_op_service_time_us};
    net.stations[k + 1] = {"nic read", StationKind::kQueue,          1,
                           c.count,    reads_per_op(in, p) * c.read, phi * read_service_us(in)};
    net.stations[k + 2] = {
        "nic verbs", StationKind::kQueue, 1, c.count, p * w.messages_per_server_op * c.work, phi * verb_service_us(in)};
    if (links) {
      net.stations[k + 3] = {"link out", StationKind::kQueue,          1,
                             c.count,    reads_per_op(in, p) * c.read, server_link_station_us(in, phi)};
    }
    for (int i = k; i < k + per_class; ++i) net.stations[i].service_scv = pl.service_scv;
  }
  if (links) {
    const auto [visits, us] = link_visits(reads_per_op(in, p), pl.link_us_per_read, p, pl.link_us_per_rpc);
    Station& l = net.stations.back();
    l = pl.client_hosts > 0
            ? Station{"client link", StationKind::kQueue, 1, pl.client_hosts, visits / pl.client_hosts, us}
            : Station{"client link", StationKind::kDelay, 1, 1, visits, us};
    l.service_scv = pl.service_scv;
  }
  return net;
}

LocalityPrediction prediction_from_sweep(const LocalityInput& in, double p, const MvaSweep& sweep, int clients,
                                         bool with_p99) {
  LOCUS_CHECK(clients >= 1 && clients <= sweep.max_population());
  const LocalityPlatform& pl = in.platform;
  const LocalityWorkload& w = in.workload;
  const double m = w.reads_per_client_op;
  const double msgs = w.messages_per_server_op;
  const double x_per_us = sweep.throughput_per_us(clients);
  const std::vector<ServerClass> classes = server_classes(in);

  LocalityPrediction out;
  out.server_side_share = p;
  out.throughput_ops_per_s = x_per_us * kUsPerS;
  out.mean_latency_us = sweep.cycle_time_us(clients) - w.think_time_us;

  // Per server class: the RPC's and the traversal's latency there, weighted
  // by the share of RPCs and of READs its servers take.
  std::vector<PathLatency> paths;
  std::vector<double> weights;
  double busiest = -1;
  const int per_class = stations_per_server_class(in);
  const bool links = per_class == 4;
  const int client_link = links ? sweep.station_count() - 1 : -1;
  const double link_us = pl.link_us_per_read;
  // A READ's wait on the links: its server's outgoing one (per class
  // below) and its client host's incoming one.
  const double client_link_wait = links ? sweep.mean_wait_per_visit_us(clients, client_link) : 0;
  for (size_t j = 0; j < classes.size(); ++j) {
    const ServerClass& c = classes[j];
    const int k = kServerCpu + per_class * static_cast<int>(j);
    const double link_wait = links ? sweep.mean_wait_per_visit_us(clients, k + 3) + client_link_wait : 0;
    const double phi = nic_slowdown(in, p, c.work, c.read);
    const double read_us = phi * read_service_us(in);
    const double verb_us = phi * verb_service_us(in);
    const double rpc_link_wait = pl.link_us_per_rpc > 0 ? client_link_wait : 0;
    const double server_fixed = in.rpc_round_trip_us() + pl.link_us_per_rpc + w.reads_per_server_op * w.network_rtt_us +
                                pl.server_op_service_time_us + msgs * verb_us +
                                w.reads_per_server_op * (read_us + 2 * link_us);
    const double client_fixed =
        in.client_round_trips() * w.network_rtt_us + m * (read_us + 2 * link_us) + w.client_cpu_us_per_client_op;
    const double server_us = server_fixed + rpc_link_wait + sweep.mean_wait_per_visit_us(clients, k) +
                             msgs * sweep.mean_wait_per_visit_us(clients, k + 2) +
                             w.reads_per_server_op * (sweep.mean_wait_per_visit_us(clients, k + 1) + link_wait);
    const double client_us = client_fixed + m * (sweep.mean_wait_per_visit_us(clients, k + 1) + link_wait);
    out.server_side_latency_us += c.count * c.work * server_us;
    out.client_side_latency_us += c.count * c.read * client_us;

    const double cpu = sweep.utilisation(clients, k);
    const double read = x_per_us * reads_per_op(in, p) * read_service_us(in) * c.read;
    const double verb = x_per_us * p * msgs * verb_service_us(in) * c.work;
    // Busiest station, counting the NIC engines at their slowed-down rate.
    const double link = x_per_us * reads_per_op(in, p) * c.read * server_link_station_us(in, phi);
    const double most = std::max({cpu, phi * read, phi * verb, link});
    if (most > busiest) {
      busiest = most;
      out.bottleneck = most < 0.5           ? "clients"
                       : most == cpu        ? "server cpu"
                       : most == phi * read ? "nic read"
                       : most == link       ? "server link"
                                            : "nic verbs";
    }
    out.cpu_utilisation = std::max(out.cpu_utilisation, cpu);
    out.nic_read_utilisation = std::max(out.nic_read_utilisation, read);
    out.nic_verb_utilisation = std::max(out.nic_verb_utilisation, verb);
    out.nic_slowdown = std::max(out.nic_slowdown, phi);

    if (with_p99) {
      auto component = [&](int station, double visits, double correlation) {
        const WaitMoments wm = sweep.wait_moments(clients, station);
        return WaitComponent{visits, wm.mean_us, wm.probability, wm.second_moment_us2, correlation};
      };
      const double ms = w.reads_per_server_op;
      std::vector<WaitComponent> server_waits = {component(k, 1.0, 0.0), component(k + 2, msgs, kSameNicCorrelation),
                                                 component(k + 1, ms, kSameNicCorrelation)};
      std::vector<WaitComponent> client_waits = {component(k + 1, m, kSameNicCorrelation)};
      if (links) {
        for (int station : {k + 3, client_link}) {
          const double rpc = station == client_link && pl.link_us_per_rpc > 0 ? 1 : 0;
          server_waits.push_back(component(station, ms + rpc, kSameNicCorrelation));
          client_waits.push_back(component(station, m, kSameNicCorrelation));
        }
      }
      paths.emplace_back(server_fixed, server_waits);
      weights.push_back(p * c.count * c.work);
      paths.emplace_back(client_fixed, client_waits);
      weights.push_back((1 - p) * c.count * c.read);
    }
  }
  // The client hosts' links (a station of their own when the platform
  // names the hosts): a bottleneck too when busier than every server
  // station, as with many clients on few hosts reading large nodes.
  if (links && pl.client_hosts > 0) {
    const double link = sweep.utilisation(clients, client_link);
    if (link > busiest) out.bottleneck = link < 0.5 ? "clients" : "client link";
  }
  if (with_p99) out.p99_latency_us = mixture_quantile_us(paths, weights, 0.99);
  return out;
}

StatusOr<MvaSweep> solve_locality(const LocalityInput& in, double p, int clients) {
  const ClosedNetwork net = locality_network(in, p);
  if (server_classes(in).size() > static_cast<size_t>(kMaxExactServerClasses)) return solve_mva_seidmann(net, clients);
  return solve_mva_exact(net, clients);
}

StatusOr<LocalityPrediction> predict_split(const LocalityInput& in, double p) {
  LOCUS_RETURN_IF_ERROR(in.validate());
  if (!(p >= 0 && p <= 1)) return invalid_argument("server-side share must lie in [0, 1]");
  LOCUS_ASSIGN_OR_RETURN(MvaSweep sweep, solve_locality(in, p, in.workload.clients));
  return prediction_from_sweep(in, p, sweep, in.workload.clients, true);
}

double saturation_throughput_ops_per_s(const LocalityInput& in, double p) {
  // The busiest station's demand bounds throughput; computed directly
  // rather than through locality_network() because the planner asks for it
  // hundreds of times per configuration.
  const double cpu_us = p * in.platform.server_op_service_time_us / in.cpu_servers();
  const double read_us = reads_per_op(in, p) * read_service_us(in);
  const double verb_us = p * in.workload.messages_per_server_op * verb_service_us(in);
  auto busiest_us = [&](double work, double read) {
    const double phi = nic_slowdown(in, p, work, read);
    return std::max({work * cpu_us, phi * read * read_us, phi * work * verb_us});
  };
  double most_us = 0;
  if (in.shares.work.empty() && in.shares.read.empty()) {
    most_us = busiest_us(1.0 / in.platform.servers, 1.0 / in.platform.servers);
  } else {
    for (const ServerClass& c : server_classes(in)) most_us = std::max(most_us, busiest_us(c.work, c.read));
  }
  // The links: the server's outgoing at its READ share, a client host's
  // incoming at its share of the clients.
  const double link_us = in.platform.link_us_per_read * reads_per_op(in, p);
  const double rpc_link_us = in.platform.link_us_per_rpc * p;
  if (link_us + rpc_link_us > 0) {
    double read_share = 1.0 / in.platform.servers;
    if (!in.shares.read.empty()) read_share = *std::max_element(in.shares.read.begin(), in.shares.read.end());
    if (server_link_station_us(in, 1.0) > 0) most_us = std::max(most_us, read_share * link_us);
    if (in.platform.client_hosts > 0) most_us = std::max(most_us, (link_us + rpc_link_us) / in.platform.client_hosts);
  }
  return kUsPerS / most_us;
}

}  // namespace locus::models
