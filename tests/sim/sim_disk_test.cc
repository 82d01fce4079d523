// A server's disk on SimGrid (backends/simgrid/sim_disk.h), on Pilaf's
// put scenario (scenarios/pilaf/put.toml) cut short with its operation log
// on: a sync costs [platform.disk] sync_us plus the dirty bytes at
// write_mb_per_s, one at a time per disk, so logged puts under the
// every_batch policy are bound by the disk; reading a log back costs
// read_mb_per_s, so a restarted server that must replay is down longer;
// without [platform.disk] the log costs nothing; a partial table is
// refused by name.
//
// The disk figures here are test inputs chosen to make each effect
// dominate, not predictions.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/sim_scenario.h"

namespace locus {
namespace {

const std::string kPut = LOCUS_SOURCE_DIR "/scenarios/pilaf/put.toml";

std::string put_text() {
  std::ifstream in(kPut);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The simulator keeps logs in memory: the directory is only a name.
const std::vector<std::string> kLogged = {"run.duration_s=0.03", "run.warmup_s=0.005", "workload.recordcount=2000",
                                          "index.log_dir=\"/sim/pilaf-log\"", "index.log_fsync=\"every_batch\""};

StatusOr<scenario::Scenario> parse(const std::string& extra, std::vector<std::string> sets) {
  sets.insert(sets.begin(), kLogged.begin(), kLogged.end());
  return designs::parse_scenario(put_text() + extra, kPut, sets);
}

runner::ScenarioReport run(const std::string& extra, std::vector<std::string> sets) {
  sets.insert(sets.begin(), kLogged.begin(), kLogged.end());
  auto report = testing::simulate_scenario(put_text() + extra, kPut, sets);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  return std::move(*report);
}

double puts_per_s(const std::string& extra, const std::vector<std::string>& sets = {}) {
  const runner::ScenarioReport r = run(extra, sets);
  return r.result.throughput_ops_per_s(r.result.total_ops());
}

std::string disk(double sync_us, double write_mb_per_s, double read_mb_per_s) {
  std::ostringstream s;
  s << "\n[platform.disk]\nsync_us = " << sync_us << "\nwrite_mb_per_s = " << write_mb_per_s
    << "\nread_mb_per_s = " << read_mb_per_s << "\n";
  return s.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim_disk)

// Pilaf's put handler logs and syncs while it holds the server's lock, so
// a 1 ms sync admits at most 1000 puts/s; 48 clients keep it busy.
BOOST_AUTO_TEST_CASE(every_batch_puts_are_bound_by_the_sync) {
  const double free_rate = puts_per_s("");
  const double disk_rate = puts_per_s(disk(1000, 1e6, 1e6));
  BOOST_TEST_MESSAGE("puts/s without a disk " << free_rate << ", with 1 ms syncs " << disk_rate);
  BOOST_TEST(free_rate > 20000);
  BOOST_TEST(disk_rate <= 1000 * 1.01);
  BOOST_TEST(disk_rate >= 900);
}

// The bytes written since the last sync go to the disk with it: 1 KB
// records at 1 MB/s take about a millisecond each beside a free sync.
BOOST_AUTO_TEST_CASE(a_sync_writes_its_dirty_bytes_at_the_disk_bandwidth) {
  const double rate = puts_per_s(disk(0, 1, 1e6));
  BOOST_TEST_MESSAGE("puts/s at 1 MB/s " << rate);
  // A record is the 1024-byte value, its key and framing: a little over 1 KB.
  BOOST_TEST(rate < 1e6 / 1024.0);
  BOOST_TEST(rate > 0.8e6 / 1200.0);
}

// A server that dies mid-run and restarts replays its log from the disk:
// at 0.05 MB/s the replay of some 20 MB takes minutes, past the run's end,
// so the restarted server never answers again and its clients' puts fail;
// at a fast disk it is back within the run. (Two servers, so the other's
// clients carry on; the 8 ms ack timeout lets callers of the dead one fail
// fast, as the fault campaign's restart mix does.)
BOOST_AUTO_TEST_CASE(a_restarted_server_replays_its_log_at_the_read_bandwidth) {
  // The slow run ends while the restarted server is still replaying: the
  // disk wait returns kAborted at the stop (sim_disk.h) so the fault actor
  // ends by returning, not killed mid-sleep (which AddressSanitizer, seeing
  // SimGrid unwind a swapped stack, reported as a stack-buffer-overflow).
  const std::vector<std::string> crash = {"run.duration_s=0.1",         "run.warmup_s=0.01",
                                          "platform.servers=2",         "faults.crash_servers=1",
                                          "faults.server_outage_ms=10", "faults.restart_servers=true",
                                          "platform.nic.ack_timeout=8", "index.log_fsync=\"never\""};
  const runner::ScenarioReport fast = run(disk(0, 1e6, 1e6), crash);
  const runner::ScenarioReport slow = run(disk(0, 1e6, 0.05), crash);
  const double fast_rate = fast.result.throughput_ops_per_s(fast.result.total_ops());
  const double slow_rate = slow.result.throughput_ops_per_s(slow.result.total_ops());
  BOOST_TEST_MESSAGE("puts/s with a server restarted from its log: fast disk " << fast_rate << ", slow reads "
                                                                               << slow_rate);
  BOOST_TEST(fast.result.extra.at("faults.restarted_servers") == 1);
  BOOST_TEST(fast.result.extra.at("pilaf.recovered_records") > 1000);
  BOOST_TEST(slow.result.extra.at("faults.restarted_servers") == 0);  // still replaying at the end
  BOOST_TEST(slow_rate < 0.5 * fast_rate);
}

BOOST_AUTO_TEST_CASE(a_partial_disk_table_is_refused_by_name) {
  auto sc = parse("\n[platform.disk]\nsync_us = 100\nwrite_mb_per_s = 500\n", {});
  BOOST_REQUIRE(!sc.is_ok());
  BOOST_TEST(sc.status().to_string().find("platform.disk.read_mb_per_s") != std::string::npos, sc.status().to_string());
  auto bad = parse(disk(100, 0, 10), {});
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().to_string().find("write_mb_per_s") != std::string::npos, bad.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
