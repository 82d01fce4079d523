// JsqSelector: Cell's locality selector (paper section 2.5). Each server is
// modelled as two independent queues, Q_s (server CPU, server-side steps)
// and Q_r (NIC, RDMA READs); with fixed job sizes the optimal policy is to
// join the shortest queue, normalised by service rate. A client-side step
// costs m READs. The paper's rule picks server-side when
//     (l_s - RTT) < m * (l_r - RTT)                                   (1)
// with l_s the mean server-side step latency, l_r the mean RDMA READ
// latency, RTT the lowest measured RDMA latency to that server and m the
// measured meganode height in READs (observe_client_step_cost).
//
// The default rule (JsqRule::kMarginalLatency) compares what one more
// step on each path costs all clients: server-side when
//     l_s * (l_s / l_s,min) < m * l_r * (l_r / l_r,min)
// (an M/M/1 queue's marginal delay is T^2 / S). Why not (1): it subtracts
// one RTT from each side, but a server-side step's floor is an RPC
// (messaging plus ~6 us of server CPU on the Cell testbed), far above one
// READ's RTT, so on an idle server (1) sees server "queueing" against none
// on the READs and sends searches client-side, 21 us, where the server
// answers in 13 us; the Cell paper says server-side is preferable at low
// load. At low load the marginal rule is expected latency (l_s < m l_r,
// JsqRule::kExpectedLatency, also available); under load it moves work
// off the congested path before the latencies meet, towards the split
// that is best for all clients. jsq.rule = "paper" keeps (1).
// Until a server's two paths are both measured no rule applies: the first
// step goes server-side, the next (probe_unmeasured, default) client-side
// to measure l_r. The paper leaves this open; before 2026-11-27 a client
// stayed server-side until exploration (p = 1%, so ~100 steps) measured
// l_r, and again after each history drop. On four servers at one core
// that kept most clients sending every step to saturated server CPUs
// while the READ path sat idle (0.73 of the best fixed split; with the
// probe 1.04). Measured on the Cell sweeps (docs/results.md, 2026-11-29):
// JSQ reaches at least the best fixed split (10% steps) at every point of
// four servers, 1-8 cores (1.004-1.046), and 0.992-1.148 of it over one
// meganode's 1-12 clients. Until the simulator let a reply
// queued in a server's NIC take the links only when it left (2026-11-29),
// READ responses waited behind those replies, so at 5-8 cores every
// latency rule saw slow READs, stayed ~90% server-side and reached
// 0.88-0.89: the rule was right, the READs' latency was not.
// Refinements, all configurable:
//  * means over the last n samples per server and path;
//  * a sample with |s - mean| >= K * stddev is discarded as an outlier;
//    when a moving period (n samples seen) discards more than it keeps,
//    that history is dropped (the level changed; learn the new one);
//  * with probability p the path estimated worse is taken (exploration);
//  * a server not used for idle_reset_ns loses its history.
// A "connection's history" is kept per (server, path) stream: a spike in
// server latency drops the stale l_s history without losing l_r, which is
// exactly what the choice then needs.
#pragma once

#include <limits>
#include <vector>

#include "core/common/random.h"
#include "core/selector/per_server.h"
#include "core/selector/sample_window.h"
#include "core/selector/selector.h"
#include "core/selector/selector_config.h"

namespace locus::selector {

class JsqSelector final : public Selector {
 public:
  JsqSelector(const JsqConfig& config, Random& rng);

  std::string_view name() const override { return "jsq"; }
  Path choose(NodeId server, Nanos now) override;
  void observe(NodeId server, Path path, Nanos latency_ns, Nanos now) override;
  void observe_client_step_cost(uint32_t dependent_reads) override;

  // The current view of one server, for tests and logs.
  struct Estimate {
    bool complete = false;  // both paths measured, so inequality (1) applies
    double server_latency_ns = 0;
    double rdma_latency_ns = 0;
    double rtt_ns = 0;
    size_t server_samples = 0;
    size_t rdma_samples = 0;
    Path preferred = Path::kServer;
  };
  Estimate estimate(NodeId server) const;
  double meganode_height() const;

 private:
  struct Stream {
    explicit Stream(uint32_t n) : window(n) {}
    SampleWindow window;
    uint32_t kept = 0;       // samples kept in the current moving period
    uint32_t discarded = 0;  // outliers in the current moving period
    void clear() {
      window.clear();
      kept = discarded = 0;
    }
  };
  struct ServerState {
    explicit ServerState(uint32_t n) : server(n), rdma(n) {}
    Stream server;
    Stream rdma;
    // Lowest latencies seen since the connection's history began; they
    // survive outlier-driven drops (a floor does not move with the queue).
    double min_rdma_ns = std::numeric_limits<double>::infinity();
    double min_server_ns = std::numeric_limits<double>::infinity();
    Nanos last_active = 0;
    bool active = false;
  };

  ServerState& state(NodeId server);
  const ServerState* find(NodeId server) const;
  void add_sample(Stream& stream, double sample);
  Estimate estimate_of(const ServerState& s) const;

  JsqConfig config_;
  Random& rng_;
  PerServer<ServerState> servers_;
  SampleWindow heights_;
};

}  // namespace locus::selector
