// The loaded rectangles: see load.h.
#include "core/index/catfish/load.h"

#include <algorithm>
#include <cstdint>

#include "core/common/random.h"
#include "core/workload/spatial.h"

namespace locus::catfish {

Rect loaded_rectangle(uint64_t seed, uint64_t id) {
  static const workload::SpatialGenerator generator;
  Random rng((seed ^ 0xCA7F15ULL) * 0x9E3779B97F4A7C15ULL + id);
  const workload::SpatialBox b = generator.data(rng);
  return {b.x_min, b.y_min, b.x_max, b.y_max};
}

StoreOptions loaded_store_options(const CatfishConfig& config) {
  StoreOptions o;
  o.geometry.node_bytes = config.node_bytes;
  o.geometry.node_slots =
      static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, 3 * config.rectangles / o.geometry.min_fill() + 8192));
  return o;
}

}  // namespace locus::catfish
