// An experiment of the reproduction suite (`locus reproduce`,
// scenarios/papers/<design>/<name>.toml): one shipped scenario swept over
// one key for one or more series of settings, and the figures the paper
// states about it (claims), which the report sets beside the simulated
// ones. The file:
//
//   [experiment]
//   title = "Cell: searches/s against cores per server, four servers"
//   source = "cell-distributed-btree-atc16.txt, section 4 (highlights)"
//   scenario = "../../cell/four-servers.toml"   # relative to this file
//   set = ["run.duration_s=0.03"]               # every run
//   x = "platform.cores_per_server"             # the key swept ...
//   values = [1, 2, 4, 8]                       # ... over these (numbers or strings)
//   metric = "ops_per_s"                        # | "latency_us_mean" | "server_share"
//
//   [[series]]
//   name = "cell"
//   set = ["selector.type=jsq"]
//
//   [[claim]]
//   text = "8 cores: 7% better than server-side only"
//   series = "cell"
//   at = 8                                      # an x value
//   over = "server-side only"                   # optional: a ratio to that series
//   value = 1.07                                # the paper's figure
//   metric = "ops_per_s"                        # optional, else the experiment's
//
// Errors name the file, line and key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace locus::cli {

inline constexpr std::string_view kReproduceMetrics[] = {"ops_per_s", "latency_us_mean", "server_share"};

struct ExperimentSeries {
  std::string name;
  std::vector<std::string> sets;
};

struct ExperimentClaim {
  std::string text;
  std::string series;
  std::string at;    // one of the experiment's x values
  std::string over;  // empty: the value itself; else its ratio to this series
  std::string metric;
  double value = 0;
};

struct Experiment {
  std::string path;    // the file
  std::string design;  // its directory's name
  std::string name;    // its file name without .toml
  std::string title, source;
  std::string scenario;  // path, resolved against the file's directory
  std::vector<std::string> sets;
  std::string x;
  std::vector<std::string> values;  // as given to --set
  bool numeric_x = true;            // every value a number (plotted on an axis, else as labels)
  std::string metric = "ops_per_s";
  std::vector<ExperimentSeries> series;
  std::vector<ExperimentClaim> claims;
};

StatusOr<Experiment> parse_experiment(const std::string& path, std::string_view text);
StatusOr<Experiment> load_experiment(const std::string& path);

}  // namespace locus::cli
