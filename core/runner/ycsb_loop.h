// The YCSB client loop, written once for every design: the scenario runner
// (scenario_run.cc: a duration with warm-up, phases and a time series, on
// any backend) runs its clients' operations through run_ycsb_ops, against
// the design's ClientSession.
//
// Per operation: draw it from the workload, build its key and, for a
// write, its record (both before the clock starts, so a latency is the
// index's alone), charge the client's per-operation CPU ("client.op", with
// the native time those steps took: simulated on SimGrid, measured by
// `locus calibrate`, nothing on OS threads), time session.execute(),
// acknowledge an insert, record the latency under the session's name for
// the operation (names registered on first use, so a run lists only what
// it did), keep the first error and carry on. A write's record is drawn
// even for a session that does not use it (Catfish), so a seed gives the
// same operations whatever the index and driver.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/design/client_session.h"
#include "core/metrics/op_stats.h"
#include "core/transport/env.h"
#include "core/workload/workload.h"

namespace locus::runner {

struct YcsbLimits {
  static constexpr uint64_t kNoOpLimit = std::numeric_limits<uint64_t>::max();
  static constexpr Nanos kNoEnd = std::numeric_limits<Nanos>::max();

  uint64_t ops = kNoOpLimit;  // operations to run, at most
  Nanos end_ns = kNoEnd;      // clock time (env.clock) at which no more operations start
  // Clock time before which operations run but are not recorded (warm-up).
  Nanos measure_from_ns = 0;
  // Stop at the first error that says the server is gone (retries
  // exceeded, unavailable, flushed, timed out): every later operation
  // would fail the same way.
  bool stop_when_server_gone = false;
};

// One finished operation, as the on_op hook sees it.
struct YcsbOpDone {
  const workload::Op& op;
  Nanos start_ns;  // clock times around session.execute()
  Nanos end_ns;
  const Status& status;
  bool measured;  // recorded in the stats (started after the warm-up)
};

struct YcsbHooks {
  // Before each operation, with the clock's time: how long this client
  // must stay idle before its next one (0: run it now). The loop sleeps
  // that long and asks again. For load that changes over time (phases).
  std::function<Nanos(Nanos now)> idle_for;
  // After each operation, recorded or not (time series, selector choices).
  std::function<void(const YcsbOpDone&)> on_op;
};

struct YcsbRun {
  uint64_t ops = 0;      // operations run, warm-up included
  Nanos elapsed_ns = 0;  // from the loop's start to its end
  Status first_error;    // of any operation, warm-up included
};

// Runs operations from `workload` through `session` until a limit is
// reached, recording their latencies into `stats`.
YcsbRun run_ycsb_ops(Env& env, workload::Workload& workload, design::ClientSession& session, const YcsbLimits& limits,
                     metrics::OpStats& stats, const YcsbHooks& hooks = {});

}  // namespace locus::runner
