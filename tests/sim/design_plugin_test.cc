// A design is a plug-in: a toy design written here against the public
// plug-in API alone (core/design), registered in a registry of its own,
// loads from a scenario (its own [index] keys; others' rejected with file,
// line and key) and runs through the one run path on SimGrid, on loopback,
// and split as `locus serve` runs it (servers only, until stopped). Nothing
// outside this file knows it. The built-in registry holds the designs of
// core/index/CMakeLists.txt's list, and the micro design, a folder of its
// own, runs on both backends through it.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/loopback/loopback_runtime.h"
#include "backends/simgrid/sim_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/design/design.h"
#include "core/designs/designs.h"
#include "core/rpc/message.h"
#include "core/runner/scenario_run.h"

namespace locus {
namespace {

// ---- the toy design: counters, added to by RPC, read by RDMA READ ----------

constexpr uint16_t kAdd = 1;
constexpr uint16_t kLayout = 2;

struct CounterConfig final : scenario::IndexConfig {
  uint32_t slots = 64;
};

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_counter_keys(scenario::IndexKeys& keys) {
  auto c = std::make_shared<CounterConfig>();
  LOCUS_RETURN_IF_ERROR(keys.number("slots", &c->slots, 1, 1 << 20));
  return std::shared_ptr<const scenario::IndexConfig>(std::move(c));
}

uint32_t slot_of(std::string_view key, uint32_t slots) {
  return static_cast<uint32_t>(std::hash<std::string_view>{}(key) % slots);
}

class CounterSession final : public design::ClientSession {
 public:
  CounterSession(Endpoint& ep, rpc::RpcClient& rpc, NodeId server, uint32_t slots)
      : ep_(ep), rpc_(rpc), server_(server), slots_(slots) {}

  Status init() {
    LOCUS_ASSIGN_OR_RETURN(local_, ep_.transport().register_memory(buffer_.data(), buffer_.size(), kLocalOnly));
    LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(server_, kLayout, 0));
    rpc::Reader r(body);
    if (!rpc::get_region(r, &remote_)) return corruption("counter: bad layout");
    return Status();
  }
  ~CounterSession() override { (void)ep_.transport().deregister_memory(local_); }

  Status execute(const workload::Op& op, std::string_view key, std::string_view, std::string_view* as) override {
    const uint32_t slot = slot_of(key, slots_);
    if (op.kind == workload::OpKind::kRead || op.kind == workload::OpKind::kScan) {
      *as = "READ";
      WorkRequest wr;
      wr.wr_id = ep_.next_wr_id();
      wr.op = Opcode::kRead;
      wr.remote = remote_at(remote_, uint64_t{slot} * 8);
      wr.local = {buffer_.data(), 8, local_.lkey};
      ++reads_;
      return ep_.execute(wr);
    }
    *as = "ADD";
    rpc::Writer w(rpc_.payload_buffer());
    w.put(slot);
    ++adds_;
    return rpc_.call(server_, kAdd, w.size()).status();
  }
  void report(metrics::OpStats& stats) const override {
    design::add_counters(stats, {{"counter.client_reads", reads_}, {"counter.client_adds", adds_}});
  }

