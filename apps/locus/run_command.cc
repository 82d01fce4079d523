// `locus run`, `locus sim` and `locus bench SCENARIO`: see run_command.h.
#include "apps/locus/run_command.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "apps/locus/cli_checks.h"
#include "backends/loopback/loopback_runtime.h"
#include "backends/simgrid/sim_runtime.h"
#ifdef LOCUS_HAVE_VERBS
#include "apps/locus/zookeeper_cluster.h"
#include "backends/verbs/verbs_runtime.h"
#endif
#include "core/designs/designs.h"
#include "core/metrics/run_result.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::cli {
namespace {

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

  void update(const runner::Progress& p) {
    const double wall = seconds();
    samples_.push_back({p.ops, wall});
    if (cpu_at_first_ < 0) cpu_at_first_ = cpu_seconds();
    if (quiet_ || wall < 2.0) return;
    if (tty_) {
      if (wall - last_print_ < 0.1 && p.sim_fraction < 1.0) return;
      const int width = 30;
      const int filled = static_cast<int>(p.sim_fraction * width);
      fmt::print(stderr, "\r[{:<{}}] {:3.0f}% run, {} ops, {:.1f} s", std::string(static_cast<size_t>(filled), '#'),
                 width, p.sim_fraction * 100, p.ops, wall);
      drew_ = true;
    } else {
      if (wall - last_print_ < 5.0) return;
      fmt::print(stderr, "locus: {:.0f}% run, {} ops, {:.1f} s wall\n", p.sim_fraction * 100, p.ops, wall);
    }
    last_print_ = wall;
  }
  void finish() {
    if (drew_) fmt::print(stderr, "\n");
  }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  // This process's CPU time (user and system): unlike wall time, not
  // stretched by other processes sharing the machine.
  static double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  }
  // CPU seconds at the first report (-1 before it).
  double cpu_at_first() const { return cpu_at_first_; }
  // (operations, wall seconds) at the first report.
  std::pair<uint64_t, double> first() const {
    return samples_.empty() ? std::pair<uint64_t, double>{0, 0} : samples_.front();
  }
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
  double cpu_at_first_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<std::pair<uint64_t, double>> samples_;
};

