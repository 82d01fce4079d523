// The loopback backend: in-process emulated RDMA. Every node is an object
// in this process with its own registered regions and an emulated NIC
// thread that carries out the one-sided operations and message deliveries
// aimed at it, concurrently with the node's CPU. Actors are OS threads.
// It is a complete backend, not a test double: all of core runs on it.
#pragma once

#include <cstdint>
#include <memory>

#include "core/common/time.h"
#include "core/transport/rc_retry.h"
#include "core/transport/runtime.h"

namespace locus::loopback {

enum class NoRecvPolicy {
  kWait,  // a SEND with no posted receive waits (RNR retry) up to rnr_timeout
  kFail,  // ... or fails at once with kRnrRetryExceeded
};

struct LoopbackOptions {
  uint64_t seed = 1;
  Nanos op_latency = 0;        // added before the target NIC serves each request
  NoRecvPolicy no_recv_policy = NoRecvPolicy::kWait;
  Nanos rnr_timeout = 2 * kSecond;
  // A request to a crashed node fails (kRetryExceeded) this long after it
  // reached its NIC: what a real queue pair's transport retries take.
  Nanos retry_exceeded_after = RcRetry{}.retry_exceeded_after();
  uint32_t max_send_wr = 256;  // outstanding work requests per endpoint
  uint32_t max_recv_wr = 1024; // posted receives per endpoint
  uint32_t max_message_bytes = 1u << 20;
};

std::unique_ptr<Runtime> make_loopback_runtime(const LoopbackOptions& options);

}  // namespace locus::loopback
