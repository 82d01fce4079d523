// Pilaf's analytic model of a get: client side, an entry READ and an
// extent READ (the record's bytes); server side (VO mode), one "pilaf.get"
// RPC answering with the record. Puts, always server-side, are not in the
// model yet: scenarios it covers are read-only.
#include <fmt/format.h>

#include "core/design/model_profile.h"
#include "core/index/pilaf/config.h"

namespace locus::pilaf {

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<PilafConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a pilaf scenario");
  // In 64 bits: 65536 x 65536 wrapped to 32 bytes and predicted 1.2 M ops/s.
  const uint64_t record = uint64_t{s.workload.fieldcount} * s.workload.fieldlength + 32;
  if (record > (1ull << 31)) {
    return invalid_argument("workload.fieldcount x workload.fieldlength: records of " + std::to_string(record) +
                            " bytes; one READ carries at most 2^31");
  }
  design::ModelProfile m;
  m.reads_per_client_op = 2;
  m.round_trips_per_client_op = 2;  // the extent's address comes from the entry
  m.read_bytes = static_cast<double>(record);
  m.rpc_request_bytes = 64;
  m.rpc_response_bytes = static_cast<double>(record);
  m.server_cpu_us_per_server_op = design::handler_cost_us(s.platform.cpu, "pilaf.get", 64.0 + record);
  m.client_op_us = design::client_op_cost_us(s);
  m.scenario_server_share = c->mode == "vo" ? 1.0 : 0.0;
  m.derivation = {
      fmt::format("client side: an entry READ and an extent READ, both taken at the record's {} B", record),
      fmt::format("server side: pilaf.get at {} B moved, {:.3f} us", 64 + record, m.server_cpu_us_per_server_op),
      fmt::format("split: index.mode = {} ({})", c->mode, c->mode == "vo" ? "every get by RPC" : "every get by READs")};
  return m;
}

}  // namespace locus::pilaf
