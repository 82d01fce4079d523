// DurableLog's recovery and checkpoints: see durable_log.h.
#include "core/log/durable_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace locus::log {
namespace {

constexpr std::string_view kTrailerTag = "locus.checkpoint.end:";

// The number after `prefix` in `name` ("log.12" -> 12), if that is all it is.
bool generation_of(std::string_view name, std::string_view prefix, uint64_t* g) {
  if (!name.starts_with(prefix)) return false;
  const std::string_view digits = name.substr(prefix.size());
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *g);
  return !digits.empty() && ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::string RecoveryReport::describe() const {
  return fmt::format("generation {}: checkpoint of {} records ({} bytes), log of {} ({}), in {:.3f} ms", generation,
                     checkpoint_records, checkpoint_bytes, log.records, log.describe(), took_ns / 1e6);
}

DurableLog::DurableLog(const Env& env, std::string dir, const LogOptions& options)
    : env_(env), dir_(std::move(dir)), options_(options) {}

std::string DurableLog::log_path(uint64_t g) const { return fmt::format("{}/log.{}", dir_, g); }
std::string DurableLog::checkpoint_path(uint64_t g) const { return fmt::format("{}/checkpoint.{}", dir_, g); }

StatusOr<std::unique_ptr<DurableLog>> DurableLog::open(const Env& env, std::string dir, const LogOptions& options,
                                                       const std::function<Status(std::string_view)>& apply,
                                                       RecoveryReport* report) {
  if (env.files == nullptr) return unimplemented("log directory " + dir + ": this backend gives no file system");
  Files& files = *env.files;
  const Nanos start_ns = env.clock->now();
  std::unique_ptr<DurableLog> log(new DurableLog(env, std::move(dir), options));
  LOCUS_RETURN_IF_ERROR(files.make_dirs(log->dir_));
  // The newest generation that has a (complete, named) checkpoint or a log;
  // a checkpoint's temporary was never finished and goes.
  LOCUS_ASSIGN_OR_RETURN(std::vector<std::string> names, files.list(log->dir_));
  uint64_t g = 0;
  for (const std::string& name : names) {
    uint64_t n = 0;
    if (name.ends_with(".tmp")) {
      LOCUS_RETURN_IF_ERROR(files.remove(log->dir_ + "/" + name));
    } else if (generation_of(name, "checkpoint.", &n) || generation_of(name, "log.", &n)) {
      g = std::max(g, n);
    }
  }
  RecoveryReport r;
  r.generation = g;
  if (g > 0 && files.exists(log->checkpoint_path(g))) {
    uint64_t applied = 0;
    bool trailer = false;
    uint64_t trailer_count = 0;
    LOCUS_ASSIGN_OR_RETURN(
        ReplayResult cp, replay_file(files, log->checkpoint_path(g), [&](uint64_t, std::string_view payload) {
          if (trailer) return corruption("a record after the trailer");
          if (payload.starts_with(kTrailerTag)) {
            trailer = true;
            const std::string_view count = payload.substr(kTrailerTag.size());
            const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), trailer_count);
            if (ec != std::errc() || end != count.data() + count.size()) {
              return corruption("a trailer whose record count is no number");
            }
            return Status();
          }
          ++applied;
          // A record that frames well and still makes no sense to the
          // owner (another shape, a malformed image) names the file too.
          if (Status st = apply(payload); !st.is_ok()) {
            return Status(st.code(),
                          fmt::format("checkpoint {}, record {}: {}", log->checkpoint_path(g), applied, st.message()));
          }
          return Status();
        }));
    if (cp.tail != TailKind::kClean || !trailer || trailer_count != applied) {
      return corruption(
          fmt::format("checkpoint {} is damaged: {}{}", log->checkpoint_path(g), cp.describe(),
                      trailer ? fmt::format(", trailer says {} records", trailer_count) : std::string(", no trailer")));
    }
    r.checkpoint_records = applied;
    r.checkpoint_bytes = cp.file_bytes;
  } else if (g > 0) {
    return corruption(
        fmt::format("log directory {}: {} exists without {}", log->dir_, log->log_path(g), log->checkpoint_path(g)));
  }
  LOCUS_ASSIGN_OR_RETURN(
      r.log, replay_file(files, log->log_path(g), [&](uint64_t, std::string_view payload) { return apply(payload); }));
  if (r.log.tail != TailKind::kClean) LOCUS_RETURN_IF_ERROR(files.truncate(log->log_path(g), r.log.valid_bytes));
  log->generation_ = g;
  log->checkpoint_bytes_ = r.checkpoint_bytes;
  LOCUS_ASSIGN_OR_RETURN(log->writer_, LogWriter::open(env, log->log_path(g), options));
  LOCUS_RETURN_IF_ERROR(log->writer_->sync_exclusive());  // the truncation, and a fresh log's length
  LOCUS_RETURN_IF_ERROR(files.sync_dir(log->dir_));
  // Older generations are left where a checkpoint failed after naming
  // itself (its directory sync): generation g is durable now, and they go.
  bool removed = false;
  for (const std::string& name : names) {
    uint64_t n = 0;
    if ((generation_of(name, "checkpoint.", &n) || generation_of(name, "log.", &n)) && n < g) {
      LOCUS_RETURN_IF_ERROR(files.remove(log->dir_ + "/" + name));
      removed = true;
    }
  }
  if (removed) LOCUS_RETURN_IF_ERROR(files.sync_dir(log->dir_));
  r.took_ns = env.clock->now() - start_ns;
  if (report != nullptr) *report = std::move(r);
  return log;
}

