// SelectorConfig: which selector a client uses and every constant it has,
// settable by name from a scenario's [selector] table. Defaults are the
// Cell paper's (section 2.5): n = 100 samples per connection, outliers at
// K = 3 standard deviations, exploration p = 1%, history dropped after 3 s
// idle, initial meganode height m = 5 adapted from measurements.
#pragma once

#include <memory>
#include <string_view>

#include "core/common/random.h"
#include "core/common/status.h"
#include "core/selector/selector.h"

namespace locus::selector {

enum class SelectorKind : uint8_t { kServerOnly, kClientOnly, kFixedRatio, kJsq, kLatencyWindow, kBackoff };
std::string_view selector_kind_name(SelectorKind kind);
// What a kind reads of the settings: the property group it takes
// ("jsq" for jsq.*, "window", "backoff"), or "" for none; and whether it
// takes client_fraction (fixed_ratio only). A scenario setting another
// kind's constants is refused (it would be ignored).
std::string_view selector_settings_group(SelectorKind kind);
bool selector_takes_client_fraction(SelectorKind kind);
// True if some kind takes settings of `group`.
bool is_selector_settings_group(std::string_view group);
std::ostream& operator<<(std::ostream& os, SelectorKind kind);
StatusOr<SelectorKind> parse_selector_kind(std::string_view name);

// What RTT inequality (1) subtracts from each path's latency.
enum class RttBaseline : uint8_t {
  kLowestRdma,     // the paper: the lowest measured RDMA latency, for both paths
  kPerPathMinimum, // each path's own lowest latency (pure queueing delays); an experiment
};

// Which inequality JsqSelector decides by (jsq_selector.h says why the
// default is not the paper's).
enum class JsqRule : uint8_t {
  // Expected latency of each path: server-side when l_s < m * l_r, the
  // step's mean latency on each path (shortest expected delay). At low
  // load it takes the faster path, and under load it moves work until the
  // two latencies meet.
  kExpectedLatency,
  // Marginal latency: each path's latency times its inflation over its
  // floor (l / l_min), the delay one more step adds to everyone's on an
  // M/M/1 queue (T^2 / S); routes towards the split that minimises the
  // mean latency of all clients rather than each step's own.
  kMarginalLatency,
  // The paper's inequality (1), (l_s - RTT) < m * (l_r - RTT): queueing
  // delays only. It counts the server's service time (CPU and messaging)
  // as queueing and the READs' not, so at low load it sends work
  // client-side even where that path is slower.
  kPaperQueueing,
};

struct JsqConfig {
  JsqRule rule = JsqRule::kMarginalLatency;
  uint32_t history_samples = 100;        // n: moving-average window per connection and path
  double outlier_k = 3.0;                // K: discard |s - mean| >= K * stddev
  uint32_t min_samples_for_outliers = 10;  // no rejection until the window has this many
  double explore_probability = 0.01;     // p: take the path estimated worse
  Nanos idle_reset_ns = 3 * kSecond;     // drop a connection's history after this idle time
  double initial_meganode_height = 5.0;  // m before any measurement
  bool adapt_meganode_height = true;     // m from the measured RDMA reads per meganode
  uint32_t height_samples = 100;         // window of the measured m
  RttBaseline rtt_baseline = RttBaseline::kLowestRdma;
  // Take a path with no samples (the RDMA path once the server's is
  // measured) instead of staying server-side until exploration measures it
  // (false: the behaviour before issue 15's 2026-11-27 change).
  bool probe_unmeasured = true;
};

// The DEX-style baseline: recent means over a time window instead of
// queueing estimates.
struct LatencyWindowConfig {
  Nanos window_ns = 10 * kMillisecond;
  uint32_t max_samples = 1024;           // per connection and path
  double explore_probability = 0.01;
  double initial_meganode_height = 5.0;
  uint32_t height_samples = 100;
};

// Catfish's back-off on server CPU heartbeats (backoff_selector.h);
// defaults from the Catfish testbed: N = 8, T = 95%, Inv = 10 ms.
struct BackoffConfig {
  uint32_t n = 8;                         // N: offload window width, in requests
  double threshold = 0.95;                // T: heartbeat utilisation above which the server is busy
  Nanos interval_ns = 10 * kMillisecond;  // Inv: heartbeat period (and at most one taken per Inv)
};

struct SelectorConfig {
  SelectorKind kind = SelectorKind::kJsq;
  double client_fraction = 0.5;  // kFixedRatio: share of steps done client-side
  JsqConfig jsq;
  LatencyWindowConfig window;
  BackoffConfig backoff;

  Status validate() const;
};

// Sets one property by its scenario name: kind, client_fraction,
// jsq.history_samples, jsq.outlier_k, jsq.min_samples_for_outliers,
// jsq.explore_probability, jsq.idle_reset_ms, jsq.initial_meganode_height,
// jsq.adapt_meganode_height, jsq.height_samples, jsq.rtt_baseline
// (lowest_rdma | per_path_minimum), jsq.rule (paper | expected_latency |
// marginal_latency), jsq.probe_unmeasured (true | false), window.window_ms, window.max_samples,
// window.explore_probability, window.initial_meganode_height,
// window.height_samples, backoff.n, backoff.threshold, backoff.interval_ms.
// The message names the property.
Status set_selector_property(SelectorConfig& config, std::string_view name, std::string_view value);

// Builds the configured selector; `rng` (the client actor's) must outlive it.
StatusOr<std::unique_ptr<Selector>> make_selector(const SelectorConfig& config, Random& rng);

}  // namespace locus::selector
