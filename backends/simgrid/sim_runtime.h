// The SimGrid backend: the unchanged core running as SimGrid actors on a
// simulated platform (hosts with cores, links, PCIe, and a queueing model
// of each NIC). Time is simulated: Clock, Cpu and every wait advance it.
// Same platform, same seed: byte-identical results, from runs that start
// at the same engine time: SimGrid's clock does not go back to 0 for a new
// engine in the same process, and a later start rounds floating-point
// times differently (`locus sim` runs one scenario per process).
//
// One SimGrid engine exists per process at a time; create one runtime,
// run it, destroy it, and only then create the next.
#pragma once

#include <cstdint>
#include <memory>

#include "core/common/time.h"
#include "core/scenario/platform.h"
#include "core/transport/rc_retry.h"
#include "core/transport/runtime.h"

namespace locus::simgrid_backend {

struct SimOptions {
  uint64_t seed = 1;
  uint32_t max_send_wr = 64;
  uint32_t max_recv_wr = 1024;
  uint32_t max_message_bytes = 1u << 20;
  // How long a SEND waits for a posted receive (RNR retries), simulated:
  // what the verbs backend's queue pairs are given by default. (How long a
  // request to a crashed node takes to fail is the platform's:
  // NicSpec::retry_exceeded_after.)
  Nanos rnr_timeout = RcRetry{}.rnr_retry_budget();
  // Bytes on the wire besides the payload (transport headers).
  uint32_t header_bytes = 30;
  // Lets the effect of a one-sided request run ahead of the engine's clock
  // when nothing else can happen before it, saving the engine a round per
  // request. Results are the same either way; off only to check that.
  bool run_ahead = true;
  // If set, receives how many events ran ahead, when the runtime ends.
  uint64_t* events_run_ahead = nullptr;
  // If set, receives how many times an actor did what running ahead by
  // the lookahead assumes no client does while an effect was ahead (crash
  // a node, wake another actor through a lock, post to a client host):
  // each may have put two requests in another order than without running
  // ahead. The first turns that rule off for the rest of the run.
  uint64_t* run_ahead_hazards = nullptr;
  // Actors the run will spawn, if known (0: not known). Each actor's stack
  // is two memory mappings with its guard page; where that many would pass
  // the kernel's vm.max_map_count, the first engine of the process turns
  // guard pages off (SimGrid's contexts/guard-size) rather than abort.
  uint64_t expected_actors = 0;
};

std::unique_ptr<Runtime> make_simgrid_runtime(const scenario::PlatformSpec& platform,
                                              const SimOptions& options);

}  // namespace locus::simgrid_backend
