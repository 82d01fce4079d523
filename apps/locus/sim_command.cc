// `locus sim`: see sim_command.h.
#include "apps/locus/sim_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/simgrid/sim_runtime.h"
#include "core/harness/scenario_run.h"
#include "core/metrics/run_result.h"
#include "core/scenario/scenario.h"

namespace locus::cli {
namespace {

struct SimOptionsCli {
  std::string scenario_path;
  std::vector<std::string> sets;
  std::string json_path;
  std::string csv_path;
  bool quiet = false;
};

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// Progress on stderr: a bar on a terminal, a log line every few seconds
// otherwise; nothing for runs shorter than two seconds.
class ProgressReporter {
 public:
  explicit ProgressReporter(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}

  void update(const harness::Progress& p) {
    const double wall = seconds();
    samples_.push_back({p.ops, wall});
    if (quiet_ || wall < 2.0) return;
    if (tty_) {
      if (wall - last_print_ < 0.1 && p.sim_fraction < 1.0) return;
      const int width = 30;
      const int filled = static_cast<int>(p.sim_fraction * width);
      fmt::print(stderr, "\r[{:<{}}] {:3.0f}% simulated, {} ops, {:.1f} s", std::string(static_cast<size_t>(filled), '#'),
                 width, p.sim_fraction * 100, p.ops, wall);
      drew_ = true;
    } else {
      if (wall - last_print_ < 5.0) return;
      fmt::print(stderr, "locus sim: {:.0f}% simulated, {} ops, {:.1f} s wall\n", p.sim_fraction * 100, p.ops, wall);
    }
    last_print_ = wall;
  }
  void finish() {
    if (drew_) fmt::print(stderr, "\n");
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // (operations, wall seconds) at the first report.
  std::pair<uint64_t, double> first() const { return samples_.empty() ? std::pair<uint64_t, double>{0, 0} : samples_.front(); }
  // (operations, wall seconds) at a quarter, half, three quarters and the end.
  std::vector<std::pair<uint64_t, double>> quarters() const {
    std::vector<std::pair<uint64_t, double>> out;
    for (double q : {0.25, 0.5, 0.75, 1.0}) {
      if (samples_.empty()) break;
      const size_t i = std::min(samples_.size() - 1, static_cast<size_t>(q * static_cast<double>(samples_.size())) - 1);
      out.push_back(samples_[i]);
    }
    return out;
  }

 private:
  bool quiet_;
  bool tty_;
  bool drew_ = false;
  double last_print_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<std::pair<uint64_t, double>> samples_;
};

// One line per resource kind (mean and busiest), then the busiest few of
// all; every resource is in the JSON and CSV results.
std::string format_usage(const std::vector<ResourceUsage>& usage) {
  std::map<std::string, std::vector<const ResourceUsage*>> by_kind;
  for (const auto& u : usage) by_kind[u.kind].push_back(&u);
  std::string out = fmt::format("{:<8} {:>6} {:>9} {:>9}  {}\n", "resource", "count", "mean %", "max %", "busiest");
  for (auto& [kind, list] : by_kind) {
    double sum = 0;
    const ResourceUsage* top = list.front();
    for (const auto* u : list) {
      sum += u->utilization;
      if (u->utilization > top->utilization) top = u;
    }
    out += fmt::format("{:<8} {:>6} {:>9.1f} {:>9.1f}  {}\n", kind, list.size(),
                       100.0 * sum / static_cast<double>(list.size()), 100.0 * top->utilization, top->name);
  }
  std::vector<const ResourceUsage*> busiest;
  for (const auto& u : usage) busiest.push_back(&u);
  const size_t shown = std::min<size_t>(busiest.size(), 6);
  std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(shown), busiest.end(),
                    [](const ResourceUsage* a, const ResourceUsage* b) { return a->utilization > b->utilization; });
  if (shown > 0) {
    out += "busiest:";
    for (size_t i = 0; i < shown; ++i) out += fmt::format(" {} {:.1f}%", busiest[i]->name, 100.0 * busiest[i]->utilization);
    out += "\n";
  }
  return out;
}

Status make_parent_dir(const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument(path + ": cannot create its directory: " + ec.message());
  return Status();
}

Status run_sim(const SimOptionsCli& o) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, scenario::load_scenario(o.scenario_path, o.sets));
  fmt::print("locus sim: {} ({} servers x {} cores, {} clients, {} s simulated after {} s warm-up), seed {}\n",
             s.source, s.platform.servers, s.platform.cores_per_server, s.run.clients,
             s.run.duration_s - s.run.warmup_s, s.run.warmup_s, s.run.seed);
  std::fflush(stdout);
  ProgressReporter progress(o.quiet);
  auto factory = [](const scenario::Scenario& sc) {
    simgrid_backend::SimOptions so;
    so.seed = sc.run.seed;
    return simgrid_backend::make_simgrid_runtime(sc.platform, so);
  };
  auto report = harness::run_scenario(s, factory, [&](const harness::Progress& p) { progress.update(p); });
  progress.finish();
  if (!report.is_ok()) return report.status();
  const double wall = progress.seconds();
  std::vector<metrics::RunResult> results{report->result};
  fmt::print("{}", metrics::format_table(results));
  fmt::print("\n{}", format_usage(report->result.resources));
  fmt::print("\nsimulator: {} client operations in {:.2f} s wall = {:.0f} simulated ops per wall second; peak memory {:.0f} MiB\n",
             report->total_ops, wall, static_cast<double>(report->total_ops) / wall, peak_rss_mib());
  // The steady rate: from the first progress report (1% of the simulated
  // time, after building the platform, loading the records and connecting
  // the clients) to the end, so a short scenario's set-up does not hide it.
  if (const auto q = progress.quarters(); !q.empty() && progress.first().second > 0 && wall > progress.first().second) {
    const auto [ops0, wall0] = progress.first();
    fmt::print("simulator: set-up {:.2f} s wall; then {:.0f} simulated ops per wall second\n", wall0,
               static_cast<double>(report->total_ops - ops0) / (wall - wall0));
  }
  std::string growth;
  for (const auto& [ops, w] : progress.quarters()) growth += fmt::format("  {} ops: {:.2f} s", ops, w);
  if (!growth.empty()) fmt::print("wall time against simulated operations:{}\n", growth);

