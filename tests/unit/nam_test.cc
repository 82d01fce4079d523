// The NAM index on loopback (core/index/nam): coarse-grained (RPC to a tree
// per memory server, range and hash partitioning), fine-grained (one
// global tree over one-sided RDMA) and hybrid (inner levels by RPC, leaves
// one-sided, both partitionings) against std::multimap with pages small
// enough to split at every level; concurrent clients on colliding keys
// whose histories the linearizability checker must accept; and a lock
// holder stalled past its lease while another client inserts into the
// same leaf (the lock is broken, the stale holder's install refused).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/check/history.h"
#include "core/check/linearizability.h"
#include "core/check/models.h"
#include "core/designs/designs.h"
#include "core/index/nam/client.h"
#include "core/index/nam/fine_client.h"
#include "core/index/nam/hybrid_client.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/server.h"
#include "tests/support/nam_local.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"
#include "tests/support/forwarding_transport.h"
#include "tests/support/rpc_server_node.h"

namespace locus {
namespace {

using nam::NamClient;
using nam::NamConfig;
using nam::Pair;

NamConfig small(nam::Distribution d, nam::Partitioning p = nam::Partitioning::kRange, uint32_t page = 128) {
  NamConfig c;
  c.distribution = d;
  c.partitioning = p;
  c.page_bytes = page;
  c.region_bytes = 16ull << 20;
  return c;
}

workload::WorkloadSpec ordered_keys(uint64_t records) {
  workload::WorkloadSpec w;
  w.recordcount = records;
  w.insertorder = workload::InsertOrder::kOrdered;
  return w;
}

// Memory servers on a loopback runtime, each serving its RPCs from a daemon
// actor, and client actors handed a connected NamClient.
struct NamCluster {
  std::unique_ptr<Runtime> runtime;
  NamConfig config;
  std::vector<NodeId> servers;
  std::vector<std::unique_ptr<rpc::RpcServer>> rpcs;
  std::vector<std::unique_ptr<nam::MemoryServer>> memory;
  std::unique_ptr<nam::LocalAccess> global;  // fine-grained and hybrid loaders' access
  std::vector<std::unique_ptr<nam::BlinkTree>> loaders;
  nam::Partitioner partitioner;
  testing::FailureLog failures;

  NamCluster(const NamConfig& c, uint32_t count, uint64_t key_span)
      : config(c), partitioner(c.partitioning, count, ordered_keys(key_span)) {
    runtime = loopback::make_loopback_runtime({});
    for (uint32_t i = 0; i < count; ++i) {
      testing::RpcServerNode node = testing::add_rpc_server_node(*runtime, "server" + std::to_string(i));
      servers.push_back(node.id);
      auto m = nam::MemoryServer::create(node.env, i, config);
      BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
      BOOST_REQUIRE((*m)->attach(*node.rpc, 4096).is_ok());
      rpcs.push_back(std::move(node.rpc));
      memory.push_back(std::move(*m));
    }
    if (config.distribution == nam::Distribution::kFine) {
      std::vector<nam::Arena*> arenas;
      for (auto& m : memory) arenas.push_back(&m->arena());
      global = std::make_unique<nam::LocalAccess>(arenas, *runtime->setup_env(servers[0]).clock);
      BOOST_REQUIRE(nam::BlinkTree::create_empty(*global).is_ok());
      loaders.push_back(std::make_unique<nam::BlinkTree>(*global));
    } else if (config.distribution == nam::Distribution::kHybrid) {
      std::vector<nam::Arena*> arenas;
      for (auto& m : memory) arenas.push_back(&m->arena());
      global = std::make_unique<nam::LocalAccess>(arenas, *runtime->setup_env(servers[0]).clock);
      for (auto& m : memory) loaders.push_back(std::make_unique<nam::BlinkTree>(*global, m.get()));
    } else {
      for (auto& m : memory) loaders.push_back(std::make_unique<nam::BlinkTree>(m->local_access()));
    }
  }

  void load(Pair x) {
    const size_t t = config.distribution == nam::Distribution::kFine ? 0 : partitioner.server_of(x.key);
    BOOST_REQUIRE(loaders[t]->insert(x).is_ok());
  }

  using Body = std::function<void(NamClient&, Env&, nam::FineClient*)>;
  // `wrap`, if set, gives the transport the client uses in place of its node's.
  using Wrap = std::function<Transport*(Env&)>;
  void add_client(const std::string& name, Body body, Wrap wrap = nullptr) {
    auto node = runtime->add_node({name, false});
    BOOST_REQUIRE(node.is_ok());
    BOOST_REQUIRE(runtime
                      ->spawn(*node, name, ActorKind::kWorker,
                              [this, name, body, wrap](Env& node_env) {
                                Env env = node_env;
                                if (wrap) env.transport = wrap(node_env);
                                Endpoint ep(env);
                                auto rpc = rpc::RpcClient::create(ep);
                                if (!rpc.is_ok()) return failures.fail(name + ": " + rpc.status().to_string());
                                if (config.distribution == nam::Distribution::kFine) {
                                  auto c = nam::FineClient::connect(ep, **rpc, servers, config);
                                  if (!c.is_ok()) return failures.fail(name + ": " + c.status().to_string());
                                  body(**c, env, c->get());
                                } else if (config.distribution == nam::Distribution::kHybrid) {
                                  auto c = nam::HybridClient::connect(ep, **rpc, **rpc, servers, config, partitioner);
                                  if (!c.is_ok()) return failures.fail(name + ": " + c.status().to_string());
                                  body(**c, env, nullptr);
                                } else {
                                  nam::CoarseClient c(**rpc, servers, partitioner);
                                  body(c, env, nullptr);
                                }
                              })
                      .is_ok());
  }

