// The scenario runner's time series: see scenario_timeseries.h.
#include "core/runner/scenario_timeseries.h"

#include <algorithm>
#include <fstream>

namespace locus::runner {

void TimeseriesRecorder::init(Nanos window_ns, Nanos duration_ns) {
  window_ns_ = window_ns;
  const auto windows = static_cast<size_t>((duration_ns + window_ns - 1) / window_ns);
  latency_.resize(windows);
  failed_.assign(windows, 0);
  server_choices_.assign(windows, 0);
  client_choices_.assign(windows, 0);
}

void TimeseriesRecorder::record(Nanos since_start, Nanos latency_ns, bool ok, uint64_t server, uint64_t client) {
  const auto w = static_cast<size_t>(since_start / window_ns_);
  if (w >= latency_.size()) return;
  std::lock_guard<ShortMutex> lock(mu_);
  latency_[w].record(latency_ns);
  failed_[w] += ok ? 0 : 1;
  server_choices_[w] += server;
  client_choices_[w] += client;
}

std::vector<TimeseriesWindow> TimeseriesRecorder::windows(
    double duration_s, const std::function<uint32_t(Nanos)>& active_clients) const {
  std::vector<TimeseriesWindow> out;
  const double window_s = static_cast<double>(window_ns_) / 1e9;
  for (size_t i = 0; i < latency_.size(); ++i) {
    TimeseriesWindow w;
    w.start_s = static_cast<double>(i) * window_s;
    w.end_s = std::min(duration_s, w.start_s + window_s);
    w.active_clients = active_clients(static_cast<Nanos>(i) * window_ns_);
    const metrics::LatencyHistogram& h = latency_[i];
    w.ops = h.count();
    w.failed = failed_[i];
    w.throughput_ops_s = w.end_s > w.start_s ? static_cast<double>(w.ops) / (w.end_s - w.start_s) : 0;
    w.latency_us_mean = h.mean() / 1e3;
    w.latency_us_p50 = static_cast<double>(h.percentile(50)) / 1e3;
    w.latency_us_p90 = static_cast<double>(h.percentile(90)) / 1e3;
    w.latency_us_p99 = static_cast<double>(h.percentile(99)) / 1e3;
    const uint64_t choices = server_choices_[i] + client_choices_[i];
    if (choices > 0) w.server_share = static_cast<double>(server_choices_[i]) / static_cast<double>(choices);
    out.push_back(w);
  }
  return out;
}

Status write_timeseries_csv(const std::string& path, const std::vector<TimeseriesWindow>& windows) {
  std::ofstream out(path);
  if (!out) return invalid_argument(path + ": cannot write the time series");
  out << "start_s,end_s,active_clients,ops,failed,throughput_ops_s,latency_us_mean,latency_us_p50,"
         "latency_us_p90,latency_us_p99,server_share\n";
  for (const TimeseriesWindow& w : windows) {
    out << w.start_s << ',' << w.end_s << ',' << w.active_clients << ',' << w.ops << ',' << w.failed << ','
        << w.throughput_ops_s << ',' << w.latency_us_mean << ',' << w.latency_us_p50 << ',' << w.latency_us_p90
        << ',' << w.latency_us_p99 << ',';
    if (w.server_share >= 0) out << w.server_share;
    out << '\n';
  }
  out.close();
  return out ? Status() : invalid_argument(path + ": write failed");
}

}  // namespace locus::runner
