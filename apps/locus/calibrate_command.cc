// `locus calibrate`: see calibrate_command.h.
#include "apps/locus/calibrate_command.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/locus/micro_blink.h"
#include "backends/loopback/loopback_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/runner/work_profile.h"

namespace locus::cli {
namespace {

// The Cell testbed's local B-link search rate (shared/calibration.md:
// "Local in-memory B-link search on one core: 379 K searches/s").
constexpr double kCellTestbedSearchesPerS = 379e3;

// The Catfish testbed's server CPU per search: shared/papers/catfish-rtree.txt
// section IV-B (figure 7's text) measures event-based fast messaging on
// the 28-core server (calibration.md: 2x14-core Xeon) with its CPUs
// saturated by searches at query scale 1e-5 over 2 M rectangles: 80
// clients see 152.50 us on average, 320 clients 680.47 us. Closed loop
// with the CPUs saturated, throughput is clients / latency = cores / CPU per
// search, so CPU per search = cores x latency / clients; the least-squares
// fit through both points (and the origin) is cores x sum(N R) / sum(N^2).
constexpr double kCatfishTestbedCores = 28;
struct ClientsLatency {
  double clients, latency_us;
};
constexpr ClientsLatency kCatfishEventPoints[] = {{80, 152.50}, {320, 680.47}};

// The Pilaf testbed's client CRC64: "about a dozen CPU cycles for each
// checksummed byte" (shared/papers/pilaf-kv-atc13.txt, section 4;
// calibration.md), on the AMD Opteron 6272 the paper names, at AMD's
// 2.1 GHz base clock (the clients taken as the same machines).
constexpr double kPilafCrcCyclesPerByte = 12;
constexpr double kPilafTestbedGHz = 2.1;
constexpr const char* kPilafCrcWork = "pilaf.client_crc";  // pilaf::kClientCrcWork

// The table line of the Pilaf testbed's CRC cost: a line through the origin.
std::string pilaf_testbed_crc_value() {
  const double us_per_byte = kPilafCrcCyclesPerByte / kPilafTestbedGHz / 1e3;
  return fmt::format("[[1, {:.6f}], [65536, {:.3f}]]  # the Pilaf paper's {:g} cycles a byte at {:g} GHz, not "
                     "measured here",
                     us_per_byte, 65536 * us_per_byte, kPilafCrcCyclesPerByte, kPilafTestbedGHz);
}

double catfish_testbed_search_us() {
  double nr = 0, nn = 0;
  for (const ClientsLatency& p : kCatfishEventPoints) nr += p.clients * p.latency_us, nn += p.clients * p.clients;
  return kCatfishTestbedCores * nr / nn;
}

struct CalibrateOptions {
  std::string scenario_path;
  std::vector<std::string> sets;
  std::vector<uint32_t> sizes;  // workload.fieldlength per run; empty: the scenario's own
  std::string vary;             // KEY=V1,V2,...: one run per value instead
  double factor = 0;            // 0: from --testbed, else 1
  std::string testbed;          // "cell" | "catfish" | "pilaf"
  double duration_s = 2.0;
  std::string out_path;
};

std::string machine_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "this machine";
}

// `text` as TOML comment lines of at most about 88 characters.
std::string comment_lines(const std::string& text) {
  std::string out, line = "#";
  size_t from = 0;
  while (from < text.size()) {
    size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    const std::string word = text.substr(from, to - from);
    if (line.size() > 1 && line.size() + 1 + word.size() > 88) out += line + "\n", line = "#";
    line += " " + word;
    from = to + 1;
  }
  return out + line + "\n";
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// One run of the scenario on loopback under the profiling runtime.
StatusOr<std::vector<runner::WorkProfile::Row>> profile_run(const CalibrateOptions& o,
                                                            const std::vector<std::string>& extra_sets,
                                                            std::string* index_type) {
  std::vector<std::string> sets = o.sets;
  sets.push_back(fmt::format("run.duration_s={}", o.duration_s));
  sets.push_back(fmt::format("run.warmup_s={}", o.duration_s / 5));
  std::string with;
  for (const std::string& set : extra_sets) {
    sets.push_back(set);
    with += (with.empty() ? "with " : ", ") + set;
  }
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, designs::load_scenario(o.scenario_path, sets));
  if (index_type != nullptr) *index_type = s.index.type;
  s.output.json.clear();
  s.output.csv.clear();
  runner::WorkProfile profile;
  auto factory = [&profile](const scenario::Scenario& sc) -> std::unique_ptr<Runtime> {
    loopback::LoopbackOptions lo;
    lo.seed = sc.run.seed;
    return std::make_unique<runner::ProfilingRuntime>(loopback::make_loopback_runtime(lo), &profile);
  };
  fmt::print(stderr, "calibrate: {} {}{}on loopback for {} s\n", o.scenario_path, with, with.empty() ? "" : " ",
             o.duration_s);
  LOCUS_ASSIGN_OR_RETURN(runner::ScenarioReport report, runner::run_scenario(s, designs::registry(), factory));
  (void)report;
  return profile.rows();
}

// The Catfish testbed's CPU per search beyond this machine's native search
// at the same set-up (query scale 1e-5, searches only, fast messaging):
// the request path's fixed cost there (event channel wake-ups, the
// testbed's own R-tree code), added to every server handler's native time.
StatusOr<double> catfish_request_overhead_us(const CalibrateOptions& o, std::string* how) {
  const std::vector<std::string> search_only = {"index.query_scale=1e-5", "workload.readproportion=1",
                                                "workload.updateproportion=0", "workload.insertproportion=0",
                                                "selector.type=server_only"};
  LOCUS_ASSIGN_OR_RETURN(const auto rows, profile_run(o, search_only, nullptr));
  for (const runner::WorkProfile::Row& r : rows) {
    if (r.name != "catfish.search") continue;
    const double testbed = catfish_testbed_search_us();
    if (testbed <= r.trimmed_mean_us) {
      return invalid_argument(fmt::format("catfish.search costs {:.3f} us here, more than the testbed's {:.3f} us",
                                             r.trimmed_mean_us, testbed));
    }
    *how = fmt::format(
        "server handlers: native time + {:.3f} us per request = the Catfish testbed's {:.3f} us of server CPU per "
        "search at query scale 1e-5 (28 cores x latency / clients, least squares over event-based fast messaging's "
        "80 clients at 152.50 us and 320 at 680.47 us, catfish-rtree.txt section IV-B) - this machine's native "
        "search there ({:.3f} us, {} calls); client work: native time, factor 1",
        testbed - r.trimmed_mean_us, testbed, r.trimmed_mean_us, r.calls);
    return testbed - r.trimmed_mean_us;
  }
  return not_found("calibrate --testbed catfish: the search-only run charged no catfish.search (is it a Catfish "
                   "scenario?)");
}

Status calibrate(const CalibrateOptions& o) {
  std::string how_factor = "times the machine factor 1 (this machine's own times)";
  double factor = o.factor > 0 ? o.factor : 1.0;
  double server_offset_us = 0;
  if (o.factor > 0) how_factor = fmt::format("times the machine factor {:.3f} (given with --factor)", o.factor);
  if (o.testbed == "pilaf") {
    how_factor = "times the machine factor 1 (this machine's own times), except pilaf.client_crc: the Pilaf "
                 "testbed's client CRC64 from the paper (a dozen cycles a checksummed byte, section 4) at its "
                 "Opteron 6272's 2.1 GHz";
  }
  if (o.testbed == "catfish") {
    LOCUS_ASSIGN_OR_RETURN(server_offset_us, catfish_request_overhead_us(o, &how_factor));
  }
  if (o.testbed == "cell") {
    MicroBlinkConfig mb;
    LOCUS_ASSIGN_OR_RETURN(LocalSearchRate here, cell_local_search_rate(mb));
    factor = here.per_s / kCellTestbedSearchesPerS;
    how_factor = fmt::format(
        "times the machine factor {:.3f} = Cell local B-link search here ({:.0f}/s, {} levels, {} keys) / the "
        "Cell testbed's 379 K/s (calibration.md)",
        factor, here.per_s, here.levels, mb.records);
  }
  std::vector<std::string> size_sets;
  for (uint32_t size : o.sizes) size_sets.push_back(fmt::format("workload.fieldlength={}", size));
  if (!o.vary.empty()) {
    const size_t eq = o.vary.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.vary.size()) {
      return invalid_argument("--vary: expected KEY=V1,V2,... (e.g. index.query_scale=1e-5,1e-2)");
    }
    std::string_view values(o.vary);
    values.remove_prefix(eq + 1);
    while (!values.empty()) {
      const size_t comma = values.find(',');
      size_sets.push_back(o.vary.substr(0, eq + 1) + std::string(values.substr(0, comma)));
      values.remove_prefix(comma == std::string_view::npos ? values.size() : comma + 1);
    }
  }
  if (size_sets.empty()) size_sets.emplace_back();