Status DurableLog::checkpoint(const std::function<Status(const CheckpointSink&)>& write_state) {
  Files& files = *env_.files;
  const uint64_t next = generation_ + 1;
  const std::string tmp = checkpoint_path(next) + ".tmp";
  if (files.exists(tmp)) LOCUS_RETURN_IF_ERROR(files.remove(tmp));
  uint64_t bytes = 0;
  {
    // The checkpoint goes through a writer of its own that syncs once, at
    // the end: its records need no group commit.
    LOCUS_ASSIGN_OR_RETURN(auto out, LogWriter::open(env_, tmp, {.fsync = FsyncPolicy::kNever}));
    uint64_t records = 0;
    LOCUS_RETURN_IF_ERROR(write_state([&](std::string_view payload) {
      ++records;
      return out->append_exclusive(payload);
    }));
    LOCUS_RETURN_IF_ERROR(out->append_exclusive(std::string(kTrailerTag) + std::to_string(records)));
    LOCUS_RETURN_IF_ERROR(out->sync_exclusive());
    bytes = out->size_bytes_exclusive();
  }
  LOCUS_RETURN_IF_ERROR(files.rename(tmp, checkpoint_path(next)));
  // From here recovery may use generation `next`: records must go to its
  // log or nowhere.
  auto fail = [&](const Status& st) {
    broken_ = Status(st.code(), "log " + dir_ + " broken by a checkpoint that failed after naming itself " +
                                    "(reopen it through recovery): " + st.message());
    return broken_;
  };
  if (Status st = files.sync_dir(dir_); !st.is_ok()) return fail(st);
  auto fresh = LogWriter::open(env_, log_path(next), options_);
  if (!fresh.is_ok()) return fail(fresh.status());
  if (Status st = files.sync_dir(dir_); !st.is_ok()) return fail(st);
  writer_ = std::move(fresh).value();
  const uint64_t old = generation_;
  generation_ = next;
  checkpoint_bytes_ = bytes;
  (void)files.remove(log_path(old));
  if (old > 0) (void)files.remove(checkpoint_path(old));
  return files.sync_dir(dir_);
}

}  // namespace locus::log
