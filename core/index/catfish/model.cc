// Catfish's analytic model. The figures come from the real tree: the model
// builds the R*-tree the simulator loads (index.rectangles rectangles of
// the run's seed, load.h, into a Store of index.node_bytes nodes) and walks
// it for a sample of the scenario's own queries (query scale, places drawn
// from the key space) the way OffloadClient does: a header READ, then
// batches of up to 16 pending nodes (1 without multi-issue) from the top of
// a depth-first stack, then a header READ to check the move epoch. So
// READs, round trips (batches), the tree's overlap (nodes a query enters
// beyond one path) and answer sizes are counted, not assumed. The server
// side charges "catfish.search" at each sampled answer's bytes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/design/model_profile.h"
#include "core/index/catfish/catfish_server.h"
#include "core/index/catfish/client_offload.h"
#include "core/index/catfish/config.h"
#include "core/index/catfish/load.h"
#include "core/index/catfish/store.h"
#include "core/rpc/ring_buffer.h"
#include "core/workload/spatial.h"

namespace locus::catfish {
namespace {

// Queries walked per profile: the mean READs per search then have a
// relative standard error well under 1% at every query scale here.
constexpr int kSampledQueries = 4000;

struct Walk {
  double reads = 0, batches = 0, hits = 0, client_us = 0;
};

// The walk of OffloadClient::traverse (client_offload.cc) over the local
// copy: no torn copies or moves, since nothing writes during a model run.
Walk walk(Store& store, const Rect& q, uint32_t max_batch, const scenario::CpuSpec& cpu,
          std::vector<std::pair<uint64_t, uint32_t>>& pending) {
  const Geometry& g = store.geometry();
  HeaderInfo h;
  const std::byte* region = store.region();
  Walk w;
  if (!decode_header(region, &h).is_ok()) return w;
  pending.assign(1, {h.root, h.root_level});
  while (!pending.empty()) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(max_batch, pending.size()));
    std::vector<std::pair<uint64_t, uint32_t>> batch(pending.end() - n, pending.end());
    std::reverse(batch.begin(), batch.end());
    pending.resize(pending.size() - n);
    w.reads += n;
    w.batches += 1;
    w.client_us += design::handler_cost_us(cpu, kClientNodeWork, static_cast<double>(n) * g.node_bytes);
    for (const auto& node : batch) {
      const uint32_t level = node.second;  // a plain local: clang captures no structured binding
      const NodeView v(region + node.first, g.lines_per_field());
      scan_intersecting(v, v.count(), q, [&](const Rect&, uint64_t ptr) {
        if (level == 0) {
          w.hits += 1;
        } else {
          pending.push_back({ptr, level - 1});
        }
        return true;
      });
    }
  }
  return w;
}

