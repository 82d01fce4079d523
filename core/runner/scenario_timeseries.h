// The scenario runner's time series: per window of simulated time, the
// latency percentiles and throughput of the operations that finished in it
// and the selector's server-side share of their steps. Clients record into
// one shared recorder; the lock is held only to record (never across a
// wait), and SimGrid actors never contend for it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/status.h"
#include "core/common/time.h"
#include "core/metrics/latency_histogram.h"

namespace locus::runner {

// One window of the time series.
struct TimeseriesWindow {
  double start_s = 0;  // from the run's start
  double end_s = 0;
  uint32_t active_clients = 0;  // at the window's start
  uint64_t ops = 0;
  uint64_t failed = 0;
  double throughput_ops_s = 0;
  double latency_us_mean = 0, latency_us_p50 = 0, latency_us_p90 = 0, latency_us_p99 = 0;
  double server_share = -1;  // selector's server-side share of the window's steps; -1: no selector
};

class TimeseriesRecorder {
 public:
  // Windows of window_ns covering [0, duration_ns) from the run's start.
  void init(Nanos window_ns, Nanos duration_ns);
  bool enabled() const { return window_ns_ > 0; }
  // One operation that finished `since_start` into the run; server and
  // client are the selector choices it made.
  void record(Nanos since_start, Nanos latency_ns, bool ok, uint64_t server, uint64_t client);
  // The summary; `active_clients(t)` gives the clients active at t.
  std::vector<TimeseriesWindow> windows(double duration_s,
                                        const std::function<uint32_t(Nanos)>& active_clients) const;

 private:
  Nanos window_ns_ = 0;
  ShortMutex mu_;  // never held across a wait
  std::vector<metrics::LatencyHistogram> latency_;
  std::vector<uint64_t> failed_, server_choices_, client_choices_;
};

// Writes the time series as CSV, one row per window.
Status write_timeseries_csv(const std::string& path, const std::vector<TimeseriesWindow>& windows);

}  // namespace locus::runner
