// Cell's per-region logs and recovery (issue 20): a tree rebuilt from its
// servers' logs serves the same data, and a crash at any point of a
// meganode split (before and after each logged record, and in the middle
// of one) recovers to a correct tree: every acknowledged key there once,
// with its value, the B-link invariants intact, no meganode left locked
// by a split or built and never linked, and the tree still able to split.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/split_driver.h"
#include "core/log/mem_files.h"
#include "tests/support/cell_cluster.h"

namespace locus {
namespace {

using cell::OpKind;
using testing::CellCluster;
using testing::key_of;
using testing::make_value;
using Model = std::map<std::string, std::string>;

// checkpoint_every_record: each store writes a checkpoint before each
// record, so a crash finds the last one and a tail of at most one record.
cell::ServerOptions logged_options(log::MemFiles& mem, bool checkpoint_every_record = false) {
  cell::ServerOptions o = testing::tiny_options();
  o.log_dir = "/cell";
  o.log_files = &mem;
  o.log.fsync = log::FsyncPolicy::kEveryBatch;
  if (checkpoint_every_record) {
    o.checkpoint_min_bytes = 0;
    o.checkpoint_percentage = 0;
  }
  return o;
}

// The tree against the model: each key once, in order, with its value;
// nothing half done; the invariants.
void expect_tree(cell::Deployment& d, const Model& model, const std::string& where) {
  for (size_t i = 0; i < d.server_count(); ++i) {
    const cell::Store& s = d.server(i).store();
    BOOST_REQUIRE_MESSAGE(s.pending_splits().empty(), where << ": server " << i << " has a locked meganode");
    BOOST_REQUIRE_MESSAGE(s.pending_builds().empty(), where << ": server " << i << " has an orphaned meganode");
  }
  const Status inv = d.check_invariants();
  BOOST_REQUIRE_MESSAGE(inv.is_ok(), where << ": " << inv.to_string());
  testing::Collect all;
  auto n = d.direct_range("", std::nullopt, 1u << 30, all);
  BOOST_REQUIRE_MESSAGE(n.is_ok(), where << ": " << n.status().to_string());
  BOOST_REQUIRE_MESSAGE(all.got.size() == model.size(),
                        where << ": " << all.got.size() << " keys in the tree, " << model.size() << " acknowledged");
  auto it = model.begin();
  for (const auto& [k, v] : all.got) {
    BOOST_REQUIRE_MESSAGE(k == it->first && v == it->second, where << ": key " << k << " differs from the model");
    ++it;
  }
}

// Puts through the servers' request path (so they are logged), without
// driving the splits they ask for.
StatusOr<cell::Outcome> put(cell::Caller& caller, NodeId server, const std::string& key, const std::string& value) {
  cell::OpRequest q;
  q.op = OpKind::kPut;
  q.key = key;
  q.value = value;
  rpc::Writer w(caller.payload_buffer());
  cell::encode_op_request(q, w);
  LOCUS_ASSIGN_OR_RETURN(auto body, caller.call(server, cell::kOp, w.size()));
  rpc::Reader r(body);
  cell::OpResponse resp;
  if (!cell::decode_op_response(r, &resp)) return internal_error("bad op response");
  return resp.outcome;
}

// Every server's log as it stands (the bytes a crash right now keeps under every_batch).
using Disk = std::map<std::string, std::string>;
Disk snapshot(log::MemFiles& mem) {
  Disk disk;
  for (const char* dir : {"/cell/region0", "/cell/region2"}) {
    auto names = mem.list(dir);
    if (!names.is_ok()) continue;
    for (const auto& n : *names) disk[std::string(dir) + "/" + n] = mem.contents(std::string(dir) + "/" + n);
  }
  return disk;
}

void restore(const Disk& disk, log::MemFiles& mem) {
  for (const auto& [path, bytes] : disk) {
    BOOST_REQUIRE(mem.make_dirs(path.substr(0, path.rfind('/'))).is_ok());
    auto f = mem.open_append(path);
    BOOST_REQUIRE(f.is_ok());
    BOOST_REQUIRE((*f)->append(std::as_bytes(std::span<const char>(bytes.data(), bytes.size()))).is_ok());
    BOOST_REQUIRE((*f)->sync().is_ok());
    BOOST_REQUIRE(mem.sync_dir(path.substr(0, path.rfind('/'))).is_ok());
  }
}

// Records the disk and the acknowledged keys after every split step, and
// puts a key between steps (acknowledged only if it lands in X_left).
class Recorder final : public cell::Caller {
 public:
  Recorder(cell::Deployment& d, log::MemFiles& mem, Model& model)
      : direct_(d.server(0).options().max_message_bytes), d_(d), mem_(mem), model_(model) {
    for (size_t i = 0; i < d.server_count(); ++i) direct_.add(&d.server(i));
  }
  std::span<std::byte> payload_buffer() override { return direct_.payload_buffer(); }
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override {
    auto body = direct_.call(server, type, payload_bytes);
    if (!body.is_ok()) return body;
    reply_.assign(body->begin(), body->end());
    BOOST_TEST_MESSAGE("point " << points.size() << ": after type " << type << " to server " << server);
    points.push_back({snapshot(mem_), model_});
    const std::string key = key_of(100000 + points.size() * 13 % 900);
    auto done = put(direct_, d_.server(0).node_id(), key, make_value(key, points.size(), 20));
    if (done.is_ok() && *done == cell::Outcome::kDone) model_[key] = make_value(key, points.size(), 20);
    points.push_back({snapshot(mem_), model_});
    return std::span<const std::byte>(reply_);
  }

