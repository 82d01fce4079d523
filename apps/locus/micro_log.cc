// `locus bench --micro log`: see micro_log.h.
#include "apps/locus/micro_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

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
  fmt::print("{}\n", result);
  recovered.reset();
  std::error_code ec;
  std::filesystem::remove_all(c.dir, ec);
  return Status();
}

}  // namespace locus::cli
