// Catfish store vs Boost.Geometry rtree: see micro_rtree.h. Both sides
// write their hits into a reused vector, so they do the same work per
// query; the hit totals must agree or the run fails.
#include "apps/locus/micro_rtree.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <boost/geometry.hpp>
#include <boost/geometry/index/rtree.hpp>
#include <fmt/format.h>

#include "core/common/random.h"
#include "core/index/catfish/store.h"
#include "core/workload/spatial.h"

namespace locus::cli {
namespace {

namespace bg = boost::geometry;
namespace bgi = boost::geometry::index;
using BPoint = bg::model::point<double, 2, bg::cs::cartesian>;
using BBox = bg::model::box<BPoint>;
using BValue = std::pair<BBox, uint64_t>;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

catfish::Rect to_rect(const workload::SpatialBox& b) { return {b.x_min, b.y_min, b.x_max, b.y_max}; }
BBox to_box(const workload::SpatialBox& b) { return BBox(BPoint(b.x_min, b.y_min), BPoint(b.x_max, b.y_max)); }

}  // namespace

Status run_micro_rtree(const MicroRtreeConfig& config) {
  if (config.records == 0 || config.queries == 0 || config.rounds == 0) {
    return invalid_argument("--records, --ops and rounds must be positive");
  }
  Random rng(config.seed);
  workload::SpatialGenerator gen;
  catfish::StoreOptions so;
  so.geometry.node_bytes = config.node_bytes;
  // Leaves are at least 40% full; a quarter of the records in slots is ample.
  so.geometry.node_slots = static_cast<uint32_t>(std::min<uint64_t>(config.records / 4 + 4096, UINT32_MAX));
  LOCUS_ASSIGN_OR_RETURN(auto store, catfish::Store::create(so));
  bgi::rtree<BValue, bgi::rstar<16>> baseline;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<workload::SpatialBox> data(config.records);
  for (auto& b : data) b = gen.data(rng);
  for (uint64_t id = 0; id < config.records; ++id) LOCUS_RETURN_IF_ERROR(store->insert(to_rect(data[id]), id));
  const double load_locus_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (uint64_t id = 0; id < config.records; ++id) baseline.insert({to_box(data[id]), id});
  const double load_boost_s = seconds_since(t0);
  const catfish::StoreStats st = store->stats();

  fmt::print("micro rtree: {} rectangles (edges in (0, 1e-4]), {} queries per scale, {}-byte nodes (height {}), "
             "best of {} rounds, seed {}\n",
             config.records, config.queries, config.node_bytes, st.height, config.rounds, config.seed);
  fmt::print("load: locus {:.2f} s, boost {:.2f} s\n", load_locus_s, load_boost_s);
  fmt::print("{:<10} {:>12} {:>16} {:>16} {:>8}\n", "scale", "hits/query", "locus q/s", "boost q/s", "ratio");
  std::vector<catfish::Hit> hits;
  std::vector<BValue> boost_hits;
  double worst_ratio = 1e300;
  for (workload::QueryScale scale :
       {workload::QueryScale::kSmall, workload::QueryScale::kLarge, workload::QueryScale::kPowerLaw}) {
    std::vector<workload::SpatialBox> queries(config.queries);
    for (auto& q : queries) q = gen.query(rng, scale);
    std::vector<catfish::Rect> rects(queries.size());
    std::vector<BBox> boxes(queries.size());
    for (size_t i = 0; i < queries.size(); ++i) rects[i] = to_rect(queries[i]), boxes[i] = to_box(queries[i]);
    double best_locus = 0, best_boost = 0;
    uint64_t locus_total = 0, boost_total = 0;
    for (uint32_t round = 0; round < config.rounds; ++round) {
      locus_total = boost_total = 0;
      t0 = std::chrono::steady_clock::now();
      for (const catfish::Rect& q : rects) {
        store->search(q, &hits);
        locus_total += hits.size();
      }
      best_locus = std::max(best_locus, static_cast<double>(rects.size()) / seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      for (const BBox& q : boxes) {
        boost_hits.clear();
        baseline.query(bgi::intersects(q), std::back_inserter(boost_hits));
        boost_total += boost_hits.size();
      }
      best_boost = std::max(best_boost, static_cast<double>(boxes.size()) / seconds_since(t0));
    }
    if (locus_total != boost_total) {
      return internal_error(fmt::format("micro rtree: {} hits from locus, {} from boost at scale {}", locus_total,
                                        boost_total, workload::query_scale_name(scale)));
    }
    const double ratio = best_locus / best_boost;
    worst_ratio = std::min(worst_ratio, ratio);
    fmt::print("{:<10} {:>12.2f} {:>16.0f} {:>16.0f} {:>8.2f}\n", workload::query_scale_name(scale),
               static_cast<double>(locus_total) / static_cast<double>(rects.size()), best_locus, best_boost, ratio);
  }
  fmt::print("ratio locus/boost, worst scale: {:.2f} (goal >= 1.0)\n", worst_ratio);
  return Status();
}

}  // namespace locus::cli
