// Text writers for RunResult: the aligned table, CSV and YCSB's summary.
// All of them run after the clients stop, so they format freely.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/metrics/result_writers_internal.h"
#include "core/metrics/run_result.h"

namespace locus::metrics {

namespace internal {

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return unavailable(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)));
  out << text;
  out.close();
  if (!out) return unavailable(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  return Status::ok();
}

}  // namespace internal

namespace {

double us(Nanos ns) { return to_us(ns); }

// Java's Double.toString, which YCSB's text exporter uses for doubles:
// plain decimal with at least one fractional digit for 1e-3 <= |v| < 1e7,
// otherwise d.dddE<exp>; in both cases the shortest digits that round trip.
std::string java_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const double magnitude = std::fabs(v);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
    std::string s(buf, end);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view s(buf, static_cast<size_t>(end - buf));
  const size_t e = s.find('e');
  std::string mantissa(s.substr(0, e));
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  std::string_view exponent = s.substr(e + 1);
  const bool negative = exponent.front() == '-';
  if (exponent.front() == '-' || exponent.front() == '+') exponent.remove_prefix(1);
  while (exponent.size() > 1 && exponent.front() == '0') exponent.remove_prefix(1);
  return mantissa + "E" + (negative ? "-" : "") + std::string(exponent);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string format_us(Nanos ns) { return fmt::format("{:.2f}", us(ns)); }

}  // namespace

