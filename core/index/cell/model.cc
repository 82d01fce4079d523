// Cell's analytic model of a lookup (design::ModelProfile): the tree's
// shape is derived from the records and the node geometry (layout.h), the
// clients' caches from the cached levels, and the server's search cost
// from the [index] costs the servers charge (server.cc). Lookups only: a
// workload with writes or scans is refused by name.
//
// Shape. Keys arrive in hashed order, so nodes split at half fill as in a
// B-tree under random insertion, whose nodes are ln 2 (~69%) full on
// average (Yao, "On random 2-3 trees", 1978); meganodes split in half at
// split_fill_fraction of their nodes, so they hold ln 2 of that on average.
// From those: the leaves, the leaf meganodes and their local height h,
// and the meganodes above.
//
// Client side (steady state): the path cache names the leaf meganode
// (4096 entries, ClientOptions), so a search READs the leaf meganode's
// levels not cached (levels at least cache_min_distance above the leaves
// are, while the LRU holds them all), then the extent. Server side: one
// RPC to the leaf meganode's server, which visits its h levels.
//
// Not modelled (measured and stated in docs/models.md): keys spread over
// servers unevenly (meganodes are balanced by count, not by keys), torn
// reads and restarts (none in read-only runs), the warm-up of the caches.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/design/model_profile.h"
#include "core/index/cell/client.h"
#include "core/index/cell/config.h"
#include "core/index/cell/layout.h"
#include "core/memory/extent.h"
#include "core/workload/keys.h"

namespace locus::cell {

// driver.cc: the extents region a server registers (index.extents_bytes,
// or sized from the records).
uint64_t extents_region_bytes(const scenario::Scenario& s);

namespace {

constexpr double kRandomFill = std::numbers::ln2;  // mean node fill under random insertion (Yao 1978)

// Levels of a tree whose bottom level has `nodes` nodes, with `per_node`
// children per inner node on average (the top level is one node).
uint32_t levels_above(double nodes, double per_node) {
  uint32_t h = 1;
  for (double n = nodes; n > 1; n /= per_node) ++h;
  return h;
}

// What the scenario's selector does: a fixed share, or empty when it
// decides at run time.
std::optional<double> fixed_server_share(const scenario::Scenario& s) {
  if (s.selector.type == "static") return std::nullopt;  // Cell's own JSQ
  switch (s.selector.config.kind) {
    case selector::SelectorKind::kServerOnly:
      return 1.0;
    case selector::SelectorKind::kClientOnly:
      return 0.0;
    case selector::SelectorKind::kFixedRatio:
      return 1.0 - s.selector.config.client_fraction;
    default:
      return std::nullopt;
  }
}

}  // namespace

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<CellConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a cell scenario");
  const workload::WorkloadSpec& w = s.workload;
  if (w.readproportion < 1.0) {
    return invalid_argument("workload.readproportion: the cell model covers lookups only (readproportion = 1), not " +
                            fmt::format("{}", w.readproportion));
  }
  if (w.recordcount == 0) return invalid_argument("workload.recordcount: the cell model needs records to search");
  Geometry g;
  g.node_bytes = c->node_bytes;
  g.key_capacity_bytes = c->key_capacity_bytes;
  const double leaf_entries = g.capacity(true) * kRandomFill, inner_entries = g.capacity(false) * kRandomFill;
  const double meganode_nodes = static_cast<double>(c->meganode_bytes / c->node_bytes);
  const double meganode_fill = meganode_nodes * c->split_fill_fraction * kRandomFill;

  // The leaf meganodes: every node of the whole tree's bottom part.
  const double leaves = static_cast<double>(w.recordcount) / leaf_entries;
  double tree_nodes = 0;
  for (double n = leaves; n > 1; n /= inner_entries) tree_nodes += n;
  tree_nodes += 1;
  const bool one_meganode = tree_nodes <= meganode_nodes * c->split_fill_fraction;
  const double leaf_meganodes = one_meganode ? 1.0 : tree_nodes / meganode_fill;
  const uint32_t h = levels_above(leaves / leaf_meganodes, inner_entries);
  // Meganodes above the leaf ones: a tree over the leaf meganodes' roots.
  uint32_t upper_levels = 0, upper_meganode_levels = 0;
  for (double children = leaf_meganodes; children > 1;) {
    const double nodes = children / inner_entries;
    const double meganodes = std::max(1.0, nodes / meganode_fill);
    upper_levels += levels_above(nodes / meganodes, inner_entries);
    ++upper_meganode_levels;
    children = meganodes;
  }

  // Cached levels: distance from the leaves >= cache_min_distance, all of
  // them while the LRU holds every such node (else a uniform hit share).
  const uint32_t cmd = std::max<uint32_t>(c->cache_min_distance, 1);
  const uint32_t total_levels = h + upper_levels;
  double cacheable = 0;
  {
    double n = leaves;
    for (uint32_t level = 0; level < total_levels; ++level, n = std::max(1.0, n / inner_entries)) {
      if (level >= cmd) cacheable += n;
    }
  }
  const uint64_t tree_bytes = uint64_t{s.platform.servers} * c->meganodes_per_server * c->meganode_bytes;
  const double cache_slots = static_cast<double>(std::min(c->node_cache_bytes, tree_bytes) / c->node_bytes);
  const double cache_hit = cacheable <= 0 ? 1.0 : std::min(1.0, cache_slots / cacheable);
  const uint32_t leaf_cached_levels = h > cmd ? h - cmd : 0;
  const uint32_t leaf_read_levels = h - leaf_cached_levels;
  const double path_entries = ClientOptions{}.path_cache_entries;
  const double path_miss = std::max(0.0, 1.0 - path_entries / leaf_meganodes);
  // Above the leaf meganodes, on a path-cache miss: levels closer to the
  // leaves than cache_min_distance are READ, the rest are cached.
  const uint32_t upper_read_levels = cmd > h ? std::min(upper_levels, cmd - h) : 0;
  const double node_reads = leaf_read_levels + (1 - cache_hit) * leaf_cached_levels +
                            path_miss * (upper_read_levels + (1 - cache_hit) * (upper_levels - upper_read_levels));

