// Pilaf as a design plug-in: its [index] keys and its driver (driver.cc),
// registered under "pilaf".
#include "core/design/design.h"
#include "core/index/pilaf/config.h"

namespace locus::pilaf {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto c = std::make_shared<PilafConfig>();
  LOCUS_RETURN_IF_ERROR(keys.text("mode", &c->mode, {"rdma", "vo"}));
  LOCUS_RETURN_IF_ERROR(keys.number("initial_buckets", &c->initial_buckets, 0, 1e12));
  LOCUS_RETURN_IF_ERROR(keys.number("max_kv_bytes", &c->max_kv_bytes, 64, 1 << 26));
  LOCUS_RETURN_IF_ERROR(keys.text("log_dir", &c->log_dir));
  LOCUS_RETURN_IF_ERROR(keys.flag("log_replay", &c->log_replay));
  LOCUS_RETURN_IF_ERROR(keys.text("log_fsync", &c->log_fsync, {"every_batch", "interval", "never"}));
  LOCUS_RETURN_IF_ERROR(keys.number("log_fsync_interval_ms", &c->log_fsync_interval_ms, 1, 3.6e6));
  LOCUS_RETURN_IF_ERROR(keys.number("log_rewrite_percentage", &c->log_rewrite_percentage, 1, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.number("log_rewrite_min_mb", &c->log_rewrite_min_mb, 0, 1e9));
  return std::shared_ptr<const scenario::IndexConfig>(std::move(c));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add({{"pilaf", "3-way cuckoo hash with CRC64 self-verifying entries; gets by RDMA READ, puts by RPC",
                        false, read_keys, {"pilaf.put", "pilaf.get", "pilaf.delete", "pilaf.layout", "pilaf.client_crc"},
                        /*deletes=*/true},
                       make_driver, model_profile});
}

}  // namespace locus::pilaf