 private:
  Endpoint& ep_;
  rpc::RpcClient& rpc_;
  NodeId server_;
  uint32_t slots_;
  AlignedBuffer buffer_{64};
  Region local_;
  RemoteRegion remote_;
  uint64_t reads_ = 0, adds_ = 0;
};

class CounterDriver final : public design::IndexDriver {
 public:
  explicit CounterDriver(const CounterConfig& c) : slots_(c.slots), memory_(uint64_t{c.slots} * 8) {}
  ~CounterDriver() override {
    if (transport_ != nullptr) (void)transport_->deregister_memory(region_);
  }

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    if (endpoint != 0) return invalid_argument("counter: one server");
    transport_ = env.transport;
    LOCUS_ASSIGN_OR_RETURN(region_, env.transport->register_memory(memory_.data(), memory_.size(), kRemoteRead));
    const RemoteRegion rr = region_.remote();
    LOCUS_RETURN_IF_ERROR(rpc.handle(kAdd, "counter.add",
                                     [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) -> Status {
                                       uint32_t slot = 0;
                                       if (!r.get(&slot) || !r.at_end() || slot >= slots_) {
                                         return invalid_argument("counter.add: bad slot");
                                       }
                                       auto* words = reinterpret_cast<uint64_t*>(memory_.data());
                                       __atomic_add_fetch(&words[slot], 1, __ATOMIC_RELAXED);
                                       adds_.fetch_add(1, std::memory_order_relaxed);
                                       return Status();
                                     }));
    return rpc.handle(kLayout, "counter.layout", [rr](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
      rpc::put_region(rr, w);
      return Status();
    });
  }
  Status load(const workload::WorkloadSpec&, Random&) override { return Status(); }
  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env&, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> servers) override {
    auto s = std::make_unique<CounterSession>(ep, rpc, servers.front(), slots_);
    LOCUS_RETURN_IF_ERROR(s->init());
    return std::unique_ptr<design::ClientSession>(std::move(s));
  }
  void report_servers(std::map<std::string, double>& extra) const override {
    extra["counter.server_adds"] = static_cast<double>(adds_.load());
  }

 private:
  uint32_t slots_;
  AlignedBuffer memory_;
  Transport* transport_ = nullptr;
  Region region_;
  std::atomic<uint64_t> adds_{0};
};

design::Registry toy_registry() {
  design::Registry r;
  Status st = r.add({{"counter", "counters: adds by RPC, reads by RDMA READ", false, read_counter_keys},
                     [](const scenario::Scenario& s, const design::Placement&)
                         -> StatusOr<std::unique_ptr<design::IndexDriver>> {
                       if (s.platform.servers != 1) return invalid_argument("platform.servers: counter has one");
                       return std::unique_ptr<design::IndexDriver>(
                           new CounterDriver(*s.index.get<CounterConfig>()));
                     }});
  BOOST_REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  return r;
}

constexpr const char* kToy = R"(
[platform]
servers = 1
cores_per_server = 2
[platform.nic]
read = [[64, 1.0e6]]
send = [[64, 1.0e7]]
recv = [[64, 1.0e7]]
[platform.cpu]
handler_cost_us = { "counter.add" = 1.0, "counter.layout" = 0.0 }
[index]
type = "counter"
slots = 32
[workload]
standard = "a"
recordcount = 100
[run]
clients = 4
duration_s = 0.2
warmup_s = 0.05
[output]
)";

std::unique_ptr<Runtime> sim_runtime(const scenario::Scenario& s) {
  simgrid_backend::SimOptions o;
  o.seed = s.run.seed;
  return simgrid_backend::make_simgrid_runtime(s.platform, o);
}

std::unique_ptr<Runtime> loopback_runtime(const scenario::Scenario& s) {
  loopback::LoopbackOptions o;
  o.seed = s.run.seed;
  return loopback::make_loopback_runtime(o);
}

// Every operation a client finished was served: the server's count of
// adds is at least the clients' measured ones, and nothing failed.
void check_run(const runner::ScenarioReport& r, const std::string& backend) {
  const metrics::RunResult& res = r.result;
  BOOST_TEST(res.backend == backend);
  BOOST_TEST(res.index == "counter");
  BOOST_TEST(res.stats.total_failed() == 0u);
  BOOST_TEST(res.stats.counter_value("failed_ops") == 0);
  BOOST_REQUIRE(res.stats.find_op("READ") != nullptr);
  BOOST_REQUIRE(res.stats.find_op("ADD") != nullptr);
  BOOST_TEST(res.stats.find_op("READ")->latency.count() > 10u);
  BOOST_TEST(res.stats.find_op("ADD")->latency.count() > 10u);
  BOOST_TEST(res.extra.at("counter.server_adds") >= static_cast<double>(res.stats.find_op("ADD")->latency.count()));
  BOOST_TEST(res.stats.counter_value("counter.client_adds") > 0);
}