  struct Point {
    Disk disk;
    Model model;
  };
  std::vector<Point> points;

 private:
  cell::DirectCaller direct_;
  cell::Deployment& d_;
  log::MemFiles& mem_;
  Model& model_;
  std::vector<std::byte> reply_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_log)

// 400 puts and 50 deletes through in-place splits of both kinds, then a
// new tree on the same logs: the same keys and values.
BOOST_AUTO_TEST_CASE(a_tree_rebuilt_from_its_logs_serves_the_same_data) {
  log::MemFiles mem;
  Model model;
  {
    auto c = CellCluster::create(2, logged_options(mem));
    for (uint64_t i = 0; i < 400; ++i) {
      const std::string key = key_of(i * 7 % 1000);
      model[key] = make_value(key, i, 20);
      auto r = c->deployment->direct_op(OpKind::kPut, key, model[key]);
      BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    }
    for (uint64_t i = 0; i < 50; ++i) {
      const std::string key = key_of(i * 7 % 1000);
      model.erase(key);
      BOOST_REQUIRE(c->deployment->direct_op(OpKind::kDelete, key).is_ok());
    }
    BOOST_REQUIRE(c->deployment->stats().store.meganode_splits > 0);
    expect_tree(*c->deployment, model, "before");
  }
  mem.crash();  // every_batch: nothing acknowledged is lost
  auto c = CellCluster::create(2, logged_options(mem));
  BOOST_REQUIRE(c->deployment->server(0).recovery().log.records > 0);
  expect_tree(*c->deployment, model, "after the restart");
}

// log_fsync = interval: a record written and not yet synced is synced by
// tick() once the interval passed (the driver's log_sync daemon calls it
// on an idle server), so a machine crash after it keeps the record;
// without the tick the crash loses it.
BOOST_AUTO_TEST_CASE(interval_fsync_ticks_sync_an_idle_servers_records) {
  for (bool tick : {false, true}) {
    log::MemFiles mem;
    cell::ServerOptions o = logged_options(mem);
    o.log.fsync = log::FsyncPolicy::kInterval;
    o.log.fsync_interval_ns = 200 * kMillisecond;
    {
      auto c = CellCluster::create(1, o);
      auto r = c->deployment->direct_op(OpKind::kPut, key_of(1), make_value(key_of(1), 1, 20));
      BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (tick) BOOST_REQUIRE(c->deployment->server(0).tick().is_ok());
    }
    mem.crash();
    auto c = CellCluster::create(1, o);
    testing::Collect all;
    BOOST_REQUIRE(c->deployment->direct_range("", std::nullopt, 100, all).is_ok());
    BOOST_CHECK_MESSAGE(all.got.size() == (tick ? 1u : 0u), "tick " << tick << ": " << all.got.size() << " keys");
  }
}

// The root meganode's split (create, appends, seal on the other server,
// finish, live, a new root) with a put between steps: a crash after any
// record, or tearing the next one, recovers to a tree equal to the model
// of the puts acknowledged by then, which can split again. Run twice: from
// the logs alone, and with a checkpoint before every record, so recovery
// restores the split's state (a locked X_right, a half-built meganode) from
// a checkpoint.
void crash_at_any_step_of_a_meganode_split(bool checkpoints) {
  log::MemFiles mem;
  Model model;
  std::vector<Recorder::Point> points;
  {
    auto c = CellCluster::create(2, logged_options(mem, checkpoints));
    cell::Deployment& d = *c->deployment;
    cell::DirectCaller direct(d.server(0).options().max_message_bytes);
    for (size_t i = 0; i < d.server_count(); ++i) direct.add(&d.server(i));
    uint32_t meganode = 0;
    for (uint64_t i = 0; !d.server(0).try_take_split(&meganode); ++i) {
      BOOST_REQUIRE(i < 1000);
      const std::string key = key_of(i * 7 % 1000);
      auto done = put(direct, d.server(0).node_id(), key, make_value(key, i, 20));
      BOOST_REQUIRE(done.is_ok() && *done == cell::Outcome::kDone);
      model[key] = make_value(key, i, 20);
    }
    Recorder rec(d, mem, model);
    rec.points.push_back({snapshot(mem), model});
    Env env = c->runtime->setup_env(d.server(0).node_id());
    Random rng(1);
    cell::SplitDriverOptions o;
    o.retry_min_ns = o.retry_max_ns = 0;
    o.placement.spread_until_meganodes = UINT32_MAX;  // the new meganode on the other server
    cell::SplitDriver driver(rec, d.layout(), d.server(0).node_id(), d.server(0).split_ids(), o, rng, *env.clock,
                             [](Nanos) {});
    const Status st = driver.run(meganode);
    BOOST_REQUIRE_MESSAGE(st.is_ok(), st.to_string());
    BOOST_REQUIRE(d.stats().store.meganode_splits == 1);
    points = std::move(rec.points);
  }
  BOOST_TEST_MESSAGE(points.size() << " crash points");
  for (size_t p = 0; p < points.size(); ++p) {
    for (bool torn : {false, true}) {
      if (torn && p + 1 == points.size()) continue;
      Disk disk = points[p].disk;
      if (torn) {  // half of the next record on whichever log grew next
        for (const auto& [path, bytes] : points[p + 1].disk) {
          // A file that appeared meanwhile is a checkpoint or its log: the
          // checkpoint test crashes at each of its steps.
          if (disk.count(path) == 0) continue;
          const size_t had = disk[path].size();
          if (bytes.size() > had) disk[path] = bytes.substr(0, had + (bytes.size() - had) / 2);
        }
      }
      log::MemFiles again;
      restore(disk, again);
      // (Recovered from the checkpoints; the 200 puts after it need none.)
      auto c = CellCluster::create(2, logged_options(again));
      const std::string where =
          "crash point " + std::to_string(p) + (torn ? " (torn)" : "") + (checkpoints ? " with checkpoints" : "");
      if (checkpoints && p > 0) {
        BOOST_REQUIRE_MESSAGE(c->deployment->server(0).recovery().generation > 0, where << ": no checkpoint");
      }
      expect_tree(*c->deployment, points[p].model, where);
      // Still a working tree: everything is writable and splits go on.
      Model model_after = points[p].model;
      for (uint64_t i = 0; i < 200; ++i) {
        const std::string key = key_of(i * 11 % 1000);
        model_after[key] = make_value(key, 1000 + i, 20);
        auto r = c->deployment->direct_op(OpKind::kPut, key, model_after[key]);
        BOOST_REQUIRE_MESSAGE(r.is_ok() && r->outcome == cell::Outcome::kDone, where << ": put " << key);
      }
      expect_tree(*c->deployment, model_after, where + ", then 200 puts");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_crash_at_any_step_of_a_meganode_split_recovers_a_correct_tree) {
  crash_at_any_step_of_a_meganode_split(false);
}

BOOST_AUTO_TEST_CASE(a_crash_at_any_step_of_a_split_recovers_from_checkpoints_taken_during_it) {
  crash_at_any_step_of_a_meganode_split(true);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
