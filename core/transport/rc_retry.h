// The retry settings of a reliable-connection queue pair (ibv_modify_qp(3),
// IB spec vol. 1, 9.7.6 and table 45) and how long they let a request live
// when its peer does not answer. The verbs backend gives them to its queue
// pairs; the SimGrid backend makes a request to a dead node fail after the
// same time, so a simulated dead server stalls its clients as long as a
// real one would (not at once, which would let a client fail millions of
// calls a second against it).
#pragma once

#include <cstdint>

#include "core/common/time.h"

namespace locus {

struct RcRetry {
  // Local ACK timeout exponent: 4.096 us * 2^ack_timeout per transport
  // retry (14: ~67 ms), and the retries before kRetryExceeded.
  uint8_t ack_timeout = 14;
  uint8_t retry_count = 7;
  // A SEND that finds no receive is retried rnr_retry_count times,
  // min_rnr_timer apart (IB encoding; 22 = 20.48 ms). 7 would mean "retry
  // forever": finite on purpose.
  uint8_t rnr_retry_count = 6;
  uint8_t min_rnr_timer = 22;

  // A request to a peer that never acknowledges fails (kRetryExceeded)
  // after the first try and retry_count retries, each waiting the ACK
  // timeout (the nominal value; the spec lets an HCA wait up to 4x longer).
  Nanos retry_exceeded_after() const;
  // A SEND to a peer with no receive posted fails (kRnrRetryExceeded)
  // after rnr_retry_count waits of min_rnr_timer.
  Nanos rnr_retry_budget() const;
};

// The delay an RNR NAK's timer field encodes, in ms (IB spec table 45).
double rnr_timer_ms(uint8_t code);

}  // namespace locus
