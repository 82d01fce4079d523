// Issue 17: a run that would not fit in memory is refused before anything
// is allocated, naming the settings that drive it (RunOptions::
// max_memory_bytes, which `locus run` sets to the memory available), and
// a Cell node cache larger than the tree reserves only the tree's size.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"

namespace locus {
namespace {

Status run_with_limit(const std::string& file, const std::vector<std::string>& sets, uint64_t max_bytes) {
  auto s = designs::load_scenario(std::string(LOCUS_SOURCE_DIR) + "/scenarios/" + file, sets);
  if (!s.is_ok()) return s.status();
  runner::RunOptions ro;
  ro.max_memory_bytes = max_bytes;
  auto factory = [](const scenario::Scenario& sc) {
    simgrid_backend::SimOptions so;
    so.seed = sc.run.seed;
    return simgrid_backend::make_simgrid_runtime(sc.platform, so);
  };
  return runner::run_scenario(*s, designs::registry(), factory, ro).status();
}

BOOST_AUTO_TEST_SUITE(memory_estimate)

BOOST_AUTO_TEST_CASE(pilaf_records_beyond_memory_are_refused_naming_them) {
  const Status st = run_with_limit("quickstart.toml", {"workload.recordcount=3000000", "workload.fieldlength=4096"},
                                   1ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("workload.recordcount") != std::string::npos, st.to_string());
  // 32 GiB of extents, the buddy allocator's 9 bytes per 32-byte block of
  // them (9 GiB) and the table.
  BOOST_TEST(st.message().find("41.5 GiB") != std::string::npos, st.to_string());
}

BOOST_AUTO_TEST_CASE(cell_meganodes_beyond_memory_are_refused_naming_them) {
  const Status st = run_with_limit("cell/one-meganode.toml", {"index.meganodes_per_server=100000"}, 8ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("index.meganodes_per_server") != std::string::npos, st.to_string());
}

BOOST_AUTO_TEST_CASE(a_node_cache_larger_than_the_tree_takes_the_tree_s_size) {
  // 1 TiB per client used to be reserved (and abort); the tree is 64 MB.
  const Status st = run_with_limit("cell/one-meganode.toml",
                                   {"index.node_cache_bytes=1099511627776", "run.clients=4", "run.duration_s=0.002",
                                    "run.warmup_s=0.001", "output.json=/dev/null", "output.csv=/dev/null"},
                                   4ull << 30);
  BOOST_TEST(st.is_ok(), st.to_string());
}

BOOST_AUTO_TEST_CASE(a_million_clients_are_refused_by_their_buffers) {
  // Each client's RPC buffers and read buffers: the design's and the
  // runner's (they were not counted, and this aborted in bad_alloc).
  const Status st = run_with_limit("quickstart.toml", {"run.clients=1000000"}, 16ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("1000000 clients") != std::string::npos, st.to_string());
  BOOST_TEST(st.message().find("run.clients") != std::string::npos, st.to_string());
}

BOOST_AUTO_TEST_CASE(a_hundred_thousand_servers_are_refused_by_their_receive_buffers) {
  const Status st = run_with_limit("quickstart.toml", {"platform.servers=100000"}, 16ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("RPC receive buffers") != std::string::npos, st.to_string());
  BOOST_TEST(st.message().find("platform.servers") != std::string::npos, st.to_string());
}

BOOST_AUTO_TEST_CASE(catfish_and_micro_estimate_their_memory_too) {
  Status st = run_with_limit("catfish/rtree.toml", {"index.rectangles=1000000000"}, 8ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("index.rectangles") != std::string::npos, st.to_string());
  st = run_with_limit("model/micro-hybrid.toml", {"platform.servers=20000"}, 8ull << 30);
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("platform.servers") != std::string::npos, st.to_string());
}

BOOST_AUTO_TEST_CASE(absurd_sizes_saturate_instead_of_wrapping_to_small_ones) {
  // 2^62 records of 62.5 MiB: the Cell extents and Pilaf's products used
  // to wrap modulo 2^64 (or hit std::bit_ceil's undefined case).
  for (const char* file : {"quickstart.toml", "cell/one-meganode.toml"}) {
    const Status st = run_with_limit(file,
                                     {"workload.recordcount=4611686018427387904", "workload.fieldcount=1000",
                                      "workload.fieldlength=65536", "index.max_kv_bytes=67108864"},
                                     1ull << 40);
    BOOST_TEST(st.code() != StatusCode::kOk, st.to_string());
    BOOST_TEST(st.message().find("workload.") != std::string::npos, st.to_string());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
