// Tests for core/log: record framing and replay that stops at a torn or
// corrupt tail and says where; the writer's group commit, fsync policies and
// sticky errors; and DurableLog's recovery and checkpoints on MemFiles with
// torn writes, failed fsyncs and crashes that drop unsynced bytes. Each
// check in the code has a test here that fails without it.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "backends/os/os_env.h"
#include "core/log/durable_log.h"
#include "core/log/log_format.h"
#include "core/log/log_writer.h"
#include "core/log/mem_files.h"

namespace locus::log {
namespace {

class ManualClock final : public Clock {
 public:
  Nanos now() const override { return now_.load(); }
  void sleep_for(Nanos d) override { now_ += d; }
  std::atomic<Nanos> now_{1};
};

// Files whose syncs take a while, so that committers pile up behind a leader.
class SlowSyncFiles final : public Files {
 public:
  explicit SlowSyncFiles(Files& inner) : inner_(inner) {}
  class File final : public AppendFile {
   public:
    explicit File(std::unique_ptr<AppendFile> f) : f_(std::move(f)) {}
    Status append(std::span<const std::byte> b) override { return f_->append(b); }
    Status sync() override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return f_->sync();
    }
    uint64_t size_bytes() const override { return f_->size_bytes(); }
    std::unique_ptr<AppendFile> f_;
  };
  StatusOr<std::unique_ptr<AppendFile>> open_append(const std::string& p) override {
    LOCUS_ASSIGN_OR_RETURN(auto f, inner_.open_append(p));
    return std::unique_ptr<AppendFile>(new File(std::move(f)));
  }
  StatusOr<std::unique_ptr<ReadFile>> open_read(const std::string& p) override { return inner_.open_read(p); }
  Status truncate(const std::string& p, uint64_t n) override { return inner_.truncate(p, n); }
  Status rename(const std::string& a, const std::string& b) override { return inner_.rename(a, b); }
  Status remove(const std::string& p) override { return inner_.remove(p); }
  bool exists(const std::string& p) override { return inner_.exists(p); }
  StatusOr<std::vector<std::string>> list(const std::string& d) override { return inner_.list(d); }
  Status make_dirs(const std::string& d) override { return inner_.make_dirs(d); }
  Status sync_dir(const std::string& d) override { return inner_.sync_dir(d); }

 private:
  Files& inner_;
};

struct Fixture {
  MemFiles files;
  os::SteadyClock steady;
  ManualClock manual;
  os::StdSyncFactory sync;
  Env env(Clock* clock = nullptr, Files* f = nullptr) {
    Env e;
    e.clock = clock != nullptr ? clock : &steady;
    e.sync = &sync;
    e.files = f != nullptr ? f : &files;
    return e;
  }
};

std::vector<std::string> replay_all(Files& files, const std::string& path, ReplayResult* result = nullptr) {
  std::vector<std::string> out;
  auto r = replay_file(files, path, [&](uint64_t, std::string_view p) {
    out.emplace_back(p);
    return Status();
  });
  BOOST_REQUIRE(r.is_ok());
  if (result != nullptr) *result = *r;
  return out;
}

// Writes `n` records "r0".."r<n-1>" framed into one string.
std::string framed(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) frame_record("r" + std::to_string(i), &s);
  return s;
}

void put_file(MemFiles& files, const std::string& path, const std::string& bytes) {
  auto f = files.open_append(path);
  BOOST_REQUIRE(f.is_ok());
  BOOST_REQUIRE((*f)->append(std::as_bytes(std::span(bytes.data(), bytes.size()))).is_ok());
}

// The state machine the DurableLog tests log: "k=v" sets, "-k" erases.
struct KvState {
  std::map<std::string, std::string> kv;
  Status apply(std::string_view op) {
    if (op.starts_with("-")) {
      kv.erase(std::string(op.substr(1)));
      return Status();
    }
    const size_t eq = op.find('=');
    if (eq == std::string_view::npos) return corruption("not an op: " + std::string(op));
    kv[std::string(op.substr(0, eq))] = std::string(op.substr(eq + 1));
    return Status();
  }
  auto applier() {
    return [this](std::string_view op) { return apply(op); };
  }
  Status write(const CheckpointSink& sink) const {
    for (const auto& [k, v] : kv) LOCUS_RETURN_IF_ERROR(sink(k + "=" + v));
    return Status();
  }
};

