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
  BOOST_TEST(st.message().find("32.2 GiB") != std::string::npos, st.to_string());
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
