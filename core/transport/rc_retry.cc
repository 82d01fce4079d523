#include "core/transport/rc_retry.h"

#include <cmath>

namespace locus {

Nanos RcRetry::retry_exceeded_after() const {
  const Nanos ack_timeout_ns = static_cast<Nanos>(std::llround(4096.0 * std::ldexp(1.0, ack_timeout & 31)));
  return (static_cast<Nanos>(retry_count) + 1) * ack_timeout_ns;
}

Nanos RcRetry::rnr_retry_budget() const {
  return static_cast<Nanos>(std::llround(rnr_timer_ms(min_rnr_timer) * rnr_retry_count * 1e6));
}

double rnr_timer_ms(uint8_t code) {
  // Code 0 is the longest; 1..31 grow roughly by 1.5x.
  static constexpr double kMs[32] = {655.36, 0.01,  0.02,  0.03,  0.04,  0.06,   0.08,   0.12,   0.16,   0.24,  0.32,
                                     0.48,   0.64,  0.96,  1.28,  1.92,  2.56,   3.84,   5.12,   7.68,   10.24, 15.36,
                                     20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  return kMs[code & 31];
}

}  // namespace locus
