// Pilaf's operation log (store_log.h): a server rebuilds exactly its keys
// and values from checkpoint plus log after restart(), on the local disk
// (PosixFiles) and on MemFiles after a machine crash; checkpoints bound
// what recovery replays; a put whose logging fails is refused and not
// applied; and a damaged record is an error, not a silent skip.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "backends/loopback/loopback_runtime.h"
#include "core/index/pilaf/server.h"
#include "core/index/pilaf/store_log.h"
#include "core/log/mem_files.h"

namespace locus::pilaf {
namespace {

struct Rig {
  std::unique_ptr<Runtime> runtime = loopback::make_loopback_runtime({});
  NodeId node = *runtime->add_node({"server0", true});
  Env env = runtime->setup_env(node);
  std::string dir;
  std::map<std::string, std::string> expected;

  Rig() {
    dir = (std::filesystem::temp_directory_path() /
           ("pilaf_log_test." + std::to_string(::getpid()) + "." + std::to_string(counter()++)))
              .string();
    std::filesystem::remove_all(dir);
  }
  ~Rig() { std::filesystem::remove_all(dir); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  StoreOptions store() const {
    StoreOptions o;
    o.initial_buckets = 64;  // small, so replay grows the table and extents
    o.initial_extent_bytes = 4096;
    o.max_kv_bytes = 1024;
    return o;
  }
  LogSettings log(log::FsyncPolicy fsync = log::FsyncPolicy::kInterval) const {
    LogSettings l;
    l.dir = dir;
    l.options.fsync = fsync;
    return l;
  }
  void put(PilafServer& s, const std::string& k, const std::string& v) {
    BOOST_REQUIRE(s.put(k, v).is_ok());
    expected[k] = v;
  }
  void check(PilafServer& s) {
    BOOST_TEST(s.store().stats().keys == expected.size());
    for (const auto& [k, v] : expected) {
      std::string_view got;
      BOOST_REQUIRE_MESSAGE(s.store().find(k, &got), "lost key " << k);
      BOOST_TEST(got == v);
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(pilaf_log_suite)

BOOST_AUTO_TEST_CASE(restart_rebuilds_table_and_extents_from_the_log) {
  Rig rig;
  auto server = PilafServer::create(rig.env, rig.store(), rig.log());
  BOOST_REQUIRE(server.is_ok());
  for (int i = 0; i < 500; ++i) rig.put(**server, "k" + std::to_string(i), std::string(i % 200 + 1, 'a' + i % 26));
  for (int i = 0; i < 500; i += 3) rig.put(**server, "k" + std::to_string(i), "v2." + std::to_string(i));
  for (int i = 1; i < 500; i += 5) {
    BOOST_REQUIRE((*server)->remove("k" + std::to_string(i)).is_ok());
    rig.expected.erase("k" + std::to_string(i));
  }
  BOOST_TEST((*server)->remove("absent").code() == StatusCode::kNotFound);  // not logged
  const uint64_t epoch = (*server)->layout().epoch;
  auto report = (*server)->restart();
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  BOOST_TEST(report->log.records == 500u + 167u + 100u);
  BOOST_TEST((*server)->layout().epoch > epoch);
  rig.check(**server);
}

BOOST_AUTO_TEST_CASE(a_new_server_on_the_same_directory_serves_the_same_data) {
  Rig rig;
  {
    auto server = PilafServer::create(rig.env, rig.store(), rig.log(log::FsyncPolicy::kEveryBatch));
    BOOST_REQUIRE(server.is_ok());
    for (int i = 0; i < 100; ++i) rig.put(**server, "key" + std::to_string(i), "value" + std::to_string(i));
  }
  auto again = PilafServer::create(rig.env, rig.store(), rig.log());
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST((*again)->last_recovery().log.records == 100u);
  rig.check(**again);
}

BOOST_AUTO_TEST_CASE(checkpoints_bound_the_replay) {
  Rig rig;
  LogSettings l = rig.log();
  l.rewrite_min_bytes = 0;
  l.rewrite_percentage = 100;
  auto server = PilafServer::create(rig.env, rig.store(), l);
  BOOST_REQUIRE(server.is_ok());
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 50; ++i) rig.put(**server, "k" + std::to_string(i), "r" + std::to_string(round));
  }
  auto report = (*server)->restart();
  BOOST_REQUIRE(report.is_ok());
  BOOST_TEST(report->generation > 0u);
  BOOST_TEST(report->checkpoint_records == 50u);
  // The log after the checkpoint is at most as large as the checkpoint.
  BOOST_TEST(report->log.records <= 50u, report->describe());
  rig.check(**server);
}

BOOST_AUTO_TEST_CASE(every_batch_survives_a_machine_crash_and_never_does_not) {
  for (auto policy : {log::FsyncPolicy::kEveryBatch, log::FsyncPolicy::kNever}) {
    Rig rig;
    log::MemFiles mem;
    rig.env.files = &mem;
    {
      auto server = PilafServer::create(rig.env, rig.store(), rig.log(policy));
      BOOST_REQUIRE(server.is_ok());
      for (int i = 0; i < 50; ++i) rig.put(**server, "k" + std::to_string(i), "v");
    }
    mem.crash();
    auto again = PilafServer::create(rig.env, rig.store(), rig.log());
    BOOST_REQUIRE(again.is_ok());
    if (policy == log::FsyncPolicy::kEveryBatch) {
      rig.check(**again);
    } else {
      BOOST_TEST((*again)->store().stats().keys == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_put_that_cannot_be_logged_is_refused_and_not_applied) {
  Rig rig;
  log::MemFiles mem;
  rig.env.files = &mem;
  auto server = PilafServer::create(rig.env, rig.store(), rig.log(log::FsyncPolicy::kEveryBatch));
  BOOST_REQUIRE(server.is_ok());
  rig.put(**server, "a", "1");
  mem.fail_syncs(1);
  const Status st = (*server)->put("b", "2");
  BOOST_TEST(st.code() == StatusCode::kUnavailable, st.to_string());
  std::string_view v;
  BOOST_TEST(!(*server)->store().find("b", &v));
  // A put too large for the store is refused before it is logged.
  BOOST_TEST((*server)->put("c", std::string(2000, 'x')).code() == StatusCode::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(records_round_trip_and_damage_is_an_error) {
  auto store = Store::create({});
  BOOST_REQUIRE(store.is_ok());
  std::string rec;
  StoreLog::encode_put("key", "value", &rec);
  BOOST_REQUIRE(StoreLog::apply(**store, rec).is_ok());
  std::string_view v;
  BOOST_REQUIRE((*store)->find("key", &v));
  BOOST_TEST(v == "value");
  StoreLog::encode_delete("key", &rec);
  BOOST_REQUIRE(StoreLog::apply(**store, rec).is_ok());
  BOOST_TEST(!(*store)->find("key", &v));
  BOOST_TEST(StoreLog::apply(**store, "X").code() == StatusCode::kCorruption);
  StoreLog::encode_put("key", "value", &rec);
  rec[1] = '\x70';  // a key length past the record
  BOOST_TEST(StoreLog::apply(**store, rec).code() == StatusCode::kCorruption);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::pilaf