// A DurableLog in fx's /d (every_batch) holding 20 acknowledged records
// "k0=x".."k19=x", each applied to `live`.
std::unique_ptr<DurableLog> log_of_20_records(Fixture& fx, KvState& live) {
  auto log = DurableLog::open(fx.env(), "/d", {.fsync = FsyncPolicy::kEveryBatch}, live.applier(), nullptr);
  BOOST_REQUIRE(log.is_ok());
  for (int i = 0; i < 20; ++i) {
    const std::string op = "k" + std::to_string(i) + "=x";
    BOOST_REQUIRE(live.apply(op).is_ok());
    BOOST_REQUIRE((*log)->append(op).is_ok());
  }
  return std::move(log).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(log_format_suite)

BOOST_AUTO_TEST_CASE(records_round_trip_with_their_offsets) {
  MemFiles files;
  put_file(files, "/l", framed(3));
  std::vector<uint64_t> offsets;
  auto r = replay_file(files, "/l", [&](uint64_t off, std::string_view) {
    offsets.push_back(off);
    return Status();
  });
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->records == 3u);
  BOOST_TEST(r->tail == TailKind::kClean);
  BOOST_TEST(r->valid_bytes == r->file_bytes);
  BOOST_TEST(offsets == (std::vector<uint64_t>{0, 14, 28}));
  BOOST_TEST(replay_all(files, "/l") == (std::vector<std::string>{"r0", "r1", "r2"}));
}

BOOST_AUTO_TEST_CASE(missing_file_replays_as_empty) {
  MemFiles files;
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/none", &r).empty());
  BOOST_TEST(r.tail == TailKind::kClean);
}

BOOST_AUTO_TEST_CASE(torn_header_stops_and_says_where) {
  MemFiles files;
  const std::string good = framed(2);
  put_file(files, "/l", good + framed(1).substr(0, 7));
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r).size() == 2u);
  BOOST_TEST(r.tail == TailKind::kTornHeader);
  BOOST_TEST(r.valid_bytes == good.size());
  BOOST_TEST(r.describe().find("torn header at offset 28") != std::string::npos, r.describe());
}

BOOST_AUTO_TEST_CASE(torn_payload_stops_and_says_where) {
  MemFiles files;
  std::string big;
  frame_record(std::string(100, 'x'), &big);
  put_file(files, "/l", framed(1) + big.substr(0, 50));
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r).size() == 1u);
  BOOST_TEST(r.tail == TailKind::kTornPayload);
  BOOST_TEST(r.valid_bytes == 14u);
}

BOOST_AUTO_TEST_CASE(corrupt_record_stops_replay_before_it) {
  MemFiles files;
  put_file(files, "/l", framed(3));
  BOOST_REQUIRE(files.corrupt("/l", 14 + 12).is_ok());  // the second record's payload
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r) == (std::vector<std::string>{"r0"}));
  BOOST_TEST(r.tail == TailKind::kBadCrc);
  BOOST_TEST(r.valid_bytes == 14u);
}

BOOST_AUTO_TEST_CASE(corrupt_length_is_caught_by_the_crc) {
  MemFiles files;
  std::string two;
  frame_record("abcdef", &two);
  frame_record("ghijkl", &two);
  two[0] = 3;  // first record now claims 3 bytes: still inside the file
  put_file(files, "/l", two);
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r).empty());
  BOOST_TEST(r.tail == TailKind::kBadCrc);
}

BOOST_AUTO_TEST_CASE(absurd_length_is_not_read) {
  MemFiles files;
  std::string rec = framed(1);
  rec[3] = '\x7f';  // length ~2 GiB
  put_file(files, "/l", rec + std::string(64, 'z'));
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r).empty());
  BOOST_TEST(r.tail == TailKind::kBadLength);
}

