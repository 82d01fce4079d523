// The micro index's analytic model: its operations are exactly what its
// keys say (config.h), so the profile is read off them: an RPC of the
// configured sizes costing "micro.op", or reads_per_op dependent READs.
#include <fmt/format.h>

#include "core/design/model_profile.h"
#include "core/index/micro/config.h"

namespace locus::micro {

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<MicroConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a micro scenario");
  design::ModelProfile m;
  m.rpc_request_bytes = c->rpc_request_bytes;
  m.rpc_response_bytes = c->rpc_response_bytes;
  m.server_cpu_us_per_server_op =
      design::handler_cost_us(s.platform.cpu, "micro.op", c->rpc_request_bytes + c->rpc_response_bytes);
  m.reads_per_client_op = c->reads_per_op;
  m.round_trips_per_client_op = c->reads_per_op;  // dependent READs, one after another
  m.read_bytes = c->read_bytes;
  m.client_op_us = design::client_op_cost_us(s);
  m.scenario_server_share = c->rpc_fraction;
  m.derivation = {fmt::format("server side: one RPC ({} B request, {} B response), handler micro.op {:.3f} us",
                              c->rpc_request_bytes, c->rpc_response_bytes, m.server_cpu_us_per_server_op),
                  fmt::format("client side: {} dependent READs of {} B (index.reads_per_op, index.read_bytes)",
                              c->reads_per_op, c->read_bytes),
                  fmt::format("split: index.rpc_fraction = {}", c->rpc_fraction)};
  return m;
}

}  // namespace locus::micro
