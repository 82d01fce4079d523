// Endpoint: synchronous request/completion matching on top of a Transport.
//
// Core code is written "post, then wait", but one endpoint's completion
// queue is shared by everything that endpoint does (RPC calls and one-sided
// READs of an index client, say). Endpoint hands out wr_ids and waits for
// a particular one, parking completions that belong to someone else in a
// bounded side buffer so they are not lost. A request whose wait timed out
// is abandoned: nobody will ask for its completion, so when it arrives it
// is dropped instead of parked (else enough timeouts would fill the side
// buffer and fail every later wait). No allocation after creation.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/status.h"
#include "core/transport/env.h"

namespace locus {

class Endpoint {
 public:
  static constexpr Nanos kDefaultTimeout = 5 * kSecond;

  explicit Endpoint(Env env, Nanos timeout = kDefaultTimeout);

  Env& env() { return env_; }
  Transport& transport() { return *env_.transport; }
  NodeId node_id() const { return env_.transport->node_id(); }
  Nanos timeout() const { return timeout_; }

  uint64_t next_wr_id() { return ++last_wr_id_; }

  // Posts `batch` and waits for each request's completion (all signaled).
  // Returns the first failure as a Status naming the peer and operation.
  Status execute(std::span<const WorkRequest> batch);
  // Posts one request and waits for it.
  Status execute(const WorkRequest& wr) { return execute(std::span<const WorkRequest>(&wr, 1)); }

  // Waits for the completion of wr_id (send side). On kTimeout the request
  // is abandoned: its completion is dropped whenever it comes.
  StatusOr<Completion> await(uint64_t wr_id);
  // Waits for the next receive completion.
  StatusOr<Completion> await_recv();
  // Like await_recv, but returns kTimeout after `timeout`.
  StatusOr<Completion> await_recv_for(Nanos timeout);

 private:
  // Pulls completions until `match` accepts one; others are parked.
  template <typename Match>
  StatusOr<Completion> await_matching(Match match, Nanos timeout, const char* what);
  bool park(const Completion& c);
  // Remembers wr_id as abandoned (oldest forgotten first when more are
  // than could be outstanding) and drops its completion if already parked.
  void abandon(uint64_t wr_id);
  // True (and forgets it) if `c` is of an abandoned request.
  bool take_abandoned(const Completion& c);

  Env env_;
  Nanos timeout_;
  uint64_t last_wr_id_ = 0;
  std::vector<Completion> parked_;  // capacity fixed at construction
  std::vector<Completion> scratch_;
  std::vector<uint64_t> abandoned_;  // a ring of max_send_wr wr_ids; 0: free
  size_t abandoned_next_ = 0;
  size_t abandoned_live_ = 0;  // non-zero entries: none, and parking skips the ring
};

}  // namespace locus
