// The YCSB client loop: see ycsb_loop.h.
#include "core/runner/ycsb_loop.h"

#include <array>
#include <string>
#include <string_view>

#include "core/scenario/platform.h"

namespace locus::runner {
namespace {

// Op ids by the name a session measures an operation under, registered
// with `stats` on first use. Sessions use a handful of names, so a short
// list searched in order beats a map on the hot path.
class OpIds {
 public:
  explicit OpIds(metrics::OpStats& stats) : stats_(stats) {}

  metrics::OpStats::OpId operator()(std::string_view name) {
    for (size_t i = 0; i < used_; ++i) {
      if (names_[i] == name) return ids_[i];
    }
    const metrics::OpStats::OpId id = stats_.op(name);
    if (used_ < names_.size()) {
      names_[used_] = name;  // a literal: ClientSession::execute's contract
      ids_[used_] = id;
      ++used_;
    }
    return id;
  }

 private:
  metrics::OpStats& stats_;
  std::array<std::string_view, 8> names_{};
  std::array<metrics::OpStats::OpId, 8> ids_{};
  size_t used_ = 0;
};

bool writes_record(workload::OpKind kind) {
  return kind != workload::OpKind::kRead && kind != workload::OpKind::kScan && kind != workload::OpKind::kDelete;
}

}  // namespace

YcsbRun run_ycsb_ops(Env& env, workload::Workload& workload, design::ClientSession& session, const YcsbLimits& limits,
                     metrics::OpStats& stats, const YcsbHooks& hooks) {
  std::string key(workload.max_key_bytes(), '\0');
  std::string value(workload.max_value_bytes(), '\0');
  OpIds op_id(stats);
  Random& rng = *env.random;
  // A loop bounded by operations alone never reads the clock between them.
  const bool watch_clock = limits.end_ns != YcsbLimits::kNoEnd || hooks.idle_for;
  YcsbRun run;
  const Nanos start = env.clock->now();
  while (run.ops < limits.ops) {
    if (watch_clock) {
      const Nanos now = env.clock->now();
      if (now >= limits.end_ns) break;
      if (hooks.idle_for) {
        const Nanos idle = hooks.idle_for(now);
        if (idle > 0) {
          env.clock->sleep_for(idle);
          continue;
        }
      }
    }
    // The client's own work for the operation (drawing it, building its key
    // and record), timed natively: `locus calibrate` measures it on
    // loopback; a simulator charges its "client.op" figure.
    const WorkTimer drawing(env);
    const workload::Op op = workload.next_operation(rng);
    const std::string_view k(key.data(), workload.build_key(op.keynum, key.data(), key.size()));
    std::string_view v;
    if (writes_record(op.kind)) {
      v = std::string_view(value.data(), workload.build_record(rng, op.keynum, value.data(), value.size()));
    }
    env.cpu->charge_work(scenario::kClientOpWork, drawing.elapsed(), k.size() + v.size());
    const Nanos t0 = env.clock->now();
    std::string_view measured_as;
    const Status status = session.execute(op, k, v, &measured_as);
    const Nanos t1 = env.clock->now();
    // Done, successfully or not (as YCSB): the key range may grow.
    if (op.kind == workload::OpKind::kInsert) (void)workload.acknowledge_insert(op.keynum);
    const bool measured = t0 >= limits.measure_from_ns;
    if (measured) stats.record(op_id(measured_as), t1 - t0, status.is_ok());
    if (hooks.on_op) hooks.on_op(YcsbOpDone{op, t0, t1, status, measured});
    ++run.ops;
    if (!status.is_ok()) {
      if (run.first_error.is_ok()) run.first_error = status;  // keep the first; carry on ...
      if (limits.stop_when_server_gone && is_unanswered(status)) break;  // ... unless nobody answers
    }
  }
  run.elapsed_ns = env.clock->now() - start;
  return run;
}

}  // namespace locus::runner
