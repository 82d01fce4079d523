// Heartbeats of a messaging server (the Catfish paper's section IV-A): how
// busy its CPU was over the last interval, for the clients' back-off
// selectors.
//
// Utilisation is the busy time of the server's handler threads over the
// interval divided by the threads' capacity (interval x threads). Busy
// time is measured on the Env clock around each handler and its CPU
// charge: on real backends that is the handler's running time, on SimGrid
// the charge is what advances the simulated clock, so the same code reports
// the simulated CPU load. Each server thread samples the shared meter on
// its own schedule and writes the record into its clients' heartbeat slots
// (selector::HeartbeatRecord, 16 bytes) with RDMA WRITE.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/common/time.h"
#include "core/selector/server_feedback.h"

namespace locus::messaging {

using selector::HeartbeatRecord;

// Busy nanoseconds of all handler threads of one server, summed. Lock-free:
// every thread adds to it after each handler.
class BusyMeter {
 public:
  void add(Nanos busy_ns) { busy_ns_.fetch_add(busy_ns, std::memory_order_relaxed); }
  Nanos total_ns() const { return busy_ns_.load(std::memory_order_relaxed); }

 private:
  std::atomic<Nanos> busy_ns_{0};
};

// One thread's heartbeat schedule: every interval_ns it turns the meter's
// growth since the last sample into a utilisation record with the next
// sequence number. Owned by one thread.
class HeartbeatSampler {
 public:
  HeartbeatSampler(const BusyMeter& meter, uint32_t threads, Nanos interval_ns)
      : meter_(meter), threads_(threads == 0 ? 1 : threads), interval_ns_(interval_ns) {}

  // Begins the first interval at `now`.
  void start(Nanos now);
  bool enabled() const { return interval_ns_ > 0; }
  bool due(Nanos now) const { return enabled() && now - last_at_ >= interval_ns_; }
  // When the next heartbeat is due (for bounding waits).
  Nanos next_due() const { return last_at_ + interval_ns_; }
  // Utilisation since the last sample, clamped to [0, 1]; starts the next interval.
  HeartbeatRecord sample(Nanos now);

 private:
  const BusyMeter& meter_;
  uint32_t threads_;
  Nanos interval_ns_;
  Nanos last_at_ = 0;
  Nanos last_busy_ns_ = 0;
  uint64_t sequence_ = 0;
};

}  // namespace locus::messaging
