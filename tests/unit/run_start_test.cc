// When a run starts on OS threads (loopback here, verbs alike). Actors begin
// one by one as their threads are made, and under a sanitizer a client
// made after forty others began 1.4 s late (cli_cell_takeover_test's crash
// actor, stop 33's catfish campaign). The runner starts the run, and so
// the warm-up, the fault timer and the crash plans, once every local
// client has connected (Shared::client_started in scenario_run.cc). A
// runtime that holds client0 back 300 ms before it runs stands in for
// the late thread: before that start rule the faults were armed 50 ms into
// a run client0 had not yet joined, its registration failed ("a client
// could not run"), and its 0.3 s had passed before it began.
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include "backends/loopback/loopback_runtime.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"

namespace locus {
namespace {

constexpr auto kLate = std::chrono::milliseconds(300);

// The loopback runtime, with the actor named `late` starting kLate after
// its thread does; *began_late is set when it begins.
class LateActorRuntime final : public Runtime {
 public:
  LateActorRuntime(std::unique_ptr<Runtime> inner, std::string late, std::atomic<bool>* began_late)
      : inner_(std::move(inner)), late_(std::move(late)), began_late_(began_late) {}
  std::string_view backend_name() const override { return inner_->backend_name(); }
  StatusOr<NodeId> add_node(const NodeOptions& options) override { return inner_->add_node(options); }
  Status spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) override {
    if (name == late_) {
      fn = [fn = std::move(fn), began_late = began_late_](Env& env) {
        std::this_thread::sleep_for(kLate);
        began_late->store(true);
        fn(env);
      };
    }
    return inner_->spawn(node, std::move(name), kind, std::move(fn));
  }
  Status run() override { return inner_->run(); }
  void abandon() override { inner_->abandon(); }
  Env setup_env(NodeId node) override { return inner_->setup_env(node); }
  Status crash_node(NodeId node) override { return inner_->crash_node(node); }
  Status revive_node(NodeId node) override { return inner_->revive_node(node); }

 private:
  std::unique_ptr<Runtime> inner_;
  std::string late_;
  std::atomic<bool>* began_late_;
};

// `ready_at`: when the servers were set up and loaded.
StatusOr<runner::ScenarioReport> run_with_late_client0(const std::string& faults,
                                                       std::chrono::steady_clock::time_point* ready_at = nullptr) {
  auto sc = designs::parse_scenario(R"(
[platform]
servers = 2
cores_per_server = 1
[index]
type = "pilaf"
[workload]
recordcount = 1000
readproportion = 0.9
updateproportion = 0.1
fieldcount = 1
fieldlength = 32
[run]
clients = 4
duration_s = 0.3
warmup_s = 0.05
)" + faults,
                                    "late-client.toml", {});
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  std::atomic<bool> began_late{false};
  runner::RunOptions options;
  options.on_servers_ready = [ready_at](Runtime&, std::span<const NodeId>) {
    if (ready_at != nullptr) *ready_at = std::chrono::steady_clock::now();
    return Status();
  };
  auto r = runner::run_scenario(
      *sc, designs::registry(),
      [&began_late](const scenario::Scenario& s) -> std::unique_ptr<Runtime> {
        loopback::LoopbackOptions lo;
        lo.seed = s.run.seed;
        return std::make_unique<LateActorRuntime>(loopback::make_loopback_runtime(lo), "client0", &began_late);
      },
      options);
  BOOST_TEST(began_late.load());
  return r;
}

// Every registration after the faults are armed fails: a client that
// connected under them could not run at all.
BOOST_AUTO_TEST_CASE(a_late_client_connects_before_the_faults_are_armed) {
  auto r = run_with_late_client0("[faults]\nregister_failure = 1.0\n");
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->result.stats.total_failed() == 0u);
}

// The late client runs the whole run with the others: it ends 0.3 s after
// client0 joined, 0.6 s after set-up, not 0.3 s after set-up with
// client0's time already over when it began.
BOOST_AUTO_TEST_CASE(a_late_client_gets_the_whole_run) {
  std::chrono::steady_clock::time_point ready_at;
  auto r = run_with_late_client0("", &ready_at);
  const auto took = std::chrono::steady_clock::now() - ready_at;
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->result.stats.total_ops() > 0u);
  BOOST_TEST(std::chrono::duration<double>(took).count() >= 0.6, "the run ended before client0's 0.3 s");
}

}  // namespace
}  // namespace locus
