// Scenario files: a complete file loads into the right values, --set
// overrides win, and every kind of mistake fails with the file, line and
// dotted key, never with a partly read scenario.
#include <boost/test/unit_test.hpp>

#include <string>

#include "core/designs/designs.h"
#include "core/index/cell/config.h"
#include "core/index/pilaf/config.h"
#include "core/scenario/scenario.h"

namespace locus {
namespace {

const char* kGood = R"(# a scenario
[platform]
servers = 4
cores_per_server = 2
topology = "two-level"
hosts_per_rack = 8
link = { bandwidth_gbps = 40.0, latency_us = 0.7 }
[platform.nic]
model = "ps"
read = [[16, 2.0e6], [4096, 0.5e6]]
rdma_share_with_verbs = 0.9
[platform.cpu]
handler_cost_us = { "pilaf.put" = 2.5 }
[index]
type = "pilaf"
mode = "vo"
[workload]
standard = "a"
recordcount = 500
requestdistribution = "uniform"
[[phases]]
start_s = 0.01
active_clients = 4
[run]
seed = 42
clients = 10
duration_s = 0.02
warmup_s = 0.005
[output]
json = "out.json"
)";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  auto s = designs::parse_scenario(text, "bad.toml", sets);
  BOOST_REQUIRE_MESSAGE(!s.is_ok(), "expected the scenario to be rejected");
  BOOST_TEST(s.status().code() == StatusCode::kInvalidArgument);
  return s.status().message();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scenario_files)

BOOST_AUTO_TEST_CASE(a_complete_file_loads) {
  auto s = designs::parse_scenario(kGood, "good.toml");
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST(s->platform.servers == 4u);
  BOOST_TEST(s->platform.cores_per_server == 2u);
  BOOST_TEST((s->platform.topology == scenario::Topology::kTwoLevel));
  BOOST_TEST(s->platform.host_link.bandwidth_gbps == 40.0);
  BOOST_TEST((s->platform.nic.model == scenario::NicModel::kProcessorSharing));
  BOOST_TEST(s->platform.nic.read.points.size() == 2u);
  BOOST_TEST(s->platform.nic.read.service_ns(16) == 500);
  BOOST_TEST(s->platform.nic.read.service_ns(8192) == 4000);  // past the last point: its bandwidth
  BOOST_TEST(s->platform.cpu.handler_cost_us.at("pilaf.put").us_at(1000) == 2.5);
  BOOST_TEST(s->index.get<pilaf::PilafConfig>()->mode == "vo");
  BOOST_TEST(s->workload.readproportion == 0.5);  // from workload a
  BOOST_TEST(s->workload.recordcount == 500u);
  BOOST_TEST((s->workload.requestdistribution == workload::RequestDistribution::kUniform));
  BOOST_TEST(s->phases.size() == 1u);
  BOOST_TEST(s->phases[0].active_clients == 4u);
  BOOST_TEST(s->run.seed == 42u);
  BOOST_TEST(s->platform.client_hosts == 10u);  // one per client by default
  BOOST_TEST(s->output.json == "out.json");
  BOOST_TEST(s->output.name == "good");
}

BOOST_AUTO_TEST_CASE(overrides_win) {
  auto s = designs::parse_scenario(kGood, "good.toml",
                                    {"run.clients=64", "index.mode=rdma", "platform.nic.rdma_share_with_verbs=0.5",
                                     "workload.recordcount=9"});
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST(s->run.clients == 64u);
  BOOST_TEST(s->index.get<pilaf::PilafConfig>()->mode == "rdma");
  BOOST_TEST(s->platform.nic.rdma_share_with_verbs == 0.5);
  BOOST_TEST(s->workload.recordcount == 9u);
}

