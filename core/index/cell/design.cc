// Cell as a design plug-in: its [index] keys (the ranges its Store
// accepts; cross-key checks name the key that breaks them) and its driver
// (driver.cc), registered under "cell".
#include "core/design/design.h"

#include <algorithm>

#include "core/index/cell/config.h"
#include "core/index/cell/layout.h"

namespace locus::cell {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto x = std::make_shared<CellConfig>();
  LOCUS_RETURN_IF_ERROR(keys.number("max_kv_bytes", &x->max_kv_bytes, 64, 1 << 26));
  LOCUS_RETURN_IF_ERROR(keys.number("node_bytes", &x->node_bytes, 256, 1 << 16));
  LOCUS_RETURN_IF_ERROR(keys.number("key_capacity_bytes", &x->key_capacity_bytes, 8, 1024));
  LOCUS_RETURN_IF_ERROR(keys.number("meganode_bytes", &x->meganode_bytes, 4096, 1ull << 34));
  LOCUS_RETURN_IF_ERROR(keys.number("meganodes_per_server", &x->meganodes_per_server, 1, 1 << 20));
  LOCUS_RETURN_IF_ERROR(keys.number("extents_bytes", &x->extents_bytes, 0, 1ull << 40));
  LOCUS_RETURN_IF_ERROR(keys.number("split_fill_fraction", &x->split_fill_fraction, 0.1, 1.0));
  LOCUS_RETURN_IF_ERROR(keys.number("server_request_us", &x->server_request_us, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.number("server_node_visit_us", &x->server_node_visit_us, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.number("client_node_us", &x->client_node_us, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.number("cache_min_distance", &x->cache_min_distance, 1, 64));
  LOCUS_RETURN_IF_ERROR(keys.number("node_cache_bytes", &x->node_cache_bytes, 0, 1ull << 40));
  LOCUS_RETURN_IF_ERROR(x->log.read(keys));
  LOCUS_RETURN_IF_ERROR(keys.number("log_rewrite_percentage", &x->log_rewrite_percentage, 1, 1e6));
  LOCUS_RETURN_IF_ERROR(keys.number("log_rewrite_min_mb", &x->log_rewrite_min_mb, 0, 1e9));
  LOCUS_RETURN_IF_ERROR(keys.number("stores_per_server", &x->stores_per_server, 1, 1024));
  LOCUS_RETURN_IF_ERROR(keys.flag("takeover", &x->takeover));
  LOCUS_RETURN_IF_ERROR(keys.flag("log_replay", &x->log_replay));
  LOCUS_RETURN_IF_ERROR(keys.number("spares_per_server", &x->spares_per_server, 0, 1024));
  if (x->takeover && x->log.log_dir.empty()) {
    return keys.fail("takeover", "needs index.log_dir: a store is taken over by replaying its log");
  }
  if (x->meganode_bytes % x->node_bytes != 0) {
    return keys.fail("meganode_bytes",
                     "must be a multiple of index.node_bytes (" + std::to_string(x->node_bytes) + ")");
  }
  if (const uint64_t nodes = x->meganode_bytes / x->node_bytes; nodes < 8) {
    return keys.fail("meganode_bytes", "holds " + std::to_string(nodes) + " nodes of index.node_bytes (" +
                                           std::to_string(x->node_bytes) + "); a meganode needs at least 8");
  }
  Geometry g;
  g.node_bytes = x->node_bytes;
  g.key_capacity_bytes = x->key_capacity_bytes;
  g.meganode_nodes = static_cast<uint32_t>(std::min<uint64_t>(x->meganode_bytes / x->node_bytes, UINT32_MAX));
  g.meganodes_per_server = x->meganodes_per_server;
  if (Status st = g.validate(); !st.is_ok()) {
    return keys.fail("node_bytes",
                     "with index.key_capacity_bytes, index.meganode_bytes and "
                     "index.meganodes_per_server: " +
                         st.message());
  }
  if (x->extents_bytes != 0 && (x->extents_bytes & (x->extents_bytes - 1)) != 0) {
    return keys.fail("extents_bytes", "must be 0 (sized from the records) or a power of two");
  }
  return std::shared_ptr<const scenario::IndexConfig>(std::move(x));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add({{"cell",
                        "B-link tree of meganodes; searches server-side or by RDMA READs of versioned nodes, "
                        "chosen per meganode by a selector (JSQ by default)",
                        true,
                        read_keys,
                        // RPC handlers are named by request type (server.cc); the servers
                        // charge their search costs themselves (index.server_*_us).
                        {"cell.1", "cell.2", "cell.3", "cell.4", "cell.internal"},
                        /*deletes=*/true},
                       make_driver,
                       model_profile});
}

}  // namespace locus::cell
