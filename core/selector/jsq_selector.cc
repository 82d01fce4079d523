// JsqSelector: see jsq_selector.h.
#include "core/selector/jsq_selector.h"

#include <algorithm>
#include <cmath>

namespace locus::selector {

JsqSelector::JsqSelector(const JsqConfig& config, Random& rng)
    : config_(config), rng_(rng), heights_(std::max<uint32_t>(config.height_samples, 1)) {}

JsqSelector::ServerState& JsqSelector::state(NodeId server) {
  return servers_.get(server, std::max<uint32_t>(config_.history_samples, 1));
}

const JsqSelector::ServerState* JsqSelector::find(NodeId server) const { return servers_.find(server); }

double JsqSelector::meganode_height() const {
  if (!config_.adapt_meganode_height || heights_.empty()) return config_.initial_meganode_height;
  return heights_.mean();
}

JsqSelector::Estimate JsqSelector::estimate_of(const ServerState& s) const {
  Estimate e;
  e.server_samples = s.server.window.size();
  e.rdma_samples = s.rdma.window.size();
  e.server_latency_ns = s.server.window.mean();
  e.rdma_latency_ns = s.rdma.window.mean();
  e.rtt_ns = e.rdma_samples > 0 ? s.min_rdma_ns : 0;
  // Until both paths have been measured no rule can compare them. The
  // server goes first (the faster path on an idle server), then, with
  // probe_unmeasured, the path with no samples is taken to measure it:
  // waiting for exploration (p per choice) to measure l_r leaves a client
  // server-side for ~1/p steps whatever its server's queue, and a history
  // dropped after outliers empties again (see jsq_selector.h).
  if (e.server_samples == 0) return e;
  if (e.rdma_samples == 0) {
    if (config_.probe_unmeasured) e.preferred = Path::kClient;
    return e;
  }
  e.complete = true;
  if (config_.rule == JsqRule::kExpectedLatency) {
    // Ties go to the server, as in (1).
    e.preferred = e.server_latency_ns <= meganode_height() * e.rdma_latency_ns ? Path::kServer : Path::kClient;
    return e;
  }
  if (config_.rule == JsqRule::kMarginalLatency) {
    const double server_cost = e.server_latency_ns * e.server_latency_ns / s.min_server_ns;
    const double client_cost = meganode_height() * e.rdma_latency_ns * e.rdma_latency_ns / s.min_rdma_ns;
    e.preferred = server_cost <= client_cost ? Path::kServer : Path::kClient;
    return e;
  }
  const double server_base =
      config_.rtt_baseline == RttBaseline::kLowestRdma ? s.min_rdma_ns : s.min_server_ns;
  const double server_queue_ns = e.server_latency_ns - server_base;
  const double rdma_queue_ns = meganode_height() * (e.rdma_latency_ns - s.min_rdma_ns);
  // Inequality (1). With per-path minimums both sides are pure queueing
  // delays and are both zero on an idle server: ties go to the server.
  const bool server_wins = config_.rtt_baseline == RttBaseline::kLowestRdma
                               ? server_queue_ns < rdma_queue_ns
                               : server_queue_ns <= rdma_queue_ns;
  e.preferred = server_wins ? Path::kServer : Path::kClient;
  return e;
}

JsqSelector::Estimate JsqSelector::estimate(NodeId server) const {
  const ServerState* s = find(server);
  return s == nullptr ? Estimate{} : estimate_of(*s);
}

Path JsqSelector::choose(NodeId server, Nanos now) {
  ServerState& s = state(server);
  if (s.active && now - s.last_active >= config_.idle_reset_ns) {
    // Whatever was learnt is too old to describe the queues now.
    s.server.clear();
    s.rdma.clear();
    s.min_rdma_ns = s.min_server_ns = std::numeric_limits<double>::infinity();
    ++stats_.idle_resets;
  }
  s.active = true;
  s.last_active = now;
  Path p = estimate_of(s).preferred;
  if (config_.explore_probability > 0 && rng_.bernoulli(config_.explore_probability)) {
    p = other(p);
    ++stats_.explorations;
  }
  return count(p);
}

void JsqSelector::add_sample(Stream& stream, double sample) {
  SampleWindow& w = stream.window;
  bool outlier = false;
  if (w.size() >= std::max<uint32_t>(config_.min_samples_for_outliers, 1)) {
    const double distance = std::fabs(sample - w.mean());
    // A window of identical samples has sigma 0: anything different is an
    // outlier, and a lasting change then drops the history below.
    outlier = distance > 0 && distance >= config_.outlier_k * w.stddev();
  }
  if (outlier) {
    ++stream.discarded;
    ++stats_.samples_discarded;
  } else {
    w.push(sample);
    ++stream.kept;
    ++stats_.samples_kept;
  }
  if (stream.kept + stream.discarded >= w.capacity()) {
    if (stream.discarded > stream.kept) {
      w.clear();
      ++stats_.history_drops;
    }
    stream.kept = stream.discarded = 0;
  }
}

void JsqSelector::observe(NodeId server, Path path, Nanos latency_ns, Nanos now) {
  ServerState& s = state(server);
  s.active = true;
  s.last_active = std::max(s.last_active, now);
  const double sample = static_cast<double>(latency_ns);
  if (path == Path::kClient) {
    s.min_rdma_ns = std::min(s.min_rdma_ns, sample);
    add_sample(s.rdma, sample);
  } else {
    s.min_server_ns = std::min(s.min_server_ns, sample);
    add_sample(s.server, sample);
  }
}

void JsqSelector::observe_client_step_cost(uint32_t dependent_reads) {
  heights_.push(static_cast<double>(dependent_reads));
}

}  // namespace locus::selector
