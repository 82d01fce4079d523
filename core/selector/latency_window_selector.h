// LatencyWindowSelector: a DEX-style baseline. It keeps the server-side
// step latencies and RDMA READ latencies of the last window_ns per server
// and picks the server side when its recent mean beats the predicted
// client-side cost, m READs at their recent mean latency. Unlike JSQ it
// neither subtracts round trips nor rejects outliers; it is the simple
// "whichever was faster lately" policy JSQ is compared against. With
// probability p it explores the other path so both means stay fresh.
#pragma once

#include <vector>

#include "core/common/random.h"
#include "core/selector/per_server.h"
#include "core/selector/sample_window.h"
#include "core/selector/selector.h"
#include "core/selector/selector_config.h"

namespace locus::selector {

class LatencyWindowSelector final : public Selector {
 public:
  LatencyWindowSelector(const LatencyWindowConfig& config, Random& rng);

  std::string_view name() const override { return "latency-window"; }
  Path choose(NodeId server, Nanos now) override;
  void observe(NodeId server, Path path, Nanos latency_ns, Nanos now) override;
  void observe_client_step_cost(uint32_t dependent_reads) override;

  double meganode_height() const;

 private:
  struct ServerState {
    ServerState(Nanos window, uint32_t cap) : server(window, cap), rdma(window, cap) {}
    TimedWindow server;
    TimedWindow rdma;
  };
  ServerState& state(NodeId server);

  LatencyWindowConfig config_;
  Random& rng_;
  PerServer<ServerState> servers_;
  SampleWindow heights_;
};

}  // namespace locus::selector
