// LogKeys: the [index] keys a design with an operation log reads (log_dir,
// log_fsync, log_fsync_interval_ms), read the same way by every design
// that logs without one design including another. Header-only and
// templated on the key reader (scenario::IndexKeys), so core/log depends
// on no scenario code.
#pragma once

#include <cstdint>
#include <string>

#include "core/log/log_writer.h"

namespace locus::log {

struct LogKeys {
  std::string log_dir;                 // empty: nothing logged, nothing survives a restart
  std::string log_fsync = "interval";  // every_batch | interval | never (log_writer.h)
  // Redis's appendfsync everysec (redis.conf).
  uint32_t log_fsync_interval_ms = 1000;

  template <typename Keys>
  Status read(Keys& keys) {
    LOCUS_RETURN_IF_ERROR(keys.text("log_dir", &log_dir));
    LOCUS_RETURN_IF_ERROR(keys.text("log_fsync", &log_fsync, {"every_batch", "interval", "never"}));
    return keys.number("log_fsync_interval_ms", &log_fsync_interval_ms, 1, 3.6e6);
  }

  LogOptions options() const {
    LogOptions o;
    (void)parse_fsync_policy(log_fsync, &o.fsync);  // read() allowed only these
    o.fsync_interval_ns = Nanos{log_fsync_interval_ms} * kMillisecond;
    return o;
  }
};

// Whether `dir` (a server's or a store's log directory) holds an earlier
// run's log: a run replays it only when index.log_replay asks, since its
// load would otherwise be mixed into what the log recovers. False where
// there is no file system (`files` null) or no such directory.
inline bool holds_earlier_log(Files* files, const std::string& dir) {
  if (files == nullptr || dir.empty() || !files->exists(dir)) return false;
  auto names = files->list(dir);
  return !(names.is_ok() && names->empty());
}

}  // namespace locus::log