BOOST_AUTO_TEST_CASE(mistakes_name_file_line_and_key) {
  std::string e = error_of(std::string(kGood) + "\n[run2]\nx = 1\n");
  BOOST_TEST(contains(e, "bad.toml:"));
  BOOST_TEST(contains(e, "run2: unknown key"));

  e = error_of("[platform]\nservers = 4\nserverz = 3\n");
  BOOST_TEST(contains(e, "bad.toml:3:"), e);
  BOOST_TEST(contains(e, "platform.serverz: unknown key"), e);

  e = error_of("[platform]\nservers = \"four\"\n");
  BOOST_TEST(contains(e, "bad.toml:2:"), e);
  BOOST_TEST(contains(e, "platform.servers: expected a number"), e);

  e = error_of("[platform]\ncores_per_server = 0\n");
  BOOST_TEST(contains(e, "platform.cores_per_server: value 0 outside [1, 1024]"), e);

  e = error_of("[platform]\nservers = 2.5\n");
  BOOST_TEST(contains(e, "expected an integer"), e);

  e = error_of("[platform.nic]\nread = [[1024, 1e6], [16, 2e6]]\n");
  BOOST_TEST(contains(e, "platform.nic.read: sizes must increase"), e);

  e = error_of("[index]\ntype = \"btree\"\n");
  BOOST_TEST(contains(e, "index.type: 'btree' is not one of micro | pilaf | cell | catfish"), e);

  e = error_of("[workload]\nreadproportion = 1.5\n");
  BOOST_TEST(contains(e, "workload.readproportion"), e);

  e = error_of("[run]\nduration_s = 0.01\nwarmup_s = 0.02\n");
  BOOST_TEST(contains(e, "run.warmup_s: must be shorter than run.duration_s"), e);

  e = error_of("[run]\nduration_s = 1\n[[phases]]\nstart_s = 0.2\n[[phases]]\nstart_s = 0.1\n");
  BOOST_TEST(contains(e, "phases must start in increasing order"), e);

  e = error_of("[platform\nservers = 1\n");
  BOOST_TEST(contains(e, "bad.toml:1:"), e);

  e = error_of(kGood, {"run.clients=many"});
  BOOST_TEST(contains(e, "run.clients: expected a number"), e);
  e = error_of(kGood, {"nonsense"});
  BOOST_TEST(contains(e, "expected key=value"), e);
}

// workload.deleteproportion > 0 loads for a design whose sessions delete
// and is refused at load time, naming the design and the key, for one
// whose sessions cannot (catfish: its deletes need the rectangle and id an
// insert drew; micro).
BOOST_AUTO_TEST_CASE(deletes_are_refused_by_designs_that_cannot_delete) {
  const std::string deletes = "[workload]\nreadproportion = 0.9\nupdateproportion = 0\ndeleteproportion = 0.1\n";
  for (const char* type : {"catfish", "micro"}) {
    const std::string e = error_of(std::string("[index]\ntype = \"") + type + "\"\n" + deletes);
    BOOST_TEST(contains(e, "workload.deleteproportion"), e);
    BOOST_TEST(contains(e, std::string("index type ") + type + " cannot delete"), e);
  }
  for (const char* type : {"pilaf", "nessie", "nam", "cell"}) {
    auto s = designs::parse_scenario(std::string("[index]\ntype = \"") + type + "\"\n" + deletes, "ok.toml");
    BOOST_TEST(s.is_ok(), type << ": " << s.status().to_string());
  }
  // Without deletes the refusing designs load as before.
  auto catfish = designs::parse_scenario("[index]\ntype = \"catfish\"\n", "ok.toml");
  BOOST_TEST(catfish.is_ok(), catfish.status().to_string());
}

const char* kCell = R"([platform]
servers = 2
[index]
type = "cell"
node_bytes = 2048
meganode_bytes = 4194304
meganodes_per_server = 8
server_request_us = 3.0
cache_min_distance = 3
[selector]
type = "jsq"
[selector.jsq]
history_samples = 50
explore_probability = 0.02
idle_reset_ms = 100
rtt_baseline = "per_path_minimum"
[output]
timeseries_ms = 5
)";

