// `locus reproduce`: see reproduce_command.h.
#include "apps/locus/reproduce_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/locus/child_runs.h"
#include "apps/locus/cli_checks.h"
#include "apps/locus/experiment.h"
#include "apps/locus/line_plot.h"
#include "core/designs/designs.h"

namespace locus::cli {
namespace {

namespace fs = std::filesystem;

struct ReproduceOptions {
  std::vector<std::string> designs;
  std::string papers = "scenarios/papers";
  std::string out = "results/reproduction";
  std::vector<std::string> sets;  // every run
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  double max_memory_bytes = -1;  // --max-memory for every simulation; -1: each one's default (MemAvailable)
  bool list = false;             // check and list the simulations, run none
};

// One simulated point: an experiment's series at one x value.
struct Point {
  size_t experiment = 0, series = 0, value = 0;
  std::string stem;  // raw/<stem>.{json,csv,log}
  bool ok = false;
  PointSummary summary;
  double metric(std::string_view m) const { return summary.metric(m); }
};

std::string safe(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return s;
}

StatusOr<std::vector<Experiment>> find_experiments(const ReproduceOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.papers, ec)) {
    return not_found("--papers: " + o.papers +
                     " is not a directory (run from the repository's root, or give --papers)");
  }
  std::vector<std::string> designs = o.designs;
  if (designs.empty()) {
    for (const fs::directory_entry& d : fs::directory_iterator(o.papers)) {
      if (d.is_directory()) designs.push_back(d.path().filename().string());
    }
    std::sort(designs.begin(), designs.end());
  }
  std::vector<Experiment> out;
  for (const std::string& design : designs) {
    const fs::path dir = fs::path(o.papers) / design;
    if (!fs::is_directory(dir, ec))
      return not_found("no experiments for '" + design + "': " + dir.string() + " does not exist");
    std::vector<std::string> files;
    for (const fs::directory_entry& f : fs::directory_iterator(dir)) {
      if (f.is_regular_file() && f.path().extension() == ".toml") files.push_back(f.path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.empty())
      return not_found("no experiments for '" + design + "': " + dir.string() + " holds no .toml file");
    for (const std::string& f : files) {
      LOCUS_ASSIGN_OR_RETURN(Experiment x, load_experiment(f));
      if (!fs::is_regular_file(x.scenario, ec)) return not_found(f + ": experiment.scenario: no file " + x.scenario);
      for (const ExperimentSeries& s : x.series) {
        if (!s.scenario.empty() && !fs::is_regular_file(s.scenario, ec))
          return not_found(f + ": series '" + s.name + "': scenario: no file " + s.scenario);
      }
      out.push_back(std::move(x));
    }
  }
  return out;
}

// A point's --set list: the experiment's, its series', the swept value,
// then the command line's.
std::vector<std::string> point_sets(const Experiment& x, const ReproduceOptions& o, const Point& p) {
  std::vector<std::string> sets = x.sets;
  sets.insert(sets.end(), x.series[p.series].sets.begin(), x.series[p.series].sets.end());
  sets.push_back(x.x + "=" + x.values[p.value]);
  sets.insert(sets.end(), o.sets.begin(), o.sets.end());
  return sets;
}

// The `locus sim` run of one point, output to its log.
ChildRun point_run(const std::string& self, const Experiment& x, const ReproduceOptions& o, const Point& p,
                   const fs::path& raw) {
  std::vector<std::string> args = {self, "sim", x.scenario_of(p.series), "--quiet"};
  for (const std::string& s : point_sets(x, o, p)) {
    args.push_back("--set");
    args.push_back(s);
  }
  if (o.max_memory_bytes >= 0) args.insert(args.end(), {"--max-memory", fmt::format("{}", o.max_memory_bytes)});
  args.push_back("--json");
  args.push_back((raw / (p.stem + ".json")).string());
  args.push_back("--csv");
  args.push_back((raw / (p.stem + ".csv")).string());
  return {std::move(args), (raw / (p.stem + ".log")).string()};
}

std::string number(double v) {
  if (std::isnan(v)) return "-";
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// A series' metric at one x value of experiment x, whose points start at
// pts[first]; NaN for a failed run.
double metric_at(const Experiment& x, const std::vector<Point>& pts, size_t first, const std::string& series,
                 const std::string& at, const std::string& metric) {
  for (size_t i = first; i < pts.size() && pts[i].experiment == pts[first].experiment; ++i) {
    const Point& p = pts[i];
    if (x.series[p.series].name == series && x.values[p.value] == at) return p.metric(metric);
  }
  return NAN;
}

// The value a claim compares with the paper's: the point's metric, or its
// ratio to another series at the same x.
double claimed(const Experiment& x, const ExperimentClaim& c, const std::vector<Point>& pts, size_t first) {
  const double v = metric_at(x, pts, first, c.series, c.at, c.metric);
  return c.over.empty() ? v : v / metric_at(x, pts, first, c.over, c.at, c.metric);
}

// Whether the simulation orders the series as the paper does ("holds"),
// the other way ("reversed"), too close to tell ("tie": within 1%, less
// than a seed changes), or cannot say (a failed run: "-"); and the
// figures compared, for the report.
constexpr double kTieShare = 0.01;
struct OrderResult {
  std::string verdict;
  std::string figures;
};
OrderResult ordered(const Experiment& x, const ExperimentOrder& o, const std::vector<Point>& pts, size_t first) {
  const double v = metric_at(x, pts, first, o.series, o.at, o.metric);
  std::string figures = fmt::format("{} {}", o.series, number(v));
  bool failed = std::isnan(v), all = true, some = false, tie = false;
  for (const std::string& other : o.others) {
    const double w = metric_at(x, pts, first, other, o.at, o.metric);
    figures += fmt::format(", {} {}", other, number(w));
    failed = failed || std::isnan(w);
    const bool close = std::fabs(v - w) <= kTieShare * std::max(std::fabs(v), std::fabs(w));
    const bool holds = !close && (o.above ? v > w : v < w);
    tie = tie || close;
    all = all && holds;
    some = some || holds;
  }
  if (failed) return {"-", figures};
  if (o.any ? some : all) return {"holds", figures};
  return {tie ? "tie" : "reversed", figures};
}

bool write_plot(const Experiment& x, const fs::path& dir, const std::string& csv) {
  LinePlot plot{.title = x.title, .x_label = x.x, .y_label = x.metric, .csv = csv, .numeric_x = x.numeric_x};
  for (const ExperimentSeries& s : x.series) plot.series.push_back(s.name);
  // The paper's figures of the plotted metric, as points.
  for (const ExperimentClaim& c : x.claims) {
    if (!c.over.empty() || c.metric != x.metric) continue;
    const auto at = std::find(x.values.begin(), x.values.end(), c.at) - x.values.begin();
    plot.marks += fmt::format("{},{}\n", x.numeric_x ? c.at : std::to_string(at), c.value);
  }
  plot.marks_title = "the paper";
  plot.gp = (dir / (x.name + ".gp")).string();
  plot.png = (dir / (x.name + ".png")).string();
  return draw_line_plot(plot);
}

Status reproduce(const ReproduceOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(std::vector<Experiment> experiments, find_experiments(o));
  LOCUS_ASSIGN_OR_RETURN(const std::string self, self_executable());
  std::error_code ec;
  std::vector<Point> points;
  for (size_t e = 0; e < experiments.size(); ++e) {
    const Experiment& x = experiments[e];
    for (size_t s = 0; s < x.series.size(); ++s) {
      for (size_t v = 0; v < x.values.size(); ++v) {
        points.push_back({e, s, v, safe(fmt::format("{}-{}-{}", x.name, x.series[s].name, x.values[v]))});
      }
    }
  }
  // Every point's scenario and settings are checked before any runs, so a
  // misspelt key fails now rather than after the others.
  for (const Point& p : points) {
    const Experiment& x = experiments[p.experiment];
    auto s = designs::load_scenario(x.scenario_of(p.series), point_sets(x, o, p));
    if (!s.is_ok()) {
      return Status(s.status().code(), fmt::format("{}: series '{}' at {} = {}: {}", x.path, x.series[p.series].name,
                                                   x.x, x.values[p.value], s.status().message()));
    }
  }
  if (o.list) {
    for (const Experiment& x : experiments) {
      fmt::print("{}/{}: {} ({} series x {} values of {}, paper figures: {}, orderings: {})\n", x.design, x.name,
                 x.title, x.series.size(), x.values.size(), x.x, x.claims.size(), x.orders.size());
    }
    fmt::print("reproduce: {} experiments, {} simulations, all settings valid\n", experiments.size(), points.size());
    return Status();
  }
  for (const Experiment& x : experiments) {
    fs::create_directories(fs::path(o.out) / x.design / "raw", ec);
    if (ec)
      return invalid_argument("--out: cannot create " + (fs::path(o.out) / x.design).string() + ": " + ec.message());
  }
  // Each simulation checks its memory estimate against MemAvailable when
  // it starts, or against --max-memory. The estimates count the regions a
  // store reserves, which it touches only as it fills them (16 GB estimated
  // for a sixteen-server Cell run that peaks at 3.1 GB), so an equal share
  // per job would refuse runs that fit: with --jobs above 1 on a small
  // machine, give --max-memory.
  fmt::print("reproduce: {} experiments, {} simulations, {} at a time{}\n", experiments.size(), points.size(), o.jobs,
             o.max_memory_bytes >= 0 ? fmt::format(", each held to {:.1f} GB (--max-memory)", o.max_memory_bytes / 1e9)
                                     : std::string());
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  size_t done = 0, failed = 0;
  auto raw_of = [&](const Point& p) { return fs::path(o.out) / experiments[p.experiment].design / "raw"; };
  std::vector<ChildRun> runs;
  for (const Point& p : points) runs.push_back(point_run(self, experiments[p.experiment], o, p, raw_of(p)));
  LOCUS_RETURN_IF_ERROR(run_children(runs, o.jobs, [&](size_t i, const Status& exit) {
    Point& p = points[i];
    ++done;
    const fs::path raw = raw_of(p);
    Status st = exit;
    if (st.is_ok()) {
      auto summary = read_point_summary((raw / (p.stem + ".json")).string());
      if (summary.is_ok()) p.summary = *summary;
      st = summary.status();
    }
    p.ok = st.is_ok();
    if (!p.ok) {
      ++failed;
      fmt::print(stderr, "reproduce: {} failed ({}); see {}\n", p.stem, st.message(),
                 (raw / (p.stem + ".log")).string());
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("reproduce: {}/{} done, {:.0f} s\n", done, points.size(), wall);
    std::fflush(stdout);
  }));

  // Per experiment: a CSV (x, one column per series, in the experiment's
  // metric; then every metric of every point), the plot, the report.
  std::string report = fmt::format(
      "# Reproduction\n\n`locus reproduce` on {} simulations; each figure is one `locus sim` "
      "run (the commands: each experiment's file in {}).\n",
      points.size(), o.papers);
  size_t first = 0, claims = 0, claims_within = 0, orders = 0, orders_holding = 0;
  for (size_t e = 0; e < experiments.size(); ++e) {
    const Experiment& x = experiments[e];
    while (first < points.size() && points[first].experiment != e) ++first;
    const fs::path dir = fs::path(o.out) / x.design;
    auto point = [&](size_t s, size_t v) -> const Point& { return points[first + s * x.values.size() + v]; };
    const std::string csv = (dir / (x.name + ".csv")).string();
    std::ofstream c(csv);
    c << x.x;
    for (const ExperimentSeries& s : x.series) c << "," << s.name;
    c << "\n";
    for (size_t v = 0; v < x.values.size(); ++v) {
      c << x.values[v];
      for (size_t s = 0; s < x.series.size(); ++s) c << "," << number(point(s, v).metric(x.metric));
      c << "\n";
    }
    c.close();
    const bool plotted = write_plot(x, dir, csv);
    std::string own;  // series that run a scenario of their own
    for (const ExperimentSeries& s : x.series) {
      if (!s.scenario.empty()) own += fmt::format(" (series {}: `{}`)", s.name, s.scenario);
    }
    report += fmt::format("\n## {}/{}: {}\n\nSource: {}. Scenario `{}`{}, swept over `{}`; {}.\n\n", x.design, x.name,
                          x.title, x.source, x.scenario, own, x.x, x.metric);
    report += "| " + x.x + " |";
    for (const ExperimentSeries& s : x.series) report += " " + s.name + " |";
    report += "\n|---|";
    for (size_t s = 0; s < x.series.size(); ++s) report += "---|";
    report += "\n";
    for (size_t v = 0; v < x.values.size(); ++v) {
      report += "| " + x.values[v] + " |";
      for (size_t s = 0; s < x.series.size(); ++s) {
        const Point& p = point(s, v);
        report += " " + number(p.metric(x.metric));
        const double share = p.summary.server_share;
        if (x.metric != "server_share" && !std::isnan(share) && share < 1 && share > 0) {
          report += fmt::format(" ({:.0f}% server)", 100 * share);
        }
        report += " |";
      }
      report += "\n";
    }
    if (!x.claims.empty()) {
      report += "\n| the paper says | paper | simulated | simulated / paper |\n|---|---|---|---|\n";
      for (const ExperimentClaim& cl : x.claims) {
        const double sim = claimed(x, cl, points, first);
        const double ratio = sim / cl.value;
        const bool within = std::fabs(ratio - 1) <= 0.10;  // false for NaN (a failed run)
        ++claims;
        claims_within += within ? 1 : 0;
        report += fmt::format("| {} | {} | {} | {}{} |\n", cl.text, number(cl.value), number(sim), number(ratio),
                              within ? " (within 10%)" : "");
      }
    }
    if (!x.orders.empty()) {
      report += "\n| the paper says | at | simulated | ordering |\n|---|---|---|---|\n";
      for (const ExperimentOrder& o : x.orders) {
        const OrderResult r = ordered(x, o, points, first);
        ++orders;
        orders_holding += r.verdict == "holds" ? 1 : 0;
        report += fmt::format("| {} | {} = {} | {} ({}) | {} |\n", o.text, x.x, o.at, r.figures, o.metric, r.verdict);
      }
    }
    if (plotted) report += fmt::format("\n![{}]({}/{}.png)\n", x.name, x.design, x.name);
  }
  std::string summary = fmt::format("{} of {} paper figures within 10% of the simulated ones", claims_within, claims);
  if (orders > 0) summary += fmt::format("; {} of {} of the papers' orderings hold", orders_holding, orders);
  report.insert(report.find('\n') + 1, "\n" + summary + ".\n");
  fmt::print("reproduce: {}\n", summary);
  const fs::path report_path = fs::path(o.out) / "report.md";
  std::ofstream r(report_path);
  r << report;
  if (!r) return invalid_argument("--out: cannot write " + report_path.string());
  fmt::print("reproduce: report in {}\n", report_path.string());
  if (failed > 0)
    return internal_error(
        fmt::format("{} of {} simulations failed (their logs are named above)", failed, points.size()));
  return Status();
}

}  // namespace

void add_reproduce_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reproduce",
      "Run the papers' experiments (scenarios/papers/DESIGN/*.toml) on the simulator and write a report "
      "with the papers' claims beside the simulated figures");
  cmd->add_option("designs", o->designs, "Designs to reproduce (default: every directory of --papers)");
  cmd->add_option("--papers", o->papers, "Directory of the experiments")->capture_default_str();
  cmd->add_option("--out", o->out, "Directory of the results and report.md")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "Simulations at a time")->check(CLI::Range(1u, 1024u))->capture_default_str();
  cmd->add_flag("--list", o->list, "Check every experiment and its settings and list them; run nothing");
  add_max_memory_option(*cmd, &o->max_memory_bytes);
  cmd->add_option("--set", o->sets,
                  "Override a scenario key in every run (after the experiment's own), e.g. a shorter "
                  "run.duration_s for a quick look");
  cmd->callback([o, &exit_code] {
    const Status st = reproduce(*o);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus reproduce: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
