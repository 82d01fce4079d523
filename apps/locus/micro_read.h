// `locus bench --micro read`: the raw one-sided READ rate of locus's
// transport, one client with `depth` READs of `size` bytes in flight on one
// connection, comparable with perftest's `ib_read_bw -s SIZE -t DEPTH`
// (ci/softroce-bench.sh prints the two and their ratio). The READs target a
// Pilaf server's table region, whose descriptor the client fetches over RPC
// like any Pilaf client, so no extra server-side protocol is involved.
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "core/transport/runtime.h"

namespace locus::cli {

struct MicroReadConfig {
  uint32_t size_bytes = 64;
  uint32_t depth = 16;      // READs in flight
  uint64_t reads = 20'000;  // measured, after a warm-up of depth * 4
};

struct MicroReadResult {
  uint64_t reads = 0;
  double reads_per_s = 0;
  double mib_per_s = 0;
};

// Runs one client node of `runtime` against Pilaf server `server`.
StatusOr<MicroReadResult> run_micro_read(Runtime& runtime, NodeId server, const MicroReadConfig& config);

}  // namespace locus::cli
