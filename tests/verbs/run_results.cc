// Reading `locus run` results and `locus serve` figures: see run_results.h.
#include "tests/verbs/run_results.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace locus::verbs::testing {

double RunResults::extra_or(const std::string& name, double otherwise) const {
  auto it = extra.find(name);
  return it == extra.end() ? otherwise : it->second;
}

RunResults read_run_json(const std::string& path) {
  RunResults r;
  std::ifstream in(path);
  if (!in) {
    r.error = path + ": no results file";
    return r;
  }
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    const nlohmann::json& runs = doc.at("runs");
    if (!runs.is_array() || runs.empty()) {
      r.error = path + ": no run in the results";
      return r;
    }
    const nlohmann::json& run = runs.front();
    r.name = run.at("name").get<std::string>();
    r.backend = run.at("backend").get<std::string>();
    r.index = run.at("index").get<std::string>();
    r.total_ops = run.at("total_ops").get<uint64_t>();
    r.throughput_ops_per_s = run.at("throughput_ops_per_s").get<double>();
    for (const nlohmann::json& op : run.at("ops")) {
      const std::string name = op.at("op").get<std::string>();
      r.ops[name] = op.at("count").get<uint64_t>();
      r.op_rates[name] = op.at("throughput_ops_per_s").get<double>();
      r.failed += op.at("failed").get<uint64_t>();
    }
    for (const auto& [name, value] : run.at("counters").items()) r.counters[name] = value.get<int64_t>();
    for (const auto& [name, value] : run.at("extra").items()) r.extra[name] = value.get<double>();
  } catch (const nlohmann::json::exception& e) {
    r.error = path + ": " + e.what();
  }
  return r;
}

std::map<std::string, double> serve_stop_figures(const std::string& output) {
  static const std::string kPrefix = "locus serve: stopping:";
  const size_t at = output.rfind(kPrefix);
  std::map<std::string, double> figures;
  if (at == std::string::npos) return figures;
  const size_t end = output.find('\n', at);
  std::istringstream line(output.substr(at + kPrefix.size(), end == std::string::npos ? end : end - at - kPrefix.size()));
  for (std::string word; line >> word;) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    try {
      figures[word.substr(0, eq)] = std::stod(word.substr(eq + 1));
    } catch (const std::exception&) {
      // Not a number: not a figure.
    }
  }
  return figures;
}

}  // namespace locus::verbs::testing
