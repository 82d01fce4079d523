// `locus sweep --merge`: see sweep_merge.h.
#include "apps/locus/sweep_merge.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "apps/locus/child_runs.h"
#include "apps/locus/line_plot.h"

namespace locus::cli {
namespace {

namespace fs = std::filesystem;

// One CSV line's fields as written (quotes kept), split at commas outside
// quotes: `locus sim` quotes fields holding commas or quotes.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string number(double v) { return std::isnan(v) ? "" : fmt::format("{}", v); }

bool is_number(const std::string& s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// A point's CSV: header and rows.
struct PointTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

StatusOr<PointTable> read_point_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return not_found("no result " + path);
  PointTable t;
  std::string line;
  if (!std::getline(in, line)) return corruption(path + ": empty");
  t.header = csv_fields(line);
  while (std::getline(in, line)) {
    if (!line.empty()) t.rows.push_back(csv_fields(line));
  }
  return t;
}

}  // namespace

Status merge_sweep(const std::string& dir, const SweepPlan& plan, bool log_tails) {
  const size_t n = plan.points();
  std::vector<PointTable> tables(n);
  std::vector<PointSummary> summaries(n);
  std::vector<std::string> missing;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (size_t k = 0; k < n; ++k) {
    const fs::path pd = point_dir(dir, k);
    const std::string json_path = (pd / kPointJson).string();
    auto summary = read_point_summary(json_path);
    auto table = read_point_csv((pd / kPointCsv).string());
    nlohmann::ordered_json p;
    p["point"] = k;
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    const std::vector<std::string> v = plan.values(k);
    for (size_t i = 0; i < plan.grid.size(); ++i) values[plan.grid[i].key] = display_value(v[i]);
    p["values"] = std::move(values);
    if (!summary.is_ok() || !table.is_ok()) {
      const Status& why = summary.is_ok() ? table.status() : summary.status();
      std::string entry = fmt::format("point {} ({}): {}", k, plan.label(k), why.message());
      const std::string tail = log_tails ? file_tail((pd / kPointLog).string(), 5) : "";
      if (!tail.empty()) entry += fmt::format("; its log {} ends:\n{}", (pd / kPointLog).string(), tail);
      missing.push_back(entry);
      p["ok"] = false;
      p["error"] = why.message();
      points.push_back(std::move(p));
      continue;
    }
    summaries[k] = *summary;
    tables[k] = std::move(*table);
    p["ok"] = true;
    p["summary"] = {{"ops_per_s", summary->ops_per_s},
                    {"latency_us_mean", summary->latency_us_mean},
                    {"server_share", summary->server_share}};
    std::ifstream in(json_path);
    try {
      p["runs"] = nlohmann::ordered_json::parse(in).at("runs");
    } catch (const nlohmann::json::exception& e) {
      return corruption(json_path + ": " + e.what());
    }
    points.push_back(std::move(p));
  }

  // sweep.csv: the union of the points' columns (a swept key can change
  // them, e.g. the resources of more servers), in first-seen order.
  std::vector<std::string> columns;
  std::map<std::string, size_t> column_at;
  for (const PointTable& t : tables) {
    for (const std::string& c : t.header) {
      if (column_at.emplace(c, columns.size()).second) columns.push_back(c);
    }
  }
  std::ostringstream csv, summary_csv;
  csv << "point";
  summary_csv << "point";
  for (const GridAxis& a : plan.grid) {
    csv << "," << csv_quoted(a.key);
    summary_csv << "," << csv_quoted(a.key);
  }
  for (const std::string& c : columns) csv << "," << c;
  csv << "\n";
  summary_csv << ",ops_per_s,latency_us_mean,server_share\n";
  for (size_t k = 0; k < n; ++k) {
    std::string lead = std::to_string(k);
    for (const std::string& v : plan.values(k)) lead += "," + csv_quoted(display_value(v));
    for (const auto& row : tables[k].rows) {
      std::vector<std::string> cells(columns.size());
      for (size_t c = 0; c < row.size() && c < tables[k].header.size(); ++c)
        cells[column_at[tables[k].header[c]]] = row[c];
      csv << lead;
      for (const std::string& cell : cells) csv << "," << cell;
      csv << "\n";
    }
    const PointSummary& s = summaries[k];
    summary_csv << lead << "," << number(s.ops_per_s) << "," << number(s.latency_us_mean) << ","
                << number(s.server_share) << "\n";
  }
  nlohmann::ordered_json doc;
  doc["scenario"] = plan.scenario;
  doc["set"] = plan.sets;
  doc["keys"] = nlohmann::ordered_json::array();
  for (const GridAxis& a : plan.grid) doc["keys"].push_back(a.key);
  doc["points"] = std::move(points);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"sweep.csv", csv.str()}, {"summary.csv", summary_csv.str()}, {"sweep.json", doc.dump(2) + "\n"}};
  for (const auto& [name, text] : files) {
    std::ofstream out(fs::path(dir) / name);
    out << text;
    if (!out) return invalid_argument("cannot write " + (fs::path(dir) / name).string());
  }

  // The plot: throughput against the last key, a line per setting of the others.
  const GridAxis& x = plan.grid.back();
  const size_t per_line = x.values.size(), lines = n / per_line;
  LinePlot plot{.title = fs::path(plan.scenario).stem().string() + ": throughput",
                .x_label = x.key,
                .y_label = "ops_per_s",
                .csv = (fs::path(dir) / "plot.csv").string(),
                .numeric_x = true};
  for (const std::string& v : x.values) plot.numeric_x = plot.numeric_x && is_number(display_value(v));
  for (size_t l = 0; l < lines; ++l) {
    std::string name;
    const std::vector<std::string> v = plan.values(l * per_line);
    for (size_t i = 0; i + 1 < plan.grid.size(); ++i)
      name += (i ? ", " : "") + plan.grid[i].key + "=" + display_value(v[i]);
    plot.series.push_back(name.empty() ? "ops_per_s" : name);
  }
  std::ofstream pc(plot.csv);
  pc << csv_quoted(x.key);
  for (const std::string& s : plot.series) pc << "," << csv_quoted(s);
  pc << "\n";
  for (size_t xi = 0; xi < per_line; ++xi) {
    pc << csv_quoted(display_value(x.values[xi]));
    for (size_t l = 0; l < lines; ++l) pc << "," << number(summaries[l * per_line + xi].ops_per_s);
    pc << "\n";
  }
  pc.close();
  plot.gp = (fs::path(dir) / "sweep.gp").string();
  plot.png = (fs::path(dir) / "sweep.png").string();
  const bool plotted = draw_line_plot(plot);
  fmt::print("sweep: {} of {} points merged into {}/sweep.csv, summary.csv and sweep.json{}\n", n - missing.size(), n,
             dir, plotted ? ", plot sweep.png" : " (no plot: gnuplot not found or failed)");
  if (!missing.empty()) {
    std::string all;
    for (const std::string& m : missing) all += "\n  " + m;
    return not_found(fmt::format("{} of {} points have no results:{}", missing.size(), n, all));
  }
  return Status();
}

}  // namespace locus::cli
