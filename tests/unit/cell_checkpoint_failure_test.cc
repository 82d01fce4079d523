// Cell store checkpoints that fail (issue 20): a checkpoint whose write is
// torn or whose sync fails leaves the previous generation in force, the
// store goes on serving and logging (what it acknowledges after the failure
// survives a machine crash), the failure is reported naming the store and
// the file, and a later checkpoint succeeds. A checkpoint that cannot be
// read back (a flipped byte, or one written by a store of another shape)
// stops the deployment with an error naming the file, never silence.
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
    while (s.checkpoints() == 0) put(d, model, i++);
    const uint64_t generation = s.log_generation();
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