  void run() {
    Status s = runtime->run();
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());
  }
};

// One client, random operations against std::multimap; loaded pairs first.
void differential(const NamConfig& config, uint32_t servers) {
  constexpr uint64_t kKeys = 400;
  NamCluster cluster(config, servers, kKeys);
  std::multimap<uint64_t, uint64_t> ref;
  Random load_rng(7);
  for (uint64_t i = 0; i < 300; ++i) {
    const Pair x{load_rng.uniform(kKeys), load_rng.uniform(1u << 20)};
    cluster.load(x);
    ref.emplace(x.key, x.payload);
  }
  cluster.add_client("client", [&](NamClient& c, Env& env, nam::FineClient*) {
    Random& rng = *env.random;
    auto fail = [&](const std::string& what) { cluster.failures.fail(what); };
    for (int step = 0; step < 4000 && cluster.failures.empty(); ++step) {
      const uint64_t key = rng.uniform(kKeys);
      const uint64_t payload = rng.uniform(1u << 20);
      const uint64_t dice = rng.uniform(100);
      if (dice < 40) {
        if (!c.insert({key, payload}).is_ok()) return fail("insert failed");
        ref.emplace(key, payload);
      } else if (dice < 60) {
        // Half of the deletes name a pair that is there.
        Pair x{key, payload};
        auto it = ref.lower_bound(key);
        if (rng.bernoulli(0.5) && it != ref.end()) x = {it->first, it->second};
        auto removed = c.remove(x);
        bool had = false;
        for (auto [a, b] = ref.equal_range(x.key); a != b; ++a) {
          if (a->second == x.payload) {
            ref.erase(a);
            had = true;
            break;
          }
        }
        if (!removed.is_ok() || *removed != had) return fail("remove at step " + std::to_string(step));
      } else if (dice < 85) {
        std::vector<uint64_t> got, want;
        if (!c.lookup(key, &got).is_ok()) return fail("lookup failed");
        for (auto [a, b] = ref.equal_range(key); a != b; ++a) want.push_back(a->second);
        std::sort(want.begin(), want.end());
        if (got != want) return fail("lookup of " + std::to_string(key) + " at step " + std::to_string(step));
      } else {
        const uint64_t to = key + rng.uniform(kKeys / 4);
        const auto limit = static_cast<uint32_t>(rng.uniform(300));
        std::vector<Pair> got, want;
        if (!c.range({key, 0}, to, limit, &got).is_ok()) return fail("range failed");
        for (auto a = ref.lower_bound(key); a != ref.end() && a->first <= to; ++a)
          want.push_back({a->first, a->second});
        std::sort(want.begin(), want.end());
        if (limit != 0 && want.size() > limit) want.resize(limit);
        if (got != want) return fail("range from " + std::to_string(key) + " at step " + std::to_string(step));
      }
    }
  });
  cluster.run();
  uint64_t splits = 0;
  for (auto& t : cluster.loaders) splits += t->stats().root_splits;
  for (auto& m : cluster.memory) splits += m->tree_stats().root_splits;
  BOOST_TEST(splits >= 2u);  // the trees grew over several levels
  if (config.distribution == nam::Distribution::kHybrid) {
    // Every memory server's inner levels grew past the first root, and
    // the leaves lie on every server.
    for (auto& m : cluster.memory) BOOST_TEST(m->tree_stats().root_splits + m->tree_stats().splits >= 1u);
    for (auto& m : cluster.memory) BOOST_TEST(m->arena().used_bytes() > 4u * config.page_bytes);
  }
}

// Several clients insert, delete and look up colliding keys (pages small
// enough that their inserts split leaves and inner nodes); the history,
// after the loaded pairs, must be linearizable as a multimap. Payloads are
// unique per insert, deletes name pairs the client inserted or random
// ones. A key's live pairs stay few, so each lookup reads one leaf (a
// lookup spanning leaves is not atomic, as in the paper).
void concurrent(const NamConfig& config) {
  constexpr uint32_t kClients = 4;
  constexpr uint64_t kHot = 12;
  NamCluster cluster(config, 2, 200);
  check::History loaded;
  for (uint64_t i = 0; i < 120; ++i) {
    const Pair x{1000 + i, i};  // cold keys: the tree has inner levels before the run
    cluster.load(x);
  }
  check::HistoryRecorder recorder;
  std::atomic<uint64_t> failed{0};
  for (uint32_t k = 0; k < kClients; ++k) {
    cluster.add_client("client" + std::to_string(k), [&, k](NamClient& c, Env& env, nam::FineClient*) {
      check::ClientHistory& h = recorder.client(k);
      Random& rng = *env.random;
      std::vector<Pair> mine;
      for (uint64_t op = 0; op < 600; ++op) {
        const uint64_t key = rng.uniform(kHot);
        const uint64_t dice = rng.uniform(10);
        check::Operation o;
        o.key = std::to_string(key);
        if (dice < 4) {
          o.kind = check::OpKind::kInsert;
          o.value = (uint64_t{k} << 32) | op;
          const size_t t = h.invoke(o, env.clock->now());
          Status s = c.insert({key, o.value});
          if (s.is_ok()) {
            h.respond(t, check::Outcome::kOk, env.clock->now());
            mine.push_back({key, o.value});
          } else {
            ++failed;
          }
        } else if (dice < 7) {
          Pair x{key, rng.uniform(4)};
          if (!mine.empty() && rng.bernoulli(0.8)) {
            const size_t i = rng.uniform(mine.size());
            x = mine[i];
            mine.erase(mine.begin() + static_cast<long>(i));
          }
          o.kind = check::OpKind::kDelete;
          o.key = std::to_string(x.key);
          o.value = x.payload;
          const size_t t = h.invoke(o, env.clock->now());
          auto removed = c.remove(x);
          if (removed.is_ok()) {
            h.respond(t, *removed ? check::Outcome::kOk : check::Outcome::kNotFound, env.clock->now());
          } else {
            ++failed;
          }
        } else {
          o.kind = check::OpKind::kLookup;
          const size_t t = h.invoke(o, env.clock->now());
          std::vector<uint64_t> got;
          if (c.lookup(key, &got).is_ok()) {
            h.op(t).result_ids = got;
            h.respond(t, got.empty() ? check::Outcome::kNotFound : check::Outcome::kOk, env.clock->now());
          } else {
            h.discard(t);
            ++failed;
          }
        }
      }
    });
  }
  cluster.run();
  check::History history = recorder.merge();
  check::CheckOptions options;
  options.time_budget_ns = 0;
  const check::CheckResult verdict = check::check_history(check::MultimapModel(), history, options);
  BOOST_TEST(verdict.linearizable(), verdict.report(history));
  BOOST_TEST(failed.load() == 0u);
  BOOST_TEST(history.size() == kClients * 600u);
}

// Garbage collection while clients run (gc.cc): two writers delete most
// loaded pairs (and insert a few), a reader looks up keys and scans short
// ranges (atomic ranges), and a collector runs passes back to back: a
// compute-server client with the same one-sided locks (fine-grained, and
// hybrid, whose leaf merges the memory server joins by nam.join) or the
// memory server itself (coarse-grained; coarse and hybrid on one server so
// that a range is one tree's). Each fine-grained or hybrid client has its
// own reclaimer, as clients on different compute servers would: the epoch
// and the slots they share are on memory server 0 (remote_epochs.h),
// announced every 8 operations.
// The history, scans included, must be linearizable; the collector must
// have merged nodes and freed their pages.
void gc_during_clients(NamConfig config) {
  constexpr uint64_t kKeys = 40;
  constexpr uint32_t kOps = 600;
  config.atomic_ranges = true;
  // No lease breaks: a lock holder this thread-per-client test leaves
  // without the CPU for a 50 ms lease (a loaded 2-core machine) is fenced
  // and its install fails with its outcome unknown (docs/nam.md, "Leased
  // locks"), which this test would count as a failed call. Lease breaking
  // has tests of its own (stalled_lock_holder_loses_its_lease,
  // stalled_install_write_is_fenced_off) and the fault campaigns.
  config.lease_ms = 5000;
  config.gc_epoch_every_ops = 8;
  // Nor slot breaks: a writer waiting out two passes on a loaded machine
  // is not a dead client (slot breaking has tests of its own below).
  config.gc_epoch_lease_ms = 60000;
  const bool fine = config.distribution == nam::Distribution::kFine;
  NamCluster cluster(config, fine ? 2 : 1, 200);
  check::HistoryRecorder recorder;
  auto name = [](uint64_t key) { return fmt::format("{:04}", key); };
  {
    check::ClientHistory& h = recorder.client(99);
    for (uint64_t i = 0; i < 480; ++i) {
      const Pair x{i % kKeys, 1000 + i};
      cluster.load(x);
      check::Operation o;
      o.kind = check::OpKind::kInsert;
      o.key = name(x.key);
      o.value = x.payload;
      h.respond(h.invoke(o, 2 * i), check::Outcome::kOk, 2 * i + 1);  // one after another, before the run
    }
  }
  std::atomic<uint32_t> writers_left{2}, clients_left{3};
  std::atomic<uint64_t> passes{0}, failed{0};
  testing::FailureLog first_failure;  // what the first failed call said
  auto fail = [&](const std::string& what, const Status& st) {
    ++failed;
    first_failure.fail(what + ": " + st.to_string());
  };
  nam::TreeStats collected;
  const bool coarse = config.distribution == nam::Distribution::kCoarse;
  cluster.add_client("collector", [&](NamClient& c, Env& env, nam::FineClient*) {
    // Hybrid: the compute server's pass over the leaves, then the memory
    // server's over its inner levels.
    const bool hybrid = config.distribution == nam::Distribution::kHybrid;
    auto pass = [&] {
      if (coarse) return cluster.memory[0]->collect_garbage();
      Status s = c.collect_garbage();
      return s.is_ok() && hybrid ? cluster.memory[0]->collect_garbage() : s;
    };
    while (writers_left.load() > 0) {
      if (Status s = pass(); !s.is_ok()) fail("collect_garbage", s);
      passes.fetch_add(1);
    }
    // Once the clients closed (gave their epoch slots back), one more pass
    // frees what their last announcements held back.
    while (clients_left.load() > 0) env.clock->sleep_for(100 * kMicrosecond);
    if (Status s = pass(); !s.is_ok()) fail("collect_garbage", s);
    collected = coarse ? cluster.memory[0]->gc_stats() : c.tree_stats();
  });
  for (uint32_t c = 0; c < 3; ++c) {
    cluster.add_client("client" + std::to_string(c), [&, c](NamClient& client, Env& env, nam::FineClient*) {
      check::ClientHistory& h = recorder.client(c);
      Random& rng = *env.random;
      const bool writer = c < 2;
      auto now = [&] { return env.clock->now() + 2000; };
      for (uint32_t i = 0; i < kOps; ++i) {
        if (writer && i % 50 == 49) {  // a whole pass between every 50 operations
          const uint64_t seen = passes.load();
          while (passes.load() < seen + 2) env.clock->sleep_for(10 * kMicrosecond);
        }
        const uint64_t key = rng.uniform(kKeys);
        check::Operation o;
        o.key = name(key);
        if (writer && rng.uniform(100) < 20) {
          o.kind = check::OpKind::kInsert;
          o.value = (uint64_t{c} << 32) | i;
          const size_t at = h.invoke(o, now());
          if (Status st = client.insert({key, o.value}); !st.is_ok()) fail("insert", st);
          h.respond(at, check::Outcome::kOk, now());
        } else if (writer) {
          o.kind = check::OpKind::kDelete;
          o.value = 1000 + key + kKeys * rng.uniform(480 / kKeys);  // a loaded pair of the key
          const size_t at = h.invoke(o, now());
          auto removed = client.remove({key, o.value});
          if (!removed.is_ok()) fail("remove", removed.status());
          h.respond(at, removed.is_ok() && *removed ? check::Outcome::kOk : check::Outcome::kNotFound, now());
        } else if (rng.bernoulli(0.4)) {
          o.kind = check::OpKind::kLookup;
          const size_t at = h.invoke(o, now());
          std::vector<uint64_t> got;
          if (Status st = client.lookup(key, &got); !st.is_ok()) fail("lookup", st);
          h.op(at).result_ids = got;
          h.respond(at, got.empty() ? check::Outcome::kNotFound : check::Outcome::kOk, now());
        } else {
          o.kind = check::OpKind::kScan;  // keys [key, key + 3)
          o.bounded = true;
          o.end_key = name(key + 3);
          const size_t at = h.invoke(o, now());
          std::vector<Pair> got;
          if (Status st = client.range({key, 0}, key + 2, 0, &got); !st.is_ok()) fail("range", st);
          for (const Pair& x : got) {
            h.op(at).result_keys.push_back(name(x.key));
            h.op(at).result_ids.push_back(x.payload);
          }
          h.respond(at, check::Outcome::kOk, now());
        }
      }
      if (writer) --writers_left;
      if (Status st = client.close(); !st.is_ok()) fail("close", st);
      --clients_left;
    });
  }
  cluster.run();
  BOOST_TEST(failed.load() == 0u, failed.load() << " calls failed, the first: " << first_failure.first());
  BOOST_TEST_MESSAGE(passes.load() << " passes: merges " << collected.merges << ", collected "
                                   << collected.entries_collected << ", freed " << collected.pages_freed);
  // 2 to 9 merges in 20 runs of each (2026-11-29); every merged page is
  // freed by the last pass, when no client holds a slot.
  BOOST_TEST(collected.merges > 0u);
  BOOST_TEST(collected.entries_collected > 50u);
  BOOST_TEST(collected.pages_freed == collected.merges);
  check::History history = recorder.merge();
  check::CheckOptions options;
  options.time_budget_ns = 0;
  const check::CheckResult verdict = check::check_history(check::MultimapModel(), history, options);
  BOOST_TEST(verdict.linearizable(), verdict.report(history));
}

// A lock holder that stalls past its lease (a compute server that died or
// was descheduled holding a leaf's lock) while another client inserts into
// the same leaf: the other client breaks the lock after one lease, well
// before the holder wakes; the holder's install is refused (its lease is
// more than half gone), it restarts, and both keys are in the index.
class StallingAccess final : public nam::NodeAccess {
 public:
  StallingAccess(nam::NodeAccess& inner, Env& env, Nanos stall_ns) : inner_(inner), env_(env), stall_ns_(stall_ns) {}
  uint32_t page_bytes() const override { return inner_.page_bytes(); }
  Status read(nam::RemotePtr p, nam::Node& out) override { return inner_.read(p, out); }
  Status lock(nam::RemotePtr p, uint64_t version) override {
    Status s = inner_.lock(p, version);
    if (s.is_ok() && !stalled_) {
      stalled_ = true;
      locked.store(true);
      env_.clock->sleep_for(stall_ns_);
      woke_ns.store(env_.clock->now());
    }
    return s;
  }
  Status install(nam::RemotePtr p, const nam::Node& n) override { return inner_.install(p, n); }
  Status create(nam::RemotePtr p, const nam::Node& n) override { return inner_.create(p, n); }
  Status unlock(nam::RemotePtr p, uint64_t held) override { return inner_.unlock(p, held); }
  StatusOr<nam::RemotePtr> allocate(uint8_t level) override { return inner_.allocate(level); }
  StatusOr<nam::RemotePtr> root() override { return inner_.root(); }
  StatusOr<bool> swap_root(nam::RemotePtr o, nam::RemotePtr n) override { return inner_.swap_root(o, n); }
  void forget_root() override { inner_.forget_root(); }

