// `locus bench --micro log`: what Pilaf's operation log costs on this
// machine's disk. The same puts go to a Pilaf server without a log and to
// one logging under each fsync policy (every_batch, interval, never), one
// client thread, each run bounded in puts and time; it prints logged puts/s
// beside the unlogged rate with their ratio, then restarts the server on
// the `never` run's log, dropped from the page cache first, and prints the
// recovery time per GB of log.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace locus::cli {

struct MicroLogConfig {
  std::string dir;  // where the logs go (a directory on the disk measured); removed after
  uint64_t puts = 200'000;
  uint32_t value_bytes = 1000;
  uint64_t keys = 100'000;  // distinct keys the puts cycle over
  double max_seconds = 5;   // per policy: every_batch syncs every put
  uint64_t seed = 1;
};

Status run_micro_log(const MicroLogConfig& config);

}  // namespace locus::cli
