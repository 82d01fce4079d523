// JSON writer for RunResult. nlohmann::json is used only here so that the
// metrics header (and everything that includes it) does not pull it in.
// ordered_json keeps keys in the order written, which reads better than
// alphabetical when a person opens the file.
#include <nlohmann/json.hpp>

#include "core/metrics/result_writers_internal.h"
#include "core/metrics/run_result.h"

namespace locus::metrics {

namespace {

nlohmann::ordered_json latency_json(const LatencyHistogram& h) {
  return {{"mean", h.mean()},         {"min", h.min()},
          {"max", h.max()},           {"p50", h.percentile(50)},
          {"p90", h.percentile(90)},  {"p95", h.percentile(95)},
          {"p99", h.percentile(99)},  {"p999", h.percentile(99.9)}};
}

nlohmann::ordered_json run_json(const RunResult& r) {
  nlohmann::ordered_json run;
  run["name"] = r.name;
  run["backend"] = r.backend;
  run["index"] = r.index;
  run["seed"] = r.seed;
  run["duration_ns"] = r.duration_ns;
  run["total_ops"] = r.total_ops();
  run["throughput_ops_per_s"] = r.throughput_ops_per_s();
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpSummary& op : r.stats.ops()) {
    ops.push_back({{"op", op.name},
                   {"count", op.count()},
                   {"ok", op.ok},
                   {"failed", op.failed},
                   {"retries", op.retries},
                   {"throughput_ops_per_s", r.throughput_ops_per_s(op.count())},
                   {"latency_ns", latency_json(op.latency)}});
  }
  run["ops"] = std::move(ops);
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
  for (const NamedCounter& c : r.stats.counters()) counters[c.name] = c.value;
  run["counters"] = std::move(counters);
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  for (const auto& [key, value] : r.extra) extra[key] = value;
  run["extra"] = std::move(extra);
  if (!r.first_failure.empty()) run["first_failure"] = r.first_failure;
  if (!r.resources.empty()) {
    nlohmann::ordered_json resources = nlohmann::ordered_json::array();
    for (const ResourceUsage& u : r.resources) {
      resources.push_back({{"name", u.name}, {"kind", u.kind}, {"utilization", u.utilization}});
    }
    run["resources"] = std::move(resources);
  }
  if (!r.power.empty()) {
    nlohmann::ordered_json power = nlohmann::ordered_json::array();
    for (const HostPower& h : r.power) {
      power.push_back({{"name", h.name}, {"average_w", h.average_w}, {"energy_j", h.energy_j}});
    }
    run["power"] = std::move(power);
  }
  return run;
}

}  // namespace

std::string to_json_string(const std::vector<RunResult>& results, int indent) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const RunResult& r : results) runs.push_back(run_json(r));
  nlohmann::ordered_json doc;
  doc["runs"] = std::move(runs);
  // Run names come from scenario files; replace bad UTF-8 rather than throw.
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status write_json_file(const std::string& path, const std::vector<RunResult>& results) {
  return internal::write_text_file(path, to_json_string(results) + "\n");
}

}  // namespace locus::metrics
