// Scenario -> locality model input; see model_input.h.
#include "apps/locus/model_input.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/designs/designs.h"

namespace locus::cli {
namespace {

// One way over PCIe, host link (and rack uplinks) at each end, as the
// simulator carries a message: cut-through, every hop's latency and one
// serialisation of `bytes` on the slowest hop (World::packet_leg; a
// larger message is one CM02 flow, bounded by its slowest link alike).
double one_way_us(const scenario::PlatformSpec& p, double bytes) {
  double latency_us = 2 * (p.host_link.latency_us + p.pcie.latency_us);
  double slowest_gbps = std::min(p.host_link.bandwidth_gbps, p.pcie.bandwidth_gbps);
  if (p.topology == scenario::Topology::kTwoLevel) {
    latency_us += 2 * p.rack_uplink.latency_us;
    slowest_gbps = std::min(slowest_gbps, p.rack_uplink.bandwidth_gbps);
  }
  return latency_us + bytes * 8.0 / (slowest_gbps * 1e3);
}

// Bytes on the wire besides the payload, as the simulator charges them
// (SimOptions::header_bytes, backends/simgrid/sim_runtime.h).
constexpr double kHeaderBytes = 30;

// A message of `bytes` payload on the host link: its serialisation.
double host_link_us(const scenario::PlatformSpec& p, double bytes) {
  return (kHeaderBytes + bytes) * 8.0 / (p.host_link.bandwidth_gbps * 1e3);
}

uint32_t bytes_of(double bytes) { return static_cast<uint32_t>(std::llround(std::clamp(bytes, 0.0, 4294967295.0))); }

// The design's shares at other server counts, for the planner, each count
// computed once (a design may rebuild its structure for them). A count the
// design cannot place falls back to an even spread.
models::ServerSharesFor cached_shares(std::function<StatusOr<design::ServerShares>(uint32_t)> of) {
  auto memo = std::make_shared<std::map<int, models::ServerShares>>();
  auto lock = std::make_shared<std::mutex>();
  return [of = std::move(of), memo, lock](int servers) {
    std::lock_guard<std::mutex> hold(*lock);
    auto it = memo->find(servers);
    if (it != memo->end()) return it->second;
    models::ServerShares out;
    if (auto s = of(static_cast<uint32_t>(servers)); s.is_ok()) out = {std::move(s->work), std::move(s->read)};
    return memo->emplace(servers, std::move(out)).first->second;
  };
}

}  // namespace

StatusOr<design::ModelProfile> model_profile_of(const scenario::Scenario& s) {
  const design::Design* d = designs::registry().find(s.index.type);
  if (d != nullptr && d->model) return d->model(s);
  std::string with;
  for (const design::Design& other : designs::registry().designs()) {
    if (other.model) with += (with.empty() ? "" : ", ") + other.type.name;
  }
  return invalid_argument("index.type: design '" + s.index.type +
                          "' brings no analytic model (designs with one: " + with + ")");
}

StatusOr<design::ModelProfile> settled_profile(const scenario::Scenario& s) {
  LOCUS_ASSIGN_OR_RETURN(design::ModelProfile m, model_profile_of(s));
  if (!m.at_throughput || !m.scenario_server_share || !m.bound_only.empty()) return m;
  const auto at = m.at_throughput;
  const double split = *m.scenario_server_share;
  double ops = 0;
  for (int round = 0; round < 20; ++round) {
    LOCUS_ASSIGN_OR_RETURN(models::LocalityInput in, locality_input_from(s, m));
    LOCUS_ASSIGN_OR_RETURN(models::LocalityPrediction p, models::predict_split(in, split));
    if (round > 0 && std::abs(p.throughput_ops_per_s - ops) < 1e-3 * ops) return m;
    ops = p.throughput_ops_per_s;
    LOCUS_ASSIGN_OR_RETURN(m, at(ops));
  }
  return internal_error(s.source + ": the model's throughput did not settle in 20 rounds (last " +
                        std::to_string(ops) + " ops/s)");
}

std::optional<double> scenario_server_share(const scenario::Scenario& s) {
  auto m = model_profile_of(s);
  return m.is_ok() ? m->scenario_server_share : std::nullopt;
}

StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s) {
  LOCUS_ASSIGN_OR_RETURN(design::ModelProfile m, model_profile_of(s));
  return locality_input_from(s, m);
}

StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s, const design::ModelProfile& m) {
  if (!m.bound_only.empty()) return invalid_argument(m.bound_only);
  if (!(m.round_trips_per_client_op >= 1 && m.round_trips_per_client_op <= m.reads_per_client_op)) {
    return invalid_argument("index.type: the " + s.index.type + " model gives " +
                            std::to_string(m.round_trips_per_client_op) + " round trips for " +
                            std::to_string(m.reads_per_client_op) + " READs; expected 1 to one per READ");
  }
  models::LocalityInput in;
  const scenario::PlatformSpec& p = s.platform;
  in.platform.servers = static_cast<int>(p.servers);
  in.platform.cores_per_server = static_cast<int>(p.cores_per_server);
  in.platform.server_op_service_time_us = m.server_cpu_us_per_server_op;
  in.workload.reads_per_client_op = m.reads_per_client_op;
  in.workload.round_trips_per_client_op = m.round_trips_per_client_op;
  in.workload.client_cpu_us_per_client_op = m.client_cpu_us_per_client_op;
  in.platform.nic_read_rate_ops_per_s =
      m.nic_rdma_service_us > 0 ? 1e6 / m.nic_rdma_service_us : p.nic.read.ops_per_s(bytes_of(m.read_bytes));
  in.platform.server_threads = static_cast<int>(m.server_threads);
  // The address-translation cache, as the simulator charges it: each READ
  // costs the misses its server's registered bytes add over the curve's.
  if (p.nic.atc_reach_bytes > 0 && m.remote_read_bytes > 0) {
    const double ns =
        1e9 / in.platform.nic_read_rate_ops_per_s + p.nic.atc_extra_ns(static_cast<uint64_t>(m.remote_read_bytes));
    in.platform.nic_read_rate_ops_per_s = 1e9 / ns;
  }
  // The queue-pair state cache, as the simulator charges it: every request
  // a server's NIC serves (READs, received messages) pays the misses of
  // its queue pairs, one per client (each client reaches every server).
  const double qp_us = p.nic.qp_extra_ns(s.run.clients) / 1e3;
  if (qp_us > 0) in.platform.nic_read_rate_ops_per_s = 1e6 / (1e6 / in.platform.nic_read_rate_ops_per_s + qp_us);
  // The simulator gives verb sends and receives separate budgets, each
  // used once per RPC: the slower of the two bounds the RPC rate.
  const double send_us = m.nic_send_service_us > 0 ? m.nic_send_service_us
                                                   : 1e6 / p.nic.send.ops_per_s(bytes_of(m.rpc_response_bytes));
  const double recv_us = qp_us + (m.nic_recv_service_us > 0 ? m.nic_recv_service_us
                                                            : 1e6 / p.nic.recv.ops_per_s(bytes_of(m.rpc_request_bytes)));
  in.platform.nic_verb_rate_msgs_per_s = 1e6 / std::max(send_us, recv_us);
  in.workload.messages_per_server_op = m.messages_per_server_op;
  in.workload.reads_per_server_op = m.reads_per_server_op;
  in.platform.nic_read_share_with_verbs = p.nic.rdma_share_with_verbs;
  in.platform.nic_verb_share_with_reads = p.nic.verbs_share_with_rdma;
  in.workload.clients = static_cast<int>(s.run.clients);
  in.workload.think_time_us = m.client_op_us;
  // A READ's response crosses the server's link and the client host's: those
  // are stations (a hot server's, or a host's shared by its clients, queue),
  // so their serialisation leaves the round trip.
  const double link_bytes = m.link_payload_bytes >= 0 ? m.link_payload_bytes : m.read_bytes;
  in.platform.link_us_per_read = host_link_us(p, link_bytes);
  in.platform.client_hosts = static_cast<int>(p.client_hosts);
  // Each link station adds its serialisation back; cut-through overlaps
  // the two, so a line-rate READ of a large value can leave less than
  // nothing here: then the round trip is the stations' own.
  in.workload.network_rtt_us = std::max(
      0.0, one_way_us(p, kHeaderBytes) + one_way_us(p, kHeaderBytes + m.read_bytes) - 2 * in.platform.link_us_per_read);
  // The RPC's round trip at its own request and response bytes (a READ's
  // would charge it a response it does not carry); a design with large
  // responses has them queue at the client host's link, their
  // serialisation then out of the round trip.
  if (m.rpc_response_on_links) {
    in.platform.link_us_per_rpc = host_link_us(p, m.rpc_response_bytes);
  }
  in.workload.rpc_network_rtt_us =
      std::max(0.0, one_way_us(p, kHeaderBytes + m.rpc_request_bytes) +
                        one_way_us(p, kHeaderBytes + m.rpc_response_bytes) - in.platform.link_us_per_rpc);
  if (m.server_shares) {
    LOCUS_ASSIGN_OR_RETURN(design::ServerShares shares, m.server_shares(p.servers));
    in.shares = {std::move(shares.work), std::move(shares.read)};
    in.shares_for = cached_shares(m.server_shares);
  }
  LOCUS_RETURN_IF_ERROR(in.validate());
  return in;
}

}  // namespace locus::cli
