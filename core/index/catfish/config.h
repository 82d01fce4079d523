// Catfish's [index] keys (read in design.cc): one R*-tree server of
// node_bytes nodes (a multiple of 64 in [384, 4096]) holding `rectangles`
// data rectangles; searches at query_scale "1e-5" | "1e-2" | "power";
// server_mode "polling" | "event" (how messaging workers wait);
// server_result_us of server CPU per rectangle a search returns on top of
// the handler "catfish.search"'s [platform.cpu] figure (0: a measured
// figure already grows with the answer). The client's CPU per offloaded
// READ batch is the named work "catfish.client_node" (client_offload.h);
// multi_issue = false fetches one node per READ round trip.
#pragma once

#include <cstdint>
#include <string>

#include "core/scenario/index_config.h"
#include "core/workload/spatial.h"

namespace locus::catfish {

struct CatfishConfig final : scenario::IndexConfig {
  uint32_t node_bytes = 1024;
  uint64_t rectangles = 200000;
  std::string query_scale = "1e-5";
  std::string server_mode = "event";
  double server_result_us = 0;
  bool multi_issue = true;  // offloaded searches post a batch of READs at once (section IV-C)

  // The workload's query scale that query_scale names (design.cc accepts
  // only these three).
  workload::QueryScale scale() const {
    if (query_scale == "1e-2") return workload::QueryScale::kLarge;
    if (query_scale == "power") return workload::QueryScale::kPowerLaw;
    return workload::QueryScale::kSmall;
  }
};

}  // namespace locus::catfish