BOOST_AUTO_TEST_CASE(zeros_are_no_record) {
  MemFiles files;
  put_file(files, "/l", framed(1) + std::string(64, '\0'));
  ReplayResult r;
  BOOST_TEST(replay_all(files, "/l", &r).size() == 1u);
  BOOST_TEST(r.tail == TailKind::kBadCrc);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(log_writer_suite)

BOOST_AUTO_TEST_CASE(concurrent_commits_share_writes_and_syncs) {
  Fixture fx;
  SlowSyncFiles slow(fx.files);
  auto w = LogWriter::open(fx.env(nullptr, &slow), "/g", {.fsync = FsyncPolicy::kEveryBatch});
  BOOST_REQUIRE(w.is_ok());
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        if (!(*w)->append("t" + std::to_string(t) + "." + std::to_string(i)).is_ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  const LogWriterStats s = (*w)->stats();
  BOOST_TEST(failures.load() == 0);
  BOOST_TEST(s.records == uint64_t{kThreads * kEach});
  BOOST_TEST(s.syncs == s.batches);
  BOOST_TEST_MESSAGE("group commit: " << s.records << " records in " << s.batches << " batches");
  BOOST_TEST(s.batches < s.records / 2);
  BOOST_TEST(replay_all(fx.files, "/g").size() == s.records);
}

BOOST_AUTO_TEST_CASE(every_batch_policy_syncs_before_commit_returns) {
  Fixture fx;
  auto w = LogWriter::open(fx.env(), "/e", {.fsync = FsyncPolicy::kEveryBatch});
  BOOST_REQUIRE(w.is_ok());
  BOOST_REQUIRE((*w)->append("a").is_ok());
  BOOST_TEST((*w)->durable_lsn() == (*w)->size_bytes());
  fx.files.crash();
  BOOST_TEST(replay_all(fx.files, "/e").size() == 0u);  // no sync_dir: the file's name was never durable
}

BOOST_AUTO_TEST_CASE(never_policy_writes_but_never_syncs) {
  Fixture fx;
  auto w = LogWriter::open(fx.env(), "/n", {.fsync = FsyncPolicy::kNever});
  BOOST_REQUIRE(w.is_ok());
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE((*w)->append("x").is_ok());
  BOOST_TEST(fx.files.syncs() == 0u);
  BOOST_TEST(replay_all(fx.files, "/n").size() == 5u);  // written: a killed process loses none
}

BOOST_AUTO_TEST_CASE(interval_policy_syncs_once_the_interval_has_passed) {
  Fixture fx;
  auto w = LogWriter::open(fx.env(&fx.manual), "/i",
                           {.fsync = FsyncPolicy::kInterval, .fsync_interval_ns = 10 * kMillisecond});
  BOOST_REQUIRE(w.is_ok());
  BOOST_REQUIRE((*w)->append("a").is_ok());
  BOOST_TEST(fx.files.syncs() == 0u);
  BOOST_REQUIRE((*w)->tick().is_ok());
  BOOST_TEST(fx.files.syncs() == 0u);  // too soon
  fx.manual.sleep_for(10 * kMillisecond);
  BOOST_REQUIRE((*w)->tick().is_ok());
  BOOST_TEST(fx.files.syncs() == 1u);
  BOOST_TEST((*w)->durable_lsn() == (*w)->size_bytes());
  BOOST_REQUIRE((*w)->tick().is_ok());
  BOOST_TEST(fx.files.syncs() == 1u);  // nothing new to sync
  fx.manual.sleep_for(10 * kMillisecond);
  BOOST_REQUIRE((*w)->append("b").is_ok());  // a batch after the interval syncs itself
  BOOST_TEST(fx.files.syncs() == 2u);
}

BOOST_AUTO_TEST_CASE(failed_fsync_breaks_the_writer_for_good) {
  Fixture fx;
  auto w = LogWriter::open(fx.env(), "/f", {.fsync = FsyncPolicy::kEveryBatch});
  BOOST_REQUIRE(w.is_ok());
  BOOST_REQUIRE((*w)->append("a").is_ok());
  fx.files.fail_syncs(1);
  const Status failed = (*w)->append("b");
  BOOST_TEST(!failed.is_ok());
  BOOST_TEST(failed.message().find("fdatasync") != std::string::npos, failed.to_string());
  // The next sync would succeed, but it must not report "b" durable.
  BOOST_TEST(!(*w)->append("c").is_ok());
  BOOST_TEST((*w)->durable_lsn() < (*w)->size_bytes());
}

BOOST_AUTO_TEST_CASE(torn_write_fails_the_commit) {
  Fixture fx;
  auto w = LogWriter::open(fx.env(), "/t", {.fsync = FsyncPolicy::kNever});
  BOOST_REQUIRE(w.is_ok());
  fx.files.tear_next_append(5);
  BOOST_TEST(!(*w)->append("hello").is_ok());
  BOOST_TEST(!(*w)->append("again").is_ok());
}

BOOST_AUTO_TEST_CASE(fsync_policy_names) {
  FsyncPolicy p{};
  BOOST_TEST(parse_fsync_policy("interval", &p));
  BOOST_TEST((p == FsyncPolicy::kInterval));
  BOOST_TEST(!parse_fsync_policy("sometimes", &p));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(durable_log_suite)

BOOST_AUTO_TEST_CASE(acknowledged_records_survive_a_crash_when_every_batch_syncs) {
  Fixture fx;
  {
    KvState st;
    auto log = DurableLog::open(fx.env(), "/d", {.fsync = FsyncPolicy::kEveryBatch}, st.applier(), nullptr);
    BOOST_REQUIRE(log.is_ok());
    for (int i = 0; i < 10; ++i) BOOST_REQUIRE((*log)->writer().append("k" + std::to_string(i) + "=v").is_ok());
  }
  fx.files.crash();  // fails unless open() synced the directory holding the new log
  KvState st;
  RecoveryReport r;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, st.applier(), &r).is_ok());
  BOOST_TEST(st.kv.size() == 10u);
  BOOST_TEST(r.log.records == 10u);
}

BOOST_AUTO_TEST_CASE(a_crash_loses_unsynced_records_under_never) {
  Fixture fx;
  {
    KvState st;
    auto log = DurableLog::open(fx.env(), "/d", {.fsync = FsyncPolicy::kNever}, st.applier(), nullptr);
    BOOST_REQUIRE(log.is_ok());
    BOOST_REQUIRE((*log)->writer().append("a=1").is_ok());
  }
  fx.files.crash();
  KvState st;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, st.applier(), nullptr).is_ok());
  BOOST_TEST(st.kv.empty());
}

