// Cell store checkpoints that fail (issue 20): a checkpoint whose write is
// torn or whose sync fails leaves the previous generation in force, the
// store goes on serving and logging (what it acknowledges after the failure
// survives a machine crash), the failure is reported naming the store and
// the file, and a later checkpoint succeeds. A checkpoint that cannot be
// read back (a flipped byte, or one written by a store of another shape)
// stops the deployment with an error naming the file, never silence. A
// checkpoint whose directory sync fails after its rename breaks the store's
// log (later writes refused) and loses nothing a restart or a crash
// recovers.
#include <boost/test/unit_test.hpp>
#include <map>
#include <memory>
#include <string>

#include "backends/loopback/loopback_runtime.h"
#include "core/log/mem_files.h"
#include "tests/support/cell_cluster.h"

namespace locus {
namespace {

using cell::OpKind;
using testing::CellCluster;
using testing::key_of;
using testing::make_value;
using Model = std::map<std::string, std::string>;

cell::ServerOptions checkpointed(log::MemFiles& mem) {
  cell::ServerOptions o = testing::tiny_options();
  o.log_dir = "/cell";
  o.log_files = &mem;
  o.log.fsync = log::FsyncPolicy::kEveryBatch;
  o.checkpoint_min_bytes = 8 << 10;
  return o;
}

Model tree_of(cell::Deployment& d) {
  testing::Collect all;
  auto n = d.direct_range("", std::nullopt, 1u << 30, all);
  BOOST_REQUIRE_MESSAGE(n.is_ok(), n.status().to_string());
  return Model(all.got.begin(), all.got.end());
}

void put(cell::Deployment& d, Model& model, uint64_t i) {
  const std::string key = key_of(i * 7 % 1000);
  const std::string value = make_value(key, i, 20);
  auto r = d.direct_op(OpKind::kPut, key, value);
  BOOST_REQUIRE_MESSAGE(r.is_ok() && r->outcome == cell::Outcome::kDone,
                        "put " << key << ": " << (r.is_ok() ? "not done" : r.status().to_string()));
  model[key] = value;
}

// Puts (from *i on) until the store's first checkpoint; its generation.
uint64_t until_first_checkpoint(cell::Deployment& d, Model& model, uint64_t* i) {
  while (d.server(0).checkpoints() == 0) put(d, model, (*i)++);
  return d.server(0).log_generation();
}

// A deployment on `mem`'s files, or why it could not start.
Status start(log::MemFiles& mem, const cell::ServerOptions& options) {
  auto runtime = loopback::make_loopback_runtime({});
  cell::DeploymentOptions d;
  d.servers = 1;
  d.server = options;
  d.server.log_files = &mem;
  return cell::Deployment::create(*runtime, d).status();
}

enum class Fault { kTornWrite, kFailedSync };

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_checkpoint_failure)

BOOST_AUTO_TEST_CASE(a_failed_checkpoint_keeps_the_last_generation_and_the_store_serving) {
  for (Fault fault : {Fault::kTornWrite, Fault::kFailedSync}) {
    const std::string what = fault == Fault::kTornWrite ? "torn write" : "failed sync";
    log::MemFiles mem;
    Model model;
    bool armed = false;
    // The fault hits the checkpoint itself: armed when its temporary appears.
    mem.on_change([&](std::string_view op, const std::string& path) {
      if (!armed || op != "create" || !path.ends_with(".tmp")) return;
      armed = false;
      if (fault == Fault::kTornWrite) {
        mem.tear_next_append(10);
      } else {
        mem.fail_syncs(1);
      }
    });
    auto c = CellCluster::create(1, checkpointed(mem));
    cell::Deployment& d = *c->deployment;
    cell::CellServer& s = d.server(0);
    uint64_t i = 0;
    const uint64_t generation = until_first_checkpoint(d, model, &i);
    armed = true;
    while (s.checkpoint_failures() == 0) {
      BOOST_REQUIRE_MESSAGE(i < 5000, what << ": no checkpoint tried");
      put(d, model, i++);
    }
    BOOST_REQUIRE_MESSAGE(s.log_generation() == generation, what << ": generation " << s.log_generation());
    const std::string error = s.last_checkpoint_error();
    BOOST_TEST_MESSAGE(what << ": " << error);
    const std::string tmp = "/cell/region0/checkpoint." + std::to_string(generation + 1) + ".tmp";
    BOOST_REQUIRE_MESSAGE(
        error.find("cell store region 0") != std::string::npos && error.find(tmp) != std::string::npos,
        what << ": the report names neither the store nor " << tmp << ": " << error);
    // It serves on: puts after the failure are acknowledged, read back,
    // and in the log of the generation still in force.
    for (uint64_t k = 0; k < 50; ++k) put(d, model, i++);
    BOOST_REQUIRE(tree_of(d) == model);
    const std::string key = key_of((i - 1) * 7 % 1000);
    auto got = d.direct_op(OpKind::kGet, key);
    BOOST_REQUIRE(got.is_ok() && got->found && got->value == model[key]);
    {
      std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
      auto r = CellCluster::create(1, checkpointed(*disk));
      BOOST_REQUIRE_MESSAGE(r->deployment->server(0).recovery().generation == generation, what);
      BOOST_REQUIRE_MESSAGE(tree_of(*r->deployment) == model, what << ": recovery after the failure lost puts");
    }
    // A later checkpoint succeeds, and recovery starts from it.
    const uint64_t done = s.checkpoints();
    while (s.checkpoints() == done) {
      BOOST_REQUIRE_MESSAGE(i < 20000, what << ": no checkpoint after the failure");
      put(d, model, i++);
    }
    BOOST_REQUIRE(s.log_generation() == generation + 1 && s.checkpoint_failures() == 1);
    std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
    auto r = CellCluster::create(1, checkpointed(*disk));
    BOOST_REQUIRE(r->deployment->server(0).recovery().generation == generation + 1);
    BOOST_REQUIRE(r->deployment->server(0).recovery().checkpoint_records > 0);
    BOOST_REQUIRE_MESSAGE(tree_of(*r->deployment) == model, what << ": recovery from the later checkpoint");
    BOOST_REQUIRE(r->deployment->check_invariants().is_ok());
  }
}

// A checkpoint that fails after naming itself: the directory sync after
// checkpoint.G+1's rename fails (and every directory sync after it, a disk
// going bad), so that name may or may not survive a crash. The store's log
// is broken for good (DurableLog's contract): the request that triggered
// the checkpoint and every later write are refused, the failure is
// reported naming the store and the checkpoint, reads still serve, and no
// acknowledged put is lost, whichever way the name went: a recovery from
// the files as they are (a process restart) starts from checkpoint.G+1, a
// machine crash from generation G. Had the store or the log ignored the
// failure, its later puts would go to log.G+1, whose name the crash drops
// along with checkpoint.G+1 (and generation G is removed by then).
BOOST_AUTO_TEST_CASE(a_checkpoint_that_fails_after_naming_itself_breaks_the_log_and_loses_nothing) {
  log::MemFiles mem;
  Model model;
  bool armed = false;
  mem.on_change([&](std::string_view op, const std::string& path) {
    if (!armed || op != "rename" || path.ends_with(".tmp")) return;
    armed = false;
    mem.fail_dir_syncs(UINT32_MAX);
  });
  auto c = CellCluster::create(1, checkpointed(mem));
  cell::Deployment& d = *c->deployment;
  cell::CellServer& s = d.server(0);
  uint64_t i = 0;
  const uint64_t generation = until_first_checkpoint(d, model, &i);
  armed = true;
  std::string refused;
  while (s.checkpoint_failures() == 0) {
    BOOST_REQUIRE_MESSAGE(i < 5000, "no checkpoint tried");
    const std::string key = key_of(i * 7 % 1000);
    const std::string value = make_value(key, i, 20);
    ++i;
    auto r = d.direct_op(OpKind::kPut, key, value);
    if (r.is_ok() && r->outcome == cell::Outcome::kDone) {
      model[key] = value;
    } else if (s.checkpoint_failures() == 0) {
      BOOST_FAIL("put " << key << " failed before the checkpoint did: " << r.status().to_string());
    } else {
      // The write that triggered the checkpoint (a put, or a split step
      // the put caused: then the put itself may be applied).
      refused = r.status().to_string();
      auto got = d.direct_op(OpKind::kGet, key);
      BOOST_REQUIRE(got.is_ok());
      if (got->found && got->value == value) model[key] = value;
    }
  }
  BOOST_TEST_MESSAGE("refused: " << refused);
  BOOST_REQUIRE_MESSAGE(!refused.empty(), "the write that met the failed checkpoint was acknowledged");
  BOOST_REQUIRE(s.checkpoints() == 1 && s.log_generation() == generation);
  const std::string error = s.last_checkpoint_error();
  BOOST_TEST_MESSAGE("reported: " << error);
  const std::string named = "/cell/region0/checkpoint." + std::to_string(generation + 1);
  BOOST_REQUIRE_MESSAGE(error.find("cell store region 0") != std::string::npos &&
                            error.find(named + " failed") != std::string::npos &&
                            error.find("broken") != std::string::npos,
                        "the report names neither the store, " << named << " nor the broken log: " << error);
  BOOST_REQUIRE(mem.exists(named));
  // Every later write is refused, saying why; reads serve what was acknowledged.
  for (uint64_t k = 0; k < 5; ++k, ++i) {
    const std::string key = key_of(i * 7 % 1000);
    auto r = d.direct_op(OpKind::kPut, key, make_value(key, i, 20));
    BOOST_REQUIRE_MESSAGE(!r.is_ok(), "put " << key << " acknowledged after the log broke");
    BOOST_REQUIRE_MESSAGE(r.status().message().find("broken") != std::string::npos, r.status().to_string());
  }
  BOOST_REQUIRE(tree_of(d) == model);
  // A machine crash: checkpoint.G+1's name was never made durable.
  {
    std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
    auto r = CellCluster::create(1, checkpointed(*disk));
    BOOST_TEST_MESSAGE("after a crash: " << r->deployment->server(0).recovery().describe());
    BOOST_REQUIRE(r->deployment->server(0).recovery().generation == generation);
    BOOST_REQUIRE_MESSAGE(tree_of(*r->deployment) == model, "a crash after the failure lost acknowledged puts");
    BOOST_REQUIRE(r->deployment->check_invariants().is_ok());
  }
  // A process restart on the files as they are, once the directory syncs
  // again: checkpoint.G+1 and an empty log; generation G is removed.
  c.reset();
  mem.on_change(nullptr);
  mem.fail_dir_syncs(0);
  auto r = CellCluster::create(1, checkpointed(mem));
  cell::Deployment& rd = *r->deployment;
  BOOST_TEST_MESSAGE("restarted: " << rd.server(0).recovery().describe());
  BOOST_REQUIRE(rd.server(0).recovery().generation == generation + 1);
  BOOST_REQUIRE(rd.server(0).recovery().checkpoint_records > 0);
  BOOST_REQUIRE(!mem.exists("/cell/region0/log." + std::to_string(generation)));
  BOOST_REQUIRE_MESSAGE(tree_of(rd) == model, "a restart after the failure lost acknowledged puts");
  BOOST_REQUIRE(rd.check_invariants().is_ok());
  // It logs again, and what it acknowledges survives a crash.
  for (uint64_t k = 0; k < 50; ++k) put(rd, model, i++);
  std::unique_ptr<log::MemFiles> disk = mem.crashed_copy();
  auto again = CellCluster::create(1, checkpointed(*disk));
  BOOST_REQUIRE(tree_of(*again->deployment) == model);
}

// A flipped byte in a checkpoint, and a checkpoint whose records are intact
// but were written by a store of another geometry: the deployment refuses
// to start, and the error names the checkpoint's file.
BOOST_AUTO_TEST_CASE(an_unreadable_checkpoint_is_an_error_naming_the_file) {
  log::MemFiles mem;
  Model model;
  uint64_t generation = 0;
  {
    auto c = CellCluster::create(1, checkpointed(mem));
    for (uint64_t i = 0; c->deployment->server(0).checkpoints() < 2; ++i) put(*c->deployment, model, i);
    generation = c->deployment->server(0).log_generation();
  }
  const std::string path = "/cell/region0/checkpoint." + std::to_string(generation);
  BOOST_REQUIRE(start(mem, checkpointed(mem)).is_ok());

  cell::ServerOptions other = checkpointed(mem);
  other.store.geometry.meganodes_per_server /= 2;
  const Status shape = start(mem, other);
  BOOST_TEST_MESSAGE("another shape: " << shape.to_string());
  BOOST_REQUIRE(!shape.is_ok());
  BOOST_REQUIRE_MESSAGE(shape.message().find(path) != std::string::npos,
                        "the error names no file: " << shape.to_string());

  BOOST_REQUIRE(mem.corrupt(path, mem.contents(path).size() / 2).is_ok());
  const Status flipped = start(mem, checkpointed(mem));
  BOOST_TEST_MESSAGE("a flipped byte: " << flipped.to_string());
  BOOST_REQUIRE(!flipped.is_ok());
  BOOST_REQUIRE_MESSAGE(
      flipped.message().find(path) != std::string::npos && flipped.message().find("damaged") != std::string::npos,
      "the error names no file: " << flipped.to_string());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
