// What the SimGrid transport does beyond the conformance suite, where its
// own shortcuts could go wrong: a buffer deregistered while a READ into it
// is in flight is never written (the backend looks buffers up again only
// after a deregistration), a READ whose buffer stays registered still
// lands when some other region goes meanwhile, and a request to no node
// fails cleanly while effects run ahead of the engine's clock; and set-up
// code registering from several OS threads at once (a sharded record
// loader) gets distinct, valid registrations (issue 16, defect 11).
#include <array>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/common/aligned_buffer.h"
#include "core/designs/designs.h"
#include "core/fault/fault_runtime.h"
#include "core/runner/work_profile.h"
#include "core/transport/rc_retry.h"
#include "core/transport/runtime.h"

namespace locus {
namespace {

constexpr uint32_t kReadBytes = 1024;  // more than a cache line: the READ copies in two halves

WorkRequest read_into(const Region& local, const Region& remote, uint64_t wr_id) {
  WorkRequest wr;
  wr.wr_id = wr_id;
  wr.op = Opcode::kRead;
  const RemoteRegion r = remote.remote();
  wr.remote.node = r.node;
  wr.remote.region = r.region;
  wr.remote.rkey = r.rkey;
  wr.remote.base_addr = r.base_addr;
  wr.local = {local.base, kReadBytes, local.lkey};
  return wr;
}

// One server serving 4 KB of patterned memory to `clients` client nodes,
// each on a host of its own.
struct OneServer {
  explicit OneServer(uint32_t clients) : served(4096) {
    scenario::PlatformSpec p;
    p.servers = 1;
    p.client_hosts = clients;
    runtime = simgrid_backend::make_simgrid_runtime(p, simgrid_backend::SimOptions{});
    auto server = runtime->add_node({"server0", true});
    BOOST_REQUIRE(server.is_ok());
    for (uint32_t c = 0; c < clients; ++c) {
      auto client = runtime->add_node({"client" + std::to_string(c), false});
      BOOST_REQUIRE(client.is_ok());
      client_nodes.push_back(*client);
    }
    for (size_t i = 0; i < served.size(); ++i) served.data()[i] = static_cast<std::byte>(i * 7 + 1);
    auto r = runtime->setup_env(*server).transport->register_memory(served.data(), served.size(), kRemoteRead);
    BOOST_REQUIRE(r.is_ok());
    remote = *r;
  }
  std::unique_ptr<Runtime> runtime;
  std::vector<NodeId> client_nodes;
  AlignedBuffer served;
  Region remote;
};

// The runner gives a simulated server an RPC worker per core and an
// OS-thread backend one (scenario_run.cc asks Runtime::simulated()): the
// fault and profiling decorators must say what they wrap.
BOOST_AUTO_TEST_CASE(decorated_runtimes_say_whether_time_is_simulated) {
  auto sim = simgrid_backend::make_simgrid_runtime(scenario::PlatformSpec{}, simgrid_backend::SimOptions{});
  BOOST_TEST(sim->simulated());
  runner::WorkProfile profile;
  runner::ProfilingRuntime profiled(std::make_unique<fault::FaultRuntime>(std::move(sim), fault::FaultOptions{}),
                                    &profile);
  BOOST_TEST(profiled.simulated());
}

BOOST_AUTO_TEST_CASE(read_into_a_buffer_deregistered_in_flight_is_flushed) {
  OneServer w(1);
  const Region& remote = w.remote;
  AlignedBuffer dropped(kReadBytes), kept(kReadBytes), other(64);
  std::array<Completion, 2> seen{};
  Status failure;
  BOOST_REQUIRE(w.runtime
                    ->spawn(w.client_nodes[0], "reader", ActorKind::kWorker,
                            [&](Env& env) {
                              Transport& t = *env.transport;
                              auto a = t.register_memory(dropped.data(), kReadBytes, kLocalOnly);
                              auto b = t.register_memory(kept.data(), kReadBytes, kLocalOnly);
                              auto c = t.register_memory(other.data(), other.size(), kLocalOnly);
                              if (!a.is_ok() || !b.is_ok() || !c.is_ok()) {
                                failure = internal_error("registration failed");
                                return;
                              }
                              // Posted, then its buffer deregistered before the NIC serves it.
                              const WorkRequest first = read_into(*a, remote, 1);
                              Status st = t.post(std::span<const WorkRequest>(&first, 1));
                              if (st.is_ok()) st = t.deregister_memory(*a);
                              // Posted, then another region deregistered: this one still lands.
                              const WorkRequest second = read_into(*b, remote, 2);
                              if (st.is_ok()) st = t.post(std::span<const WorkRequest>(&second, 1));
                              if (st.is_ok()) st = t.deregister_memory(*c);
                              for (size_t got = 0; st.is_ok() && got < seen.size();) {
                                const size_t n =
                                    t.wait(std::span<Completion>(&seen[got], seen.size() - got), 10 * kMillisecond);
                                if (n == 0) st = internal_error("no completion within 10 ms simulated");
                                got += n;
                              }
                              failure = st;
                            })
                    .is_ok());
  BOOST_REQUIRE(w.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(failure.is_ok(), failure.to_string());

  BOOST_TEST(seen[0].wr_id == 1u);
  BOOST_TEST(static_cast<int>(seen[0].status) == static_cast<int>(WcStatus::kFlushed));
  const std::vector<std::byte> zeros(kReadBytes);
  BOOST_TEST(std::memcmp(dropped.data(), zeros.data(), kReadBytes) == 0);
  BOOST_TEST(seen[1].wr_id == 2u);
  BOOST_TEST(static_cast<int>(seen[1].status) == static_cast<int>(WcStatus::kSuccess));
  BOOST_TEST(std::memcmp(kept.data(), w.served.data(), kReadBytes) == 0);
}

// On a platform of more than 64 hosts, two clients' hosts are routed to
// each other too: a READ from one client to another too large for one
// packet (so carried by SimGrid flows) arrives. SimGrid's full zone held
// routes from servers only on such platforms, and stopped on this flow.
// Connections come and go with the requests in flight on them: reads
// alternating between two peers all land, in order.
BOOST_AUTO_TEST_CASE(large_reads_between_clients_of_a_large_platform) {
  OneServer w(70);
  constexpr uint32_t kBig = 8192;  // over PlatformSpec::packet_bytes
  AlignedBuffer exposed(kBig), into(kBig);
  for (size_t i = 0; i < kBig; ++i) exposed.data()[i] = static_cast<std::byte>(i * 13 + 5);
  auto exposed_region =
      w.runtime->setup_env(w.client_nodes[0]).transport->register_memory(exposed.data(), kBig, kRemoteRead);
  BOOST_REQUIRE(exposed_region.is_ok());
  const Region peer = *exposed_region;
  int ok = 0;
  Status failure;
  BOOST_REQUIRE(w.runtime
                    ->spawn(w.client_nodes[69], "reader", ActorKind::kWorker,
                            [&](Env& env) {
                              Transport& t = *env.transport;
                              auto local = t.register_memory(into.data(), kBig, kLocalOnly);
                              if (!local.is_ok()) {
                                failure = local.status();
                                return;
                              }
                              for (int i = 0; i < 6; ++i) {
                                WorkRequest wr =
                                    read_into(*local, i % 2 == 0 ? peer : w.remote, static_cast<uint64_t>(i));
                                if (i % 2 == 0) wr.local.length = kBig;
                                Status st = t.post(std::span<const WorkRequest>(&wr, 1));
                                Completion c;
                                if (st.is_ok() && t.wait(std::span<Completion>(&c, 1), 10 * kMillisecond) != 1) {
                                  st = internal_error("no completion within 10 ms simulated");
                                }
                                if (!st.is_ok()) {
                                  failure = st;
                                  return;
                                }
                                const std::byte* want = i % 2 == 0 ? exposed.data() : w.served.data();
                                if (c.status == WcStatus::kSuccess && c.wr_id == static_cast<uint64_t>(i) &&
                                    std::memcmp(into.data(), want, wr.local.length) == 0) {
                                  ++ok;
                                }
                              }
                            })
                    .is_ok());
  BOOST_REQUIRE(w.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(failure.is_ok(), failure.to_string());
  BOOST_TEST(ok == 6);
}

// A READ to a node that does not exist fails at once (kRetryExceeded), also
// when it is due just after another client was woken, where effects may
// run ahead by the lookahead: the poster owes CPU time, so its request is
// due after the engine's time, while the other client's READs complete
// every few microseconds.
BOOST_AUTO_TEST_CASE(read_to_no_such_node_fails_while_others_run) {
  OneServer w(2);
  const Region& remote = w.remote;
  AlignedBuffer busy_buf(kReadBytes), lost_buf(kReadBytes);
  constexpr int kAttempts = 200;
  int busy_ok = 0, lost_failed = 0;
  Status busy_error, lost_error;
  auto read_loop = [&](AlignedBuffer& buf, bool to_nowhere, int* count, Status* error) {
    return [&, to_nowhere, count, error](Env& env) {
      Transport& t = *env.transport;
      auto local = t.register_memory(buf.data(), kReadBytes, kLocalOnly);
      if (!local.is_ok()) {
        *error = local.status();
        return;
      }
      for (int i = 0; i < kAttempts; ++i) {
        WorkRequest wr = read_into(*local, remote, static_cast<uint64_t>(i));
        if (to_nowhere) {
          wr.remote.node = 9999;
          env.cpu->charge(static_cast<Nanos>(300 + 37 * (i % 50)));  // owed: due after the engine's time
        }
        Status st = t.post(std::span<const WorkRequest>(&wr, 1));
        Completion c;
        if (st.is_ok() && t.wait(std::span<Completion>(&c, 1), 10 * kMillisecond) != 1) {
          st = internal_error("no completion within 10 ms simulated");
        }
        if (!st.is_ok()) {
          *error = st;
          return;
        }
        const WcStatus want = to_nowhere ? WcStatus::kRetryExceeded : WcStatus::kSuccess;
        if (c.status == want) ++*count;
      }
    };
  };
  BOOST_REQUIRE(
      w.runtime->spawn(w.client_nodes[0], "busy", ActorKind::kWorker, read_loop(busy_buf, false, &busy_ok, &busy_error))
          .is_ok());
  BOOST_REQUIRE(
      w.runtime
          ->spawn(w.client_nodes[1], "lost", ActorKind::kWorker, read_loop(lost_buf, true, &lost_failed, &lost_error))
          .is_ok());
  BOOST_REQUIRE(w.runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(busy_error.is_ok(), busy_error.to_string());
  BOOST_REQUIRE_MESSAGE(lost_error.is_ok(), lost_error.to_string());
  BOOST_TEST(busy_ok == kAttempts);
  BOOST_TEST(lost_failed == kAttempts);
}

// A READ to a crashed node fails as a real queue pair's does: with
// kRetryExceeded once its transport retries run out (RcRetry's defaults,
// as the verbs backend gives its queue pairs), not at once. Failing at
// once let a simulated client fail millions of calls a second against a
// dead server. Both datapaths: small requests as packets (the event
// path) and, with packet_bytes 0, flows carried by executor actors.
BOOST_AUTO_TEST_CASE(read_to_a_crashed_node_fails_when_the_transport_retries_run_out) {
  const Nanos expected = RcRetry{}.retry_exceeded_after();
  BOOST_TEST(expected == 8 * 4096 * (Nanos{1} << 14));  // 8 tries of 67.1 ms
  for (uint32_t packet_bytes : {4096u, 0u}) {
    BOOST_TEST_CONTEXT("packet_bytes " << packet_bytes) {
      scenario::PlatformSpec p;
      p.servers = 1;
      p.client_hosts = 1;
      p.packet_bytes = packet_bytes;
      auto runtime = simgrid_backend::make_simgrid_runtime(p, simgrid_backend::SimOptions{});
      auto server = runtime->add_node({"server0", true});
      auto client = runtime->add_node({"client0", false});
      BOOST_REQUIRE(server.is_ok() && client.is_ok());
      AlignedBuffer served(4096), buf(kReadBytes);
      auto remote = runtime->setup_env(*server).transport->register_memory(served.data(), served.size(), kRemoteRead);
      BOOST_REQUIRE(remote.is_ok());
      BOOST_REQUIRE(runtime->crash_node(*server).is_ok());
      Status error;
      Completion c;
      Nanos took = 0;
      BOOST_REQUIRE(runtime
                        ->spawn(*client, "reader", ActorKind::kWorker,
                                [&](Env& env) {
                                  Transport& t = *env.transport;
                                  auto local = t.register_memory(buf.data(), kReadBytes, kLocalOnly);
                                  if (!local.is_ok()) {
                                    error = local.status();
                                    return;
                                  }
                                  const WorkRequest wr = read_into(*local, *remote, 1);
                                  const Nanos start = env.clock->now();
                                  error = t.post(std::span<const WorkRequest>(&wr, 1));
                                  if (error.is_ok() && t.wait(std::span<Completion>(&c, 1), 10 * kSecond) != 1) {
                                    error = internal_error("no completion within 10 s simulated");
                                  }
                                  took = env.clock->now() - start;
                                })
                        .is_ok());
      BOOST_REQUIRE(runtime->run().is_ok());
      BOOST_REQUIRE_MESSAGE(error.is_ok(), error.to_string());
      BOOST_TEST(static_cast<int>(c.status) == static_cast<int>(WcStatus::kRetryExceeded));
      BOOST_TEST(took >= expected);
      BOOST_TEST(took <= expected + 100 * kMicrosecond);
    }
  }
}

}  // namespace

// Pilaf's loader fills the servers' shards on every hardware thread, and a
// put that grows a store registers memory (and deregisters the old): on
// SimGrid those calls went to one region table from several OS threads
// with no lock, so registrations were lost or handed the same id. Four
// threads, each on its own server node, register and deregister at once:
// every id must be distinct and every live registration must deregister.
BOOST_AUTO_TEST_CASE(setup_threads_register_memory_at_once) {
  scenario::PlatformSpec p;
  p.servers = 4;
  auto runtime = simgrid_backend::make_simgrid_runtime(p, simgrid_backend::SimOptions{});
  constexpr int kThreads = 4, kRegions = 20000;
  std::vector<Transport*> transports;
  for (int t = 0; t < kThreads; ++t) {
    auto node = runtime->add_node({"server" + std::to_string(t), true});
    BOOST_REQUIRE(node.is_ok());
    transports.push_back(runtime->setup_env(*node).transport);
  }
  AlignedBuffer memory(4096);
  std::vector<std::vector<Region>> kept(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRegions; ++i) {
        auto r = transports[t]->register_memory(memory.data(), 4096, kRemoteRead);
        if (!r.is_ok()) {
          errors[t] = r.status().to_string();
          return;
        }
        if (i % 2 == 0) {
          kept[t].push_back(*r);
        } else if (Status st = transports[t]->deregister_memory(*r); !st.is_ok()) {
          errors[t] = st.to_string();
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& e : errors) BOOST_REQUIRE_MESSAGE(e.empty(), e);
  std::set<RegionId> ids;
  for (int t = 0; t < kThreads; ++t) {
    for (const Region& r : kept[t]) {
      BOOST_REQUIRE(ids.insert(r.id).second);
      BOOST_REQUIRE_MESSAGE(transports[t]->deregister_memory(r).is_ok(), "region " << r.id << " lost");
    }
  }
  BOOST_TEST(ids.size() == size_t{kThreads} * kRegions / 2);
}

}  // namespace locus