  // name -> points (bytes, us, calls), one per size.
  struct Point {
    uint64_t bytes;
    double us;
    uint64_t calls;
    double median_us;
  };
  std::map<std::string, std::vector<Point>> curves;
  std::string index_type;
  for (const std::string& size_set : size_sets) {
    std::vector<std::string> extra;
    if (!size_set.empty()) extra.push_back(size_set);
    LOCUS_ASSIGN_OR_RETURN(const auto rows, profile_run(o, extra, &index_type));
    for (const runner::WorkProfile::Row& r : rows) {
      const double offset = r.on_server ? server_offset_us : 0;
      auto cost = [&](double native_us) { return native_us * factor + offset; };
      // Bytes that vary widely within the run (hits, nodes per batch): two
      // points on the measured line (WorkProfile::Row::cost_points).
      uint64_t calls = r.calls;
      for (const auto& [bytes, us] : r.cost_points()) {
        curves[r.name].push_back({bytes, cost(us), calls, cost(r.median_us)});
        calls = 0;
      }
    }
  }
  if (curves.empty()) return not_found("calibrate: the run charged no named work (no RPC or messaging handler ran)");

  std::string command = "locus calibrate " + o.scenario_path;
  for (const std::string& set : o.sets) command += " --set " + set;
  if (!o.vary.empty()) command += " --vary " + o.vary;
  if (!o.sizes.empty()) command += " --sizes";
  for (uint32_t size : o.sizes) command += fmt::format(" {}", size);
  if (o.factor > 0) command += fmt::format(" --factor {}", o.factor);
  if (!o.testbed.empty()) command += " --testbed " + o.testbed;
  // The header first: a source comment counts beside the keys under it,
  // not above the table's header (apps/scenario_sources).
  std::string toml = "[platform.cpu.handler_cost_us]\n" + comment_lines(fmt::format(
      "Measured with `{}` on {} ({}), index {}: the mean native time per call (calls over 10x the median, "
      "preempted by the OS, left out) on the loopback backend at the bytes each call moved (request and response; "
      "where they vary within a run, two points of a least-squares line through the calls), {}.",
      command, machine_name(), today(), index_type, how_factor));
  fmt::print("{:<24} {:>10} {:>10} {:>10} {:>10}\n", "work", "bytes", "calls", "mean us", "median us");
  for (auto& [name, points] : curves) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
    // A point per distinct size (work whose bytes do not change with the
    // value size, a layout request, keeps its first): a curve if the cost
    // depends on the size, else a constant.
    std::vector<Point> distinct;
    uint64_t calls = 0;
    for (const Point& p : points) {
      fmt::print("{:<24} {:>10} {:>10} {:>10.3f} {:>10.3f}\n", name, p.bytes, p.calls, p.us, p.median_us);
      if (distinct.empty() || p.bytes != distinct.back().bytes) distinct.push_back(p);
      calls += p.calls;
    }
    std::string value = fmt::format("{:.3f}", distinct.front().us);
    if (distinct.size() > 1) {
      value.clear();
      for (const Point& p : distinct) value += fmt::format("{}[{}, {:.3f}]", value.empty() ? "" : ", ", p.bytes, p.us);
      value = "[" + value + "]";
    }
    if (o.testbed == "pilaf" && name == kPilafCrcWork) {
      toml += fmt::format("\"{}\" = {}\n", name, pilaf_testbed_crc_value());
    } else {
      toml += fmt::format("\"{}\" = {}  # {} calls\n", name, value, calls);
    }
  }
  fmt::print("\n{}", toml);
  if (!o.out_path.empty()) {
    std::ofstream out(o.out_path);
    out << toml;
    if (!out) return invalid_argument("--out: cannot write " + o.out_path);
    fmt::print("written to {}\n", o.out_path);
  }
  return Status();
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure the native cost of every named handler of a scenario (on loopback) and print it as "
                   "the scenario's [platform.cpu.handler_cost_us], by value size");
  cmd->add_option("scenario", o->scenario_path, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", o->sets, "Override a scenario key (repeatable)");
  cmd->add_option("--sizes", o->sizes, "Value sizes to measure at (workload.fieldlength), e.g. --sizes 16 1024 4096")
      ->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--vary", o->vary,
                  "Instead of --sizes: one run per value of a scenario key, e.g. --vary index.query_scale=1e-5,1e-2 "
                  "(each handler gets a point per distinct bytes moved)")
      ->excludes("--sizes");
  cmd->add_option("--factor", o->factor, "Machine factor: testbed time = native time here x factor")
      ->check(CLI::Range(1e-3, 1e3));
  cmd->add_option("--testbed", o->testbed, "Measure the factor against a testbed's calibration figure")
      ->check(CLI::IsMember({"cell", "catfish", "pilaf"}));
  cmd->add_option("--duration", o->duration_s, "Seconds of wall time per run (run.duration_s)")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  cmd->add_option("--out", o->out_path, "Also write the TOML table to FILE");
  cmd->callback([o, &exit_code] {
    if (o->factor > 0 && !o->testbed.empty()) {
      fmt::print(stderr, "locus calibrate: --factor and --testbed: give one\n");
      exit_code = 1;
      return;
    }
    Status st = calibrate(*o);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus calibrate: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
