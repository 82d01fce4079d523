// A Cell store's checkpoint on SimGrid costs its server's disk what the
// disk model says (backends/simgrid/sim_disk.h, docs/simulator.md "Disks"):
// a checkpoint is appended to a temporary (page cache: no disk time) and
// synced once, so it costs [platform.disk] sync_us plus its bytes at
// write_mb_per_s, and so grows with the store. Pilaf's checkpoints take the
// same path (log::DurableLog::checkpoint). Without [platform.disk] it costs
// nothing, as a log's syncs do.
//
// One actor on the server's node loads the store (its log appends cost no
// disk time, and nothing syncs them under `never`), writes a checkpoint and
// reads the clock around it. The disk figures are test inputs, not
// predictions.
#include <array>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>

#include "backends/simgrid/sim_runtime.h"
#include "core/index/cell/deployment.h"
#include "tests/support/cell_cluster.h"
#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

struct Timed {
  Nanos took_ns = -1;
  uint64_t checkpoint_bytes = 0;
};

// A one-server Cell tree on SimGrid, loaded with `keys[0]` keys and
// checkpointed, then with `keys[1]` more and checkpointed again: the
// simulated time and size of each checkpoint. Everything runs in one
// actor on the server's node (log_if_write takes the server's Env mutex,
// which needs an actor), and in a child process: one SimGrid engine per
// process.
std::array<Timed, 2> checkpoints_on_simgrid(std::array<uint64_t, 2> keys, const scenario::DiskSpec& disk) {
  auto got = testing::output_of_child([&]() -> std::string {
    std::string out = "error\n";
    scenario::PlatformSpec p;
    p.servers = 1;
    p.client_hosts = 1;
    p.disk = disk;
    auto runtime = simgrid_backend::make_simgrid_runtime(p, {});
    cell::DeploymentOptions d;
    d.servers = 1;
    d.server = testing::tiny_options();
    d.server.log_dir = "/sim/cell";
    d.server.log.fsync = log::FsyncPolicy::kNever;
    d.server.checkpoint_min_bytes = UINT64_MAX;  // only the ones asked for
    auto dep = cell::Deployment::create(*runtime, d);
    if (!dep.is_ok()) return out + dep.status().to_string();
    cell::CellServer& server = (*dep)->server(0);
    const Status spawned = runtime->spawn(server.node_id(), "checkpointer", ActorKind::kWorker, [&](Env& env) {
      std::string times;
      uint64_t loaded = 0;
      for (int c = 0; c < 2; ++c) {
        for (const uint64_t end = loaded + keys[c]; loaded < end; ++loaded) {
          const std::string key = testing::key_of(loaded);
          if (Status st = (*dep)->load(key, testing::make_value(key, loaded, 20)); !st.is_ok()) {
            out += st.to_string();
            return;
          }
        }
        const Nanos start_ns = env.clock->now();
        if (Status st = server.checkpoint(); !st.is_ok()) {
          out += st.to_string();
          return;
        }
        const Nanos took_ns = env.clock->now() - start_ns;
        auto file = env.files->open_read("/sim/cell/region0/checkpoint." + std::to_string(c + 1));
        if (!file.is_ok()) {
          out += file.status().to_string();
          return;
        }
        times += std::to_string(took_ns) + " " + std::to_string((*file)->size_bytes()) + " ";
      }
      out = "ok\n" + times;
    });
    if (!spawned.is_ok()) return out + spawned.to_string();
    if (Status st = runtime->run(); !st.is_ok()) return "error\n" + st.to_string();
    return out;
  });
  BOOST_REQUIRE_MESSAGE(got.is_ok(), got.status().to_string());
  const std::string& in = *got;
  BOOST_REQUIRE_MESSAGE(in.starts_with("ok\n"), in);
  std::istringstream s(in.substr(3));
  std::array<Timed, 2> t;
  for (Timed& x : t) s >> x.took_ns >> x.checkpoint_bytes;
  BOOST_REQUIRE(t[0].checkpoint_bytes > 0);
  return t;
}

scenario::DiskSpec disk_of(double sync_us, double write_mb_per_s) {
  return {.given = true, .sync_us = sync_us, .write_mb_per_s = write_mb_per_s, .read_mb_per_s = 1e6};
}

// What sim_disk.h charges for one sync of `bytes` dirty bytes.
Nanos expected_ns(const scenario::DiskSpec& disk, uint64_t bytes) {
  return static_cast<Nanos>(
      std::llround((disk.sync_us * 1e-6 + static_cast<double>(bytes) / (disk.write_mb_per_s * 1e6)) * 1e9));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_checkpoint)

BOOST_AUTO_TEST_CASE(a_cell_checkpoint_costs_one_sync_of_its_bytes) {
  const scenario::DiskSpec disk = disk_of(500, 10);
  const auto [small, large] = checkpoints_on_simgrid({300, 900}, disk);
  BOOST_TEST_MESSAGE("checkpoint of " << small.checkpoint_bytes << " bytes: " << small.took_ns / 1e3 << " us; of "
                                      << large.checkpoint_bytes << " bytes: " << large.took_ns / 1e3 << " us");
  BOOST_REQUIRE(large.checkpoint_bytes > 2 * small.checkpoint_bytes);
  for (const Timed& t : {small, large}) {
    const Nanos want_ns = expected_ns(disk, t.checkpoint_bytes);
    BOOST_TEST(std::abs(t.took_ns - want_ns) <= 1000, t.took_ns << " ns, the model says " << want_ns);
  }
}

BOOST_AUTO_TEST_CASE(without_a_disk_a_checkpoint_costs_nothing) {
  const auto [small, large] = checkpoints_on_simgrid({300, 900}, scenario::DiskSpec{});
  BOOST_TEST(small.took_ns == 0);
  BOOST_TEST(large.took_ns == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
