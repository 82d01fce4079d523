// The micro index as a design plug-in, registered under "micro": a
// synthetic index with known saturation points, for validating the
// platform models and calibrating the analytic ones (driver.cc). It is
// also the smallest example of a design: a config, a key reader, a driver.
#include "core/design/design.h"
#include "core/index/micro/config.h"

namespace locus::micro {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto c = std::make_shared<MicroConfig>();
  LOCUS_RETURN_IF_ERROR(keys.number("rpc_fraction", &c->rpc_fraction, 0, 1));
  LOCUS_RETURN_IF_ERROR(keys.number("reads_per_op", &c->reads_per_op, 0, 1000));
  LOCUS_RETURN_IF_ERROR(keys.number("read_bytes", &c->read_bytes, 1, 1 << 24));
  LOCUS_RETURN_IF_ERROR(keys.number("region_bytes", &c->region_bytes, 1 << 20, 1ull << 40));
  LOCUS_RETURN_IF_ERROR(keys.number("rpc_request_bytes", &c->rpc_request_bytes, 0, 1 << 20));
  LOCUS_RETURN_IF_ERROR(keys.number("rpc_response_bytes", &c->rpc_response_bytes, 0, 1 << 20));
  return std::shared_ptr<const scenario::IndexConfig>(std::move(c));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add({{"micro",
                        "synthetic index: one RPC or a chain of dependent READs per operation, for model calibration",
                        false, read_keys, {"micro.op", "micro.layout"}},
                       make_driver, model_profile});
}

}  // namespace locus::micro
