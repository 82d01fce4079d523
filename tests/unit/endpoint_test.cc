// Endpoint (core/transport/endpoint.h) forgets the completions of requests
// whose waits timed out (issue 16, defect 7): on loopback with every
// operation delayed past the endpoint's timeout, batch after batch of
// READs times out, their completions arrive later, and every wait must
// keep failing with kTimeout, never with the side buffer's overflow; once
// waits are long enough again, a READ completes normally. And a timed-out
// request has the transport reset its connection to that peer.
#include <atomic>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/loopback/loopback_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/support/forwarding_transport.h"

namespace locus {
namespace {

BOOST_AUTO_TEST_SUITE(endpoint)

// A loopback server serving 4 KB to one client, every request served
// `op_latency` late.
struct SlowServer {
  explicit SlowServer(Nanos op_latency) : memory(4096) {
    loopback::LoopbackOptions lo;
    lo.op_latency = op_latency;
    runtime = loopback::make_loopback_runtime(lo);
    server = *runtime->add_node({"server", true});
    client = *runtime->add_node({"client", false});
    server_env = runtime->setup_env(server);
    auto r = server_env.transport->register_memory(memory.data(), memory.size(), kRemoteRead);
    BOOST_REQUIRE(r.is_ok());
    region = *r;
    remote = region.remote();
  }
  ~SlowServer() { (void)server_env.transport->deregister_memory(region); }
  std::unique_ptr<Runtime> runtime;
  NodeId server = kInvalidNode, client = kInvalidNode;
  AlignedBuffer memory;
  Env server_env;
  Region region;
  RemoteRegion remote;
};

BOOST_AUTO_TEST_CASE(completions_of_timed_out_requests_are_dropped_not_parked) {
  constexpr Nanos kOpLatency = 20 * kMillisecond;  // every READ served this late
  constexpr Nanos kShortWait = 2 * kMillisecond;   // well under it: each batch times out
  constexpr size_t kBatch = 64;
  SlowServer w(kOpLatency);
  const RemoteRegion remote = w.remote;
  testing::FailureLog failures;
  std::atomic<int> timeouts{0};
  BOOST_REQUIRE(w.runtime->spawn(w.client, "client", ActorKind::kWorker, [&](Env& env) {
    AlignedBuffer local(64);
    auto reg = env.transport->register_memory(local.data(), local.size(), kLocalOnly);
    if (!reg.is_ok()) return failures.fail("register: " + reg.status().to_string());
    const TransportLimits limits = env.transport->limits();
    // More abandoned completions than the side buffer holds, in all.
    const size_t batches = (limits.max_send_wr + limits.max_recv_wr) / kBatch + 4;
    {
      Endpoint ep(env, kShortWait);
      std::vector<WorkRequest> batch(kBatch);
      // A batch answered within the wait means this thread lost the CPU
      // for longer than the latency between posting and waiting (a loaded
      // machine, wall time): it abandons nothing, so it does not count,
      // but it is no error either (CI saw one).
      size_t answered = 0;
      for (size_t b = 0; static_cast<size_t>(timeouts.load()) < batches; ++b) {
        for (WorkRequest& wr : batch) {
          wr = WorkRequest{};
          wr.wr_id = ep.next_wr_id();
          wr.op = Opcode::kRead;
          wr.remote = remote_at(remote, 0);
          wr.local = {local.data(), 64, reg->lkey};
        }
        Status st = ep.execute(batch);
        if (st.is_ok() && ++answered <= batches) continue;
        if (st.code() != StatusCode::kTimeout) {
          return failures.fail("batch " + std::to_string(b) + ": expected a timeout, got " + st.to_string());
        }
        ++timeouts;
        env.clock->sleep_for(2 * kOpLatency);  // the abandoned completions arrive meanwhile
      }
    }
    // A wait long enough for the delay still gets its own completion.
    Endpoint ep(env, 10 * kOpLatency);
    WorkRequest wr;
    wr.wr_id = ep.next_wr_id();
    wr.op = Opcode::kRead;
    wr.remote = remote_at(remote, 0);
    wr.local = {local.data(), 64, reg->lkey};
    if (Status st = ep.execute(wr); !st.is_ok()) failures.fail("a patient READ: " + st.to_string());
    (void)env.transport->deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(w.runtime->run().is_ok());
  BOOST_TEST(failures.empty(), failures.first());
  BOOST_TEST(timeouts.load() > 0);
}

// A request whose wait times out leaves its connection suspect: on a
// reliable connection whatever was posted behind it is stuck too (a peer
// that died and came back never answers the old queue pair). The endpoint
// asks the transport to reset that peer's connection, and only that one.
class CountingResets : public testing::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  void reset_peer(NodeId peer) override {
    resets.push_back(peer);
    ForwardingTransport::reset_peer(peer);
  }
  std::vector<NodeId> resets;
};

BOOST_AUTO_TEST_CASE(a_timed_out_request_resets_its_peer_only) {
  constexpr Nanos kOpLatency = 20 * kMillisecond;  // later than the first wait below
  SlowServer w(kOpLatency);
  const RemoteRegion remote = w.remote;
  testing::FailureLog failures;
  std::vector<NodeId> resets;
  BOOST_REQUIRE(w.runtime->spawn(w.client, "client", ActorKind::kWorker, [&](Env& env) {
    CountingResets counting(*env.transport);
    Env wrapped = env;
    wrapped.transport = &counting;
    AlignedBuffer local(64);
    auto reg = counting.register_memory(local.data(), local.size(), kLocalOnly);
    if (!reg.is_ok()) return failures.fail("register: " + reg.status().to_string());
    {
      Endpoint ep(wrapped, 2 * kMillisecond);
      WorkRequest wr;
      wr.op = Opcode::kRead;
      wr.remote = remote_at(remote, 0);
      wr.local = {local.data(), 64, reg->lkey};
      // Answered within the wait only if this thread lost the CPU for
      // longer than the latency (a loaded machine): ask again.
      Status st;
      for (int attempt = 0; attempt < 8; ++attempt) {
        wr.wr_id = ep.next_wr_id();
        st = ep.execute(wr);
        if (!st.is_ok()) break;
      }
      if (st.code() != StatusCode::kTimeout) failures.fail("expected a timeout, got " + st.to_string());
      env.clock->sleep_for(2 * kOpLatency);  // its completion arrives, abandoned
      Endpoint patient(wrapped, 10 * kOpLatency);
      wr.wr_id = patient.next_wr_id();
      if (Status st = patient.execute(wr); !st.is_ok()) failures.fail("a patient READ: " + st.to_string());
    }
    resets = counting.resets;
    (void)counting.deregister_memory(*reg);
  }).is_ok());
  BOOST_REQUIRE(w.runtime->run().is_ok());
  BOOST_TEST(failures.empty(), failures.first());
  BOOST_TEST(resets == std::vector<NodeId>{w.server});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus
