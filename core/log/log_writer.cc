// LogWriter's group commit: see log_writer.h.
#include "core/log/log_writer.h"

#include <utility>

#include "core/log/log_format.h"

namespace locus::log {

bool parse_fsync_policy(std::string_view text, FsyncPolicy* out) {
  if (text == "every_batch")
    *out = FsyncPolicy::kEveryBatch;
  else if (text == "interval")
    *out = FsyncPolicy::kInterval;
  else if (text == "never")
    *out = FsyncPolicy::kNever;
  else
    return false;
  return true;
}

StatusOr<std::unique_ptr<LogWriter>> LogWriter::open(const Env& env, std::string path, const LogOptions& options) {
  if (env.files == nullptr) return unimplemented("log " + path + ": this backend gives no file system");
  LOCUS_ASSIGN_OR_RETURN(auto file, env.files->open_append(path));
  return std::unique_ptr<LogWriter>(new LogWriter(env, std::move(path), options, std::move(file)));
}

LogWriter::LogWriter(const Env& env, std::string path, const LogOptions& options, std::unique_ptr<AppendFile> file)
    : env_(env),
      path_(std::move(path)),
      options_(options),
      file_(std::move(file)),
      mu_(env.sync->new_mutex()),
      cv_(env.sync->new_condvar()) {
  pending_end_ = written_ = durable_ = file_->size_bytes();
  last_sync_ns_ = env_.clock->now();
}

LogWriter::~LogWriter() = default;

uint64_t LogWriter::add(std::string_view payload) {
  MutexLock lock(*mu_);
  return add_unlocked(payload);
}

uint64_t LogWriter::add_unlocked(std::string_view payload) {
  frame_record(payload, &pending_);
  pending_end_ += kRecordHeaderBytes + payload.size();
  ++stats_.records;
  return pending_end_;
}

bool LogWriter::covered(uint64_t lsn) const {
  return (options_.fsync == FsyncPolicy::kEveryBatch ? durable_ : written_) >= lsn;
}

Status LogWriter::write_batch(bool sync) {
  leader_ = true;
  std::swap(pending_, writing_);
  const uint64_t end = pending_end_;
  mu_->unlock();
  const Status st = write_out(sync);
  mu_->lock();
  leader_ = false;
  Status out = settle(st, end, sync);
  cv_->notify_all();
  return out;
}

Status LogWriter::flush_unlocked(bool sync) {
  std::swap(pending_, writing_);
  const Status st = write_out(sync);
  return settle(st, pending_end_, sync, /*read_clock=*/false);
}

Status LogWriter::write_out(bool sync) {
  Status st = writing_.empty() ? Status() : file_->append(std::as_bytes(std::span(writing_.data(), writing_.size())));
  writing_bytes_ = writing_.size();
  if (st.is_ok() && sync) st = file_->sync();
  writing_.clear();
  return st;
}

Status LogWriter::settle(const Status& st, uint64_t end, bool sync, bool read_clock) {
  if (st.is_ok()) {
    written_ = end;
    stats_.bytes += writing_bytes_;
    if (writing_bytes_ > 0) ++stats_.batches;
    if (sync) {
      durable_ = end;
      ++stats_.syncs;
      if (read_clock) last_sync_ns_ = env_.clock->now();
    }
  } else if (error_.is_ok()) {
    error_ = Status(st.code(),
                    "log " + path_ + " broken by a failed write or sync (reopen it through recovery): " + st.message());
  }
  return error_;
}

Status LogWriter::commit(uint64_t lsn) {
  MutexLock lock(*mu_);
  while (error_.is_ok() && !covered(lsn)) {
    if (leader_) {
      cv_->wait(*mu_);
      continue;
    }
    bool sync = options_.fsync == FsyncPolicy::kEveryBatch;
    if (options_.fsync == FsyncPolicy::kInterval) {
      sync = env_.clock->now() - last_sync_ns_ >= options_.fsync_interval_ns;
    }
    (void)write_batch(sync);
  }
  return error_;
}

Status LogWriter::tick() {
  if (options_.fsync != FsyncPolicy::kInterval) return Status();
  MutexLock lock(*mu_);
  if (!error_.is_ok() || leader_ || durable_ == pending_end_) return error_;
  if (env_.clock->now() - last_sync_ns_ < options_.fsync_interval_ns) return Status();
  return write_batch(true);
}

Status LogWriter::sync_all() {
  MutexLock lock(*mu_);
  while (error_.is_ok() && durable_ < pending_end_) {
    if (leader_) {
      cv_->wait(*mu_);
      continue;
    }
    (void)write_batch(true);
  }
  return error_;
}

Status LogWriter::append_exclusive(std::string_view payload) {
  if (!error_.is_ok()) return error_;
  add_unlocked(payload);
  // No clock read: set-up code may run on a thread the simulator's clock
  // does not serve. Interval syncs are left to tick().
  return flush_unlocked(options_.fsync == FsyncPolicy::kEveryBatch);
}

Status LogWriter::sync_exclusive() { return error_.is_ok() ? flush_unlocked(true) : error_; }

uint64_t LogWriter::size_bytes() const {
  MutexLock lock(*mu_);
  return pending_end_;
}
uint64_t LogWriter::durable_lsn() const {
  MutexLock lock(*mu_);
  return durable_;
}
LogWriterStats LogWriter::stats() const {
  MutexLock lock(*mu_);
  return stats_;
}

}  // namespace locus::log