// One line per resource kind (mean and busiest), then the busiest few of
// all; every resource is in the JSON and CSV results.
std::string format_usage(const std::vector<ResourceUsage>& usage) {
  std::map<std::string, std::vector<const ResourceUsage*>> by_kind;
  for (const auto& u : usage) by_kind[u.kind].push_back(&u);
  std::string out = fmt::format("{:<11} {:>6} {:>9} {:>9}  {}\n", "resource", "count", "mean %", "max %", "busiest");
  for (auto& [kind, list] : by_kind) {
    double sum = 0;
    const ResourceUsage* top = list.front();
    for (const auto* u : list) {
      sum += u->utilization;
      if (u->utilization > top->utilization) top = u;
    }
    out += fmt::format("{:<11} {:>6} {:>9.1f} {:>9.1f}  {}\n", kind, list.size(),
                       100.0 * sum / static_cast<double>(list.size()), 100.0 * top->utilization, top->name);
  }
  std::vector<const ResourceUsage*> busiest;
  for (const auto& u : usage) busiest.push_back(&u);
  const size_t shown = std::min<size_t>(busiest.size(), 6);
  std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(shown), busiest.end(),
                    [](const ResourceUsage* a, const ResourceUsage* b) { return a->utilization > b->utilization; });
  if (shown > 0) {
    out += "busiest:";
    for (size_t i = 0; i < shown; ++i)
      out += fmt::format(" {} {:.1f}%", busiest[i]->name, 100.0 * busiest[i]->utilization);
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

// Where results go, and which setting said so: checked (directory made,
// writable) before the run, so a bad path costs no run.
struct OutputPath {
  std::string path;
  std::string setting;
};

Status check_output_path(const OutputPath& out) {
  if (Status st = make_parent_dir(out.path); !st.is_ok()) return invalid_argument(out.setting + ": " + st.message());
  std::error_code ec;
  const std::filesystem::path p(out.path);
  const bool exists = std::filesystem::exists(p, ec);
  if (exists && std::filesystem::is_directory(p, ec)) {
    return invalid_argument(out.setting + ": " + out.path + " is a directory");
  }
  // Opened to append, so an existing file is not changed; one made here goes again.
  std::FILE* f = std::fopen(out.path.c_str(), "a");
  if (f == nullptr) return invalid_argument(out.setting + ": cannot write " + out.path + ": " + std::strerror(errno));
  std::fclose(f);
  if (!exists) std::filesystem::remove(p, ec);
  return Status();
}

// The runtime of --backend: every server and client of the scenario in
// this process, or on verbs the clients only (the servers are `locus
// serve` processes of the same scenario and cluster file).
StatusOr<runner::ScenarioRuntimeFactory> runtime_factory(const RunOptionsCli& o, design::Placement* placement) {
  if (o.backend == "simgrid") {
    return runner::ScenarioRuntimeFactory([](const scenario::Scenario& sc) {
      simgrid_backend::SimOptions so;
      so.seed = sc.run.seed;
      // A client each, and on each server an actor per core, its polling
      // and daemon actors: an upper estimate is enough (sim_runtime.h).
      so.expected_actors = uint64_t{sc.run.clients} + uint64_t{sc.platform.servers} * (sc.platform.cores_per_server + 8);
      return simgrid_backend::make_simgrid_runtime(sc.platform, so);
    });
  }
  if (o.backend == "loopback") {
    return runner::ScenarioRuntimeFactory([](const scenario::Scenario& sc) {
      loopback::LoopbackOptions lo;
      lo.seed = sc.run.seed;
      lo.retry_exceeded_after = sc.platform.nic.retry_exceeded_after();
      return loopback::make_loopback_runtime(lo);
    });
  }
#ifdef LOCUS_HAVE_VERBS
  if (o.backend == "verbs") {
    if (o.config_path.empty())
      return invalid_argument("--config: --backend verbs needs the cluster file the servers use");
    LOCUS_ASSIGN_OR_RETURN(verbs::ClusterConfig cluster, verbs::load_cluster_config(o.config_path));
    if (o.serve_here && cluster.servers.empty()) {
      return invalid_argument("--serve-here: " + cluster.source + " lists no [[server]] to serve on");
    }
    // [zookeeper] without [[server]]: the servers announced themselves there.
    LOCUS_RETURN_IF_ERROR(resolve_cluster(&cluster, o.zookeeper_wait_ms));
    placement->servers_here = o.serve_here;
    // Clients connect to every server: elsewhere, at the ports the file gives.
    if (!o.serve_here) LOCUS_RETURN_IF_ERROR(verbs::check_connectable(cluster));
    return runner::ScenarioRuntimeFactory([cluster](const scenario::Scenario& sc) -> std::unique_ptr<Runtime> {
      return verbs::make_verbs_runtime(cluster, {.seed = sc.run.seed});
    });
  }
  return invalid_argument("--backend: '" + o.backend + "' is not one of simgrid, loopback, verbs");
#else
  return invalid_argument("--backend: '" + o.backend +
                          "' is not built into this binary (available: simgrid, loopback; verbs needs "
                          "libibverbs-dev and librdmacm-dev)");
#endif
}

Status run(const RunOptionsCli& o, std::string_view command) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, designs::load_scenario(o.scenario_path, o.sets));
  design::Placement placement;
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o, &placement));
  const bool simulated = o.backend == "simgrid";
  fmt::print("locus {}: {} on {} ({}, {} servers x {} cores, {} clients, {:g} s {} after {:g} s warm-up), seed {}\n",
             command, s.source, o.backend, s.index.type, s.platform.servers, s.platform.cores_per_server, s.run.clients,
             s.run.duration_s - s.run.warmup_s, simulated ? "simulated" : "measured", s.run.warmup_s, s.run.seed);
  std::fflush(stdout);
  // Flags win over the scenario's [output]; without either, results go
  // to results/<name>.json and .csv.
  const std::string stem = "results/" + s.output.name;
  const OutputPath json = !o.json_path.empty()     ? OutputPath{o.json_path, "--json"}
                          : !s.output.json.empty() ? OutputPath{s.output.json, "output.json"}
                                                   : OutputPath{stem + ".json", "output.json (default)"};
  const OutputPath csv = !o.csv_path.empty()     ? OutputPath{o.csv_path, "--csv"}
                         : !s.output.csv.empty() ? OutputPath{s.output.csv, "output.csv"}
                                                 : OutputPath{stem + ".csv", "output.csv (default)"};
  const OutputPath series = !s.output.timeseries.empty()
                                ? OutputPath{s.output.timeseries, "output.timeseries"}
                                : OutputPath{stem + "-timeseries.csv", "output.timeseries (default)"};
  for (const OutputPath* out : {&json, &csv}) LOCUS_RETURN_IF_ERROR(check_output_path(*out));
  if (s.output.timeseries_ms > 0) LOCUS_RETURN_IF_ERROR(check_output_path(series));
  ProgressReporter progress(o.quiet);
  runner::RunOptions ro;
  ro.placement = placement;
  const MemoryLimit limit = memory_limit(o.max_memory_bytes);
  ro.max_memory_bytes = limit.bytes;
  ro.max_memory_source = limit.source;
  ro.on_progress = [&](const runner::Progress& p) { progress.update(p); };
  auto report = runner::run_scenario(s, designs::registry(), factory, ro);
  progress.finish();
  if (!report.is_ok()) return report.status();
  const double wall = progress.seconds();
  std::vector<metrics::RunResult> results{report->result};
  fmt::print("{}", metrics::format_table(results));
  if (!report->result.resources.empty()) fmt::print("\n{}", format_usage(report->result.resources));
  if (simulated) {
    fmt::print(
        "\nsimulator: {} client operations in {:.2f} s wall = {:.0f} simulated ops per wall second; peak "
        "memory {:.0f} MiB\n",
        report->total_ops, wall, static_cast<double>(report->total_ops) / wall, peak_rss_mib());
    // The steady rate: from the first progress report (1% of the simulated
    // time, after building the platform, loading the records and connecting
    // the clients) to the end, so a short scenario's set-up does not hide it.
    if (const auto q = progress.quarters();
        !q.empty() && progress.first().second > 0 && wall > progress.first().second) {
      const auto [ops0, wall0] = progress.first();
      const double cpu = ProgressReporter::cpu_seconds() - progress.cpu_at_first();
      fmt::print("simulator: set-up {:.2f} s wall; then {:.0f} simulated ops per wall second ({:.0f} per CPU second)\n",
                 wall0, static_cast<double>(report->total_ops - ops0) / (wall - wall0),
                 cpu > 0 ? static_cast<double>(report->total_ops - ops0) / cpu : 0.0);
    }
    std::string growth;
    for (const auto& [ops, w] : progress.quarters()) growth += fmt::format("  {} ops: {:.2f} s", ops, w);
    if (!growth.empty()) fmt::print("wall time against simulated operations:{}\n", growth);
  }

  LOCUS_RETURN_IF_ERROR(metrics::write_json_file(json.path, results));
  LOCUS_RETURN_IF_ERROR(metrics::write_csv_file(csv.path, results));
  fmt::print("results written to {} and {}\n", json.path, csv.path);
  if (!report->timeseries.empty()) {
    const std::string& path = series.path;
    LOCUS_RETURN_IF_ERROR(runner::write_timeseries_csv(path, report->timeseries));
    fmt::print("time series ({} windows of {} ms) written to {}\n", report->timeseries.size(), s.output.timeseries_ms,
               path);
  }
  return Status();
}

}  // namespace

