// `locus bench --index NAME --mode A,B,...`: one design's modes (Nessie:
// client, server, hybrid) run natively on loopback, one after another on
// the same scenario, with each mode's rate and its ratio to the baseline
// mode printed in one table. The scenario is a file, or a small built-in
// one (2 servers, 4 clients, YCSB-B) when none is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace locus::cli {

struct ModesBenchConfig {
  std::string index;               // index.type
  std::vector<std::string> modes;  // index.mode values, in order
  std::string baseline;            // the mode ratios are to; empty: the first
  std::string scenario_path;       // empty: the built-in scenario
  std::vector<std::string> sets;   // --set overrides, applied to every run
  double max_memory_bytes = 0;     // 0: no check
};

Status run_modes_bench(const ModesBenchConfig& c);

}  // namespace locus::cli
