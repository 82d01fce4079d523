// What the fault-injecting transport (fault_transport.h) does, as a
// scenario's [faults] section sets it. Probabilities are per work request
// (per registration for register_failure); decisions are drawn from a
// stream per endpoint forked from `seed`, so on the SimGrid backend, whose
// actors run one at a time in a fixed order, a seed replays exactly.
#pragma once

#include <cstdint>

#include "core/common/time.h"

namespace locus::fault {

// The order in which a split READ's pieces are copied.
enum class ReadOrder : uint8_t {
  kReverse,  // highest address first: the opposite of what a NIC usually does
  kRandom,   // any order
};

struct FaultOptions {
  uint64_t seed = 1;
  // Completions held back by up to max_delay before they are delivered.
  // Order towards one peer is kept (the transport's contract promises it);
  // across peers completions are reordered.
  double delay = 0;
  Nanos max_delay_ns = 20 * kMicrosecond;
  // Requests that complete with kRetryExceeded. A fraction `applied` of
  // them were carried out at the target before the failure (the reply was
  // lost: the nastiest case for a client, which cannot know).
  double retry_exceeded = 0;
  double applied = 0.5;
  // One-sided requests refused at the target (kRemoteAccessError), and
  // SENDs that found no receive (kRnrRetryExceeded); neither is carried out.
  double remote_access_error = 0;
  double rnr = 0;
  // register_memory() calls that fail with kResourceExhausted.
  double register_failure = 0;
  // READs split into pieces of `piece_bytes` copied in `read_order`: a
  // CPU write that lands between two pieces tears the read at a random
  // offset, and a reader that relies on increasing address order sees the
  // order reversed.
  double split_read = 0;
  uint32_t piece_bytes = 64;
  ReadOrder read_order = ReadOrder::kReverse;

  // Clients whose host dies (Runtime::crash_node) at a random time after
  // the warm-up: the servers must go on serving the others.
  uint32_t crash_clients = 0;
  // Server machines (every endpoint and daemon node of each) that die the
  // same way: the others must go on serving, and calls that needed a dead
  // one must fail within their bounded waits.
  uint32_t crash_servers = 0;
  // A crashed server machine answers again this long after (0: never),
  // with its memory: a host whose network came back (Runtime::revive_node).
  // Its connections broke; clients must connect again.
  Nanos server_outage_ns = 0;
  // With server_outage_ms: the crashed machine comes back as restarted
  // server processes instead, their memory lost and their state rebuilt
  // from their logs (IndexDriver::restart_server; designs that log only).
  bool restart_servers = false;
  // A crashed client comes back this long after its crash (0: never), as a
  // restarted process does: a new endpoint on the same host, connecting
  // afresh, remembering nothing of the one that died.
  Nanos restart_after_ns = 0;

  bool any() const {
    return delay > 0 || retry_exceeded > 0 || remote_access_error > 0 || rnr > 0 || register_failure > 0 ||
           split_read > 0 || crash_clients > 0 || crash_servers > 0;
  }
};

}  // namespace locus::fault
