// Heartbeats: see heartbeat.h.
#include "core/messaging/heartbeat.h"

#include <algorithm>

namespace locus::messaging {

void HeartbeatSampler::start(Nanos now) {
  last_at_ = now;
  last_busy_ns_ = meter_.total_ns();
}

HeartbeatRecord HeartbeatSampler::sample(Nanos now) {
  const Nanos busy = meter_.total_ns();
  const Nanos elapsed = std::max<Nanos>(now - last_at_, 1);
  // A handler that straddles the boundary is counted when it ends, so one
  // interval can see more than its share; the clamp keeps the record sane.
  const double utilisation = static_cast<double>(busy - last_busy_ns_) /
                             (static_cast<double>(elapsed) * static_cast<double>(threads_));
  last_at_ = now;
  last_busy_ns_ = busy;
  HeartbeatRecord r;
  r.utilisation = std::clamp(utilisation, 0.0, 1.0);
  r.sequence = ++sequence_;
  return r;
}

}  // namespace locus::messaging