BOOST_AUTO_TEST_CASE(torn_tail_is_cut_and_reported_and_appends_follow_it) {
  Fixture fx;
  {
    KvState st;
    auto log = DurableLog::open(fx.env(), "/d", {.fsync = FsyncPolicy::kNever}, st.applier(), nullptr);
    BOOST_REQUIRE(log.is_ok());
    BOOST_REQUIRE((*log)->writer().append("a=1").is_ok());
    fx.files.tear_next_append(9);
    BOOST_REQUIRE(!(*log)->writer().append("b=2").is_ok());
  }
  {
    KvState st;
    RecoveryReport r;
    auto log = DurableLog::open(fx.env(), "/d", {}, st.applier(), &r);
    BOOST_REQUIRE(log.is_ok());
    BOOST_TEST(st.kv.size() == 1u);
    BOOST_TEST(r.log.tail == TailKind::kTornHeader);
    BOOST_TEST(r.log.valid_bytes == 15u);
    BOOST_TEST(r.describe().find("torn header at offset 15") != std::string::npos, r.describe());
    BOOST_REQUIRE((*log)->writer().append("c=3").is_ok());
  }
  // Without the cut, c=3 would sit behind the torn bytes and be lost.
  KvState st;
  RecoveryReport r;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, st.applier(), &r).is_ok());
  BOOST_TEST(st.kv == (std::map<std::string, std::string>{{"a", "1"}, {"c", "3"}}));
  BOOST_TEST(r.log.tail == TailKind::kClean);
}

BOOST_AUTO_TEST_CASE(checkpoint_bounds_what_recovery_replays) {
  Fixture fx;
  KvState live;
  {
    auto log = DurableLog::open(fx.env(), "/d", {}, live.applier(), nullptr);
    BOOST_REQUIRE(log.is_ok());
    auto put = [&](const std::string& op) {
      BOOST_REQUIRE(live.apply(op).is_ok());
      BOOST_REQUIRE((*log)->writer().append(op).is_ok());
    };
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 100; ++i) put("k" + std::to_string(i) + "=" + std::to_string(round));
      BOOST_REQUIRE((*log)->checkpoint([&](const CheckpointSink& s) { return live.write(s); }).is_ok());
    }
    put("-k7");
    put("extra=1");
    BOOST_TEST((*log)->generation() == 5u);
  }
  fx.files.crash();
  KvState st;
  RecoveryReport r;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, st.applier(), &r).is_ok());
  BOOST_TEST(st.kv == live.kv);
  BOOST_TEST(r.generation == 5u);
  BOOST_TEST(r.checkpoint_records == 100u);
  BOOST_TEST(r.log.records == 2u);  // not the 502 records ever logged
  BOOST_TEST(!fx.files.exists("/d/log.4"));
  BOOST_TEST(!fx.files.exists("/d/checkpoint.4"));
}

