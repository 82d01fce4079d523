// Time units. Durations are integer nanoseconds everywhere in the core so
// that the simulated and real clocks agree to the nanosecond.
#pragma once

#include <cstdint>

namespace locus {

using Nanos = int64_t;

constexpr Nanos kMicrosecond = 1'000;
constexpr Nanos kMillisecond = 1'000'000;
constexpr Nanos kSecond = 1'000'000'000;

// The pause before re-reading something a writer holds, on the attempt-th
// torn or locked copy in a row: none after the first, then `base` doubling
// up to `cap` (a writer descheduled mid-write holds it for a time slice,
// and re-reading at full speed would only load the server's NIC).
constexpr Nanos doubling_backoff(uint32_t attempt, Nanos base, Nanos cap) {
  if (attempt < 2) return 0;
  const uint32_t doublings = attempt - 2 < 30 ? attempt - 2 : 30;
  const Nanos pause = base << doublings;
  return pause < cap ? pause : cap;
}

constexpr double to_us(Nanos ns) { return static_cast<double>(ns) / 1e3; }
constexpr double to_seconds(Nanos ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace locus