BOOST_AUTO_TEST_CASE(cell_index_and_selector_keys_load) {
  auto s = designs::parse_scenario(kCell, "cell.toml");
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST(s->index.type == "cell");
  BOOST_TEST(s->index.get<cell::CellConfig>()->node_bytes == 2048u);
  BOOST_TEST(s->index.get<cell::CellConfig>()->meganode_bytes == 4194304u);
  BOOST_TEST(s->index.get<cell::CellConfig>()->meganodes_per_server == 8u);
  BOOST_TEST(s->index.get<cell::CellConfig>()->server_request_us == 3.0);
  BOOST_TEST(s->index.get<cell::CellConfig>()->cache_min_distance == 3u);
  BOOST_TEST(s->selector.type == "jsq");
  BOOST_TEST((s->selector.config.kind == selector::SelectorKind::kJsq));
  BOOST_TEST(s->selector.config.jsq.history_samples == 50u);
  BOOST_TEST(s->selector.config.jsq.explore_probability == 0.02);
  BOOST_TEST(s->selector.config.jsq.idle_reset_ns == 100 * kMillisecond);
  BOOST_TEST((s->selector.config.jsq.rtt_baseline == selector::RttBaseline::kPerPathMinimum));
  BOOST_TEST(s->output.timeseries_ms == 5.0);

  // Sweeps override the kind and its constants from the command line (the
  // file's [selector.jsq], for the file's own type, stays legal).
  s = designs::parse_scenario(kCell, "cell.toml", {"selector.type=fixed_ratio", "selector.client_fraction=0.3"});
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST((s->selector.config.kind == selector::SelectorKind::kFixedRatio));
  BOOST_TEST(s->selector.config.client_fraction == 0.3);
  s = designs::parse_scenario(kCell, "cell.toml", {"selector.type=latency_window", "selector.window.window_ms=20"});
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST(s->selector.config.window.window_ns == 20 * kMillisecond);
  // A setting the chosen kind would ignore is refused (issue 17), naming
  // where it came from: the --set, or the file when its own type ignores it.
  std::string ignored = error_of(std::string(kCell), {"selector.type=fixed_ratio", "selector.window.window_ms=20"});
  BOOST_TEST(contains(ignored, "--set selector.window: settings of another selector: "
                               "selector.type is fixed_ratio"),
             ignored);
  ignored = error_of(std::string(kCell), {"selector.client_fraction=0.3"});
  BOOST_TEST(contains(ignored, "--set selector.client_fraction: only fixed_ratio takes it"),
             ignored);
  ignored = error_of(std::string(kCell) + "[selector.backoff]\nn = 4\n", {});
  BOOST_TEST(contains(ignored, "bad.toml:19:1: "), ignored);
  BOOST_TEST(contains(ignored, "selector.backoff: settings of another selector: selector.type is jsq"), ignored);
  for (const char* kind : {"server_only", "client_only", "latency_window"}) {
    s = designs::parse_scenario(kCell, "cell.toml", {std::string("selector.type=") + kind});
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    BOOST_TEST(s->selector.type == kind);
  }
  // Existing files keep the static selector.
  s = designs::parse_scenario(kGood, "good.toml");
  BOOST_REQUIRE(s.is_ok());
  BOOST_TEST(s->selector.type == "static");
}

BOOST_AUTO_TEST_CASE(cell_mistakes_name_file_line_and_key) {
  std::string e = error_of(std::string(kCell), {"selector.type=random"});
  BOOST_TEST(contains(e, "selector.type: not static, and selector kind 'random'"), e);

  e = error_of(std::string(kCell), {"selector.ratio=0.5"});
  BOOST_TEST(contains(e, "selector.ratio: unknown key"), e);

  e = error_of("[index]\ntype = \"cell\"\nnode_bytes = 1000\nmeganode_bytes = 4096\n");
  BOOST_TEST(contains(e, "bad.toml:4:"), e);
  BOOST_TEST(contains(e, "index.meganode_bytes: must be a multiple of index.node_bytes"), e);

  e = error_of("[index]\ntype = \"cell\"\nnode_byte = 1024\n");
  BOOST_TEST(contains(e, "bad.toml:3:"), e);
  BOOST_TEST(contains(e, "index.node_byte: unknown key for index type cell"), e);

  e = error_of("[index]\ntype = \"cell\"\nextents_bytes = 1000\n");
  BOOST_TEST(contains(e, "index.extents_bytes: must be 0"), e);

  e = error_of("[index]\ntype = \"cell\"\n[selector]\ntype = \"jsq\"\n[selector.jsq]\nhistory_sample = 5\n");
  BOOST_TEST(contains(e, "bad.toml:6:"), e);
  BOOST_TEST(contains(e, "selector.jsq.history_sample"), e);

  e = error_of("[index]\ntype = \"cell\"\n[selector]\ntype = \"jsq\"\n[selector.jsq]\nrtt_baseline = \"best\"\n");
  BOOST_TEST(contains(e, "selector.jsq.rtt_baseline"), e);

  e = error_of("[index]\ntype = \"cell\"\n[selector]\ntype = \"fixed_ratio\"\nclient_fraction = 1.5\n");
  BOOST_TEST(contains(e, "bad.toml:5:"), e);
  BOOST_TEST(contains(e, "selector.client_fraction: value 1.5 outside [0, 1]"), e);

  e = error_of("[index]\ntype = \"cell\"\n[selector]\nclient_fraction = 0.5\n");
  BOOST_TEST(contains(e, "selector: settings need a selector.type other than static"), e);

  // Pilaf's choice of paths is fixed.
  e = error_of(kGood, {"selector.type=jsq"});
  BOOST_TEST(contains(e, "selector.type: index type pilaf has a fixed choice of paths"), e);

  e = error_of("[run]\nduration_s = 10\n[output]\ntimeseries_ms = 0.001\n");
  BOOST_TEST(contains(e, "bad.toml:4:"), e);
  BOOST_TEST(contains(e, "output.timeseries_ms: more than"), e);
}