BOOST_AUTO_TEST_CASE(a_checkpoint_that_fails_leaves_the_previous_generation) {
  Fixture fx;
  KvState live;
  {
    auto log = log_of_20_records(fx, live);
    fx.files.fail_syncs(1);  // the checkpoint's own sync
    BOOST_TEST(!log->checkpoint([&](const CheckpointSink& s) { return live.write(s); }).is_ok());
  }
  fx.files.crash();
  KvState st;
  RecoveryReport r;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, st.applier(), &r).is_ok());
  BOOST_TEST(r.generation == 0u);
  BOOST_TEST(st.kv == live.kv);
}

// The directory sync after the rename fails: checkpoint.1 is named but its
// name may not survive a crash. The log is broken for good (a record in
// log.0 would be ignored by a recovery that finds checkpoint.1, and one in
// log.1 lost by a crash that drops that name), and both outcomes recover
// every acknowledged record: the files as they are (a process restart)
// from checkpoint.1, which also removes generation 0; a machine crash
// from generation 0.
BOOST_AUTO_TEST_CASE(a_checkpoint_whose_directory_sync_fails_breaks_the_log) {
  Fixture fx;
  KvState live;
  {
    auto log = log_of_20_records(fx, live);
    fx.files.fail_dir_syncs(1);
    const Status st = log->checkpoint([&](const CheckpointSink& s) { return live.write(s); });
    BOOST_TEST_MESSAGE(st.to_string());
    BOOST_REQUIRE(!st.is_ok());
    BOOST_TEST(st.message().find("broken") != std::string::npos, st.to_string());
    BOOST_TEST(fx.files.exists("/d/checkpoint.1"));
    const Status later = log->append("late=1");
    BOOST_TEST(!later.is_ok());
    BOOST_TEST(later.message().find("directory /d: input/output error") != std::string::npos, later.to_string());
  }
  std::unique_ptr<MemFiles> crashed = fx.files.crashed_copy();
  KvState restarted;
  RecoveryReport r;
  BOOST_REQUIRE(DurableLog::open(fx.env(), "/d", {}, restarted.applier(), &r).is_ok());
  BOOST_TEST(r.generation == 1u);
  BOOST_TEST(restarted.kv == live.kv);
  BOOST_TEST(!fx.files.exists("/d/log.0"));  // superseded by checkpoint.1
  KvState after_crash;
  BOOST_REQUIRE(DurableLog::open(fx.env(nullptr, crashed.get()), "/d", {}, after_crash.applier(), &r).is_ok());
  BOOST_TEST(r.generation == 0u);
  BOOST_TEST(after_crash.kv == live.kv);
}

BOOST_AUTO_TEST_CASE(a_damaged_checkpoint_is_an_error_not_silence) {
  Fixture fx;
  KvState live;
  {
    auto log = DurableLog::open(fx.env(), "/d", {}, live.applier(), nullptr);
    BOOST_REQUIRE(log.is_ok());
    BOOST_REQUIRE(live.apply("a=1").is_ok());
    BOOST_REQUIRE(live.apply("b=2").is_ok());
    BOOST_REQUIRE((*log)->checkpoint([&](const CheckpointSink& s) { return live.write(s); }).is_ok());
  }
  const std::string cp = fx.files.contents("/d/checkpoint.1");
  BOOST_REQUIRE(fx.files.truncate("/d/checkpoint.1", cp.size() - 3).is_ok());
  KvState st;
  auto reopened = DurableLog::open(fx.env(), "/d", {}, st.applier(), nullptr);
  BOOST_REQUIRE(!reopened.is_ok());
  BOOST_TEST(reopened.status().message().find("checkpoint") != std::string::npos, reopened.status().to_string());
}

BOOST_AUTO_TEST_CASE(no_file_system_is_a_clear_error) {
  Fixture fx;
  Env e = fx.env();
  e.files = nullptr;
  KvState st;
  auto log = DurableLog::open(e, "/d", {}, st.applier(), nullptr);
  BOOST_REQUIRE(!log.is_ok());
  BOOST_TEST(log.status().message().find("no file system") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::log
