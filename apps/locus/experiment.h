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
//   scenario = "../../cell/other.toml"          # optional: this series' own file
//
//   [[claim]]
//   text = "8 cores: 7% better than server-side only"
//   series = "cell"
//   at = 8                                      # an x value
//   over = "server-side only"                   # optional: a ratio to that series
//   value = 1.07                                # the paper's figure
//   metric = "ops_per_s"                        # optional, else the experiment's
//
//   [[order]]                                   # an ordering the paper states
//   text = "8 cores: Cell above server-side only"
//   series = "cell"
//   at = 8
//   above = ["server-side only"]                # or below = [...]
//   any = false                                 # optional: true = above (below)
//                                               # at least one of them, else all
//   metric = "ops_per_s"                        # optional, else the experiment's
//
// An ordering has no figure: where a paper says only which policy wins
// (an appendix's "coarse-grained has the lowest latency at low load"), the
// report says whether the simulation agrees (holds, reversed, or tie when
// the two are within 1%), since a reversed ordering misleads a planner
// more than a figure 10% off.
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
  std::string scenario;  // resolved; empty: the experiment's
};

struct ExperimentClaim {
  std::string text;
  std::string series;
  std::string at;    // one of the experiment's x values
  std::string over;  // empty: the value itself; else its ratio to this series
  std::string metric;
  double value = 0;
};

struct ExperimentOrder {
  std::string text;
  std::string series;
  std::string at;
  bool above = true;                // series above (else below) the others
  std::vector<std::string> others;  // the series compared with
  bool any = false;                 // above (below) at least one of others, else every one
  std::string metric;
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
  std::vector<ExperimentOrder> orders;

  // The scenario file series s runs.
  const std::string& scenario_of(size_t s) const { return series[s].scenario.empty() ? scenario : series[s].scenario; }
};

StatusOr<Experiment> parse_experiment(const std::string& path, std::string_view text);
StatusOr<Experiment> load_experiment(const std::string& path);

}  // namespace locus::cli
