// ReconnectBackoff: when a client may next try to set a broken connection
// up again. No wait before the first failure; after it, `min` doubling on
// each further failure up to `max`; a success clears it. Catfish's client
// (which sleeps out the wait: its calls have nowhere else to go) and the
// mailbox caller (which fails calls to that server meanwhile) share it.
#pragma once

#include <algorithm>

#include "core/common/time.h"

namespace locus::messaging {

class ReconnectBackoff {
 public:
  ReconnectBackoff(Nanos min_ns, Nanos max_ns) : min_ns_(min_ns), max_ns_(max_ns) {}

  // How long from `now` until the next attempt may start (0: at once).
  Nanos wait_at(Nanos now) const { return wait_ns_ > 0 ? std::max<Nanos>(next_at_ - now, 0) : 0; }
  void succeeded() { wait_ns_ = 0; }
  void failed(Nanos now) {
    wait_ns_ = wait_ns_ == 0 ? min_ns_ : std::min(2 * wait_ns_, max_ns_);
    next_at_ = now + wait_ns_;
  }

 private:
  Nanos min_ns_, max_ns_;
  Nanos wait_ns_ = 0;  // after the last failure; 0: none since the last success
  Nanos next_at_ = 0;
};

}  // namespace locus::messaging
