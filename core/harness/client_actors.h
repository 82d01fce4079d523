// The client half every benchmark driver shares: `clients` client nodes,
// each a worker actor running its share of the operations, and one
// Runtime::run() until all have returned.
#pragma once

#include <cstdint>
#include <functional>

#include "core/common/status.h"
#include "core/transport/runtime.h"

namespace locus::harness {

// The actor body of client `index` (0-based) with its share of the
// operations; runs on the client's own node.
using ClientActor = std::function<void(Env& env, uint32_t index, uint64_t ops)>;

// Adds client nodes "client0".."client<clients-1>" to `runtime`, splits
// total_ops evenly between them (the first total_ops % clients get one
// more), spawns `actor` on each and runs the runtime.
Status run_client_actors(Runtime& runtime, uint32_t clients, uint64_t total_ops, const ClientActor& actor);

}  // namespace locus::harness