StatusOr<std::unique_ptr<Store>> loaded_tree(const CatfishConfig& x, uint64_t seed) {
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::create(loaded_store_options(x)));
  for (uint64_t id = 0; id < x.rectangles; ++id) LOCUS_RETURN_IF_ERROR(store->insert(loaded_rectangle(seed, id), id));
  return store;
}

}  // namespace

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* x = s.index.get<CatfishConfig>();
  if (x == nullptr) return invalid_argument("index.type: not a catfish scenario");
  const workload::WorkloadSpec& wl = s.workload;
  if (wl.scanproportion > 0 || wl.readmodifywriteproportion > 0) {
    return invalid_argument(
        "workload.scanproportion / readmodifywriteproportion: the catfish model covers searches (reads) and "
        "inserts (inserts and updates) only");
  }
  if (wl.requestdistribution != workload::RequestDistribution::kUniform) {
    return invalid_argument("workload.requestdistribution: the catfish model samples uniform places only");
  }
  const double writes = wl.insertproportion + wl.updateproportion;
  const double searches = wl.readproportion;
  if (!(searches + writes > 0)) return invalid_argument("workload: no searches or inserts to model");
  const double write_share = writes / (searches + writes);

  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, loaded_tree(*x, s.run.seed));
  const StoreStats st = store->stats();
  const Geometry& g = store->geometry();
  const uint32_t max_batch = x->multi_issue ? kMaxReadsPerBatch : 1;

  // Queries as the sessions draw them: a box of the scale at a key's place.
  const workload::SpatialGenerator generator;
  Random rng(s.run.seed * 0x9E3779B97F4A7C15ULL + 0xCA7F);
  std::vector<std::pair<uint64_t, uint32_t>> pending;
  Walk sum;
  double search_us = 0, response_bytes = 0, segments = 0;
  const auto& cpu = s.platform.cpu;
  constexpr double kSegmentBytes = 8 * 1024;  // MessagingServerOptions::segment_bytes
  for (int i = 0; i < kSampledQueries; ++i) {
    const workload::SpatialBox b = workload::place_at_key(generator.query(rng, x->scale()),
                                                          rng.uniform(std::max<uint64_t>(1, wl.recordcount)));
    const Walk w = walk(*store, {b.x_min, b.y_min, b.x_max, b.y_max}, max_batch, cpu, pending);
    sum.reads += w.reads, sum.batches += w.batches, sum.hits += w.hits, sum.client_us += w.client_us;
    const double answer = sizeof(uint32_t) + w.hits * kHitWireBytes;
    search_us += design::handler_cost_us(cpu, "catfish.search", kRectWireBytes + answer) + x->server_result_us * w.hits;
    response_bytes += ring::kMessageOverheadBytes + answer;
    segments += std::max(1.0, std::ceil(answer / kSegmentBytes));
  }
  const double n = kSampledQueries;
  const double node_reads = sum.reads / n, batches = sum.batches / n, hits = sum.hits / n;
  const double insert_us = design::handler_cost_us(cpu, "catfish.insert", kRectWireBytes + 8);
  search_us /= n;

  design::ModelProfile m;
  // Two header READs (one line each) around the node batches.
  m.reads_per_client_op = 2 + node_reads;
  m.round_trips_per_client_op = 2 + batches;
  m.read_bytes = (2 * kLineBytes + node_reads * g.node_bytes) / m.reads_per_client_op;
  m.client_cpu_us_per_client_op = sum.client_us / n;
  m.client_op_us = design::client_op_cost_us(s);

  // The share and the server op mix: inserts always go to the server.
  const selector::SelectorKind kind =
      s.selector.type == "static" ? selector::SelectorKind::kBackoff : s.selector.config.kind;
  std::optional<double> search_server_share;
  if (kind == selector::SelectorKind::kServerOnly) search_server_share = 1.0;
  if (kind == selector::SelectorKind::kClientOnly) search_server_share = 0.0;
  if (kind == selector::SelectorKind::kFixedRatio) search_server_share = 1.0 - s.selector.config.client_fraction;
  if (!search_server_share && write_share > 0) {
    return invalid_argument(
        "selector.type: with inserts, the catfish model needs a fixed split (server_only, "
        "client_only, fixed_ratio); an adaptive selector changes the server's mix of work");
  }
  const double q = search_server_share.value_or(1.0);
  const double server_ops = q * (1 - write_share) + write_share;
  const double insert_weight = server_ops > 0 ? write_share / server_ops : 0;
  m.server_cpu_us_per_server_op = insert_weight * insert_us + (1 - insert_weight) * search_us;
  m.rpc_request_bytes = ring::kMessageOverheadBytes + kRectWireBytes + insert_weight * 8;
  m.rpc_response_bytes = (1 - insert_weight) * response_bytes / n + insert_weight * ring::kMessageOverheadBytes;
  m.messages_per_server_op = 1 + (1 - insert_weight) * segments / n + insert_weight;
  if (search_server_share) m.scenario_server_share = server_ops;

  m.derivation = {
      fmt::format("tree: {} rectangles (seed {}) loaded into {} B nodes ({} entries): {} levels, {} nodes",
                  st.rectangles, s.run.seed, g.node_bytes, g.capacity(), st.height, st.nodes_in_use),
      fmt::format("offloaded search, walked for {} queries at scale {}: {:.2f} node READs in {:.2f} batches "
                  "(multi_issue {}, up to {} a batch), {:.2f} hits; {:.2f} nodes a level beyond one path",
                  kSampledQueries, x->query_scale, node_reads, batches, x->multi_issue, max_batch, hits,
                  node_reads / std::max(1u, st.height) - 1),
      fmt::format("client side: {:.2f} READs ({:.2f} + 2 header lines) in {:.2f} round trips, {:.1f} B a READ; "
                  "catfish.client_node {:.3f} us a search",
                  m.reads_per_client_op, node_reads, m.round_trips_per_client_op, m.read_bytes,
                  m.client_cpu_us_per_client_op),
      fmt::format("server side: catfish.search {:.3f} us at the sampled answers ({:.0f} B response), "
                  "catfish.insert {:.3f} us",
                  search_us, response_bytes / n, insert_us),
      fmt::format("mix: {:.3f} of operations insert (workload.insert/updateproportion), always by messaging; "
                  "{:.3f} of server ops inserts: {:.3f} us a server op, {:.2f} messages",
                  write_share, insert_weight, m.server_cpu_us_per_server_op, m.messages_per_server_op),
      search_server_share
          ? fmt::format("split: selector {} sends {:.3f} of searches to the server: {:.3f} of operations",
                        s.selector.type, *search_server_share, server_ops)
          : fmt::format("split: selector {} decides at run time (see the back-off model)", s.selector.type)};
  return m;
}

}  // namespace locus::catfish
