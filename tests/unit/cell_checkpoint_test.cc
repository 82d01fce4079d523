// Cell's store checkpoints (issue 20): a store's log restarts after each
// checkpoint, recovery reads the checkpoint and the log's tail and rebuilds
// the same store byte for byte (so the tail's requests allocate every node
// and extent where the live store did), and a machine crash at any step of
// writing a checkpoint keeps every acknowledged put. A recovered store
// splits what the live one would, no meganode again.
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/log/mem_files.h"
#include "tests/support/cell_cluster.h"

namespace locus {
namespace {

using cell::OpKind;
using testing::CellCluster;
using testing::key_of;
using testing::make_value;
using Model = std::map<std::string, std::string>;

cell::ServerOptions checkpointed(log::MemFiles& mem, uint64_t min_bytes) {
  cell::ServerOptions o = testing::tiny_options();
  o.log_dir = "/cell";
  o.log_files = &mem;
  o.log.fsync = log::FsyncPolicy::kEveryBatch;
  o.checkpoint_min_bytes = min_bytes;
  return o;
}

Model tree_of(cell::Deployment& d) {
  testing::Collect all;
  auto n = d.direct_range("", std::nullopt, 1u << 30, all);
  BOOST_REQUIRE_MESSAGE(n.is_ok(), n.status().to_string());
  Model m;
  for (auto& [k, v] : all.got) BOOST_REQUIRE_MESSAGE(m.emplace(k, v).second, "key " << k << " twice");
  return m;
}

// Two servers' stores are the same bytes: node regions, the extent
// allocator's live blocks and what they hold.
void expect_same_stores(cell::Deployment& a, cell::Deployment& b, const std::string& where) {
  for (size_t i = 0; i < a.server_count(); ++i) {
    cell::Store& x = a.server(i).store();
    cell::Store& y = b.server(i).store();
    size_t first = 0;
    while (first < x.node_region_bytes() && x.node_memory()[first] == y.node_memory()[first]) ++first;
    BOOST_REQUIRE_MESSAGE(first == x.node_region_bytes(),
                          where << ": server " << i << "'s nodes differ at byte " << first << " (checkpoints "
                                << a.server(i).checkpoints() << " and " << b.server(i).checkpoints() << ")");
    const auto lx = x.live_extents(), ly = y.live_extents();
    BOOST_REQUIRE_MESSAGE(lx.size() == ly.size(),
                          where << ": server " << i << " has " << lx.size() << " and " << ly.size() << " live extents");
    for (size_t e = 0; e < lx.size(); ++e) {
      BOOST_REQUIRE_MESSAGE(
          lx[e].offset == ly[e].offset && lx[e].bytes == ly[e].bytes &&
              std::memcmp(x.extents_memory() + lx[e].offset, y.extents_memory() + ly[e].offset, lx[e].bytes) == 0,
          where << ": server " << i << "'s extent " << e << " differs");
    }
  }
}

void put(cell::Deployment& d, Model& model, uint64_t i, uint64_t version) {
  const std::string key = key_of(i * 7 % 1000);
  const std::string value = make_value(key, version, 20);
  auto r = d.direct_op(OpKind::kPut, key, value);
  BOOST_REQUIRE_MESSAGE(r.is_ok() && r->outcome == cell::Outcome::kDone, "put " << key);
  model[key] = value;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_checkpoint)

// 1500 puts and 300 deletes with a checkpoint every 16 KB of log: every
// store checkpointed, recovery (after a machine crash, every_batch) reads
// a checkpoint and a tail shorter than the run, and rebuilds the same
// bytes (so the tail's puts placed every extent where the live store did).
BOOST_AUTO_TEST_CASE(recovery_from_a_checkpoint_and_its_tail_rebuilds_the_same_store) {
  log::MemFiles mem;
  Model model;
  auto live = CellCluster::create(2, checkpointed(mem, 16 << 10));
  cell::Deployment& d = *live->deployment;
  for (uint64_t i = 0; i < 1500; ++i) put(d, model, i, i);
  for (uint64_t i = 0; i < 300; ++i) {
    const std::string key = key_of(i * 13 % 1000);
    BOOST_REQUIRE(d.direct_op(OpKind::kDelete, key).is_ok());
    model.erase(key);
  }
  BOOST_REQUIRE(d.stats().store.meganode_splits > 0);
  for (size_t i = 0; i < d.server_count(); ++i) {
    BOOST_TEST_MESSAGE("server " << i << ": " << d.server(i).checkpoints() << " checkpoints");
    BOOST_REQUIRE(d.server(i).checkpoints() > 0);
  }
  std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
  auto again = CellCluster::create(2, checkpointed(*disk, 16 << 10));
  cell::Deployment& r = *again->deployment;
  for (size_t i = 0; i < r.server_count(); ++i) {
    const log::RecoveryReport& rep = r.server(i).recovery();
    BOOST_TEST_MESSAGE("server " << i << ": " << rep.describe());
    BOOST_REQUIRE(rep.generation > 0 && rep.checkpoint_records > 0);
    BOOST_REQUIRE(rep.log.valid_bytes < 16 << 10 || rep.log.valid_bytes < rep.checkpoint_bytes);
  }
  BOOST_REQUIRE(tree_of(r) == model);
  BOOST_REQUIRE(r.check_invariants().is_ok());
  expect_same_stores(d, r, "after recovery");
  // The recovered tree goes on.
  for (uint64_t i = 0; i < 300; ++i) put(r, model, 2000 + i, 5000 + i);
  BOOST_REQUIRE(tree_of(r) == model);
  BOOST_REQUIRE(r.check_invariants().is_ok());
}

// A recovered store queues only the meganode splits the live store would
// still do (none here: the live store's splits ran with each put), so the
// same puts after recovery split the same meganodes and leave the same
// bytes as in the store that did not crash. Before, replay queued every
// meganode that ever asked for a split (and a checkpoint's end every one
// that had split), and the recovered store split them again.
BOOST_AUTO_TEST_CASE(a_recovered_store_splits_what_the_live_one_would) {
  for (uint64_t min_bytes : {UINT64_MAX, uint64_t{16} << 10}) {
    const std::string what = min_bytes == UINT64_MAX ? "log only" : "checkpoints every 16 KB";
    log::MemFiles mem;
    Model model;
    auto live = CellCluster::create(2, checkpointed(mem, min_bytes));
    cell::Deployment& d = *live->deployment;
    for (uint64_t i = 0; i < 1500; ++i) put(d, model, i, i);
    const uint64_t splits = d.stats().store.meganode_splits;
    BOOST_REQUIRE(splits > 4);
    std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
    auto again = CellCluster::create(2, checkpointed(*disk, min_bytes));
    cell::Deployment& r = *again->deployment;
    BOOST_REQUIRE(r.stats().store.meganode_splits == splits);
    for (size_t i = 0; i < r.server_count(); ++i) {
      std::vector<uint32_t> queued;
      for (uint32_t m = 0; r.server(i).try_take_split(&m);) queued.push_back(m);
      BOOST_REQUIRE_MESSAGE(queued.empty(), what << ": server " << i << " recovered with " << queued.size()
                                                 << " meganodes queued to split (" << splits
                                                 << " splits so far), the live one with none");
    }
    for (uint64_t i = 0; i < 600; ++i) {  // new keys: both go on splitting
      const std::string key = key_of(1000 + i * 7 % 600);
      const std::string value = make_value(key, 5000 + i, 20);
      for (cell::Deployment* t : {&d, &r}) {
        auto got = t->direct_op(OpKind::kPut, key, value);
        BOOST_REQUIRE_MESSAGE(got.is_ok() && got->outcome == cell::Outcome::kDone, "put " << key);
      }
      model[key] = value;
    }
    BOOST_TEST_MESSAGE(what << ": meganode splits " << splits << ", then " << d.stats().store.meganode_splits
                            << " live and " << r.stats().store.meganode_splits << " recovered");
    BOOST_REQUIRE(d.stats().store.meganode_splits == r.stats().store.meganode_splits);
    BOOST_REQUIRE(tree_of(r) == model);
    expect_same_stores(d, r, what + ", 600 puts after recovery");
  }
}

// A crash after every change to the files while checkpoints are written
// (the temporary's records and sync, the rename, the directory syncs, the
// new log, the old generation's removal): recovery finds every put that
// was acknowledged, and nothing else but the put under way.
BOOST_AUTO_TEST_CASE(a_crash_at_every_step_of_a_checkpoint_keeps_every_acknowledged_put) {
  log::MemFiles mem;
  Model model;
  std::string in_flight;
  struct Image {
    std::unique_ptr<log::MemFiles> disk;
    Model acknowledged;
    std::string in_flight;
    std::string step;
  };
  std::vector<Image> images;
  bool checkpointing = false;
  mem.on_change([&](std::string_view op, const std::string& path) {
    const bool ckpt_file = path.find("/checkpoint.") != std::string::npos;
    if (ckpt_file && op == "create") checkpointing = true;
    if (!checkpointing && !ckpt_file) return;
    images.push_back({mem.crashed_copy(), model, in_flight, std::string(op) + " " + path});
    // The last step: the old generation's removal, then the directory's sync.
    if (op == "sync_dir" && images.size() > 1 && images[images.size() - 2].step.starts_with("remove")) {
      checkpointing = false;
    }
  });
  {
    auto c = CellCluster::create(2, checkpointed(mem, 8 << 10));
    for (uint64_t i = 0; i < 700; ++i) {
      in_flight = key_of(i * 7 % 1000);
      put(*c->deployment, model, i, i);
      in_flight.clear();
    }
    BOOST_REQUIRE(c->deployment->server(0).checkpoints() >= 3);
  }
  mem.on_change(nullptr);
  BOOST_TEST_MESSAGE(images.size() << " crash points");
  BOOST_REQUIRE(images.size() > 20);
  size_t from_checkpoint = 0;
  for (size_t p = 0; p < images.size(); ++p) {
    const Image& im = images[p];
    const std::string where = "crash point " + std::to_string(p) + " (after " + im.step + ")";
    auto c = CellCluster::create(2, checkpointed(*im.disk, 8 << 10));
    if (c->deployment->server(0).recovery().checkpoint_records > 0) ++from_checkpoint;
    Model got = tree_of(*c->deployment);
    if (!im.in_flight.empty()) {
      auto it = got.find(im.in_flight);
      if (it != got.end() && !im.acknowledged.count(im.in_flight)) got.erase(it);
    }
    BOOST_REQUIRE_MESSAGE(got == im.acknowledged,
                          where << ": " << got.size() << " keys, " << im.acknowledged.size() << " acknowledged");
    BOOST_REQUIRE_MESSAGE(c->deployment->check_invariants().is_ok(), where);
  }
  BOOST_REQUIRE(from_checkpoint > 0);
}

// The figure for docs/durability.md: the same 30,000 puts (over 2,000
// keys, so most overwrite) recovered from the log alone and from a
// checkpoint and its tail (checkpoints every 256 KB of log); prints the
// bytes read and the recovery time, and requires the checkpointed one to
// read less.
BOOST_AUTO_TEST_CASE(checkpoints_bound_what_recovery_reads) {
  uint64_t read_bytes[2] = {};
  for (bool checkpoints : {false, true}) {
    log::MemFiles mem;
    Model model;
    cell::ServerOptions o = checkpointed(mem, checkpoints ? 256 << 10 : UINT64_MAX);
    o.log.fsync = log::FsyncPolicy::kNever;
    {
      auto c = CellCluster::create(1, o);
      for (uint64_t i = 0; i < 30000; ++i) put(*c->deployment, model, i % 2000, i);
    }
    auto c = CellCluster::create(1, o);
    const log::RecoveryReport& rep = c->deployment->server(0).recovery();
    read_bytes[checkpoints] = rep.checkpoint_bytes + rep.log.valid_bytes;
    BOOST_TEST_MESSAGE((checkpoints ? "checkpoints every 256 KB: " : "log only: ")
                       << rep.checkpoint_bytes << " bytes of checkpoint, " << rep.log.records << " records ("
                       << rep.log.valid_bytes << " bytes) of log, recovered in " << rep.took_ns / 1e6 << " ms");
    BOOST_REQUIRE(tree_of(*c->deployment) == model);
  }
  BOOST_REQUIRE(read_bytes[1] < read_bytes[0]);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