// NIC rates that are no NIC's (NaN, infinity, vanishingly small) and sizes
// beyond 32 bits are refused with the key, in the file and through --set
// (issue 17: they used to abort SimGrid, make READs free, or wrap to 16 B).
BOOST_AUTO_TEST_CASE(absurd_nic_curves_are_refused) {
  for (const char* curve : {"[[16, nan]]", "[[16, inf]]", "[[16, -inf]]", "[[16, 1e-300]]", "[[16, 0.5]]",
                            "[[16, 1e13]]", "[[8589934592, 1.0e6]]", "[[4294967296, 1.0e6]]", "[[-1, 1.0e6]]",
                            "[[1e25, 1.0e6]]", "[[16.5, 1.0e6]]"}) {  // a float size: UB in toml++'s conversion
    const std::string e = error_of(kGood, {std::string("platform.nic.read=") + curve});
    BOOST_TEST(contains(e, "platform.nic.read"), curve << ": " << e);
  }
  auto ok = designs::parse_scenario(kGood, "good.toml", {"platform.nic.read=[[16, 1.0], [4294967295, 1e12]]"});
  BOOST_TEST(ok.is_ok(), ok.status().to_string());
}

// Handler costs as curves of the bytes a call moved: linear between points,
// the first point's cost below it, on along the last two beyond them.
BOOST_AUTO_TEST_CASE(handler_cost_curves) {
  auto s = designs::parse_scenario(kGood, "good.toml",
                                   {"platform.cpu.handler_cost_us.\"pilaf.put\"=[[100, 1.0], [1100, 2.0]]",
                                    "platform.cpu.handler_cost_us.\"pilaf.get\"=0.25"});
  BOOST_TEST_REQUIRE(s.is_ok(), s.status().to_string());
  const scenario::CostCurve& x = s->platform.cpu.handler_cost_us.at("pilaf.put");
  BOOST_TEST(x.us_at(0) == 1.0);
  BOOST_TEST(x.us_at(600) == 1.5);
  BOOST_TEST(x.us_at(2100) == 3.0);
  BOOST_TEST(s->platform.cpu.handler_cost_us.at("pilaf.get").us_at(1 << 20) == 0.25);
  for (const char* bad : {"[[100, 1.0], [100, 2.0]]", "[[100, -1.0]]", "[[1.5, 1.0]]", "[]", "[[100]]",
                          "[[100, nan]]", "[[-5, 1.0]]", "\"fast\""}) {
    const std::string e = error_of(kGood, {std::string("platform.cpu.handler_cost_us.\"pilaf.put\"=") + bad});
    BOOST_TEST(contains(e, "platform.cpu.handler_cost_us.pilaf.put"), bad << ": " << e);
  }
}

// Issue 17: a handler cost the design never charges is a misspelling,
// refused with its key (it used to cost nothing, silently).
BOOST_AUTO_TEST_CASE(misspelled_handler_costs_are_refused) {
  const std::string e = error_of(kGood, {"platform.cpu.handler_cost_us.\"pilaf.putt\"=300"});
  BOOST_TEST(contains(e, "pilaf.putt"), e);
  BOOST_TEST(contains(e, "pilaf.put,"), e);  // the names it does charge
  auto ok = designs::parse_scenario(kGood, "good.toml", {"platform.cpu.handler_cost_us.\"pilaf.get\"=1.5"});
  BOOST_TEST(ok.is_ok(), ok.status().to_string());
}

// Issue 17: settings that would be ignored silently are refused.
BOOST_AUTO_TEST_CASE(phases_after_the_end_and_empty_files_are_refused) {
  const std::string e = error_of(kGood, {"run.duration_s=0.005", "run.warmup_s=0.001"});
  BOOST_TEST(contains(e, "phases.start_s"), e);  // kGood's phase starts at 0.01 s
  auto empty = designs::parse_scenario("", "empty.toml", {});
  BOOST_TEST(!empty.is_ok());
  BOOST_TEST(contains(empty.status().message(), "empty.toml: the scenario is empty"), empty.status().message());
}