uint64_t memory_available_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    uint64_t kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %" SCNu64 " kB", &kib) == 1) return kib * 1024;
  }
  return 0;
}

void add_scenario_options(CLI::App& cmd, RunOptionsCli& o) {
  add_max_memory_option(cmd, &o.max_memory_bytes);
  cmd.add_option("--set", o.sets, "Override a scenario key, e.g. --set run.clients=64 (repeatable)");
  cmd.add_option("--json", o.json_path, "Write the results as JSON to FILE (overrides output.json)");
  cmd.add_option("--csv", o.csv_path, "Write the results as CSV to FILE (overrides output.csv)");
  cmd.add_option("--config", o.config_path, "verbs: the cluster file whose servers `locus serve` runs");
  cmd.add_flag("--serve-here", o.serve_here,
               "verbs: serve the cluster file's entries in this process too (port 0: any free port), servers and "
               "clients in one run as on the other backends");
  cmd.add_option("--zookeeper-wait-ms", o.zookeeper_wait_ms,
                 "verbs, a cluster file with [zookeeper] and no [[server]]: wait this long for `locus serve "
                 "--zookeeper` to announce the servers")
      ->check(CLI::Range(0, 3'600'000));
  cmd.add_flag("--quiet", o.quiet, "No progress on stderr");
}

Status run_scenario_command(const RunOptionsCli& o, std::string_view command) {
  if (o.backend == "verbs" && o.config_path.empty()) {
    return invalid_argument("--config: --backend verbs needs the cluster file the servers use");
  }
  if (o.backend != "verbs" && !o.config_path.empty()) return invalid_argument("--config: only for --backend verbs");
  if (o.backend != "verbs" && o.serve_here) {
    return invalid_argument("--serve-here: only for --backend verbs (the other backends serve here anyway)");
  }
  return catch_bad_alloc(fmt::format("locus {} {}", command, o.scenario_path), [&] { return run(o, command); });
}

void add_run_commands(CLI::App& app, int& exit_code) {
  for (const char* name : {"run", "sim"}) {
    const bool sim = std::string_view(name) == "sim";
    auto opts = std::make_shared<RunOptionsCli>();
    CLI::App* cmd = app.add_subcommand(
        name, sim ? "Simulate a scenario on the SimGrid backend (locus run --backend simgrid)"
                  : "Run a scenario's servers and clients on any backend (on verbs: the clients, against "
                    "`locus serve`)");
    cmd->add_option("scenario", opts->scenario_path, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
    if (!sim) {
      cmd->add_option("--backend", opts->backend, "Transport backend")
          ->check(CLI::IsMember({"simgrid", "loopback", "verbs"}))
          ->capture_default_str();
    }
    add_scenario_options(*cmd, *opts);
    cmd->callback([opts, name, &exit_code] {
      Status st = run_scenario_command(*opts, name);
      if (!st.is_ok()) {
        fmt::print(stderr, "locus {}: {}\n", name, st.to_string());
        exit_code = 1;
      }
    });
  }
}

}  // namespace locus::cli
