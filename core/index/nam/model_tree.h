// The NAM index's trees as the driver builds them, rebuilt in this process
// for the analytic model (model.cc): the same BlinkTree code, the same
// records in the same order, the same placement of pages (round-robin over
// the memory servers per level for the fine-grained tree and the hybrid
// leaves, a partition's own server for the coarse-grained trees and the
// hybrid inner levels), on plain pages instead of registered arenas. What
// the model reads off them: heights, leaves, and how many of a uniform
// lookup's READs each memory server serves.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/common/status.h"
#include "core/index/nam/config.h"
#include "core/scenario/scenario.h"

namespace locus::nam {

struct ModelTrees {
  uint32_t fine_height = 0;  // levels of the one global tree (leaves included)
  uint64_t fine_nodes = 0, fine_leaves = 0;
  std::vector<double> fine_read_share;  // per server: its share of a lookup's node READs
  std::vector<double> fine_leaf_share;  // per server: its share of the lookups' leaf READs
  std::vector<double> level_nodes;      // fine tree, nodes per level, leaves first
  // Per partition (coarse and hybrid): its share of the keys, its tree's
  // height; hybrid: each server's share of the leaf READs.
  std::vector<double> partition_share;
  std::vector<uint32_t> partition_height;
  uint64_t partition_leaves = 0;  // summed over partitions
  std::vector<double> hybrid_leaf_share;
  uint64_t records = 0;
};

// Builds the fine-grained tree, and the partitioned trees of coarse or
// hybrid, for `servers` memory servers. Refuses loads larger than
// kMaxModelRecords (the pages live in memory here).
inline constexpr uint64_t kMaxModelRecords = 5'000'000;

// v scaled to sum to 1 (all zeros stay zeros).
std::vector<double> normalised(std::vector<double> v);
StatusOr<ModelTrees> build_model_trees(const scenario::Scenario& s, const NamConfig& c, uint32_t servers);

}  // namespace locus::nam
