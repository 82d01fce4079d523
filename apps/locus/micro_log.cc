// `locus bench --micro log`: see micro_log.h.
#include "apps/locus/micro_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/common/random.h"
#include "core/index/pilaf/server.h"

namespace locus::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct PutRun {
  uint64_t puts = 0;
  double seconds = 0;
  double per_s() const { return seconds > 0 ? static_cast<double>(puts) / seconds : 0; }
};

std::string key_of(uint64_t i) { return fmt::format("user{:012}", i); }

StatusOr<PutRun> run_puts(const Env& env, const MicroLogConfig& c, const pilaf::LogSettings& log) {
  pilaf::StoreOptions so;
  so.initial_buckets = 2 * c.keys;
  so.initial_extent_bytes = 2 * c.keys * (c.value_bytes + 64);
  so.max_kv_bytes = c.value_bytes + 1024;
  LOCUS_ASSIGN_OR_RETURN(auto server, pilaf::PilafServer::create(env, so, log));
  Random rng(c.seed);
  std::string value(c.value_bytes, 'v');
  for (auto& ch : value) ch = static_cast<char>('a' + rng.uniform(26));
  PutRun r;
  const auto start = Clock::now();
  const auto budget = std::chrono::duration<double>(c.max_seconds);
  for (; r.puts < c.puts; ++r.puts) {
    value[r.puts % c.value_bytes] = static_cast<char>('a' + r.puts % 26);  // every put a new value
    LOCUS_RETURN_IF_ERROR(server->put(key_of(r.puts % c.keys), value));
    if ((r.puts & 63) == 0 && Clock::now() - start > budget) break;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

uint64_t dir_bytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) total += e.file_size(ec);
  return total;
}

// Syncs and drops every file of `dir` from the page cache, so that
// recovery reads the disk and not memory.
void drop_cached(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// The disk's own figures, as the simulator's [platform.disk] takes them
// (backends/simgrid/sim_disk.h), through the same Files the logs use:
// sync_us, the mean of `kSyncs` appends of one log-sized record each
// followed by a sync; write_mb_per_s, `kBulkBytes` appended in 1 MiB
// writes then synced, over the whole time; read_mb_per_s, that file read
// back in 1 MiB reads after dropping it from the page cache.
struct DiskFigures {
  double sync_us = 0;
  double write_mb_per_s = 0;
  double read_mb_per_s = 0;
};

StatusOr<DiskFigures> measure_disk(const Env& env, const MicroLogConfig& c) {
  constexpr int kSyncs = 200;
  constexpr uint64_t kChunkBytes = 1 << 20;
  constexpr uint64_t kBulkBytes = 256 * kChunkBytes;
  const std::string dir = c.dir + "/disk";
  LOCUS_RETURN_IF_ERROR(env.files->make_dirs(dir));
  DiskFigures d;
  std::vector<std::byte> record(c.value_bytes + 64, std::byte{0x5a});
  {
    LOCUS_ASSIGN_OR_RETURN(auto f, env.files->open_append(dir + "/syncs"));
    const auto start = Clock::now();
    int done = 0;
    for (; done < kSyncs; ++done) {
      LOCUS_RETURN_IF_ERROR(f->append(record));
      LOCUS_RETURN_IF_ERROR(f->sync());
      if (Clock::now() - start > std::chrono::duration<double>(c.max_seconds)) break;
    }
    d.sync_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / std::max(done, 1);
  }
  std::vector<std::byte> chunk(kChunkBytes, std::byte{0xa5});
  {
    LOCUS_ASSIGN_OR_RETURN(auto f, env.files->open_append(dir + "/bulk"));
    const auto start = Clock::now();
    for (uint64_t written = 0; written < kBulkBytes; written += kChunkBytes) LOCUS_RETURN_IF_ERROR(f->append(chunk));
    LOCUS_RETURN_IF_ERROR(f->sync());
    d.write_mb_per_s = kBulkBytes / 1e6 / std::chrono::duration<double>(Clock::now() - start).count();
  }
  drop_cached(dir);
  {
    LOCUS_ASSIGN_OR_RETURN(auto f, env.files->open_read(dir + "/bulk"));
    const auto start = Clock::now();
    uint64_t offset = 0;
    while (offset < kBulkBytes) {
      LOCUS_ASSIGN_OR_RETURN(size_t n, f->read_at(offset, chunk));
      if (n == 0) return internal_error("--micro log: " + dir + "/bulk ended at " + std::to_string(offset) + " bytes");
      offset += n;
    }
    d.read_mb_per_s = kBulkBytes / 1e6 / std::chrono::duration<double>(Clock::now() - start).count();
  }
  return d;
}

}  // namespace

