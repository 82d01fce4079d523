// `locus reproduce`: see reproduce_command.h.
#include "apps/locus/reproduce_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "apps/locus/experiment.h"
#include "core/designs/designs.h"

extern char** environ;

namespace locus::cli {
namespace {

namespace fs = std::filesystem;

struct ReproduceOptions {
  std::vector<std::string> designs;
  std::string papers = "scenarios/papers";
  std::string out = "results/reproduction";
  std::vector<std::string> sets;  // every run
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool list = false;  // check and list the simulations, run none
};

// One simulated point: an experiment's series at one x value.
struct Point {
  size_t experiment = 0, series = 0, value = 0;
  std::string stem;  // raw/<stem>.{json,csv,log}
  bool ok = false;
  double ops_per_s = NAN, latency_us_mean = NAN, server_share = NAN;
  double metric(std::string_view m) const {
    return m == "ops_per_s" ? ops_per_s : m == "latency_us_mean" ? latency_us_mean : server_share;
  }
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

// Starts `locus sim` for one point, output to its log.
StatusOr<pid_t> spawn_point(const std::string& self, const Experiment& x, const ReproduceOptions& o, const Point& p,
                            const fs::path& raw) {
  std::vector<std::string> args = {self, "sim", x.scenario, "--quiet"};
  for (const std::string& s : point_sets(x, o, p)) {
    args.push_back("--set");
    args.push_back(s);
  }
  args.push_back("--json");
  args.push_back((raw / (p.stem + ".json")).string());
  args.push_back("--csv");
  args.push_back((raw / (p.stem + ".csv")).string());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = (raw / (p.stem + ".log")).string();
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return internal_error(fmt::format("cannot start {}: {}", self, std::strerror(rc)));
  return pid;
}

// Throughput over all operations, mean latency weighted by count, and the
// selector's server-side share.
Status read_point(const fs::path& json_path, Point* p) {
  std::ifstream in(json_path);
  if (!in) return not_found("no result " + json_path.string());
  nlohmann::json j;
  try {
    in >> j;
    const nlohmann::json& r = j.at("runs").at(0);
    p->ops_per_s = r.at("throughput_ops_per_s").get<double>();
    double sum = 0, n = 0;
    for (const nlohmann::json& op : r.at("ops")) {
      const double c = op.at("count").get<double>();
      sum += c * op.at("latency_ns").at("mean").get<double>();
      n += c;
    }
    p->latency_us_mean = n > 0 ? sum / n / 1e3 : NAN;
    if (r.contains("extra") && r["extra"].contains("server_share"))
      p->server_share = r["extra"]["server_share"].get<double>();
  } catch (const nlohmann::json::exception& e) {
    return corruption(json_path.string() + ": " + e.what());
  }
  return Status();
}

std::string number(double v) {
  if (std::isnan(v)) return "-";
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// The value a claim compares with the paper's: the point's metric, or its
// ratio to another series at the same x.
double claimed(const Experiment& x, const ExperimentClaim& c, const std::vector<Point>& pts, size_t first) {
  auto at = [&](const std::string& series) {
    for (size_t i = first; i < pts.size() && pts[i].experiment == pts[first].experiment; ++i) {
      const Point& p = pts[i];
      if (x.series[p.series].name == series && x.values[p.value] == c.at) return p.metric(c.metric);
    }
    return static_cast<double>(NAN);
  };
  const double v = at(c.series);
  return c.over.empty() ? v : v / at(c.over);
}

bool write_plot(const Experiment& x, const fs::path& dir, const std::string& csv) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) return false;
  const fs::path gp = dir / (x.name + ".gp");
  std::ofstream g(gp);
  g << "set terminal png size 900,560\n"
    << "set output '" << (dir / (x.name + ".png")).string() << "'\n"
    << "set datafile separator ','\nset key below\nset grid\n"
    << "set title \"" << x.title << "\" noenhanced\n"
    << "set xlabel '" << x.x << "' noenhanced\nset ylabel '" << x.metric << "' noenhanced\n";
  g << "plot ";
  for (size_t s = 0; s < x.series.size(); ++s) {
    g << (s == 0 ? "" : ", ") << "'" << csv << "' using " << (x.numeric_x ? "1" : "0") << ":" << s + 2
      << (x.numeric_x ? "" : ":xtic(1)") << " skip 1 with linespoints title \"" << x.series[s].name << "\" noenhanced";
  }
  // The paper's figures of the plotted metric, as points.
  std::string claims;
  for (const ExperimentClaim& c : x.claims) {
    if (!c.over.empty() || c.metric != x.metric) continue;
    const auto at = std::find(x.values.begin(), x.values.end(), c.at) - x.values.begin();
    claims += fmt::format("{},{}\n", x.numeric_x ? c.at : std::to_string(at), c.value);
  }
  if (!claims.empty())
    g << ", '-' using 1:2 with points pt 7 ps 1.5 lc rgb 'black' title 'the paper'\n" << claims << "e";
  g << "\n";
  g.close();
  return std::system(("gnuplot '" + gp.string() + "' > /dev/null 2>&1").c_str()) == 0;
}

Status reproduce(const ReproduceOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(std::vector<Experiment> experiments, find_experiments(o));
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return internal_error("cannot find this program (/proc/self/exe): " + ec.message());
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
    auto s = designs::load_scenario(x.scenario, point_sets(x, o, p));
    if (!s.is_ok()) {
      return Status(s.status().code(), fmt::format("{}: series '{}' at {} = {}: {}", x.path, x.series[p.series].name,
                                                   x.x, x.values[p.value], s.status().message()));
    }
  }
  if (o.list) {
    for (const Experiment& x : experiments) {
      fmt::print("{}/{}: {} ({} series x {} values of {}, paper figures: {})\n", x.design, x.name, x.title,
                 x.series.size(), x.values.size(), x.x, x.claims.size());
    }
    fmt::print("reproduce: {} experiments, {} simulations, all settings valid\n", experiments.size(), points.size());
    return Status();
  }
  for (const Experiment& x : experiments) {
    fs::create_directories(fs::path(o.out) / x.design / "raw", ec);
    if (ec)
      return invalid_argument("--out: cannot create " + (fs::path(o.out) / x.design).string() + ": " + ec.message());
  }
  fmt::print("reproduce: {} experiments, {} simulations, {} at a time\n", experiments.size(), points.size(), o.jobs);
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  std::map<pid_t, size_t> running;
  size_t next = 0, done = 0, failed = 0;
  auto raw_of = [&](const Point& p) { return fs::path(o.out) / experiments[p.experiment].design / "raw"; };
  while (next < points.size() || !running.empty()) {
    while (next < points.size() && running.size() < o.jobs) {
      Point& p = points[next];
      LOCUS_ASSIGN_OR_RETURN(const pid_t pid, spawn_point(self, experiments[p.experiment], o, p, raw_of(p)));
      running[pid] = next++;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) return internal_error(std::string("waitpid: ") + std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end()) continue;
    Point& p = points[it->second];
    running.erase(it);
    ++done;
    const fs::path raw = raw_of(p);
    Status st = WIFEXITED(status) && WEXITSTATUS(status) == 0
                    ? read_point(raw / (p.stem + ".json"), &p)
                    : internal_error(fmt::format("exit status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    p.ok = st.is_ok();
    if (!p.ok) {
      ++failed;
      fmt::print(stderr, "reproduce: {} failed ({}); see {}\n", p.stem, st.message(),
                 (raw / (p.stem + ".log")).string());
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("reproduce: {}/{} done, {:.0f} s\n", done, points.size(), wall);
    std::fflush(stdout);
  }

  // Per experiment: a CSV (x, one column per series, in the experiment's
  // metric; then every metric of every point), the plot, the report.
  std::string report = fmt::format(
      "# Reproduction\n\n`locus reproduce` on {} simulations; each figure is one `locus sim` "
      "run (the commands: each experiment's file in {}).\n",
      points.size(), o.papers);
  size_t first = 0, claims = 0, claims_within = 0;
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
    report += fmt::format("\n## {}/{}: {}\n\nSource: {}. Scenario `{}`, swept over `{}`; {}.\n\n", x.design, x.name,
                          x.title, x.source, x.scenario, x.x, x.metric);
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
        if (x.metric != "server_share" && !std::isnan(p.server_share) && p.server_share < 1 && p.server_share > 0) {
          report += fmt::format(" ({:.0f}% server)", 100 * p.server_share);
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
    if (plotted) report += fmt::format("\n![{}]({}/{}.png)\n", x.name, x.design, x.name);
  }
  const std::string summary =
      fmt::format("{} of {} paper figures within 10% of the simulated ones", claims_within, claims);
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