  // Flags win over the scenario's [output]; without either, results go
  // to results/<name>.json and .csv.
  const std::string stem = "results/" + s.output.name;
  const std::string json = !o.json_path.empty() ? o.json_path : !s.output.json.empty() ? s.output.json : stem + ".json";
  const std::string csv = !o.csv_path.empty() ? o.csv_path : !s.output.csv.empty() ? s.output.csv : stem + ".csv";
  for (const std::string& path : {json, csv}) LOCUS_RETURN_IF_ERROR(make_parent_dir(path));
  LOCUS_RETURN_IF_ERROR(metrics::write_json_file(json, results));
  LOCUS_RETURN_IF_ERROR(metrics::write_csv_file(csv, results));
  fmt::print("results written to {} and {}\n", json, csv);
  if (!report->timeseries.empty()) {
    const std::string path = !s.output.timeseries.empty() ? s.output.timeseries : stem + "-timeseries.csv";
    LOCUS_RETURN_IF_ERROR(make_parent_dir(path));
    LOCUS_RETURN_IF_ERROR(harness::write_timeseries_csv(path, report->timeseries));
    fmt::print("time series ({} windows of {} ms) written to {}\n", report->timeseries.size(),
               s.output.timeseries_ms, path);
  }
  return Status();
}

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<SimOptionsCli>();
  CLI::App* cmd = app.add_subcommand("sim", "Simulate a scenario on the SimGrid backend");
  cmd->add_option("scenario", opts->scenario_path, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", opts->sets, "Override a scenario key, e.g. --set run.clients=64 (repeatable)");
  cmd->add_option("--json", opts->json_path, "Write the results as JSON to FILE (overrides output.json)");
  cmd->add_option("--csv", opts->csv_path, "Write the results as CSV to FILE (overrides output.csv)");
  cmd->add_flag("--quiet", opts->quiet, "No progress on stderr");
  cmd->callback([opts, &exit_code] {
    Status st = run_sim(*opts);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus sim: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
