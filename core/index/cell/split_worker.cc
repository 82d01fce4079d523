// Split worker: see split_worker.h.
#include "core/index/cell/split_worker.h"

#include <functional>

#include "core/index/cell/caller.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"

namespace locus::cell {
namespace {
constexpr Nanos kQueuePoll = 10 * kMillisecond;  // how soon a worker notices stop
constexpr int kMaxNesting = 2 * static_cast<int>(kMaxLevels);
}  // namespace

void SplitWorkerShared::record(const SplitDriverStats& before, const SplitDriverStats& after) {
  splits += after.splits - before.splits;
  remote_placements += after.remote_placements - before.remote_placements;
  new_roots += after.new_roots - before.new_roots;
  parents_abandoned += after.parents_abandoned - before.parents_abandoned;
}

void SplitWorkerShared::fail(const Status& st) {
  ++failures;
  std::lock_guard<ShortMutex> lock(mu_);
  if (first_error_.empty()) first_error_ = st.to_string();
}

std::string SplitWorkerShared::first_error() const {
  std::lock_guard<ShortMutex> lock(mu_);
  return first_error_;
}

void run_split_worker(Env& env, CellServer& server, const SplitDriverOptions& options, SplitWorkerShared& shared,
                      const std::function<Status(Caller&)>& first) {
  Endpoint endpoint(env);
  rpc::RpcClientOptions rpc_options;
  rpc_options.max_message_bytes = server.options().max_message_bytes;
  auto rpc = rpc::RpcClient::create(endpoint, rpc_options);
  if (!rpc.is_ok()) {
    shared.fail(rpc.status());
    return;
  }
  RpcCaller caller(**rpc, server.options().tree_key);
  if (first) {
    if (Status st = first(caller); !st.is_ok()) shared.fail(st);
  }
  // While a split waits for a busy parent, the parent's own split may be
  // the next one in this worker's queue: run queued splits meanwhile
  // (nested, bounded by the tree's height) instead of just sleeping.
  std::function<void(uint32_t, int)> process = [&](uint32_t meganode, int depth) {
    // A copy per split: a takeover may move regions meanwhile (the next
    // split sees it; this one's calls to a dead server fail and it aborts).
    const Layout layout = server.layout();
    SplitDriver driver(
        caller, layout, server.node_id(), server.split_ids(), options, *env.random, *env.clock,
        [&, depth](Nanos d) {
          uint32_t next = 0;
          if (depth < kMaxNesting && server.try_take_split(&next)) {
            process(next, depth + 1);
          } else {
            env.clock->sleep_for(d);
          }
        },
        env.stop);
    const Status st = driver.run(meganode);
    shared.record(SplitDriverStats{}, driver.stats());
    if (!st.is_ok()) shared.fail(st);
  };
  while (true) {
    // Counted before looking at stop, so a server that saw no worker in
    // flight after stop can never be needed by one.
    shared.in_flight.fetch_add(1, std::memory_order_seq_cst);
    if (env.stop_requested()) {
      shared.in_flight.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    uint32_t meganode = 0;
    if (server.take_split(kQueuePoll, &meganode)) process(meganode, 0);
    shared.in_flight.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace locus::cell
