// DurableLog: a directory holding one state machine's operation log and its
// checkpoint, so that recovery reads a bounded amount: the newest complete
// checkpoint, then the log written since it.
//
//   DIR/checkpoint.G   the state as framed records (the owner's own
//                      payloads), closed by a trailer record; absent for G=0
//   DIR/log.G          records appended since checkpoint G
//
// checkpoint() writes checkpoint.G+1 under a temporary name, syncs it,
// renames it into place and syncs the directory, then starts log.G+1 and
// removes generation G. A crash at any point leaves either generation G
// whole (the temporary is ignored) or G+1 with an empty log, and the caller
// must keep its state unchanged from the start of checkpoint() to its end
// (no record is added meanwhile), so checkpoint.G+1 equals checkpoint.G
// followed by log.G.
//
// open() recovers: it applies the checkpoint's records and then the log's,
// stops at a torn or corrupt tail of the log, cuts the file there (saying
// where and why in the report) and appends after it; older generations
// (left by a crash before their removal, or by a checkpoint whose directory
// sync failed) are removed once the newest is durable. A checkpoint that is
// torn or corrupt is an error (it was synced before it was named), as is a
// trailer whose record count differs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/log/log_format.h"
#include "core/log/log_writer.h"

namespace locus::log {

struct RecoveryReport {
  uint64_t generation = 0;
  uint64_t checkpoint_records = 0;
  uint64_t checkpoint_bytes = 0;
  ReplayResult log;  // the log's replay, with its tail
  Nanos took_ns = 0;
  std::string describe() const;
};

// Where checkpoint() writes the state: one call per record.
using CheckpointSink = std::function<Status(std::string_view payload)>;

class DurableLog {
 public:
  // Creates `dir` if absent, recovers what it holds through `apply` and
  // opens the log for appending.
  static StatusOr<std::unique_ptr<DurableLog>> open(const Env& env, std::string dir, const LogOptions& options,
                                                    const std::function<Status(std::string_view)>& apply,
                                                    RecoveryReport* report);

  LogWriter& writer() { return *writer_; }
  // Adds and commits a record; fails for good once a checkpoint failed
  // after naming itself (records would go to a log recovery ignores).
  Status append(std::string_view payload) { return broken_.is_ok() ? writer_->append(payload) : broken_; }
  // The same for a caller that holds every use of this log under its own
  // lock or runs set-up code (LogWriter::append_exclusive).
  Status append_exclusive(std::string_view payload) {
    return broken_.is_ok() ? writer_->append_exclusive(payload) : broken_;
  }
  Status tick() { return writer_->tick(); }
  // Bytes of log since the last checkpoint (a caller's trigger for the next).
  // Exclusive use, like append_exclusive: takes no lock.
  uint64_t log_bytes() const { return writer_->size_bytes_exclusive(); }
  uint64_t generation() const { return generation_; }
  // The newest checkpoint's size (0: none), the same after recovery as
  // right after writing it, so a trigger based on it fires at the same
  // record in a store and in its recovered copy.
  uint64_t checkpoint_bytes() const { return checkpoint_bytes_; }

  // Writes the caller's state (`write_state` calls the sink once per
  // record) as the next checkpoint and starts an empty log. The caller
  // holds every use of the log still meanwhile (no Env lock is taken, so
  // set-up code on SimGrid may call it).
  Status checkpoint(const std::function<Status(const CheckpointSink&)>& write_state);

  std::string log_path(uint64_t generation) const;
  std::string checkpoint_path(uint64_t generation) const;

 private:
  DurableLog(const Env& env, std::string dir, const LogOptions& options);

  Env env_;
  std::string dir_;
  LogOptions options_;
  uint64_t generation_ = 0;
  uint64_t checkpoint_bytes_ = 0;
  std::unique_ptr<LogWriter> writer_;
  Status broken_;
};

}  // namespace locus::log
