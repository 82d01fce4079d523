// `locus bench --micro rtree`: the local search rate of Catfish's R*-tree
// store against Boost.Geometry's rtree (bgi::rstar<16>) on the same
// rectangles, loaded the same way (one insertion at a time), and the same
// queries at the paper's three scales, single-threaded, best of several
// rounds each. Boost is only the yardstick here; core never uses it.
#pragma once

#include <cstdint>

#include "core/common/status.h"

namespace locus::cli {

struct MicroRtreeConfig {
  uint64_t records = 1'000'000;  // rectangles, edges uniform in (0, 1e-4]
  uint64_t queries = 100'000;    // per scale
  uint32_t node_bytes = 1024;
  uint32_t rounds = 3;
  uint64_t seed = 1;
};

Status run_micro_rtree(const MicroRtreeConfig& config);

}  // namespace locus::cli
