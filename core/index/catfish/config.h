// Catfish's [index] keys (read in design.cc): one R*-tree server of
// node_bytes nodes (a multiple of 64 in [384, 4096]) holding `rectangles`
// data rectangles; searches at query_scale "1e-5" | "1e-2" | "power";
// server_mode "polling" | "event" (how messaging workers wait);
// server_result_us of server CPU per rectangle a search returns (the
// handler "catfish.search" costs its platform.cpu figure on top);
// client_node_us of client CPU per node an offloaded search reads.
#pragma once

#include <cstdint>
#include <string>

#include "core/scenario/index_config.h"

namespace locus::catfish {

struct CatfishConfig final : scenario::IndexConfig {
  uint32_t node_bytes = 1024;
  uint64_t rectangles = 200000;
  std::string query_scale = "1e-5";
  std::string server_mode = "event";
  double server_result_us = 0.02;
  double client_node_us = 0;
};

}  // namespace locus::catfish