Status run_micro_log(const MicroLogConfig& c) {
  if (c.dir.empty()) return invalid_argument("--log-dir: give a directory on the disk to measure");
  if (std::filesystem::exists(c.dir) && !std::filesystem::is_empty(c.dir)) {
    return invalid_argument("--log-dir " + c.dir + ": not empty (the benchmark writes and removes its own logs)");
  }
  auto runtime = loopback::make_loopback_runtime({});
  LOCUS_ASSIGN_OR_RETURN(NodeId node, runtime->add_node({"server0", true}));
  Env env = runtime->setup_env(node);

  LOCUS_ASSIGN_OR_RETURN(PutRun unlogged, run_puts(env, c, {}));
  fmt::print("micro log: {} puts of {}-byte values over {} keys, one thread, logs in {}\n", c.puts, c.value_bytes,
             c.keys, c.dir);
  fmt::print("{:<26} {:>12} {:>10} {:>14}\n", "", "puts", "puts/s", "vs unlogged");
  fmt::print("{:<26} {:>12} {:>10.0f} {:>14}\n", "unlogged", unlogged.puts, unlogged.per_s(), "1.000");
  std::string result = fmt::format("result: unlogged_puts_per_s={:.0f}", unlogged.per_s());
  const std::string never_dir = c.dir + "/never";
  for (const char* policy : {"every_batch", "interval", "never"}) {
    pilaf::LogSettings log;
    log.dir = c.dir + "/" + policy;
    (void)log::parse_fsync_policy(policy, &log.options.fsync);
    log.options.fsync_interval_ns = 1000 * kMillisecond;  // PilafConfig's default (Redis's everysec)
    log.rewrite_min_bytes = UINT64_MAX;                   // no checkpoint: recovery below replays the whole log
    LOCUS_ASSIGN_OR_RETURN(PutRun logged, run_puts(env, c, log));
    const double ratio = unlogged.per_s() > 0 ? logged.per_s() / unlogged.per_s() : 0;
    fmt::print("{:<26} {:>12} {:>10.0f} {:>14.3f}\n", fmt::format("logged, fsync {}", policy), logged.puts,
               logged.per_s(), ratio);
    result += fmt::format(" {}_puts_per_s={:.0f} {}_ratio={:.4f}", policy, logged.per_s(), policy, ratio);
  }
  // Recovery: a server restarted on the `never` run's log, read from disk.
  pilaf::LogSettings log;
  log.dir = never_dir;
  log.rewrite_min_bytes = UINT64_MAX;
  drop_cached(never_dir);
  const uint64_t bytes = dir_bytes(never_dir);
  pilaf::StoreOptions so;
  so.initial_buckets = 2 * c.keys;
  so.initial_extent_bytes = 2 * c.keys * (c.value_bytes + 64);
  so.max_kv_bytes = c.value_bytes + 1024;
  const auto start = Clock::now();
  LOCUS_ASSIGN_OR_RETURN(auto recovered, pilaf::PilafServer::create(env, so, log));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double gb = static_cast<double>(bytes) / 1e9;
  fmt::print("recovery: {} records, {:.1f} MB of log, {:.3f} s: {:.2f} s per GB ({})\n",
             recovered->last_recovery().log.records, bytes / 1e6, seconds, gb > 0 ? seconds / gb : 0,
             recovered->last_recovery().log.describe());
  result += fmt::format(" recovery_bytes={} recovery_s={:.4f} recovery_s_per_gb={:.3f}", bytes, seconds,
                        gb > 0 ? seconds / gb : 0);
  LOCUS_ASSIGN_OR_RETURN(DiskFigures disk, measure_disk(env, c));
  fmt::print("disk, as the simulator's [platform.disk] takes it (sync: one {}-byte append and a sync, mean of up to "
             "200; write: 256 MiB in 1 MiB appends and a sync; read: the same file, dropped from the page cache):\n"
             "[platform.disk]  # measured by `locus bench --micro log --log-dir {}`\n"
             "sync_us = {:.1f}\nwrite_mb_per_s = {:.1f}\nread_mb_per_s = {:.1f}\n",
             c.value_bytes + 64, c.dir, disk.sync_us, disk.write_mb_per_s, disk.read_mb_per_s);
  result += fmt::format(" disk_sync_us={:.1f} disk_write_mb_per_s={:.1f} disk_read_mb_per_s={:.1f}", disk.sync_us,
                        disk.write_mb_per_s, disk.read_mb_per_s);
  fmt::print("{}\n", result);
  recovered.reset();
  std::error_code ec;
  std::filesystem::remove_all(c.dir, ec);
  return Status();
}

}  // namespace locus::cli
