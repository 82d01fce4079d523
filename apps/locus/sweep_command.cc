// `locus sweep`: see sweep_command.h.
#include "apps/locus/sweep_command.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/locus/child_runs.h"
#include "apps/locus/cli_checks.h"
#include "apps/locus/sweep_merge.h"
#include "apps/locus/sweep_plan.h"
#include "core/designs/designs.h"

namespace locus::cli {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> grid;
  std::vector<std::string> sets;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string out;  // default results/sweep/<scenario's stem>
  std::string emit;
  std::string merge;
  int64_t point = -1;
  bool resume = false;
  double max_memory_bytes = -1;  // --max-memory for every point; -1: each point's default
};

// Lines of a failed point's log shown with its error.
constexpr size_t kLogTailLines = 8;

// The plan from the command line; every point's settings are checked by
// loading the scenario with them, so a misspelt key fails before any run.
StatusOr<SweepPlan> make_plan(const SweepOptions& o) {
  if (o.scenario.empty()) return invalid_argument("a scenario file is required (locus sweep SCENARIO.toml --grid ...)");
  SweepPlan plan;
  std::error_code ec;
  plan.scenario = fs::absolute(o.scenario, ec).lexically_normal().string();
  plan.sets = o.sets;
  plan.max_memory_bytes = o.max_memory_bytes;
  LOCUS_ASSIGN_OR_RETURN(plan.grid, parse_grid(o.grid));
  for (size_t k = 0; k < plan.points(); ++k) {
    auto s = designs::load_scenario(plan.scenario, plan.point_sets(k));
    if (!s.is_ok()) {
      return Status(s.status().code(), fmt::format("point {} ({}): {}", k, plan.label(k), s.status().message()));
    }
    plan.timeseries = plan.timeseries || s->output.timeseries_ms > 0;
  }
  return plan;
}

// The `locus sim` process of point k, its results and log in its directory.
ChildRun point_run(const std::string& self, const std::string& dir, const SweepPlan& plan, size_t k) {
  const fs::path pd = point_dir(dir, k);
  std::vector<std::string> args = {self, "sim", plan.scenario, "--quiet"};
  for (const std::string& s : plan.point_sets(k)) {
    args.push_back("--set");
    args.push_back(s);
  }
  if (plan.timeseries) {
    args.push_back("--set");
    args.push_back("output.timeseries=" + (pd / "timeseries.csv").string());
  }
  if (plan.max_memory_bytes >= 0) args.insert(args.end(), {"--max-memory", fmt::format("{}", plan.max_memory_bytes)});
  args.insert(args.end(), {"--json", (pd / kPointJson).string(), "--csv", (pd / kPointCsv).string()});
  return {std::move(args), (pd / kPointLog).string()};
}

// Point k's directory, emptied of an earlier run's results so a merge
// never takes them for this run's.
Status prepare_point_dir(const std::string& dir, size_t k) {
  const fs::path pd = point_dir(dir, k);
  std::error_code ec;
  fs::create_directories(pd, ec);
  if (ec) return invalid_argument("--out: cannot create " + pd.string() + ": " + ec.message());
  for (std::string_view f : {kPointJson, kPointCsv, kPointLog, std::string_view("timeseries.csv")})
    fs::remove(pd / f, ec);
  return Status();
}

std::string failure(const std::string& dir, const SweepPlan& plan, size_t k, const Status& st) {
  const std::string log = (fs::path(point_dir(dir, k)) / kPointLog).string();
  return fmt::format("sweep: point {} ({}) failed: {}; the last lines of {}:\n{}", k, plan.label(k), st.message(), log,
                     file_tail(log, kLogTailLines));
}

Status run_points(const std::string& dir, const SweepPlan& plan, const std::vector<size_t>& which, unsigned jobs) {
  LOCUS_ASSIGN_OR_RETURN(const std::string self, self_executable());
  std::vector<ChildRun> runs;
  for (size_t k : which) {
    LOCUS_RETURN_IF_ERROR(prepare_point_dir(dir, k));
    runs.push_back(point_run(self, dir, plan, k));
  }
  const auto t0 = std::chrono::steady_clock::now();
  size_t done = 0, failed = 0;
  LOCUS_RETURN_IF_ERROR(run_children(runs, jobs, [&](size_t i, const Status& st) {
    ++done;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!st.is_ok()) {
      ++failed;
      fmt::print(stderr, "{}", failure(dir, plan, which[i], st));
    }
    fmt::print("sweep: {}/{} done ({} {}), {:.1f} s\n", done, runs.size(), plan.label(which[i]),
               st.is_ok() ? "ok" : "FAILED", wall);
    std::fflush(stdout);
  }));
  if (failed > 0) return internal_error(fmt::format("{} of {} points failed (named above)", failed, runs.size()));
  return Status();
}

