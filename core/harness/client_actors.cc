// Client actors of the benchmark drivers: see client_actors.h.
#include "core/harness/client_actors.h"

#include <string>

namespace locus::harness {

Status run_client_actors(Runtime& runtime, uint32_t clients, uint64_t total_ops, const ClientActor& actor) {
  if (clients == 0) return invalid_argument("clients: must be at least 1");
  for (uint32_t c = 0; c < clients; ++c) {
    const uint64_t share = total_ops / clients + (c < total_ops % clients ? 1 : 0);
    const std::string name = "client" + std::to_string(c);
    LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime.add_node({name, false}));
    LOCUS_RETURN_IF_ERROR(
        runtime.spawn(node, name, ActorKind::kWorker, [actor, c, share](Env& env) { actor(env, c, share); }));
  }
  return runtime.run();
}

}  // namespace locus::harness
