// The NAM tree index on verbs, across processes: for each distribution
// (coarse-grained by RPC, fine-grained by one-sided READ/CAS/WRITE/FAA,
// hybrid), `locus serve` of tests/verbs/scenarios/nam.toml runs two memory
// servers as a child process, and a `locus run --backend verbs` child
// process runs YCSB lookups and inserts from compute-server clients
// against them, while leaves and inner nodes split. Checks that
// operations of both kinds ran and none failed, and what the serving
// process counted when it stopped: every record loaded, no request
// refused, and the servers' own traversals for coarse-grained only.
// Coarse-grained and hybrid once more with their RPCs over RDMA-WRITE
// mailboxes (index.rpc_transport = "mailbox": a mailbox worker endpoint
// beside each memory server's RPC endpoint).
// Small runs: under Soft-RoCE in an emulated guest a READ takes ~100 us.
#include <string>

#include <boost/test/unit_test.hpp>

#include "tests/verbs/served_index.h"
#include "tests/verbs/verbs_test_env.h"

namespace {

using namespace locus;

const bool skip_checked = [] {
  locus::verbs::testing::exit_unless_rdma_available("nam_processes_verbs_test");
  return true;
}();

constexpr double kRecords = 4000;  // nam.toml's
constexpr size_t kMemoryServers = 2;

void serve_and_run(const std::string& distribution, bool mailbox = false) {
  std::vector<std::string> sets = {"index.distribution=\"" + distribution + "\""};
  if (mailbox) sets.push_back("index.rpc_transport=\"mailbox\"");
  // nam.toml's one core per server: one mailbox worker each.
  verbs::testing::ServedIndex t = verbs::testing::start_served_index(
      "nam_" + distribution + (mailbox ? "_mailbox" : ""), verbs::testing::scenario_path("nam.toml"), sets,
      kMemoryServers * (mailbox ? 2 : 1));
  auto run = verbs::testing::start_run(t, distribution, {});
  const verbs::testing::RunResults r = verbs::testing::finish_run(t, *run, distribution, 400'000);
  BOOST_TEST(r.index == "nam");
  BOOST_TEST(r.ops.count("READ") == 1u, distribution << ": no lookups:\n" << run->output());
  BOOST_TEST(r.ops.count("UPDATE") == 1u, distribution << ": no inserts:\n" << run->output());

  const auto figures = verbs::testing::stop_served_index(t, 60'000);
  using verbs::testing::figure;
  BOOST_TEST(figure(figures, "nam.loaded_pairs") == kRecords, t.server->output());
  BOOST_TEST(figure(figures, "rpc_rejected") == 0, t.server->output());
  if (mailbox) {
    // The index's RPCs all came through the mailboxes, none malformed.
    BOOST_TEST(figure(figures, "nam.mailbox_requests") > 0, t.server->output());
    BOOST_TEST(figure(figures, "nam.mailbox_malformed") == 0, t.server->output());
  } else if (distribution == "coarse") {
    // Every operation is a traversal on a memory server's CPU.
    BOOST_TEST(figure(figures, "rpc_requests") > 0, t.server->output());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_processes)

BOOST_AUTO_TEST_CASE(coarse_grained_across_processes) { serve_and_run("coarse"); }
BOOST_AUTO_TEST_CASE(fine_grained_across_processes) { serve_and_run("fine"); }
BOOST_AUTO_TEST_CASE(hybrid_across_processes) { serve_and_run("hybrid"); }
BOOST_AUTO_TEST_CASE(coarse_grained_over_mailboxes_across_processes) { serve_and_run("coarse", true); }
BOOST_AUTO_TEST_CASE(hybrid_over_mailboxes_across_processes) { serve_and_run("hybrid", true); }

BOOST_AUTO_TEST_SUITE_END()
