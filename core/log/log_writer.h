// LogWriter: appends framed records (log_format.h) to one file with group
// commit. Any number of actors add records and then commit them; the first
// committer that finds no write under way becomes the leader and writes
// every record pending at that moment in one append (and one sync, per
// the policy) while the others wait, so N concurrent committers cost about
// one write and one sync, not N.
//
// What a commit waits for is the fsync policy's promise:
//   every_batch  the record is written and synced (survives a machine crash)
//   interval     the record is written (survives the process being killed);
//                a sync follows within the interval (tick() or the next batch)
//   never        the record is written; the OS syncs when it likes
// Redis's appendfsync (always / everysec / no) makes the same choice; Pilaf's
// server logs "asynchronously" (pilaf-kv-atc13, Logging), which is interval.
//
// A failed write or sync breaks the writer for good: every later commit
// fails with that error. After a failed fsync the kernel may have dropped
// the dirty pages it could not write, so retrying would report durable what
// is not (the PostgreSQL "fsyncgate" lesson); the owner must reopen the log
// through recovery.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/transport/env.h"

namespace locus::log {

enum class FsyncPolicy { kEveryBatch, kInterval, kNever };

// "every_batch", "interval", "never" (config keys); false if unknown.
bool parse_fsync_policy(std::string_view text, FsyncPolicy* out);

struct LogOptions {
  FsyncPolicy fsync = FsyncPolicy::kEveryBatch;
  Nanos fsync_interval_ns = 10 * kMillisecond;  // kInterval only
};

struct LogWriterStats {
  uint64_t records = 0;
  uint64_t batches = 0;  // appends to the file
  uint64_t syncs = 0;
  uint64_t bytes = 0;
};

class LogWriter {
 public:
  // Appends to `path` (created if absent) after its current end.
  static StatusOr<std::unique_ptr<LogWriter>> open(const Env& env, std::string path, const LogOptions& options);
  ~LogWriter();

  // Adds a record to the pending batch; returns its log sequence number
  // (the file offset just past it) to commit.
  uint64_t add(std::string_view payload);
  // Returns once the record ending at `lsn` is as safe as the policy
  // promises, or with the writer's error.
  Status commit(uint64_t lsn);
  // Adds and commits one record.
  Status append(std::string_view payload) { return commit(add(payload)); }
  // Interval policy: syncs what is written if the interval has passed since
  // the last sync. Call it from a daemon now and then; a no-op otherwise.
  Status tick();
  // Writes what is pending and syncs it, whatever the policy (before a
  // checkpoint replaces this log).
  Status sync_all();
  // The same two for a caller that knows no one else uses the writer:
  // set-up code (on SimGrid it runs outside any actor and may take no Env
  // lock) and owners that hold their own lock over every use.
  Status append_exclusive(std::string_view payload);
  Status sync_exclusive();
  uint64_t size_bytes_exclusive() const { return pending_end_; }

  uint64_t size_bytes() const;   // written and pending
  uint64_t durable_lsn() const;  // synced
  LogWriterStats stats() const;
  const std::string& path() const { return path_; }

 private:
  LogWriter(const Env& env, std::string path, const LogOptions& options, std::unique_ptr<AppendFile> file);
  // Leader: writes the pending batch, syncing it if `sync`. mu_ held on
  // entry and exit, released while writing.
  Status write_batch(bool sync);
  uint64_t add_unlocked(std::string_view payload);
  // Writes the pending batch with no lock (append_exclusive, sync_exclusive).
  Status flush_unlocked(bool sync);
  // Writes `writing_` (and syncs it); then settle() records the outcome.
  Status write_out(bool sync);
  Status settle(const Status& st, uint64_t end, bool sync, bool read_clock = true);
  bool covered(uint64_t lsn) const;

  Env env_;
  std::string path_;
  LogOptions options_;
  std::unique_ptr<AppendFile> file_;
  std::unique_ptr<Mutex> mu_;
  std::unique_ptr<CondVar> cv_;
  std::string pending_, writing_;
  uint64_t writing_bytes_ = 0;
  uint64_t pending_end_ = 0;  // lsn of the last added record
  uint64_t written_ = 0;      // lsn up to which the file has the bytes
  uint64_t durable_ = 0;      // lsn up to which they are synced
  Nanos last_sync_ns_ = 0;
  bool leader_ = false;
  Status error_;
  LogWriterStats stats_;
};

}  // namespace locus::log