// A word for sh: single-quoted, a quote in it closed, escaped and reopened.
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// DIR/sweep.sbatch: a job array, one point per task.
Status emit_slurm(const std::string& dir, const SweepPlan& plan) {
  LOCUS_ASSIGN_OR_RETURN(const std::string self, self_executable());
  for (size_t k = 0; k < plan.points(); ++k) LOCUS_RETURN_IF_ERROR(prepare_point_dir(dir, k));
  const std::string path = (fs::path(dir) / "sweep.sbatch").string();
  std::ofstream out(path);
  out << "#!/bin/bash\n"
      << "# Written by `locus sweep --emit slurm`: one point of " << plan.points() << " per array task, sweeping\n"
      << "# " << plan.scenario << "\n# over";
  for (const GridAxis& a : plan.grid) out << " " << a.key << " (" << a.values.size() << ")";
  out << ". Submit with `sbatch " << path << "`;\n"
      << "# when every task is done, `locus sweep --merge " << dir << "` writes the tables.\n"
      << "# This binary, the scenario and " << dir << " must be on a file system the nodes share.\n"
      << "#SBATCH --job-name=locus-sweep\n"
      << "#SBATCH --array=0-" << plan.points() - 1 << "\n"
      << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
      << "#SBATCH --output=" << dir << "/points/%a/slurm.out\n"
      << "set -euo pipefail\n"
      << "exec " << sh_quote(self) << " sweep --point \"$SLURM_ARRAY_TASK_ID\" --out " << sh_quote(dir) << "\n";
  out.close();
  if (!out) return invalid_argument("--out: cannot write " + path);
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  fmt::print("sweep: {} points; Slurm job array written to {} (submit: sbatch {}; then: locus sweep --merge {})\n",
             plan.points(), path, path, dir);
  return Status();
}

// The points to run: all, or with --resume those of the same plan in dir
// that have no results yet.
StatusOr<std::vector<size_t>> points_to_run(const std::string& dir, const SweepPlan& plan, bool resume) {
  std::vector<size_t> todo;
  std::ifstream in(plan_path(dir));
  const std::string earlier((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (resume && in.is_open() && earlier != plan_json(plan)) {
    return invalid_argument("--resume: " + dir +
                            " holds another sweep (its plan.json differs: scenario, --set or --grid); give another "
                            "--out, or drop --resume to run every point again");
  }
  for (size_t k = 0; k < plan.points(); ++k) {
    const fs::path pd = point_dir(dir, k);
    std::error_code ec;
    const bool has = fs::exists(pd / kPointJson, ec) && fs::exists(pd / kPointCsv, ec);
    if (!resume || !in.is_open() || !has) todo.push_back(k);
  }
  return todo;
}

Status sweep(const SweepOptions& o) {
  if (!o.merge.empty()) {
    if (!o.scenario.empty() || !o.grid.empty() || o.point >= 0 || !o.emit.empty())
      return invalid_argument("--merge DIR takes no scenario, --grid, --point or --emit: the plan is DIR/plan.json");
    LOCUS_ASSIGN_OR_RETURN(const SweepPlan plan, read_plan(o.merge));
    return merge_sweep(o.merge, plan);
  }
  if (o.point >= 0) {
    // A Slurm array task: the plan is the one --emit wrote.
    if (o.out.empty()) return invalid_argument("--point K needs --out DIR, the directory --emit slurm wrote");
    if (!o.scenario.empty() || !o.grid.empty())
      return invalid_argument("--point K takes no scenario or --grid: the plan is DIR/plan.json");
    LOCUS_ASSIGN_OR_RETURN(const SweepPlan plan, read_plan(o.out));
    const auto k = static_cast<size_t>(o.point);
    if (k >= plan.points())
      return invalid_argument(fmt::format("--point {}: the sweep in {} has points 0-{}", k, o.out, plan.points() - 1));
    return run_points(o.out, plan, {k}, 1);
  }
  if (o.resume && !o.emit.empty())
    return invalid_argument("--resume: not with --emit (each array task runs its point)");
  LOCUS_ASSIGN_OR_RETURN(const SweepPlan plan, make_plan(o));
  const std::string dir = !o.out.empty() ? o.out : "results/sweep/" + fs::path(o.scenario).stem().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("--out: cannot create " + dir + ": " + ec.message());
  LOCUS_ASSIGN_OR_RETURN(const std::vector<size_t> todo, points_to_run(dir, plan, o.resume));
  LOCUS_RETURN_IF_ERROR(write_plan(dir, plan));
  if (o.emit == "slurm") return emit_slurm(fs::absolute(dir).lexically_normal().string(), plan);
  fmt::print("sweep: {} points of {} ({} kept from an earlier run), {} at a time, into {}\n", todo.size(),
             plan.scenario, plan.points() - todo.size(), o.jobs, dir);
  std::fflush(stdout);
  const Status ran = run_points(dir, plan, todo, o.jobs);
  const Status merged = merge_sweep(dir, plan, /*log_tails=*/false);
  // The failures were named as they happened; the merge names what is missing.
  if (!merged.is_ok()) return merged;
  return ran;
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate a scenario over a grid of settings, each point a `locus sim` process, and merge the results into "
      "one table and plot");
  cmd->add_option("scenario", o->scenario, "Scenario file (TOML)")->check(CLI::ExistingFile);
  cmd->add_option("--grid", o->grid,
                  "KEY=V1,V2,...: sweep a scenario key over these values (repeatable: the points are the cartesian "
                  "product; the last --grid is the plot's x axis)");
  cmd->add_option("--set", o->sets, "Override a scenario key in every point, e.g. --set run.duration_s=0.05");
  cmd->add_option("-j,--jobs", o->jobs, "Points at a time on this machine")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Directory of the plan, points and merged results (default results/sweep/NAME)");
  cmd->add_option("--emit", o->emit, "Write a job script instead of running: slurm (DIR/sweep.sbatch, a job array)")
      ->check(CLI::IsMember({"slurm"}));
  cmd->add_option("--merge", o->merge, "Merge the points of the sweep in DIR (after a Slurm array); run nothing");
  add_max_memory_option(*cmd, &o->max_memory_bytes);
  cmd->add_flag("--resume", o->resume,
                "Keep the points that already have results in --out from an earlier run of the same sweep; run the "
                "rest");
  cmd->add_option("--point", o->point, "Run point K of the plan in --out DIR (what each Slurm array task runs)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->callback([o, &exit_code] {
    const Status st = sweep(*o);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus sweep: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