// [faults] and [check]: read with their defaults, bad values refused with the key.
BOOST_AUTO_TEST_CASE(faults_and_check_sections) {
  auto plain = designs::parse_scenario(kGood, "good.toml", {});
  BOOST_REQUIRE(plain.is_ok());
  BOOST_TEST(!plain->faults.any());
  BOOST_TEST(!plain->check.linearizability);
  auto on = designs::parse_scenario(kGood, "good.toml",
                                    {"faults.delay=0.25", "faults.max_delay_us=7", "faults.read_order=random",
                                     "faults.retry_exceeded=0.01", "check.linearizability=true", "check.max_ops=1000",
                                     "run.wait_timeout_ms=3"});
  BOOST_TEST_REQUIRE(on.is_ok(), on.status().to_string());
  BOOST_TEST(on->faults.any());
  BOOST_TEST(on->faults.delay == 0.25);
  BOOST_TEST(on->faults.max_delay_ns == 7 * kMicrosecond);
  BOOST_TEST((on->faults.read_order == fault::ReadOrder::kRandom));
  BOOST_TEST(on->faults.seed == on->run.seed);  // replays with the run's seed unless told
  BOOST_TEST(on->check.linearizability);
  BOOST_TEST(on->check.max_ops == 1000u);
  BOOST_TEST(on->run.wait_timeout_ms == 3.0);
  for (const auto& [set, key] : {std::pair{"faults.delay=1.5", "faults.delay"}, {"faults.rnr=-0.1", "faults.rnr"},
                                 {"faults.read_order=sideways", "faults.read_order"},
                                 {"faults.bogus=1", "bogus"}, {"faults.piece_bytes=1", "faults.piece_bytes"},
                                 {"check.linearizability=3", "check.linearizability"},
                                 {"check.max_ops=0", "check.max_ops"}, {"run.wait_timeout_ms=0", "run.wait_timeout_ms"}}) {
    const std::string e = error_of(kGood, {set});
    BOOST_TEST(contains(e, key), set << ": " << e);
  }
}

// Node crashes and restarts: counts beyond what the run has, and a restart
// delay with no client to restart, are refused rather than cut or ignored.
BOOST_AUTO_TEST_CASE(node_crash_settings) {
  auto on = designs::parse_scenario(kGood, "good.toml",
                                    {"faults.crash_clients=2", "faults.restart_after_ms=1.5", "faults.crash_servers=1",
                                     "faults.server_outage_ms=3", "platform.nic.ack_timeout=8",
                                     "platform.nic.retry_count=3"});
  BOOST_TEST_REQUIRE(on.is_ok(), on.status().to_string());
  BOOST_TEST(on->faults.any());
  BOOST_TEST(on->faults.restart_after_ns == 1'500'000);
  BOOST_TEST(on->faults.crash_servers == 1u);
  BOOST_TEST(on->faults.server_outage_ns == 3'000'000);
  BOOST_TEST(on->platform.nic.retry_exceeded_after() == 4 * 4096 * 256);  // 4 tries of 4.096 us x 2^8
  for (const auto& [sets, want] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"faults.restart_after_ms=5"}, "faults.restart_after_ms: restarts crashed clients, and faults.crash_clients is 0"},
           {{"faults.crash_clients=100000"}, "faults.crash_clients: 100000 clients to crash, but run.clients is"},
           {{"faults.crash_servers=9"}, "faults.crash_servers: 9 servers to crash, but platform.servers is"},
           {{"faults.restart_after_ms=-1", "faults.crash_clients=1"}, "faults.restart_after_ms"},
           {{"faults.server_outage_ms=5"}, "faults.server_outage_ms: brings crashed servers back, and faults.crash_servers is 0"},
           {{"platform.nic.ack_timeout=0"}, "platform.nic.ack_timeout"},
           {{"platform.nic.retry_count=8"}, "platform.nic.retry_count"}}) {
    const std::string e = error_of(kGood, sets);
    BOOST_TEST(contains(e, want), e);
  }
}

BOOST_AUTO_TEST_CASE(missing_file_is_reported) {
  auto s = designs::load_scenario("/nonexistent/scenario.toml");
  BOOST_TEST(s.status().code() == StatusCode::kNotFound);
  BOOST_TEST(contains(s.status().message(), "/nonexistent/scenario.toml"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
