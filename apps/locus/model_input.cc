// Scenario -> locality model input; see model_input.h.
#include "apps/locus/model_input.h"

#include <algorithm>

#include "core/index/micro/config.h"
#include "core/index/pilaf/config.h"
#include "core/workload/keys.h"

namespace locus::cli {
namespace {

double cost_us(const scenario::CpuSpec& cpu, const std::string& handler, uint64_t bytes) {
  auto it = cpu.handler_cost_us.find(handler);
  return it != cpu.handler_cost_us.end() ? it->second.us_at(bytes) : cpu.default_handler_us;
}

// One way over host link and PCIe at each end: propagation plus
// serialisation of `bytes` on each hop.
double one_way_us(const scenario::PlatformSpec& p, double bytes) {
  const double link_us = bytes * 8.0 / (p.host_link.bandwidth_gbps * 1e3);
  const double pcie_us = bytes * 8.0 / (p.pcie.bandwidth_gbps * 1e3);
  double us = 2 * (p.host_link.latency_us + p.pcie.latency_us) + 2 * (link_us + pcie_us);
  if (p.topology == scenario::Topology::kTwoLevel) {
    us += 2 * p.rack_uplink.latency_us + 2 * bytes * 8.0 / (p.rack_uplink.bandwidth_gbps * 1e3);
  }
  return us;
}

}  // namespace

double scenario_server_share(const scenario::Scenario& s) {
  if (const auto* micro = s.index.get<micro::MicroConfig>()) return micro->rpc_fraction;
  const auto* pilaf = s.index.get<pilaf::PilafConfig>();
  return pilaf != nullptr && pilaf->mode == "vo" ? 1.0 : 0.0;
}

StatusOr<models::LocalityInput> locality_input_from(const scenario::Scenario& s) {
  models::LocalityInput in;
  const scenario::PlatformSpec& p = s.platform;
  constexpr double kHeaderBytes = 30;
  in.platform.servers = static_cast<int>(p.servers);
  in.platform.cores_per_server = static_cast<int>(p.cores_per_server);
  uint32_t read_bytes = 0;
  double rpc_request_bytes = 0, rpc_response_bytes = 0;
  if (const auto* micro = s.index.get<micro::MicroConfig>()) {
    in.platform.server_op_service_time_us = cost_us(p.cpu, "micro.op", micro->rpc_request_bytes + micro->rpc_response_bytes);
    in.workload.reads_per_client_op = micro->reads_per_op;
    read_bytes = micro->read_bytes;
    rpc_request_bytes = micro->rpc_request_bytes;
    rpc_response_bytes = micro->rpc_response_bytes;
  } else if (s.index.get<pilaf::PilafConfig>() != nullptr) {
    // Client side: an entry READ and an extent READ; server side: a VO get.
    // In 64 bits: 65536 x 65536 wrapped to 32 bytes and predicted 1.2 M ops/s.
    const uint64_t record = uint64_t{s.workload.fieldcount} * s.workload.fieldlength + 32;
    if (record > (1ull << 31)) {
      return invalid_argument("workload.fieldcount x workload.fieldlength: records of " + std::to_string(record) +
                              " bytes; one READ carries at most 2^31");
    }
    read_bytes = static_cast<uint32_t>(record);
    in.platform.server_op_service_time_us = cost_us(p.cpu, "pilaf.get", 64 + read_bytes);
    in.workload.reads_per_client_op = 2;
    rpc_request_bytes = 64;
    rpc_response_bytes = read_bytes;
  } else {
    return invalid_argument("index.type: the locality model covers micro and pilaf, not '" + s.index.type + "'");
  }
  in.platform.nic_read_rate_ops_per_s = p.nic.read.ops_per_s(read_bytes);
  // The simulator gives verb sends and receives separate budgets, each
  // used once per RPC: the slower of the two bounds the RPC rate.
  const auto resp = static_cast<uint32_t>(rpc_response_bytes);
  const auto req = static_cast<uint32_t>(rpc_request_bytes);
  in.platform.nic_verb_rate_msgs_per_s = std::min(p.nic.send.ops_per_s(resp), p.nic.recv.ops_per_s(req));
  in.workload.messages_per_server_op = 1;
  in.platform.nic_read_share_with_verbs = p.nic.rdma_share_with_verbs;
  in.platform.nic_verb_share_with_reads = p.nic.verbs_share_with_rdma;
  in.workload.clients = static_cast<int>(s.run.clients);
  // The client's own work per get (drawing it, building its key), as the
  // simulator charges it: the scenario's "client.op" at the key's bytes,
  // else client_op_us.
  const auto client_op = p.cpu.handler_cost_us.find(scenario::kClientOpWork);
  in.workload.think_time_us = client_op != p.cpu.handler_cost_us.end()
                                  ? client_op->second.us_at(workload::max_key_bytes(s.workload.zeropadding))
                                  : p.cpu.client_op_us;
  in.workload.network_rtt_us = one_way_us(p, kHeaderBytes) + one_way_us(p, kHeaderBytes + read_bytes);
  LOCUS_RETURN_IF_ERROR(in.validate());
  return in;
}

}  // namespace locus::cli
