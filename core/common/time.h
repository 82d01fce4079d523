// Time units. Durations are integer nanoseconds everywhere in the core so
// that the simulated and real clocks agree to the nanosecond.
#pragma once

#include <cstdint>

namespace locus {

using Nanos = int64_t;

constexpr Nanos kMicrosecond = 1'000;
constexpr Nanos kMillisecond = 1'000'000;
constexpr Nanos kSecond = 1'000'000'000;

constexpr double to_us(Nanos ns) { return static_cast<double>(ns) / 1e3; }
constexpr double to_seconds(Nanos ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace locus