  const double key_bytes = static_cast<double>(workload::max_key_bytes(w.zeropadding));
  const double value_bytes = static_cast<double>(uint64_t{w.fieldcount} * w.fieldlength);
  const double extent_bytes = memory::kExtentHeaderBytes + key_bytes + value_bytes;

  design::ModelProfile m;
  m.reads_per_client_op = node_reads + 1;               // and the extent
  m.round_trips_per_client_op = m.reads_per_client_op;  // each READ's address comes from the one before
  m.read_bytes = (node_reads * c->node_bytes + extent_bytes) / m.reads_per_client_op;
  m.client_cpu_us_per_client_op = c->client_node_us * (h + path_miss * upper_levels);
  // What a server registers for remote READs: its meganodes' node region
  // and its extents, as the driver sizes them.
  g.meganode_nodes = static_cast<uint32_t>(c->meganode_bytes / c->node_bytes);
  g.meganodes_per_server = c->meganodes_per_server;
  const uint64_t extents = extents_region_bytes(s);
  m.remote_read_bytes = static_cast<double>(g.region_bytes() + extents);
  // protocol.cc: op, level, start, key blob; outcome, next, found, value
  // blob, the meganode's root, level, height and bounds, nodes visited.
  m.rpc_request_bytes = 1 + 1 + 8 + 4 + key_bytes;
  m.rpc_response_bytes = 1 + 8 + 1 + 4 + value_bytes + 8 + 1 + 1 + 2 * (1 + 4 + key_bytes) + 4;
  const double steps = 1 + path_miss * upper_meganode_levels;
  const double visits = h + path_miss * upper_levels;
  const double handler_us = design::handler_cost_us(s.platform.cpu, "cell." + std::to_string(kOp),
                                                    m.rpc_request_bytes + m.rpc_response_bytes);
  m.server_cpu_us_per_server_op = steps * (c->server_request_us + handler_us) + c->server_node_visit_us * visits;
  m.messages_per_server_op = steps;
  m.client_op_us = design::client_op_cost_us(s);
  m.scenario_server_share = fixed_server_share(s);
  m.derivation = {
      fmt::format(
          "tree: {} records, {:.2f} per leaf and {:.2f} per inner node of {} B (ln 2 of {} and {}): {:.0f} leaves, "
          "{:.0f} nodes",
          w.recordcount, leaf_entries, inner_entries, c->node_bytes, g.capacity(true), g.capacity(false), leaves,
          tree_nodes),
      fmt::format(
          "meganodes: {:.1f} leaf meganodes of {:.0f} nodes on average (ln 2 x split_fill_fraction {} x {:.0f}), "
          "{} local levels each; {} meganode level(s) above, {} node levels",
          leaf_meganodes, leaves / leaf_meganodes * (tree_nodes / leaves), c->split_fill_fraction, meganode_nodes, h,
          upper_meganode_levels, upper_levels),
      fmt::format("spread: {:.1f} meganodes over {} servers, balanced by count; load taken as even over servers",
                  leaf_meganodes + (upper_meganode_levels > 0 ? 1 : 0), s.platform.servers),
      fmt::format("client side: cache_min_distance {} caches {} of the leaf meganode's {} levels (node cache holds "
                  "{:.0f} of {:.0f} cacheable nodes: hit {:.2f}); path cache misses {:.3f}: {:.2f} node READs of {} B "
                  "+ 1 extent READ of {:.0f} B",
                  cmd, leaf_cached_levels, h, cache_slots, cacheable, cache_hit, path_miss, node_reads, c->node_bytes,
                  extent_bytes),
      fmt::format("NIC: READs spread over {:.0f} MiB a server registers ({} meganodes of {} B and {:.0f} MiB of "
                  "extents), for the address-translation cache",
                  m.remote_read_bytes / 1048576, c->meganodes_per_server, c->meganode_bytes,
                  static_cast<double>(extents) / 1048576),
      fmt::format("server side: {:.2f} RPC steps x (server_request_us {} + cell.{} {:.3f}) + {:.2f} node visits x "
                  "server_node_visit_us {} = {:.3f} us; request {:.0f} B, response {:.0f} B",
                  steps, c->server_request_us, kOp, handler_us, visits, c->server_node_visit_us,
                  m.server_cpu_us_per_server_op, m.rpc_request_bytes, m.rpc_response_bytes),
      fmt::format("split: selector.type = {}{}", s.selector.type,
                  m.scenario_server_share ? fmt::format(" (server-side share {})", *m.scenario_server_share)
                                          : std::string(" (decided at run time)"))};
  return m;
}

}  // namespace locus::cell
