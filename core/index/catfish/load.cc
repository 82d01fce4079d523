// The loaded rectangles: see load.h.
#include "core/index/catfish/load.h"

#include "core/common/random.h"
#include "core/workload/spatial.h"

namespace locus::catfish {

Rect loaded_rectangle(uint64_t seed, uint64_t id) {
  static const workload::SpatialGenerator generator;
  Random rng((seed ^ 0xCA7F15ULL) * 0x9E3779B97F4A7C15ULL + id);
  const workload::SpatialBox b = generator.data(rng);
  return {b.x_min, b.y_min, b.x_max, b.y_max};
}

}  // namespace locus::catfish