BOOST_AUTO_TEST_SUITE(design_plugin)

BOOST_AUTO_TEST_CASE(a_design_reads_its_own_keys_and_rejects_others) {
  const design::Registry r = toy_registry();
  auto s = scenario::parse_scenario(kToy, "toy.toml", {}, r);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  BOOST_TEST(s->index.get<CounterConfig>()->slots == 32u);
  // A key of another design (Pilaf's) is unknown to this one: file, line, key.
  auto bad = scenario::parse_scenario(std::string(kToy) + "", "toy.toml", {"index.mode=vo"}, r);
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("index.mode: unknown key for index type counter") != std::string::npos,
             bad.status().message());
  std::string text = kToy;
  text.replace(text.find("slots = 32"), 10, "slot = 32");
  bad = scenario::parse_scenario(text, "toy.toml", {}, r);
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("toy.toml:13:") != std::string::npos, bad.status().message());
  // Its own range checks name the key.
  bad = scenario::parse_scenario(kToy, "toy.toml", {"index.slots=0"}, r);
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("index.slots") != std::string::npos, bad.status().message());
  // It has no per-step choice of path: only the static selector.
  bad = scenario::parse_scenario(kToy, "toy.toml", {"selector.type=jsq"}, r);
  BOOST_TEST(!bad.is_ok());
  // A design a registry does not hold is named with the ones it does.
  bad = scenario::parse_scenario(kToy, "toy.toml", {"index.type=nessie"}, r);
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("'nessie' is not one of counter") != std::string::npos,
             bad.status().message());
}

BOOST_AUTO_TEST_CASE(registry_refuses_duplicates_and_incomplete_designs) {
  design::Registry r = toy_registry();
  BOOST_TEST(!r.add({{"counter", "again", false, read_counter_keys}, r.find("counter")->make_driver}).is_ok());
  BOOST_TEST(!r.add({{"nothing", "no reader, no driver", false, {}}, {}}).is_ok());
  BOOST_TEST(r.type_names() == std::vector<std::string>{"counter"});
}

BOOST_AUTO_TEST_CASE(runs_on_simgrid) {
  const design::Registry r = toy_registry();
  auto s = scenario::parse_scenario(kToy, "toy.toml", {}, r);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  auto report = runner::run_scenario(*s, r, sim_runtime);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  check_run(*report, "simgrid");
  BOOST_TEST(!report->result.resources.empty());
}

BOOST_AUTO_TEST_CASE(runs_on_loopback) {
  const design::Registry r = toy_registry();
  auto s = scenario::parse_scenario(kToy, "toy.toml", {}, r);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  auto report = runner::run_scenario(*s, r, loopback_runtime);
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  check_run(*report, "loopback");
  // A wall-time window too short for any operation is an error that says
  // so, not an empty table.
  s = scenario::parse_scenario(kToy, "toy.toml", {"run.duration_s=0.000001", "run.warmup_s=0"}, r);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  report = runner::run_scenario(*s, r, loopback_runtime);
  BOOST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().code() == StatusCode::kTimeout);
  BOOST_TEST(report.status().message().find("lengthen the run") != std::string::npos, report.status().message());
}

