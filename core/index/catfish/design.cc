// Catfish as a design plug-in: its [index] keys and its driver
// (driver.cc), registered under "catfish".
#include "core/design/design.h"
#include "core/index/catfish/client_offload.h"
#include "core/index/catfish/config.h"

namespace locus::catfish {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto x = std::make_shared<CatfishConfig>();
  LOCUS_RETURN_IF_ERROR(keys.number("node_bytes", &x->node_bytes, 384, 4096));
  if (x->node_bytes % 64 != 0) return keys.fail("node_bytes", "catfish nodes are a multiple of 64 bytes in [384, 4096]");
  LOCUS_RETURN_IF_ERROR(keys.number("rectangles", &x->rectangles, 1, 1e9));
  // A bare 1e-5 on the command line (--set) is a TOML float: take it too.
  if (std::optional<double> v = keys.number_if_numeric("query_scale")) {
    if (*v != 1e-5 && *v != 1e-2) return keys.fail("query_scale", "expected \"1e-5\", \"1e-2\" or \"power\"");
    x->query_scale = *v == 1e-5 ? "1e-5" : "1e-2";
  } else {
    LOCUS_RETURN_IF_ERROR(keys.text("query_scale", &x->query_scale, {"1e-5", "1e-2", "power"}));
  }
  LOCUS_RETURN_IF_ERROR(keys.text("server_mode", &x->server_mode, {"polling", "event"}));
  LOCUS_RETURN_IF_ERROR(keys.number("server_result_us", &x->server_result_us, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.flag("multi_issue", &x->multi_issue));
  return std::shared_ptr<const scenario::IndexConfig>(std::move(x));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add({{"catfish",
                        "R*-tree of rectangles; searches by fast messaging over RDMA WRITE rings or offloaded as "
                        "multi-issue RDMA READs, chosen by a back-off selector on server heartbeats",
                        true, read_keys, {"catfish.search", "catfish.insert", "catfish.delete", "catfish.connect", kClientNodeWork}},
                       make_driver, model_profile});
}

}  // namespace locus::catfish
