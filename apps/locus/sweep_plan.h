// The plan of a `locus sweep`: the scenario, the settings every point
// shares, and the grid (one axis per --grid KEY=V1,V2,...) whose cartesian
// product is the points, numbered from 0 with the first axis varying
// slowest. The plan is written to DIR/plan.json before any point runs, so
// a Slurm array task (`locus sweep --point K --out DIR`) and a later
// `locus sweep --merge DIR` see exactly the points the sweep was given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace locus::cli {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;  // as given to --set (TOML or a bare word)
};

struct SweepPlan {
  std::string scenario;           // absolute path
  std::vector<std::string> sets;  // --set, every point
  std::vector<GridAxis> grid;
  // Set output.timeseries per point (the scenario writes a time series).
  bool timeseries = false;
  // --max-memory of every point's `locus sim` (bytes; -1: its default,
  // the memory available when it starts).
  double max_memory_bytes = -1;

  size_t points() const;
  // Point k's value on each axis, first axis first.
  std::vector<std::string> values(size_t k) const;
  // Point k's --set list: the shared settings, then the swept ones.
  std::vector<std::string> point_sets(size_t k) const;
  // "key=value key=value", for messages.
  std::string label(size_t k) const;
};

// "KEY=V1,V2,...": commas inside double quotes or brackets belong to the value.
StatusOr<GridAxis> parse_grid_axis(std::string_view arg);
// Every axis, refusing a key given twice.
StatusOr<std::vector<GridAxis>> parse_grid(const std::vector<std::string>& args);

// A swept value as a table shows it: a TOML string without its quotes.
std::string display_value(const std::string& value);

// DIR/plan.json.
std::string plan_path(const std::string& dir);
std::string plan_json(const SweepPlan& plan);
Status write_plan(const std::string& dir, const SweepPlan& plan);
StatusOr<SweepPlan> read_plan(const std::string& dir);

// Point k's directory (DIR/points/K) and the files a run leaves there.
std::string point_dir(const std::string& dir, size_t k);
inline constexpr std::string_view kPointJson = "result.json", kPointCsv = "result.csv", kPointLog = "log";

}  // namespace locus::cli