  std::atomic<bool> locked{false};
  std::atomic<Nanos> woke_ns{0};

 private:
  nam::NodeAccess& inner_;
  Env& env_;
  Nanos stall_ns_;
  bool stalled_ = false;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_index)

// [index] keys: bad values are named.
BOOST_AUTO_TEST_CASE(index_keys_are_checked) {
  const std::string base = "[platform]\nservers = 2\n[index]\ntype = \"nam\"\n[run]\nclients = 1\n";
  for (const char* d : {"index.distribution=fine", "index.distribution=hybrid"}) {
    auto ok = designs::parse_scenario(base, "nam.toml", {d, "index.page_bytes=256"});
    BOOST_REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  }
  struct Bad {
    std::string set, says;
  };
  for (const Bad& b : {Bad{"index.distribution=medium", "not one of coarse, fine, hybrid"},
                       Bad{"index.partitioning=list", "index.partitioning"},
                       Bad{"index.page_bytes=1001", "multiple of 8"}, Bad{"index.page_bytes=64", "index.page_bytes"},
                       Bad{"index.key_skew=0.5,0.4", "sum to"}, Bad{"index.key_skew=0.5,x", "not a share"},
                       Bad{"index.rpc_transport=carrier_pigeon", "index.rpc_transport"},
                       Bad{"index.mailbox_mode=polling", "applies to index.rpc_transport = \"mailbox\" only"},
                       Bad{"index.mailbox_workers=4", "applies to index.rpc_transport = \"mailbox\" only"}}) {
    auto s = designs::parse_scenario(base, "nam.toml", {b.set});
    BOOST_REQUIRE(!s.is_ok());
    BOOST_TEST(s.status().message().find(b.says) != std::string::npos, s.status().message());
  }
  for (const char* set : {"index.mailbox_mode=spin", "index.mailbox_workers=-1"}) {
    auto bad = designs::parse_scenario(base, "nam.toml", {"index.rpc_transport=mailbox", set});
    BOOST_REQUIRE(!bad.is_ok());
    BOOST_TEST(bad.status().message().find("index.mailbox_") != std::string::npos, bad.status().message());
  }
  auto mailbox = designs::parse_scenario(base, "nam.toml",
                                         {"index.rpc_transport=mailbox", "index.mailbox_workers=2",
                                          "index.mailbox_mode=polling"});
  BOOST_TEST(mailbox.is_ok(), mailbox.status().to_string());
  // Mailboxes carry the coarse-grained and hybrid RPCs; the fine-grained
  // design sends none.
  auto fine_mailbox = designs::parse_scenario(base, "nam.toml", {"index.distribution=fine", "index.rpc_transport=mailbox"});
  BOOST_REQUIRE(!fine_mailbox.is_ok());
  BOOST_TEST(fine_mailbox.status().message().find("sends no index RPCs") != std::string::npos,
             fine_mailbox.status().message());
  auto hashed = designs::parse_scenario(base, "nam.toml", {"index.partitioning=hash", "index.key_skew=0.5,0.5"});
  BOOST_REQUIRE(!hashed.is_ok());
  BOOST_TEST(hashed.status().message().find("range") != std::string::npos, hashed.status().message());
}

BOOST_AUTO_TEST_CASE(coarse_range_partitioning_matches_multimap) {
  differential(small(nam::Distribution::kCoarse, nam::Partitioning::kRange), 3);
}
BOOST_AUTO_TEST_CASE(coarse_hash_partitioning_matches_multimap) {
  differential(small(nam::Distribution::kCoarse, nam::Partitioning::kHash), 3);
}
BOOST_AUTO_TEST_CASE(fine_grained_matches_multimap) { differential(small(nam::Distribution::kFine), 3); }
BOOST_AUTO_TEST_CASE(hybrid_range_partitioning_matches_multimap) {
  differential(small(nam::Distribution::kHybrid, nam::Partitioning::kRange), 3);
}
BOOST_AUTO_TEST_CASE(hybrid_hash_partitioning_matches_multimap) {
  differential(small(nam::Distribution::kHybrid, nam::Partitioning::kHash), 3);
}

// index.atomic_ranges (set by the tests that check ranges for
// linearizability) makes a range over several leaves a double collect in
// every design: each leaf it read is read again. The hybrid client once
// ignored it and scanned as the paper does, not atomically across leaves,
// which the gc_during_clients history check caught only now and then.
BOOST_AUTO_TEST_CASE(atomic_ranges_read_every_leaf_twice_in_every_design) {
  constexpr uint64_t kKeys = 200;
  for (const auto d : {nam::Distribution::kCoarse, nam::Distribution::kFine, nam::Distribution::kHybrid}) {
    for (const bool atomic : {false, true}) {
      NamConfig config = small(d);
      config.atomic_ranges = atomic;
      NamCluster cluster(config, 2, kKeys);
      for (uint64_t k = 0; k < kKeys; ++k) cluster.load({k, k});
      nam::TreeStats stats;
      cluster.add_client("client", [&](NamClient& c, Env&, nam::FineClient*) {
        std::vector<Pair> got;
        if (Status s = c.range({0, 0}, kKeys - 1, 0, &got); !s.is_ok() || got.size() != kKeys) {
          return cluster.failures.fail("range: " + s.to_string() + ", " + std::to_string(got.size()) + " pairs");
        }
        stats = c.tree_stats();
        for (auto& m : cluster.memory) stats.range_rereads += m->tree_stats().range_rereads;
        (void)c.close();
      });
      cluster.run();
      const std::string what = nam::distribution_name(d) + (atomic ? ", atomic" : ", as the paper");
      // 200 pairs of 16 bytes in 128-byte pages: dozens of leaves.
      if (atomic) {
        BOOST_TEST(stats.range_rereads >= 20u, what << ": " << stats.range_rereads << " leaves read again");
      } else {
        BOOST_TEST(stats.range_rereads == 0u, what << ": " << stats.range_rereads << " leaves read again");
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
BOOST_AUTO_TEST_SUITE(nam_concurrency)

BOOST_AUTO_TEST_CASE(coarse_clients_are_linearizable) { concurrent(small(nam::Distribution::kCoarse)); }
BOOST_AUTO_TEST_CASE(fine_clients_are_linearizable) { concurrent(small(nam::Distribution::kFine)); }
BOOST_AUTO_TEST_CASE(hybrid_clients_are_linearizable) { concurrent(small(nam::Distribution::kHybrid)); }

BOOST_AUTO_TEST_CASE(coarse_gc_on_the_memory_server_during_clients) {
  gc_during_clients(small(nam::Distribution::kCoarse, nam::Partitioning::kRange, 256));
}
BOOST_AUTO_TEST_CASE(fine_gc_on_a_compute_server_during_clients) {
  gc_during_clients(small(nam::Distribution::kFine, nam::Partitioning::kRange, 256));
}
BOOST_AUTO_TEST_CASE(hybrid_gc_on_a_compute_server_during_clients) {
  gc_during_clients(small(nam::Distribution::kHybrid, nam::Partitioning::kRange, 256));
}

// The reclamation tests' set-up: a fine-grained index of 600 keys over two
// memory servers in 256-byte pages, clients announcing every 4 operations,
// and the phases the tests' clients step through together.
constexpr uint64_t kReclaimKeys = 600;
NamConfig reclaim_config() {
  NamConfig config = small(nam::Distribution::kFine, nam::Partitioning::kRange, 256);
  config.gc_epoch_every_ops = 4;
  return config;
}
// With a 50 ms slot lease (and lock leases that never run out).
NamConfig leased_reclaim_config() {
  NamConfig config = reclaim_config();
  config.gc_epoch_lease_ms = 50;
  config.lease_ms = 5000;
  return config;
}
struct Phases {
  std::atomic<int> at{0};
  void wait_for(Env& env, int p) {
    for (int i = 0; i < 50000 && at.load() < p; ++i) env.clock->sleep_for(100 * kMicrosecond);
  }
};
// Two memory servers, the keys loaded, and the phases.
struct ReclaimCluster : NamCluster {
  explicit ReclaimCluster(const NamConfig& c) : NamCluster(c, 2, kReclaimKeys) {
    for (uint64_t k = 0; k < kReclaimKeys; ++k) load({k, k});
  }
  Phases phases;
};
// Deletes every key but the multiples of 10 (so that most leaves merge).
bool delete_most_keys(NamCluster& cluster, NamClient& c) {
  for (uint64_t k = 0; k < kReclaimKeys; ++k) {
    if (k % 10 == 0) continue;
    auto r = c.remove({k, k});
    if (!r.is_ok() || !*r) {
      cluster.failures.fail("remove " + std::to_string(k));
      return false;
    }
  }
  return true;
}
// Inserts (k, k + 1) for the keys delete_most_keys removed.
bool insert_deleted_keys(NamCluster& cluster, NamClient& c) {
  for (uint64_t k = 0; k < kReclaimKeys; ++k) {
    if (k % 10 != 0 && !c.insert({k, k + 1}).is_ok()) {
      cluster.failures.fail("insert " + std::to_string(k));
      return false;
    }
  }
  return true;
}
// After insert_deleted_keys: every key's payloads right.
bool lookups_after_reinsert_are_right(NamCluster& cluster, NamClient& c, const std::string& when) {
  std::vector<uint64_t> got;
  for (uint64_t k = 0; k < kReclaimKeys; ++k) {
    got.clear();
    const std::vector<uint64_t> want = k % 10 == 0 ? std::vector<uint64_t>{k} : std::vector<uint64_t>{k + 1};
    const Status s = c.lookup(k, &got);
    if (!s.is_ok() || got != want) {
      cluster.failures.fail("lookup " + std::to_string(k) + " " + when + ": " + s.to_string());
      return false;
    }
  }
  return true;
}

// A collector for the slot-breaking tests: deletes most keys, waits for
// phase `start`, runs a pass, sleeps 60 ms (past a 50 ms slot lease), runs
// another, inserts the deleted keys again, records what it did, sets phase
// `done` and closes once phase `done + 1` came.
struct CollectorRun {
  nam::TreeStats first, second, after_inserts;
  nam::EpochStats epochs;
};
NamCluster::Body collect_past_a_lease(NamCluster& cluster, Phases& phases, int start, int done, CollectorRun* out) {
  return [&cluster, &phases, start, done, out](NamClient& c, Env& env, nam::FineClient* f) {
    if (!delete_most_keys(cluster, c)) return;
    phases.wait_for(env, start);
    if (!f->tree().collect_garbage().is_ok()) return cluster.failures.fail("first pass");
    out->first = f->tree().stats();
    env.clock->sleep_for(60 * kMillisecond);
    if (!f->tree().collect_garbage().is_ok()) return cluster.failures.fail("second pass");
    out->second = f->tree().stats();
    if (!insert_deleted_keys(cluster, c)) return;
    out->after_inserts = f->tree().stats();
    out->epochs = f->epoch_stats();
    phases.at = done;
    phases.wait_for(env, done + 1);
    if (!c.close().is_ok()) cluster.failures.fail("collector close");
  };
}

// Reclamation across compute servers (remote_epochs.h), step by step: a
// collector on one compute server merges nodes; their pages wait while a
// reader on another holds an older epoch in its slot (it read nothing since
// the merges), are freed once it announced the new epoch (every 4 of its
// operations here), and splits on any compute server take them again. A
// client finding every slot taken is refused, naming the setting, and a
// closed client's slot serves the next one.
BOOST_AUTO_TEST_CASE(merged_pages_wait_for_every_compute_server_then_are_reused) {
  NamConfig config = reclaim_config();
  config.gc_epoch_slots = 2;
  config.gc_epoch_lease_ms = 60000;  // the reader waits between phases: never broken here
  ReclaimCluster cluster(config);
  std::atomic<int>& phase = cluster.phases.at;
  auto wait_for = [&](Env& env, int p) { cluster.phases.wait_for(env, p); };
  nam::TreeStats first, second, after_inserts;
  uint64_t reader_reused = 0;
  std::string refused;
  cluster.add_client("collector", [&](NamClient& c, Env& env, nam::FineClient* f) {
    if (!delete_most_keys(cluster, c)) return;
    wait_for(env, 1);  // the reader has looked once
    if (!f->tree().collect_garbage().is_ok()) return cluster.failures.fail("first pass");
    first = f->tree().stats();
    phase = 2;
    wait_for(env, 3);  // the reader has announced the new epoch
    if (!f->tree().collect_garbage().is_ok()) return cluster.failures.fail("second pass");
    second = f->tree().stats();
    if (!insert_deleted_keys(cluster, c)) return;
    after_inserts = f->tree().stats();
    phase = 4;
    wait_for(env, 8);  // the reader checked every key, a third client came and went
    if (!c.close().is_ok()) cluster.failures.fail("collector close");
  });
  cluster.add_client("reader", [&](NamClient& c, Env& env, nam::FineClient* f) {
    wait_for(env, 0);
    std::vector<uint64_t> got;
    if (!c.lookup(0, &got).is_ok()) return cluster.failures.fail("first lookup");
    phase = 1;
    wait_for(env, 2);
    for (uint64_t k = 0; k < 4; ++k) {  // the 4th announces
      got.clear();
      if (!c.lookup(10 * k, &got).is_ok() || got != std::vector<uint64_t>({10 * k})) {
        return cluster.failures.fail("lookup " + std::to_string(10 * k));
      }
    }
    phase = 3;
    wait_for(env, 4);
    if (!lookups_after_reinsert_are_right(cluster, c, "after the inserts")) return;
    reader_reused = f->tree().stats().pages_reused;
    phase = 5;
    wait_for(env, 6);  // a third client was refused
    if (!c.close().is_ok()) return cluster.failures.fail("reader close");
    phase = 7;
  });
  // A third compute server: refused while both slots are held, connected
  // once the reader closed.
  auto late = cluster.runtime->add_node({"late", false});
  BOOST_REQUIRE(late.is_ok());
  bool connected_after_close = false;
  BOOST_REQUIRE(cluster.runtime
                    ->spawn(*late, "late", ActorKind::kWorker,
                            [&](Env& env) {
                              Endpoint ep(env);
                              auto rpc = rpc::RpcClient::create(ep);
                              if (!rpc.is_ok()) return cluster.failures.fail("late rpc");
                              wait_for(env, 5);
                              auto third = nam::FineClient::connect(ep, **rpc, cluster.servers, config);
                              refused = third.is_ok() ? "connected" : third.status().to_string();
                              phase = 6;
                              wait_for(env, 7);
                              auto again = nam::FineClient::connect(ep, **rpc, cluster.servers, config);
                              if (!again.is_ok()) return cluster.failures.fail("after close: " + again.status().to_string());
                              connected_after_close = (*again)->close().is_ok();
                              phase = 8;
                            })
                    .is_ok());
  cluster.run();
  BOOST_TEST(connected_after_close);
  BOOST_TEST_MESSAGE("merges " << second.merges << ", freed after the first pass " << first.pages_freed
                               << ", after the second " << second.pages_freed << ", reused "
                               << after_inserts.pages_reused << " + " << reader_reused);
  BOOST_REQUIRE(first.merges > 10u);
  BOOST_TEST(first.pages_freed == 0u);  // the reader's slot held the epoch of the merges
  BOOST_TEST(second.pages_freed >= first.merges);
  BOOST_TEST(after_inserts.pages_reused > 0u);
  BOOST_TEST(refused.find("index.gc_epoch_slots") != std::string::npos, refused);
}

// Hybrid reclamation (hybrid_client.h): a pass from one compute server
// merges leaves of both memory servers' partitions once each server has
// joined their entries in its inner levels (nam.join), frees the merged
// pages after the pass (no other client holds an epoch) and splits take
// them again; each memory server's own pass then merges the inner nodes
// the joins emptied (collect_inner_garbage) and frees their pages; every
// key is found right
// after each pass and after the reinserts. A join the inner levels cannot
// make (two leaves no inner node names side by side) changes nothing.
BOOST_AUTO_TEST_CASE(hybrid_merges_leaves_then_frees_and_reuses_their_pages) {
  NamConfig config = small(nam::Distribution::kHybrid, nam::Partitioning::kRange, 256);
  config.gc_epoch_every_ops = 4;
  NamCluster cluster(config, 2, kReclaimKeys);
  for (uint64_t k = 0; k < kReclaimKeys; ++k) cluster.load({k, k});
  auto refused = cluster.memory[0]->join_leaves({5, 5}, nam::RemotePtr::make(0, 1 << 20), nam::RemotePtr::make(1, 1 << 20));
  BOOST_REQUIRE(refused.is_ok());
  BOOST_TEST(!*refused);
  nam::TreeStats after_pass, after_inserts, inner;
  cluster.add_client("collector", [&](NamClient& c, Env&, nam::FineClient*) {
    if (!delete_most_keys(cluster, c)) return;
    auto lookups_right = [&](const std::string& when) {
      std::vector<uint64_t> got;
      for (uint64_t k = 0; k < kReclaimKeys; ++k) {
        got.clear();
        const std::vector<uint64_t> want = k % 10 == 0 ? std::vector<uint64_t>{k} : std::vector<uint64_t>{};
        if (Status s = c.lookup(k, &got); !s.is_ok() || got != want) {
          cluster.failures.fail("lookup " + std::to_string(k) + " " + when + ": " + s.to_string());
          return false;
        }
      }
      return true;
    };
    if (Status s = c.collect_garbage(); !s.is_ok()) return cluster.failures.fail("pass: " + s.to_string());
    after_pass = c.tree_stats();
    if (!lookups_right("after the pass")) return;
    for (auto& m : cluster.memory) {
      if (Status s = m->collect_garbage(); !s.is_ok()) return cluster.failures.fail("inner pass: " + s.to_string());
      inner.merges += m->gc_stats().merges;
      inner.inner_merges += m->gc_stats().inner_merges;
      inner.pages_freed += m->gc_stats().pages_freed;
    }
    if (!lookups_right("after the inner passes")) return;
    if (!insert_deleted_keys(cluster, c)) return;
    after_inserts = c.tree_stats();
    if (!lookups_after_reinsert_are_right(cluster, c, "after the reinserts")) return;
    if (!c.close().is_ok()) cluster.failures.fail("close");
  });
  cluster.run();
  BOOST_TEST_MESSAGE("merges " << after_pass.merges << ", freed " << after_pass.pages_freed << ", reused "
                               << after_inserts.pages_reused << "; inner merges " << inner.inner_merges
                               << ", freed " << inner.pages_freed);
  BOOST_TEST(after_pass.merges > 10u);
  BOOST_TEST(after_pass.pages_freed == after_pass.merges);
  BOOST_TEST(after_inserts.pages_reused > 0u);
  BOOST_TEST(inner.merges > 0u);
  BOOST_TEST(inner.inner_merges == inner.merges);  // a memory server never merges a leaf
  BOOST_TEST(inner.pages_freed == inner.merges);
}

// A hybrid collector that dies between the two installs of a leaf merge
// (after the memory server joined the leaves' entries), at each merge of
// a pass in turn: the leaf it marked merged is made live again by the
// next operation to follow its left neighbour's sibling pointer, and
// every pair is where a multimap says (nam_gc_test has the same for the
// other designs' merges).
BOOST_AUTO_TEST_CASE(a_hybrid_merge_its_collector_died_in_is_undone) {
  const NamConfig config = small(nam::Distribution::kHybrid, nam::Partitioning::kRange, 256);
  uint32_t n = 0, undone = 0;
  for (;; ++n) {
    NamCluster cluster(config, 1, kReclaimKeys);
    nam::BlinkTree& tree = *cluster.loaders[0];
    std::multimap<uint64_t, uint64_t> ref;
    for (uint64_t k = 0; k < kReclaimKeys; ++k) cluster.load({k, k});
    for (uint64_t k = 0; k < kReclaimKeys; ++k) {
      if (k % 10 == 0) {
        ref.emplace(k, k);
      } else {
        BOOST_REQUIRE(*tree.remove({k, k}));
      }
    }
    testing::MergerDiesBetweenInstalls dying(*cluster.global);
    dying.merges_to_finish = n;
    nam::BlinkTree gc(dying, cluster.memory[0].get());
    const Status pass = gc.collect_garbage();
    if (!dying.died) {
      BOOST_REQUIRE(pass.is_ok());
      break;
    }
    BOOST_REQUIRE(pass.code() == StatusCode::kUnavailable);
    for (uint64_t k = 0; k < kReclaimKeys; k += 10) {
      if (k % 30 == 0) continue;
      auto removed = tree.remove({k, k});
      BOOST_REQUIRE(removed.is_ok());
      BOOST_REQUIRE_MESSAGE(*removed, "merge " << n << ": key " << k << " not found to delete");
      ref.erase(k);
    }
    for (uint64_t k = 0; k < kReclaimKeys; ++k) {
      std::vector<uint64_t> got;
      BOOST_REQUIRE(tree.lookup(k, &got).is_ok());
      BOOST_REQUIRE_MESSAGE(got.size() == ref.count(k), "merge " << n << ": key " << k);
    }
    std::vector<Pair> all, want;
    BOOST_REQUIRE(tree.range({0, 0}, ~0ull, 0, &all).is_ok());
    for (auto [k, v] : ref) want.push_back({k, v});
    BOOST_REQUIRE_MESSAGE(all == want, "merge " << n << ": the scan disagrees with the multimap");
    undone += tree.stats().merges_undone;
  }
  BOOST_TEST_MESSAGE(n << " leaf merges in a pass; undone " << undone);
  BOOST_TEST(n > 10u);
  BOOST_TEST(undone == n);
}

// A compute server that stops (here: sleeps) holding an old epoch in its
// slot would stop reclamation for good. After index.gc_epoch_lease_ms the
// collector has every memory server fence it off and frees its slot; its
// merged pages are freed and split into again. When it wakes, its first
// request fails (fenced), the operation restarts with a new slot, and
// every lookup is right although pages it could have named were reused.
BOOST_AUTO_TEST_CASE(a_stopped_compute_servers_epoch_slot_is_broken_after_its_lease) {
  ReclaimCluster cluster(leased_reclaim_config());
  std::atomic<int>& phase = cluster.phases.at;
  auto wait_for = [&](Env& env, int p) { cluster.phases.wait_for(env, p); };
  CollectorRun run;
  nam::EpochStats sleeper_epochs;
  uint64_t sleeper_fenced = 0;
  cluster.add_client("collector", collect_past_a_lease(cluster, cluster.phases, 1, 2, &run));
  cluster.add_client("sleeper", [&](NamClient& c, Env& env, nam::FineClient* f) {
    std::vector<uint64_t> got;
    if (!c.lookup(0, &got).is_ok()) return cluster.failures.fail("first lookup");
    phase = 1;
    wait_for(env, 2);  // stopped: no operation, no announcement
    if (!lookups_after_reinsert_are_right(cluster, c, "after waking")) return;
    sleeper_epochs = f->epoch_stats();
    sleeper_fenced = f->remote_stats().fenced;
    if (!c.close().is_ok()) cluster.failures.fail("sleeper close");
    phase = 3;
  });
  cluster.run();
  BOOST_TEST_MESSAGE("merges " << run.second.merges << ", freed " << run.first.pages_freed << " then "
                               << run.second.pages_freed << ", reused " << run.after_inserts.pages_reused
                               << "; slots broken " << run.epochs.slots_broken << ", the sleeper fenced by "
                               << sleeper_fenced << " servers, rejoined " << sleeper_epochs.rejoins << " times");
  BOOST_REQUIRE(run.first.merges > 10u);
  BOOST_TEST(run.first.pages_freed == 0u);  // the sleeper's slot held them
  BOOST_TEST(run.epochs.slots_broken == 1u);
  BOOST_TEST(run.second.pages_freed >= run.first.merges);
  BOOST_TEST(run.after_inserts.pages_reused > 0u);
  BOOST_TEST(sleeper_fenced >= 1u);
  BOOST_TEST(sleeper_epochs.rejoins >= 1u);
}

// The hazard the fence is for: a lookup stalls between reading a leaf's
// parent and reading the leaf, the leaf is merged away, the stalled
// client's slot is broken after its lease, the leaf's page is freed and
// split into again. The stalled READ must not return the page's new node:
// the fence fails it, and the lookup starts over with a new slot (with the
// fence left out of break_stale, the lookup read the reused page: "a child
// is not one level down").
class StallBeforeRead final : public locus::testing::ForwardingAccess {
 public:
  StallBeforeRead(nam::NodeAccess& inner, std::function<void()> stall) : ForwardingAccess(inner), stall_(stall) {}
  Status read(nam::RemotePtr p, nam::Node& out) override {
    if (++reads == stall_at) stall_();
    return inner_.read(p, out);
  }
  uint32_t reads = 0;
  uint32_t stall_at = 0;  // the read to stall before (1: the first); 0: none

 private:
  std::function<void()> stall_;
};

BOOST_AUTO_TEST_CASE(a_read_stalled_past_its_slots_lease_is_fenced_not_served_a_reused_page) {
  ReclaimCluster cluster(leased_reclaim_config());
  std::atomic<int>& phase = cluster.phases.at;
  auto wait_for = [&](Env& env, int p) { cluster.phases.wait_for(env, p); };
  CollectorRun run;
  uint64_t stalled_fenced = 0, stalled_restarts = 0;
  cluster.add_client("collector", collect_past_a_lease(cluster, cluster.phases, 2, 3, &run));
  cluster.add_client("stalled", [&](NamClient& c, Env& env, nam::FineClient* f) {
    StallBeforeRead stall(f->access(), [&] {
      phase = 2;
      wait_for(env, 3);
    });
    auto epochs = nam::RemoteEpochs::attach(f->access(), cluster.config.gc_epoch_every_ops, 50 * kMillisecond);
    if (!epochs.is_ok() || *epochs == nullptr) return cluster.failures.fail("attach");
    nam::BlinkTree tree(stall);
    if (!tree.set_reclaimer(epochs->get()).is_ok()) return cluster.failures.fail("join");
    wait_for(env, 1);
    auto levels = tree.levels();
    if (!levels.is_ok()) return cluster.failures.fail("levels: " + levels.status().to_string());
    stall.reads = 0;
    stall.stall_at = *levels;  // the leaf's READ: the root and the inner levels are read
    std::vector<uint64_t> got;
    const Status s = tree.lookup(300, &got);
    if (!s.is_ok() || got != std::vector<uint64_t>{300}) {
      cluster.failures.fail("the stalled lookup: " + s.to_string() + ", " + std::to_string(got.size()) + " payloads");
    }
    stalled_fenced = f->remote_stats().fenced;
    stalled_restarts = tree.stats().restarts;
    (void)(*epochs)->release();
    (void)c.close();
    phase = 4;
  });
  cluster.run();
  BOOST_TEST_MESSAGE("merges " << run.second.merges << ", freed " << run.second.pages_freed << ", reused "
                               << run.after_inserts.pages_reused << ", slots broken " << run.epochs.slots_broken
                               << "; the stalled lookup fenced " << stalled_fenced << " times, restarted "
                               << stalled_restarts);
  BOOST_REQUIRE(run.second.merges > 10u);
  BOOST_TEST(run.epochs.slots_broken >= 1u);
  BOOST_TEST(run.after_inserts.pages_reused > 0u);
  BOOST_TEST(stalled_fenced >= 1u);
  BOOST_TEST(stalled_restarts >= 1u);
}

BOOST_AUTO_TEST_CASE(stalled_lock_holder_loses_its_lease) {
  NamConfig config = small(nam::Distribution::kFine, nam::Partitioning::kRange, 256);
  config.lease_ms = 20;
  const Nanos lease_ns = 20 * kMillisecond;
  NamCluster cluster(config, 2, 100);
  for (uint64_t i = 0; i < 3; ++i) cluster.load({10 * i, 1});  // one leaf
  std::unique_ptr<StallingAccess> stalling;
  std::atomic<bool> ready{false};
  std::atomic<Nanos> other_done_ns{0};
  nam::RemoteStats holder_stats, other_stats;
  cluster.add_client("holder", [&](NamClient&, Env& env, nam::FineClient* fine) {
    stalling = std::make_unique<StallingAccess>(fine->access(), env, 3 * lease_ns);
    ready.store(true);
    nam::BlinkTree tree(*stalling);
    Status s = tree.insert({5, 5});
    if (!s.is_ok()) cluster.failures.fail("holder: " + s.to_string());
    holder_stats = fine->remote_stats();
  });
  cluster.add_client("other", [&](NamClient& c, Env& env, nam::FineClient* fine) {
    while (!ready.load() || !stalling->locked.load()) env.clock->sleep_for(100 * kMicrosecond);
    Status s = c.insert({6, 6});
    other_done_ns.store(env.clock->now());
    if (!s.is_ok()) cluster.failures.fail("other: " + s.to_string());
    other_stats = fine->remote_stats();
  });
  cluster.run();
  BOOST_TEST(other_stats.broken_locks == 1u);
  BOOST_TEST(holder_stats.lease_give_ups == 1u);
  BOOST_TEST(other_done_ns.load() < stalling->woke_ns.load());
  std::vector<Pair> all;
  BOOST_REQUIRE(cluster.loaders[0]->range({0, 0}, ~0ull, 0, &all).is_ok());
  const std::vector<Pair> want{{0, 1}, {5, 5}, {6, 6}, {10, 1}, {20, 1}};
  BOOST_TEST(all == want, "pairs: " << all.size());
}

// The lease is not a fence, so the breaker fences: a holder that passed its
// lease check and then stalled before its install WRITE (descheduled on a
// loaded machine) until another client had broken its lock and installed
// its own pair must not have that WRITE land. It once did (CI, 2026-11-27):
// the node stayed torn and unlocked and the other client's pair was lost.
class StallingWrites final : public testing::ForwardingTransport {
 public:
  StallingWrites(Transport& inner, Clock& clock) : ForwardingTransport(inner), clock_(clock) {}
  Status post(std::span<const WorkRequest> batch) override {
    if (armed.load() && batch.size() == 1 && batch[0].op == Opcode::kWrite) {
      armed.store(false);
      stalled.store(true);
      // Until the other client is done (or long past any lease).
      for (int i = 0; i < 5000 && !release.load(); ++i) clock_.sleep_for(kMillisecond);
    }
    return ForwardingTransport::post(batch);
  }
  std::atomic<bool> armed{false}, stalled{false}, release{false};

 private:
  Clock& clock_;
};

BOOST_AUTO_TEST_CASE(stalled_install_write_is_fenced_off) {
  NamConfig config = small(nam::Distribution::kFine, nam::Partitioning::kRange, 256);
  config.lease_ms = 20;
  NamCluster cluster(config, 2, 100);
  for (uint64_t i = 0; i < 3; ++i) cluster.load({10 * i, 1});  // one leaf
  std::unique_ptr<StallingWrites> stalling;
  std::atomic<bool> ready{false};
  std::atomic<int> finished{0};
  nam::RemoteStats holder_stats, other_stats;
  cluster.add_client(
      "holder",
      [&](NamClient& c, Env&, nam::FineClient* fine) {
        stalling->armed.store(true);
        ready.store(true);
        // Fenced: the WRITE is refused, and the insert fails with its
        // outcome unknown (a failed WRITE may have landed, so it is not
        // restarted); the client has rejoined, so it can try again.
        Status s = c.insert({5, 5});
        if (s.is_ok() || s.message().find("fenced") == std::string::npos) {
          cluster.failures.fail("holder: the stalled insert should fail as fenced: " + s.to_string());
        }
        s = c.insert({5, 5});
        if (!s.is_ok()) cluster.failures.fail("holder, again: " + s.to_string());
        holder_stats = fine->remote_stats();
        finished.fetch_add(1);
      },
      [&](Env& env) {
        stalling = std::make_unique<StallingWrites>(*env.transport, *env.clock);
        return stalling.get();
      });
  cluster.add_client("other", [&](NamClient& c, Env& env, nam::FineClient* fine) {
    while (!ready.load() || !stalling->stalled.load()) env.clock->sleep_for(100 * kMicrosecond);
    Status s = c.insert({6, 6});
    if (!s.is_ok()) cluster.failures.fail("other: " + s.to_string());
    other_stats = fine->remote_stats();
    stalling->release.store(true);  // now the holder's WRITE goes out
    finished.fetch_add(1);
  });
  // Every pair readable one-sidedly once both are done: a torn leaf fails
  // these lookups (after four leases).
  cluster.add_client("reader", [&](NamClient& c, Env& env, nam::FineClient*) {
    while (finished.load() < 2) env.clock->sleep_for(100 * kMicrosecond);
    for (const Pair x : std::vector<Pair>{{0, 1}, {5, 5}, {6, 6}, {10, 1}, {20, 1}}) {
      std::vector<uint64_t> got;
      const Status s = c.lookup(x.key, &got);
      if (!s.is_ok() || got != std::vector<uint64_t>{x.payload}) {
        cluster.failures.fail(fmt::format("reader: key {}: {} ({} payloads)", x.key, s.to_string(), got.size()));
      }
    }
  });
  cluster.run();
  BOOST_TEST(other_stats.broken_locks == 1u);
  BOOST_TEST(other_stats.fences == 1u);
  BOOST_TEST(holder_stats.fenced == 1u);
  std::vector<Pair> all;
  BOOST_REQUIRE(cluster.loaders[0]->range({0, 0}, ~0ull, 0, &all).is_ok());
  const std::vector<Pair> want{{0, 1}, {5, 5}, {6, 6}, {10, 1}, {20, 1}};
  BOOST_TEST(all == want, "pairs: " << all.size());
}

// A holder that stalls past half its lease, but not a whole one (nobody
// breaks its lock), gives up its install and must leave the leaf readable:
// it once unlocked to held + 1 over a body sealed for the old word, and
// every later read of the leaf found it torn until it gave up as
// corruption (this insert's own restart first).
BOOST_AUTO_TEST_CASE(holder_that_gives_up_leaves_its_leaf_readable) {
  NamConfig config = small(nam::Distribution::kFine, nam::Partitioning::kRange, 256);
  config.lease_ms = 4;
  NamCluster cluster(config, 2, 100);
  for (uint64_t i = 0; i < 3; ++i) cluster.load({10 * i, 1});
  nam::RemoteStats stats;
  cluster.add_client("holder", [&](NamClient& c, Env& env, nam::FineClient* fine) {
    StallingAccess stalling(fine->access(), env, 3 * kMillisecond);
    nam::BlinkTree tree(stalling);
    Status s = tree.insert({5, 5});
    if (!s.is_ok()) cluster.failures.fail("holder: " + s.to_string());
    std::vector<uint64_t> got;
    s = c.lookup(5, &got);
    if (!s.is_ok() || got != std::vector<uint64_t>{5}) cluster.failures.fail("lookup of 5 after the give-up");
    stats = fine->remote_stats();
  });
  cluster.run();
  // At least the stalled install gave up; its restart may give up too when
  // the machine is slow for 2 ms (TSan on a loaded machine: 2 once).
  BOOST_TEST(stats.lease_give_ups >= 1u);
  BOOST_TEST(stats.broken_locks == 0u);
}

// A node whose body is damaged while its word is unlocked (a server that
// came back mid-install) stays torn for every reader: no writer will mend
// it. A read gives up after a few leases, naming it, instead of spinning
// through 65,536 copies at the pause cap (about 80 s at a 20 ms lease:
// the fault campaign's server-outage mix on nam-fine took ~100 s a run).
BOOST_AUTO_TEST_CASE(a_node_torn_while_unlocked_fails_its_reads_within_leases) {
  NamConfig config = small(nam::Distribution::kFine, nam::Partitioning::kRange, 256);
  config.lease_ms = 1;
  NamCluster cluster(config, 2, 100);
  for (uint64_t i = 0; i < 3; ++i) cluster.load({10 * i, 1});  // one leaf, the root
  auto root = cluster.global->root();
  BOOST_REQUIRE(root.is_ok());
  std::byte* body = cluster.memory[root->server()]->arena().at(root->offset() + 64);
  *body ^= std::byte{0x5a};  // the CRC no longer matches; the word stays unlocked
  Status got;
  cluster.add_client("reader", [&](NamClient& c, Env&, nam::FineClient*) {
    std::vector<uint64_t> payloads;
    got = c.lookup(10, &payloads);
  });
  cluster.run();
  BOOST_TEST(got.code() == StatusCode::kCorruption, got.to_string());
  BOOST_TEST(got.to_string().find("stayed torn and unlocked") != std::string::npos, got.to_string());
}

// Head nodes (fine-grained and hybrid): a loaded leaf level with head
// nodes every 4 leaves; a scan prefetches through them (batches counted),
// then inserts split leaves so the heads are outdated: scans must still
// match the multimap, pay extra READs, and rebuild the heads lazily.
void head_nodes(const NamConfig& base) {
  NamConfig config = base;
  config.head_node_interval = 4;
  NamCluster cluster(config, 3, 2000);
  std::multimap<uint64_t, uint64_t> ref;
  for (uint64_t i = 0; i < 600; ++i) {
    cluster.load({3 * i, i});
    ref.emplace(3 * i, i);
  }
  uint64_t heads = 0;
  for (auto& t : cluster.loaders) {
    t->set_head_interval(config.head_node_interval);
    BOOST_REQUIRE(t->rebuild_head_nodes().is_ok());
    heads += t->stats().heads_added;
  }
  BOOST_TEST(heads > 10u);
  nam::TreeStats fresh, stale, rebuilt;
  cluster.add_client("scanner", [&](NamClient& c, Env&, nam::FineClient*) {
    auto check = [&](uint64_t from, uint64_t to) {
      std::vector<Pair> got, want;
      if (!c.range({from, 0}, to, 0, &got).is_ok()) return cluster.failures.fail("range failed");
      for (auto a = ref.lower_bound(from); a != ref.end() && a->first <= to; ++a) want.push_back({a->first, a->second});
      std::sort(want.begin(), want.end());
      if (got != want) cluster.failures.fail("range from " + std::to_string(from) + " differs from the multimap");
    };
    check(0, 1800);
    fresh = c.tree_stats();
    // Two keys between each two loaded ones split every leaf: heads now miss them.
    for (uint64_t i = 0; i < 600; ++i) {
      for (uint64_t d = 1; d <= 2; ++d) {
        if (!c.insert({3 * i + d, 7}).is_ok()) return cluster.failures.fail("insert failed");
        ref.emplace(3 * i + d, 7);
      }
    }
    const nam::TreeStats before = c.tree_stats();
    check(0, 1800);
    stale = c.tree_stats();
    stale.stale_head_reads -= before.stale_head_reads;
    check(0, 1800);
    rebuilt = c.tree_stats();
  });
  cluster.run();
  BOOST_TEST_MESSAGE("head nodes: fresh prefetches "
                     << fresh.head_prefetches << " hits " << fresh.prefetch_hits << "; outdated: stale READs "
                     << stale.stale_head_reads << " rebuilds " << stale.head_rebuilds << " hits " << stale.prefetch_hits
                     << "; rebuilt: hits " << rebuilt.prefetch_hits);
  BOOST_TEST(fresh.head_prefetches > 10u);
  BOOST_TEST(fresh.prefetch_hits > 40u);
  BOOST_TEST(fresh.stale_head_reads == 0u);
  BOOST_TEST(stale.stale_head_reads > 10u);  // outdated heads cost READs, not answers
  BOOST_TEST(stale.head_rebuilds >= 1u);     // and were rebuilt by that scan
  BOOST_TEST(rebuilt.prefetch_hits - stale.prefetch_hits > 50u);
}

// Scans during inserts that split leaves with heads in place: every loaded
// pair is in each scan, once, in order.
void scans_during_splits(const NamConfig& base) {
  NamConfig config = base;
  config.head_node_interval = 3;
  NamCluster cluster(config, 2, 2000);
  for (uint64_t i = 0; i < 300; ++i) cluster.load({4 * i, 0});
  for (auto& t : cluster.loaders) {
    t->set_head_interval(config.head_node_interval);
    BOOST_REQUIRE(t->rebuild_head_nodes().is_ok());
  }
  for (uint32_t k = 0; k < 2; ++k) {
    cluster.add_client("writer" + std::to_string(k), [&, k](NamClient& c, Env& env, nam::FineClient*) {
      for (uint64_t op = 0; op < 800; ++op) {
        const Pair x{env.random->uniform(1200), (k + 1) * 100000 + op};  // unique: a pair twice is a bug
        if (!c.insert(x).is_ok()) return cluster.failures.fail("insert failed");
      }
    });
  }
  nam::TreeStats scanner;
  cluster.add_client("scanner", [&](NamClient& c, Env&, nam::FineClient*) {
    for (int round = 0; round < 30; ++round) {
      std::vector<Pair> got;
      if (!c.range({0, 0}, 1200, 0, &got).is_ok()) return cluster.failures.fail("range failed");
      if (!std::is_sorted(got.begin(), got.end()) || std::adjacent_find(got.begin(), got.end()) != got.end()) {
        return cluster.failures.fail("a scan out of order or with a pair twice");
      }
      for (uint64_t i = 0; i < 300; ++i) {
        if (!std::binary_search(got.begin(), got.end(), Pair{4 * i, 0})) {
          return cluster.failures.fail("a scan missed loaded key " + std::to_string(4 * i));
        }
      }
    }
    scanner = c.tree_stats();
  });
  cluster.run();
  BOOST_TEST(scanner.head_prefetches > 0u);
}

BOOST_AUTO_TEST_CASE(fine_head_nodes_prefetch_and_go_stale_safely) {
  head_nodes(small(nam::Distribution::kFine, nam::Partitioning::kRange, 256));
}
BOOST_AUTO_TEST_CASE(hybrid_head_nodes_prefetch_and_go_stale_safely) {
  head_nodes(small(nam::Distribution::kHybrid, nam::Partitioning::kRange, 256));
}
BOOST_AUTO_TEST_CASE(fine_scans_during_splits_with_head_nodes) {
  scans_during_splits(small(nam::Distribution::kFine, nam::Partitioning::kRange, 256));
}
BOOST_AUTO_TEST_CASE(hybrid_scans_during_splits_with_head_nodes) {
  scans_during_splits(small(nam::Distribution::kHybrid, nam::Partitioning::kHash, 256));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
