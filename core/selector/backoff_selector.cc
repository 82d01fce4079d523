// BackoffSelector: see backoff_selector.h.
#include "core/selector/backoff_selector.h"

namespace locus::selector {

BackoffSelector::BackoffSelector(const BackoffConfig& config, Random& rng)
    : config_(config), rng_(rng) {}

BackoffSelector::ServerState& BackoffSelector::state_of(NodeId server) { return servers_.get(server); }

const BackoffSelector::ServerState* BackoffSelector::state(NodeId server) const { return servers_.find(server); }

void BackoffSelector::attach_server_feedback(NodeId server, const std::byte* slot) {
  state_of(server).slot = slot;
}

void BackoffSelector::offer_heartbeat(NodeId server, const HeartbeatRecord& record, Nanos now) {
  ServerState& s = state_of(server);
  if (record.sequence == 0 || record.sequence == s.last_sequence) {
    ++backoff_stats_.stale_heartbeats;
    return;
  }
  if (s.last_sequence != 0 && now - s.taken_at < config_.interval_ns) {
    ++backoff_stats_.early_heartbeats;
    return;
  }
  s.last_sequence = record.sequence;
  s.taken_at = now;
  ++backoff_stats_.heartbeats_taken;
  // Algorithm 1, lines 11-16 (U = predUtil(u_serv), the latest reading).
  const uint64_t n = config_.n;
  if (record.utilisation > config_.threshold && s.r_off <= uint64_t{s.r_busy} * n) {
    ++backoff_stats_.busy_heartbeats;
    ++s.r_busy;
    s.r_off = rng_.uniform(n) + uint64_t{s.r_busy - 1} * n;
  } else if (record.utilisation <= config_.threshold) {
    s.r_busy = 0;
  }
}

Path BackoffSelector::choose(NodeId server, Nanos now) {
  ServerState& s = state_of(server);
  if (s.slot != nullptr) offer_heartbeat(server, read_heartbeat(s.slot), now);
  // Lines 18-22.
  if (s.r_off > 0) {
    --s.r_off;
    return count(Path::kClient);
  }
  return count(Path::kServer);
}

}  // namespace locus::selector