// As `locus serve` runs it: the servers only, until the stop flag turns;
// their figures in the report and no client side.
BOOST_AUTO_TEST_CASE(serves_until_stopped_with_the_clients_elsewhere) {
  const design::Registry r = toy_registry();
  auto s = scenario::parse_scenario(kToy, "toy.toml", {}, r);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
  std::atomic<bool> stop{false};
  std::thread stopper;
  std::vector<NodeId> served;
  runner::RunOptions o;
  o.placement = {.servers_here = true, .clients_here = false};
  o.stop = &stop;
  o.on_servers_ready = [&](Runtime&, std::span<const NodeId> servers) {
    served.assign(servers.begin(), servers.end());
    stopper = std::thread([&stop] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      stop.store(true, std::memory_order_release);
    });
    return Status();
  };
  auto report = runner::run_scenario(*s, r, loopback_runtime, o);
  if (stopper.joinable()) stopper.join();
  BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  BOOST_TEST(served.size() == 1u);
  BOOST_TEST(report->result.stats.total_ops() == 0u);
  BOOST_TEST(report->result.extra.at("counter.server_adds") == 0.0);
  BOOST_TEST(report->result.extra.at("rpc_requests") == 0.0);
  // Serving needs a stop flag; a run with neither side here is refused.
  o.stop = nullptr;
  BOOST_TEST(!runner::run_scenario(*s, r, loopback_runtime, o).is_ok());
  o.placement = {.servers_here = false, .clients_here = false};
  BOOST_TEST(!runner::run_scenario(*s, r, loopback_runtime, o).is_ok());
}

// The built-in designs are the folders of core/index/CMakeLists.txt; the
// micro design runs on both in-process backends through them.
BOOST_AUTO_TEST_CASE(builtin_designs_run_through_the_same_path) {
  const design::Registry& builtin = designs::registry();
  BOOST_TEST(builtin.type_names() == (std::vector<std::string>{"micro", "pilaf", "cell", "catfish", "nessie", "nam"}));
  for (const design::Design& d : builtin.designs()) BOOST_TEST(!d.type.summary.empty());
  auto s = designs::parse_scenario(kToy, "micro.toml", {"index.type=micro"});
  BOOST_REQUIRE(!s.is_ok());  // `slots` is the toy's key, not micro's
  BOOST_TEST(s.status().message().find("index.slots: unknown key for index type micro") != std::string::npos,
             s.status().message());
  std::string text = kToy;
  text.replace(text.find("slots = 32"), 10, "");
  text.replace(text.find("\"counter.add\""), 13, "\"micro.op\"");
  text.replace(text.find("\"counter.layout\""), 16, "\"micro.layout\"");
  for (auto make : {&sim_runtime, &loopback_runtime}) {
    s = designs::parse_scenario(text, "micro.toml",
                                {"index.type=micro", "index.rpc_fraction=0.5", "index.reads_per_op=2"});
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    auto report = runner::run_scenario(*s, builtin, make);
    BOOST_REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
    BOOST_TEST(report->result.index == "micro");
    BOOST_TEST(report->result.stats.total_failed() == 0u);
    BOOST_REQUIRE(report->result.stats.find_op("RPC") != nullptr);
    BOOST_REQUIRE(report->result.stats.find_op("TRAVERSAL") != nullptr);
  }
}

// Split across processes (`locus serve` here, `locus run --backend verbs`
// there), both sides must number the server endpoints alike: a client
// reaches endpoint k as the cluster file's entry k. For every built-in
// design and its shipped scenario.
BOOST_AUTO_TEST_CASE(both_sides_of_a_split_deployment_see_the_same_endpoints) {
  for (const char* file : {"quickstart.toml", "model/micro-hybrid.toml", "cell/mixed.toml", "catfish/rtree.toml"}) {
    auto s = designs::load_scenario(std::string(LOCUS_SOURCE_DIR "/scenarios/") + file);
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    const design::Design* d = designs::registry().find(s->index.type);
    BOOST_REQUIRE(d != nullptr);
    auto servers = d->make_driver(*s, {.servers_here = true, .clients_here = false});
    auto clients = d->make_driver(*s, {.servers_here = false, .clients_here = true});
    BOOST_REQUIRE_MESSAGE(servers.is_ok(), servers.status().to_string());
    BOOST_REQUIRE_MESSAGE(clients.is_ok(), clients.status().to_string());
    std::vector<std::string> a, b;
    for (const auto& e : (*servers)->server_endpoints()) a.push_back(e.suffix);
    for (const auto& e : (*clients)->server_endpoints()) b.push_back(e.suffix);
    BOOST_TEST(a == b, file);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
