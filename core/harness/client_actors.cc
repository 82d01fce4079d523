// Client actors of the benchmark drivers: see client_actors.h.
#include "core/harness/client_actors.h"

#include <algorithm>
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

Status run_client_share(Env& env, const workload::WorkloadSpec& spec, const ClientShare& share,
                        ClientSession& session, ClientRun& out, bool stop_when_server_gone) {
  LOCUS_ASSIGN_OR_RETURN(auto wl, workload::Workload::create(spec, share.inserts));
  YcsbLimits limits;
  limits.ops = share.ops;
  limits.stop_when_server_gone = stop_when_server_gone;
  const YcsbRun run = run_ycsb_ops(env, wl, session, limits, out.stats);
  out.elapsed_ns = run.elapsed_ns;
  if (out.error.is_ok()) out.error = run.first_error;
  return Status();
}

metrics::RunResult bench_result(const Runtime& runtime, const std::string& name, const std::string& index,
                                uint64_t seed) {
  metrics::RunResult result;
  result.name = name;
  result.backend = std::string(runtime.backend_name());
  result.index = index;
  result.seed = seed;
  return result;
}

Status merge_client_run(const ClientRun& run, metrics::RunResult& result) {
  LOCUS_RETURN_IF_ERROR(run.error);
  result.stats.merge(run.stats);
  result.duration_ns = std::max(result.duration_ns, run.elapsed_ns);
  return Status();
}

}  // namespace locus::harness