std::string format_table(const std::vector<RunResult>& results) {
  const std::vector<std::string> header = {"run",    "op",    "count",  "ops/s", "mean us",
                                           "p50 us", "p90 us", "p99 us", "p99.9 us", "max us"};
  std::vector<std::vector<std::string>> rows;
  for (const RunResult& r : results) {
    for (const OpSummary& op : r.stats.ops()) {
      const LatencyHistogram& h = op.latency;
      rows.push_back({r.name, op.name, fmt::format("{}", op.count()),
                      fmt::format("{:.1f}", r.throughput_ops_per_s(op.count())),
                      fmt::format("{:.2f}", h.mean() / 1e3), format_us(h.percentile(50)),
                      format_us(h.percentile(90)), format_us(h.percentile(99)), format_us(h.percentile(99.9)),
                      format_us(h.max())});
    }
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  // Names left-aligned, numbers right-aligned so their digits line up.
  auto append_row = [&](std::string& out, const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += "  ";
      out += c < 2 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  std::string out;
  append_row(out, header);
  for (const auto& row : rows) append_row(out, row);
  for (const RunResult& r : results) {
    std::string notes;
    if (r.stats.total_failed() > 0) notes += fmt::format(" failed={}", r.stats.total_failed());
    if (r.stats.total_retries() > 0) notes += fmt::format(" retries={}", r.stats.total_retries());
    for (const NamedCounter& c : r.stats.counters()) notes += fmt::format(" {}={}", c.name, c.value);
    for (const auto& [key, value] : r.extra) notes += fmt::format(" {}={}", key, value);
    if (!notes.empty()) out += fmt::format("{}:{}\n", r.name, notes);
    if (!r.power.empty()) {
      std::string hosts;
      for (const HostPower& h : r.power) hosts += fmt::format(" {}={:.2f}W", h.name, h.average_w);
      out += fmt::format("{}: power{}\n", r.name, hosts);
    }
    if (!r.first_failure.empty()) out += fmt::format("{}: first failure: {}\n", r.name, r.first_failure);
  }
  return out;
}

std::string format_csv(const std::vector<RunResult>& results) {
  std::set<std::string> extra_names;
  std::set<std::string> counter_names;
  std::vector<std::string> resource_names;  // in platform order, each once
  std::set<std::string> resources_seen;
  for (const RunResult& r : results) {
    for (const auto& [key, value] : r.extra) extra_names.insert(key);
    for (const NamedCounter& c : r.stats.counters()) counter_names.insert(c.name);
    for (const ResourceUsage& u : r.resources) {
      if (resources_seen.insert(u.name).second) resource_names.push_back(u.name);
    }
  }
  std::string out =
      "run,backend,index,seed,duration_s,op,count,ok,failed,retries,ops_per_s,latency_us_mean,"
      "latency_us_min,latency_us_p50,latency_us_p90,latency_us_p95,latency_us_p99,latency_us_p999,"
      "latency_us_max";
  for (const std::string& name : extra_names) out += "," + csv_field(name);
  for (const std::string& name : counter_names) out += "," + csv_field("counter." + name);
  for (const std::string& name : resource_names) out += "," + csv_field("utilization." + name);
  out += '\n';
  for (const RunResult& r : results) {
    for (const OpSummary& op : r.stats.ops()) {
      const LatencyHistogram& h = op.latency;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(r.name),
                         csv_field(r.backend), csv_field(r.index), r.seed, to_seconds(r.duration_ns),
                         csv_field(op.name), op.count(), op.ok, op.failed, op.retries,
                         r.throughput_ops_per_s(op.count()), h.mean() / 1e3, us(h.min()), us(h.percentile(50)),
                         us(h.percentile(90)), us(h.percentile(95)), us(h.percentile(99)),
                         us(h.percentile(99.9)), us(h.max()));
      for (const std::string& name : extra_names) {
        auto it = r.extra.find(name);
        out += it == r.extra.end() ? "," : fmt::format(",{}", it->second);
      }
      for (const std::string& name : counter_names) {
        bool found = false;
        for (const NamedCounter& c : r.stats.counters()) {
          if (c.name == name) {
            out += fmt::format(",{}", c.value);
            found = true;
          }
        }
        if (!found) out += ",";
      }
      for (const std::string& name : resource_names) {
        auto it = std::find_if(r.resources.begin(), r.resources.end(),
                               [&](const ResourceUsage& u) { return u.name == name; });
        out += it == r.resources.end() ? "," : fmt::format(",{}", it->utilization);
      }
      out += '\n';
    }
  }
  return out;
}

Status write_csv_file(const std::string& path, const std::vector<RunResult>& results) {
  return internal::write_text_file(path, format_csv(results));
}

std::string to_ycsb_summary(const RunResult& result) {
  // YCSB measures whole microseconds, truncating ((int)(ns / 1000)).
  auto whole_us = [](Nanos ns) { return ns / kMicrosecond; };
  std::string out;
  out += fmt::format("[OVERALL], RunTime(ms), {}\n", result.duration_ns / kMillisecond);
  out += fmt::format("[OVERALL], Throughput(ops/sec), {}\n", java_double(result.throughput_ops_per_s()));
  for (const OpSummary& op : result.stats.ops()) {
    const std::string name = upper(op.name);
    const LatencyHistogram& h = op.latency;
    out += fmt::format("[{}], Operations, {}\n", name, op.count());
    out += fmt::format("[{}], AverageLatency(us), {}\n", name, java_double(h.mean() / 1e3));
    out += fmt::format("[{}], MinLatency(us), {}\n", name, whole_us(h.min()));
    out += fmt::format("[{}], MaxLatency(us), {}\n", name, whole_us(h.max()));
    out += fmt::format("[{}], 50thPercentileLatency(us), {}\n", name, whole_us(h.percentile(50)));
    out += fmt::format("[{}], 95thPercentileLatency(us), {}\n", name, whole_us(h.percentile(95)));
    out += fmt::format("[{}], 99thPercentileLatency(us), {}\n", name, whole_us(h.percentile(99)));
    out += fmt::format("[{}], 99.9PercentileLatency(us), {}\n", name, whole_us(h.percentile(99.9)));
    if (op.ok > 0 || op.failed == 0) out += fmt::format("[{}], Return=OK, {}\n", name, op.ok);
    if (op.failed > 0) out += fmt::format("[{}], Return=ERROR, {}\n", name, op.failed);
  }
  return out;
}

void set_power(RunResult& r, std::vector<HostPower> power) {
  r.power = std::move(power);
  if (r.power.empty()) return;
  double watts = 0;
  for (const HostPower& h : r.power) watts += h.average_w;
  const double energy_j = watts * to_seconds(r.duration_ns);
  r.extra["power_w"] = watts;
  r.extra["energy_j"] = energy_j;
  if (r.total_ops() > 0) r.extra["joules_per_op"] = energy_j / static_cast<double>(r.total_ops());
}

}  // namespace locus::metrics
