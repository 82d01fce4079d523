// LatencyWindowSelector: see latency_window_selector.h.
#include "core/selector/latency_window_selector.h"

#include <algorithm>

namespace locus::selector {

LatencyWindowSelector::LatencyWindowSelector(const LatencyWindowConfig& config, Random& rng)
    : config_(config), rng_(rng), heights_(std::max<uint32_t>(config.height_samples, 1)) {}

LatencyWindowSelector::ServerState& LatencyWindowSelector::state(NodeId server) {
  return servers_.get(server, config_.window_ns, config_.max_samples);
}

double LatencyWindowSelector::meganode_height() const {
  return heights_.empty() ? config_.initial_meganode_height : heights_.mean();
}

Path LatencyWindowSelector::choose(NodeId server, Nanos now) {
  ServerState& s = state(server);
  s.server.expire(now);
  s.rdma.expire(now);
  Path p = Path::kServer;  // the default until both paths were measured lately
  if (!s.server.empty() && !s.rdma.empty()) {
    const double predicted_client_ns = meganode_height() * s.rdma.mean();
    p = s.server.mean() <= predicted_client_ns ? Path::kServer : Path::kClient;
  }
  if (config_.explore_probability > 0 && rng_.bernoulli(config_.explore_probability)) {
    p = other(p);
    ++stats_.explorations;
  }
  return count(p);
}

void LatencyWindowSelector::observe(NodeId server, Path path, Nanos latency_ns, Nanos now) {
  ServerState& s = state(server);
  (path == Path::kServer ? s.server : s.rdma).push(now, static_cast<double>(latency_ns));
  ++stats_.samples_kept;
}

void LatencyWindowSelector::observe_client_step_cost(uint32_t dependent_reads) {
  heights_.push(static_cast<double>(dependent_reads));
}

}  // namespace locus::selector
