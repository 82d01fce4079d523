// The torn-read policy every design's client uses when a one-sided READ
// returns a copy a server writer was changing (Cell's odd or mismatched
// node versions, Catfish's disagreeing line versions, Pilaf's CRC64
// mismatches): how many copies in a row may be torn before the client gives
// up on the one-sided path, and how long it pauses between them. One type,
// so the designs cannot drift apart again (issue 14: Pilaf re-read 10,000
// times with no pause and then called contention "corruption").
//
// What "giving up" means is the caller's: Cell and Pilaf ask the server
// instead, Catfish's offload returns kAborted and CatfishClient asks the
// server. An exhausted budget is contention, never corruption.
#pragma once

#include <cstdint>

#include "core/common/time.h"

namespace locus {

// The clock is a template parameter (in the designs, the Env's Clock, which
// has sleep_for(Nanos)) because core/common sits below core/transport and
// must not include it.

struct TornReadPolicy {
  uint32_t max_attempts = 64;  // reads that may all be torn, then the caller leaves it to the server
  // From the second torn copy in a row the client pauses, doubling from the
  // base to the cap: a writer descheduled mid-write holds its object for a
  // time slice, and re-reading at full speed would only load the server's
  // NIC and burn the budget.
  Nanos backoff_base_ns = 1 * kMicrosecond;
  Nanos backoff_max_ns = 1 * kMillisecond;

  // Whether another read may follow `torn_in_a_row` torn copies.
  constexpr bool allows_another(uint32_t torn_in_a_row) const { return torn_in_a_row < max_attempts; }
  // The pause before that read: none after the first torn copy, then the
  // base doubling to the cap (doubling_backoff).
  constexpr Nanos pause_ns(uint32_t torn_in_a_row) const {
    return doubling_backoff(torn_in_a_row, backoff_base_ns, backoff_max_ns);
  }
  // Every pause of a read torn max_attempts times in a row: what a reader
  // that spends its whole budget sleeps in all.
  constexpr Nanos total_pause_ns() const {
    Nanos total = 0;
    for (uint32_t torn = 1; torn < max_attempts; ++torn) total += pause_ns(torn);
    return total;
  }
  // Sleeps pause_ns(torn_in_a_row) on `clock` (not at all if zero). For
  // callers that keep the count themselves (one per node in a batch).
  template <typename SleepingClock>
  void back_off(SleepingClock& clock, uint32_t torn_in_a_row) const {
    const Nanos pause = pause_ns(torn_in_a_row);
    if (pause > 0) clock.sleep_for(pause);
  }
};

// One object's retries: counts its torn copies in a row and pauses between
// them. Usage:
//   TornRetry retry(policy, *env.clock);
//   do { read; if (consistent) return it; ++stats.torn_reads; } while (retry.again());
//   leave it to the server;
// At most policy.max_attempts reads (at least one, whatever the policy).
template <typename SleepingClock>
class TornRetry {
 public:
  TornRetry(const TornReadPolicy& policy, SleepingClock& clock) : policy_(policy), clock_(clock) {}

  // Counts one torn copy. False once max_attempts copies were torn; else
  // pauses as the policy says and returns true: read again.
  bool again() {
    ++torn_;
    if (!policy_.allows_another(torn_)) return false;
    policy_.back_off(clock_, torn_);
    return true;
  }
  uint32_t torn_in_a_row() const { return torn_; }

 private:
  const TornReadPolicy& policy_;
  SleepingClock& clock_;
  uint32_t torn_ = 0;
};

}  // namespace locus
