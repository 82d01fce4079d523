// The plan of a `locus sweep`: see sweep_plan.h.
#include "apps/locus/sweep_plan.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace locus::cli {

size_t SweepPlan::points() const {
  size_t n = grid.empty() ? 0 : 1;
  for (const GridAxis& a : grid) n *= a.values.size();
  return n;
}

std::vector<std::string> SweepPlan::values(size_t k) const {
  std::vector<std::string> out(grid.size());
  for (size_t i = grid.size(); i-- > 0;) {
    out[i] = grid[i].values[k % grid[i].values.size()];
    k /= grid[i].values.size();
  }
  return out;
}

std::vector<std::string> SweepPlan::point_sets(size_t k) const {
  std::vector<std::string> out = sets;
  const std::vector<std::string> v = values(k);
  for (size_t i = 0; i < grid.size(); ++i) out.push_back(grid[i].key + "=" + v[i]);
  return out;
}

std::string SweepPlan::label(size_t k) const {
  std::string out;
  const std::vector<std::string> v = values(k);
  for (size_t i = 0; i < grid.size(); ++i) out += (i ? " " : "") + grid[i].key + "=" + v[i];
  return out;
}

StatusOr<GridAxis> parse_grid_axis(std::string_view arg) {
  auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format("--grid '{}': {} (expected KEY=V1,V2,..., e.g. run.clients=1,2,4)", arg, why));
  };
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos) return bad("no '='");
  GridAxis axis{std::string(arg.substr(0, eq)), {}};
  if (axis.key.empty()) return bad("no key before '='");
  if (axis.key.find_first_of(" \t,") != std::string::npos) return bad("a key holds no space or comma");
  // Split at commas outside quotes and brackets, so a value may be a TOML
  // string or array holding commas.
  std::string value;
  bool quoted = false;
  int depth = 0;
  std::vector<std::string> values;
  for (char ch : arg.substr(eq + 1)) {
    if (ch == '"') quoted = !quoted;
    if (!quoted && (ch == '[' || ch == '{')) ++depth;
    if (!quoted && (ch == ']' || ch == '}')) --depth;
    if (ch == ',' && !quoted && depth == 0) {
      values.push_back(std::move(value));
      value.clear();
    } else {
      value += ch;
    }
  }
  if (quoted) return bad("unbalanced quote");
  if (depth != 0) return bad("unbalanced bracket");
  values.push_back(std::move(value));
  std::set<std::string> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty()) return bad(fmt::format("value {} is empty", i + 1));
    if (!seen.insert(values[i]).second) return bad(fmt::format("value '{}' is given twice", values[i]));
  }
  axis.values = std::move(values);
  return axis;
}

StatusOr<std::vector<GridAxis>> parse_grid(const std::vector<std::string>& args) {
  if (args.empty()) return invalid_argument("--grid: give at least one KEY=V1,V2,... to sweep");
  std::vector<GridAxis> out;
  for (const std::string& a : args) {
    LOCUS_ASSIGN_OR_RETURN(GridAxis axis, parse_grid_axis(a));
    for (const GridAxis& earlier : out) {
      if (earlier.key == axis.key) return invalid_argument("--grid: key '" + axis.key + "' is swept twice");
    }
    out.push_back(std::move(axis));
  }
  return out;
}

std::string display_value(const std::string& value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') return value.substr(1, value.size() - 2);
  return value;
}

std::string plan_path(const std::string& dir) { return (std::filesystem::path(dir) / "plan.json").string(); }

std::string point_dir(const std::string& dir, size_t k) {
  return (std::filesystem::path(dir) / "points" / std::to_string(k)).string();
}

std::string plan_json(const SweepPlan& plan) {
  nlohmann::ordered_json j;
  j["scenario"] = plan.scenario;
  j["set"] = plan.sets;
  j["timeseries"] = plan.timeseries;
  j["max_memory_bytes"] = plan.max_memory_bytes;
  nlohmann::ordered_json grid = nlohmann::ordered_json::array();
  for (const GridAxis& a : plan.grid) grid.push_back({{"key", a.key}, {"values", a.values}});
  j["grid"] = std::move(grid);
  j["points"] = plan.points();
  return j.dump(2) + "\n";
}

Status write_plan(const std::string& dir, const SweepPlan& plan) {
  std::ofstream out(plan_path(dir));
  out << plan_json(plan);
  if (!out) return invalid_argument("--out: cannot write " + plan_path(dir));
  return Status();
}

StatusOr<SweepPlan> read_plan(const std::string& dir) {
  const std::string path = plan_path(dir);
  std::ifstream in(path);
  if (!in) return not_found(path + ": no sweep plan here (is " + dir + " the --out of a `locus sweep`?)");
  SweepPlan plan;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    plan.scenario = j.at("scenario").get<std::string>();
    plan.sets = j.at("set").get<std::vector<std::string>>();
    plan.timeseries = j.at("timeseries").get<bool>();
    plan.max_memory_bytes = j.at("max_memory_bytes").get<double>();
    for (const nlohmann::json& a : j.at("grid")) {
      plan.grid.push_back({a.at("key").get<std::string>(), a.at("values").get<std::vector<std::string>>()});
      if (plan.grid.back().values.empty())
        return corruption(path + ": axis '" + plan.grid.back().key + "' has no values");
    }
  } catch (const nlohmann::json::exception& e) {
    return corruption(path + ": " + e.what());
  }
  if (plan.grid.empty()) return corruption(path + ": no grid");
  return plan;
}

}  // namespace locus::cli
