// BackoffSelector: Catfish's adaptive search (paper section IV-A,
// Algorithm 1). Every Inv the server RDMA-WRITEs its CPU utilisation into
// a 16-byte heartbeat slot in each client's memory. A client that finds a
// NEW heartbeat (its sequence advanced) reporting utilisation above T
// increments r_busy and offloads its next n requests (does them
// client-side with RDMA READs), n drawn uniformly from
// [(r_busy - 1) N, r_busy N), replacing any count still pending; so each
// consecutive busy heartbeat shifts the window up by N (a linear back-off,
// unbounded, although the paper calls it binary exponential). A new
// heartbeat at or below T resets r_busy to 0; the pending count still runs
// out, as in the algorithm, so clients drift back to the server at
// different times. Heartbeats that have not arrived (same sequence as
// before) are ignored: the paper's reason is that a late heartbeat may mean
// a saturated link, where offloading would only add traffic. As in the
// algorithm, a client takes at most one heartbeat per Inv (t - t0 >= Inv).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/common/random.h"
#include "core/selector/per_server.h"
#include "core/selector/selector.h"
#include "core/selector/selector_config.h"
#include "core/selector/server_feedback.h"

namespace locus::selector {

struct BackoffStats {
  uint64_t heartbeats_taken = 0;  // new heartbeats acted upon
  uint64_t busy_heartbeats = 0;   // ... of which above T
  uint64_t stale_heartbeats = 0;  // same sequence as the last taken: ignored
  uint64_t early_heartbeats = 0;  // new, but within Inv of the last taken: left for later
};

class BackoffSelector final : public Selector {
 public:
  BackoffSelector(const BackoffConfig& config, Random& rng);

  std::string_view name() const override { return "backoff"; }
  // Reads the attached slot of `server` (if any), then decides.
  Path choose(NodeId server, Nanos now) override;

  // The server's heartbeats land at `slot`; choose() reads it every time.
  void attach_server_feedback(NodeId server, const std::byte* slot) override;
  // A heartbeat read by the caller (or scripted by a test): applies the
  // algorithm's heartbeat step; choose() calls it with the slot's content.
  void offer_heartbeat(NodeId server, const HeartbeatRecord& record, Nanos now);

  struct ServerState {
    const std::byte* slot = nullptr;
    uint64_t last_sequence = 0;
    Nanos taken_at = 0;     // t0: when the last heartbeat was taken
    uint32_t r_busy = 0;    // consecutive busy heartbeats
    uint64_t r_off = 0;     // requests still to offload
  };
  // nullptr for a server never seen.
  const ServerState* state(NodeId server) const;
  const BackoffStats& backoff_stats() const { return backoff_stats_; }

 private:
  ServerState& state_of(NodeId server);

  BackoffConfig config_;
  Random& rng_;
  PerServer<ServerState> servers_;
  BackoffStats backoff_stats_;
};

}  // namespace locus::selector
