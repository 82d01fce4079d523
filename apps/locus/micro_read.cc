// `locus bench --micro read`: see micro_read.h. The client talks to its
// Transport directly (post, wait, re-post), as perftest does to verbs, so
// the figure is the transport's own cost per READ and not Pilaf's.
#include "apps/locus/micro_read.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/index/pilaf/client.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"

namespace locus::cli {
namespace {

constexpr Nanos kCompletionTimeout = 10 * kSecond;

struct Outcome {
  Status error;
  uint64_t reads = 0;
  Nanos elapsed_ns = 0;
};

Status read_loop(Env& env, NodeId server, const MicroReadConfig& config, Outcome* out) {
  Endpoint ep(env);
  LOCUS_ASSIGN_OR_RETURN(auto rpc, rpc::RpcClient::create(ep));
  // The layout RPC hands over the table's descriptor (address, length, rkey).
  LOCUS_ASSIGN_OR_RETURN(auto pilaf, pilaf::PilafClient::connect(ep, *rpc, server));
  const RemoteRegion table = pilaf->layout().table;
  if (table.length < config.size_bytes) {
    return invalid_argument("--size: the server's table region has only " + std::to_string(table.length) +
                            " bytes; start `locus serve` with more --records");
  }
  Transport& t = *env.transport;
  AlignedBuffer buffer(uint64_t{config.depth} * config.size_bytes);
  LOCUS_ASSIGN_OR_RETURN(Region local, t.register_memory(buffer.data(), buffer.size(), kLocalOnly));
  const uint64_t positions = (table.length - config.size_bytes) / config.size_bytes + 1;
  auto read = [&](uint64_t seq) {
    WorkRequest wr;
    wr.wr_id = seq;
    wr.op = Opcode::kRead;
    // Consecutive READs walk the table, as a stream of index lookups would.
    wr.remote = remote_at(table, (seq % positions) * config.size_bytes);
    wr.local = {buffer.data() + (seq % config.depth) * config.size_bytes, config.size_bytes, local.lkey};
    return wr;
  };

  const uint64_t warmup = uint64_t{config.depth} * 4;
  const uint64_t total = warmup + config.reads;
  std::vector<WorkRequest> batch;
  batch.reserve(config.depth);
  uint64_t posted = 0, completed = 0;
  for (; posted < std::min<uint64_t>(config.depth, total); ++posted) batch.push_back(read(posted));
  Status st = t.post(batch);
  std::array<Completion, 32> done;
  Nanos start = env.clock->now();
  while (st.is_ok() && completed < total) {
    const size_t n = t.wait(done, kCompletionTimeout);
    if (n == 0) {
      st = timeout_error("no READ completion from node " + std::to_string(server) + " within 10 s");
      break;
    }
    batch.clear();
    for (size_t i = 0; i < n && st.is_ok(); ++i) {
      if (!done[i].ok()) st = completion_error(done[i]);
      if (++completed == warmup) start = env.clock->now();
      if (posted < total) batch.push_back(read(posted++));
    }
    if (st.is_ok() && !batch.empty()) st = t.post(batch);
  }
  out->elapsed_ns = env.clock->now() - start;
  out->reads = completed > warmup ? completed - warmup : 0;
  (void)t.deregister_memory(local);
  return st;
}

}  // namespace

StatusOr<MicroReadResult> run_micro_read(Runtime& runtime, NodeId server, const MicroReadConfig& config) {
  if (config.size_bytes == 0 || config.depth == 0 || config.reads == 0) {
    return invalid_argument("--size, --depth and --ops must be positive");
  }
  LOCUS_ASSIGN_OR_RETURN(NodeId client, runtime.add_node({"client0", false}));
  Outcome outcome;
  LOCUS_RETURN_IF_ERROR(runtime.spawn(client, "reader", ActorKind::kWorker, [&](Env& env) {
    outcome.error = read_loop(env, server, config, &outcome);
  }));
  LOCUS_RETURN_IF_ERROR(runtime.run());
  LOCUS_RETURN_IF_ERROR(outcome.error);
  MicroReadResult r;
  r.reads = outcome.reads;
  const double seconds = to_seconds(std::max<Nanos>(outcome.elapsed_ns, 1));
  r.reads_per_s = static_cast<double>(outcome.reads) / seconds;
  r.mib_per_s = r.reads_per_s * config.size_bytes / (1024.0 * 1024.0);
  return r;
}

}  // namespace locus::cli
