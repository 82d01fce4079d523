// Cell: node layout helpers; the servers against std::map in process (both
// kinds of splits, several servers, invariants checked as they go); clients
// against std::map on the loopback backend with every selector; and
// searches, client-side and server-side, racing writers that split nodes
// and meganodes: no search may miss a key inserted before it started and
// not deleted, or return a value never written for its key.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <optional>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/fault/fault_transport.h"
#include "core/common/aligned_buffer.h"
#include "core/common/random.h"
#include "core/designs/designs.h"
#include "core/runner/scenario_run.h"
#include "core/index/cell/client.h"
#include "core/index/cell/node_cache.h"
#include "core/index/cell/path_cache.h"
#include "core/index/cell/deployment.h"
#include "core/selector/selector_config.h"
#include "core/transport/endpoint.h"
#include "tests/support/cell_cluster.h"
#include "tests/support/failure_log.h"

namespace locus {

namespace cell {
class StoreTestPeer {
 public:
  static std::byte* node(Store& store, uint64_t off) { return store.at(off); }
};
}  // namespace cell

using cell::OpKind;
using testing::CellCluster;
using testing::Collect;
using testing::expected_range;
using testing::key_of;
using testing::make_value;
using testing::tiny_options;
using testing::value_was_written_for;


BOOST_AUTO_TEST_SUITE(cell_layout)

BOOST_AUTO_TEST_CASE(geometry_and_node_search) {
  cell::Geometry g = tiny_options().store.geometry;
  BOOST_REQUIRE(g.validate().is_ok());
  BOOST_TEST(g.capacity(true) == 3u);
  BOOST_TEST(g.capacity(false) == 5u);
  const cell::Geometry too_small{.node_bytes = 128, .key_capacity_bytes = 64};
  const cell::Geometry unaligned{.node_bytes = 100};
  BOOST_TEST(!too_small.validate().is_ok());
  BOOST_TEST(!unaligned.validate().is_ok());

  std::vector<std::byte> buf(g.node_bytes);
  cell::NodeWriter w(buf.data(), g);
  w.begin();
  w.init(1, 0, cell::Bound{"b", false}, cell::Bound{"m", false}, cell::kNullPtr);
  const uint64_t children[3] = {10, 20, 30};
  w.set_entry(0, "b", reinterpret_cast<const std::byte*>(&children[0]));
  w.set_entry(1, "d", reinterpret_cast<const std::byte*>(&children[1]));
  w.set_entry(2, "h", reinterpret_cast<const std::byte*>(&children[2]));
  w.set_count(3);
  BOOST_TEST(!w.view().stable());  // odd while being written
  w.end();
  const cell::NodeView v(buf.data(), g);
  BOOST_TEST(v.stable());
  BOOST_TEST(v.well_formed());
  BOOST_TEST(v.child(v.child_index("b")) == 10u);
  BOOST_TEST(v.child(v.child_index("c")) == 10u);
  BOOST_TEST(v.child(v.child_index("d")) == 20u);
  BOOST_TEST(v.child(v.child_index("z")) == 30u);
  BOOST_TEST(v.below_min("a"));
  BOOST_TEST(v.at_or_above_max("m"));
  BOOST_TEST(!v.at_or_above_max("l"));
  BOOST_TEST(v.find("d") == 1);
  BOOST_TEST(v.find("e") == -1);
  BOOST_TEST(v.lower_bound("e") == 2u);
  BOOST_TEST(v.lower_bound("d", true) == 2u);
}

// The server CPU rewrites one node as fast as it can (every entry and
// bound from one counter value) while a client READs it through the
// loopback NIC, or through the fault transport copying its cache lines in
// random order: every image that passes stable() must be entirely one
// write's, and some images must be caught torn.
void check_torn_reads_are_caught(const fault::FaultOptions* faults) {
  const cell::Geometry g = tiny_options().store.geometry;
  auto runtime = loopback::make_loopback_runtime({});
  auto server = runtime->add_node({"server", true});
  auto client = runtime->add_node({"client", false});
  BOOST_REQUIRE(server.is_ok() && client.is_ok());
  AlignedBuffer node(g.node_bytes);
  Env setup = runtime->setup_env(*server);
  auto region = setup.transport->register_memory(node.data(), g.node_bytes, kRemoteRead);
  BOOST_REQUIRE(region.is_ok());
  const RemoteRegion remote = region->remote();
  auto fill = [&](uint64_t c) {
    cell::NodeWriter w(node.data(), g);
    w.begin();
    const std::string text(8, static_cast<char>('a' + c % 26));
    w.init(0, 0, cell::Bound{text, false}, cell::Bound{text + "~", false}, c);
    cell::ExtentRef ref;
    ref.ptr = c;
    for (uint32_t i = 0; i < g.capacity(true); ++i) w.set_entry(i, text, reinterpret_cast<const std::byte*>(&ref));
    w.set_count(g.capacity(true));
    w.end();
  };
  fill(0);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> stable{0}, torn{0};
  testing::FailureLog failures;
  BOOST_REQUIRE(runtime->spawn(*server, "writer", ActorKind::kWorker, [&](Env& env) {
    // Bursts of writes (reads overlapping them tear) with pauses between
    // (reads there are stable), so both kinds occur however the machine
    // schedules the two threads.
    for (uint64_t c = 1; !done.load(std::memory_order_acquire); ++c) {
      fill(c);
      if (c % 512 == 0) env.clock->sleep_for(20 * kMicrosecond);
    }
  }).is_ok());
  BOOST_REQUIRE(runtime->spawn(*client, "reader", ActorKind::kWorker, [&](Env& env) {
    struct StopWriter {
      std::atomic<bool>& done;
      ~StopWriter() { done.store(true, std::memory_order_release); }
    } stop_writer{done};  // on every way out, or the writer spins forever
    const std::atomic<bool> armed{true};
    fault::FaultStats injected;
    std::optional<fault::FaultTransport> faulty;
    Env renv = env;
    if (faults != nullptr) {
      faulty.emplace(env.transport, env.clock, *faults, 1, &armed, &injected);
      renv.transport = &*faulty;
    }
    Endpoint ep(renv);
    AlignedBuffer buf(g.node_bytes);
    auto mine = renv.transport->register_memory(buf.data(), g.node_bytes, kLocalOnly);
    if (!mine.is_ok()) return failures.fail(mine.status().to_string());
    for (int i = 0; i < 20'000; ++i) {
      WorkRequest wr;
      wr.wr_id = ep.next_wr_id();
      wr.op = Opcode::kRead;
      wr.remote = remote_at(remote, 0);
      wr.local = {buf.data(), g.node_bytes, mine->lkey};
      if (Status st = ep.execute(wr); !st.is_ok()) return failures.fail(st.to_string());
      const cell::NodeView v(buf.data(), g);
      if (!v.stable()) {
        ++torn;
        continue;
      }
      ++stable;
      const uint64_t c = v.right();
      const std::string text(8, static_cast<char>('a' + c % 26));
      bool whole = v.well_formed() && v.min_key() == text && v.max_key() == text + "~" && v.count() == g.capacity(true);
      for (uint32_t e = 0; whole && e < v.count(); ++e) whole = v.key(e) == text && v.extent(e).ptr == c;
      if (!whole) return failures.fail("a stable image mixes two writes (counter " + std::to_string(c) + ")");
    }
    (void)renv.transport->deregister_memory(*mine);
    if (faults != nullptr && injected.split_read.load() == 0) failures.fail("no READ was split");
  }).is_ok());
  BOOST_REQUIRE(runtime->run().is_ok());
  BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());
  BOOST_TEST_MESSAGE("version check: " << stable.load() << " stable images, " << torn.load() << " torn ones rejected");
  BOOST_TEST(stable.load() > 0u);
  BOOST_TEST(torn.load() > 0u);
  BOOST_REQUIRE(setup.transport->deregister_memory(*region).is_ok());
}

BOOST_AUTO_TEST_CASE(versions_detect_torn_reads_over_the_nic) { check_torn_reads_are_caught(nullptr); }

// A NIC may copy a READ's cache lines in any order: with the two ends
// copied before a write and the middle after it, versions at both ends
// matched around a mixed image (issue 16, defect 6). The checksum catches it.
BOOST_AUTO_TEST_CASE(a_read_copied_in_random_order_is_never_taken_for_a_whole_node) {
  fault::FaultOptions f;
  f.split_read = 1;
  f.piece_bytes = 64;
  f.read_order = fault::ReadOrder::kRandom;
  check_torn_reads_are_caught(&f);
}

// The client caches against simple models: LRU order, eviction, erase
// (the node cache's backward-shift deletion) and the path cache's
// replacement of overlapping ranges.
BOOST_AUTO_TEST_CASE(client_caches_against_models) {
  constexpr uint32_t kNodeBytes = 64, kSlots = 16;
  cell::NodeCache nodes(kSlots * kNodeBytes, kNodeBytes);
  std::vector<uint64_t> lru;  // most recent first
  Random rng(5);
  std::byte image[kNodeBytes];
  for (int op = 0; op < 50'000; ++op) {
    const uint64_t ptr = rng.uniform(40) * 4096 + 256;
    const auto it = std::find(lru.begin(), lru.end(), ptr);
    const uint64_t dice = rng.uniform(3);
    if (dice == 0) {
      std::memset(image, static_cast<int>(ptr / 4096), kNodeBytes);
      nodes.insert(ptr, image);
      if (it != lru.end()) lru.erase(it);
      lru.insert(lru.begin(), ptr);
      if (lru.size() > kSlots) lru.pop_back();
    } else if (dice == 1) {
      const std::byte* got = nodes.lookup(ptr);
      BOOST_REQUIRE_EQUAL(got != nullptr, it != lru.end());
      if (got != nullptr) {
        BOOST_REQUIRE(got[0] == static_cast<std::byte>(ptr / 4096) && got[kNodeBytes - 1] == got[0]);
        lru.erase(it);
        lru.insert(lru.begin(), ptr);
      }
    } else {
      nodes.erase(ptr);
      if (it != lru.end()) lru.erase(it);
    }
    BOOST_REQUIRE_EQUAL(nodes.entries(), lru.size());
  }

  struct Range {
    int lo, hi;  // -1: -inf; 100: +inf
    uint64_t root;
  };
  auto text = [](int k) { return std::to_string(10 + k); };  // two digits, ordered as numbers
  auto bound = [&](int k, std::string& buf) {
    buf = text(k);
    return cell::Bound{buf, k < 0 || k >= 90};
  };
  cell::PathCache paths(6, 8);
  std::vector<Range> model;  // most recent first
  for (int op = 0; op < 20'000; ++op) {
    if (rng.uniform(2) == 0) {
      int lo = static_cast<int>(rng.uniform(95)) - 5;
      if (lo < 0) lo = -1;
      int hi = std::max(lo, 0) + 1 + static_cast<int>(rng.uniform(20));
      if (hi >= 90) hi = 100;
      const uint64_t root = rng.next_u64() >> 20;
      std::string a, b;
      paths.insert(bound(lo, a), bound(hi, b), root);
      std::erase_if(model, [&](const Range& r) { return r.lo < hi && lo < r.hi; });
      if (model.size() == 6) model.pop_back();
      model.insert(model.begin(), Range{lo, hi, root});
    } else {
      const int k = static_cast<int>(rng.uniform(90));
      const auto it = std::find_if(model.begin(), model.end(), [&](const Range& r) { return r.lo <= k && k < r.hi; });
      const uint64_t got = paths.lookup(text(k));
      BOOST_REQUIRE_EQUAL(got, it == model.end() ? cell::kNullPtr : it->root);
      if (it != model.end()) std::rotate(model.begin(), it, it + 1);
    }
    BOOST_REQUIRE_EQUAL(paths.size(), model.size());
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cell_servers)

// Several servers driven in process: every operation against std::map,
// splits of nodes and meganodes (local and remote) and new root meganodes
// as the tree grows and shrinks, invariants checked along the way.
BOOST_AUTO_TEST_CASE(differential_against_std_map_in_process) {
  auto cluster = CellCluster::create(3, tiny_options());
  cell::Deployment& d = *cluster->deployment;
  std::map<std::string, std::string> ref;
  Random rng(42);
  constexpr uint64_t kOps = 60'000;
  for (uint64_t op = 0; op < kOps; ++op) {
    // The key space widens over time so the tree keeps growing.
    const std::string key = key_of(rng.uniform(500 + op / 20));
    const uint64_t dice = rng.uniform(100);
    if (dice < 45) {
      const std::string value = make_value(key, op, rng.uniform(120));
      auto st = d.direct_op(OpKind::kPut, key, value);
      BOOST_REQUIRE_MESSAGE(st.is_ok(), "op " << op << " put " << key << ": " << st.status().to_string());
      ref[key] = value;
    } else if (dice < 60) {
      auto r = d.direct_op(OpKind::kDelete, key);
      BOOST_REQUIRE(r.is_ok());
      BOOST_REQUIRE_EQUAL(r->found, ref.erase(key) == 1);
    } else if (dice < 95) {
      auto r = d.direct_op(dice < 80 ? OpKind::kGet : OpKind::kContains, key);
      BOOST_REQUIRE(r.is_ok());
      auto it = ref.find(key);
      BOOST_REQUIRE_EQUAL(r->found, it != ref.end());
      if (dice < 80 && r->found) BOOST_REQUIRE(r->value == it->second);
    } else {
      const std::string end = key_of(rng.uniform(500 + op / 20));
      const uint32_t limit = static_cast<uint32_t>(1 + rng.uniform(60));
      Collect c;
      const bool bounded = rng.uniform(2) == 0;
      auto n = d.direct_range(key, bounded ? std::optional<std::string_view>(end) : std::nullopt, limit, c);
      BOOST_REQUIRE(n.is_ok());
      BOOST_REQUIRE(c.got == expected_range(ref, key, bounded ? &end : nullptr, limit));
    }
    if (op % 5000 == 0) BOOST_REQUIRE_MESSAGE(d.check_invariants().is_ok(), d.check_invariants().to_string());
  }
  for (const auto& [k, v] : ref) {
    auto r = d.direct_op(OpKind::kGet, k);
    BOOST_REQUIRE(r.is_ok() && r->found && r->value == v);
  }
  Collect all;
  BOOST_REQUIRE(d.direct_range("", std::nullopt, UINT32_MAX, all).is_ok());
  BOOST_REQUIRE(all.got == expected_range(ref, "", nullptr, UINT32_MAX));
  BOOST_REQUIRE(d.check_invariants().is_ok());
  const cell::DeploymentStats s = d.stats();
  BOOST_TEST_MESSAGE("in process: " << ref.size() << " keys, " << s.store.node_splits << " node splits, "
                                    << s.store.root_splits << " local root splits, " << s.splits
                                    << " meganode splits (" << s.remote_placements << " remote), "
                                    << s.new_roots << " new root meganodes, root level " << s.root_level);
  BOOST_TEST(s.store.keys == ref.size());
  BOOST_TEST(s.store.node_splits > 1000u);
  BOOST_TEST(s.splits > 50u);
  BOOST_TEST(s.remote_placements > 0u);
  BOOST_TEST(s.new_roots >= 2u);
  BOOST_TEST(s.root_level >= 2u);
  BOOST_TEST(s.parents_abandoned == 0u);
  for (size_t i = 0; i < d.server_count(); ++i) BOOST_TEST(d.server(i).store().stats().meganodes_in_use > 1u);
}

BOOST_AUTO_TEST_CASE(rejects_bad_input) {
  auto cluster = CellCluster::create(1, tiny_options());
  cell::Deployment& d = *cluster->deployment;
  BOOST_TEST(d.direct_op(OpKind::kPut, "", "v").status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(d.direct_op(OpKind::kPut, std::string(17, 'k'), "v").status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(d.direct_op(OpKind::kPut, "k", std::string(2000, 'v')).status().code() == StatusCode::kInvalidArgument);
  cell::CellServer& server = d.server(0);
  const std::byte garbage[5] = {std::byte{2}, std::byte{0}, std::byte{1}, std::byte{1}, std::byte{1}};
  for (uint16_t type = 1; type < 20; ++type) {
    std::vector<std::byte> out(16 * 1024);
    rpc::Reader r(std::span<const std::byte>(garbage, sizeof garbage));
    rpc::Writer w(out);
    BOOST_TEST(!server.handle(type, r, w).is_ok());
    rpc::Reader r2(std::span<const std::byte>(garbage, sizeof garbage));
    rpc::Writer w2(out);
    BOOST_TEST(!server.handle_internal(type, r2, w2).is_ok());
  }
  cell::ServerOptions bad = tiny_options();
  bad.store.split_fill_fraction = 0.95;
  BOOST_TEST(!bad.validate().is_ok());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cell_end_to_end)

// Issue 16, defect 3: the split protocol's requests (types 10-19, and
// kOp's insert_child) reshape and free the tree; a client that sends them
// is refused with a clear error, the server keeps serving, the tree stays
// intact. Only kInternal requests with the tree's key reach them.
BOOST_AUTO_TEST_CASE(split_requests_from_a_client_are_refused) {
  cell::ServerOptions options = tiny_options();
  options.tree_key = 0x5EC12E7C0FFEEull;
  auto cluster = CellCluster::create(1, options);
  cell::Deployment& d = *cluster->deployment;
  for (uint64_t i = 0; i < 200; ++i) BOOST_REQUIRE(d.direct_op(OpKind::kPut, key_of(i), make_value(key_of(i), 0, 8)).is_ok());
  const uint64_t root = d.server(0).store().root();
  std::vector<Status> answers;
  auto node = cluster->runtime->add_node({"intruder", false});
  BOOST_REQUIRE(node.is_ok());
  BOOST_REQUIRE(cluster->runtime->spawn(*node, "intruder", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env);
    auto rpc = rpc::RpcClient::create(ep, d.client_rpc_options());
    if (!rpc.is_ok()) return cluster->failures.fail(rpc.status().to_string());
    const NodeId server = d.bootstrap();
    auto send = [&](uint16_t type, const std::function<void(rpc::Writer&)>& body) {
      rpc::Writer w((*rpc)->payload_buffer());
      body(w);
      answers.push_back((*rpc)->call(server, type, w.size()).status());
    };
    send(cell::kMeganodeAbandon, [&](rpc::Writer& w) { w.put(root); });  // no longer a client type
    send(cell::kSetRoot, [&](rpc::Writer& w) { w.put(root), w.put(uint64_t{0}), w.put(uint32_t{0}); });
    send(cell::kInternal, [&](rpc::Writer& w) {  // a guessed key
      w.put(uint64_t{0});
      w.put(uint16_t{cell::kMeganodeAbandon});
      w.put(root);
    });
    send(cell::kOp, [&](rpc::Writer& w) {
      cell::encode_op_request({.op = OpKind::kInsertChild, .level = 1, .start = root, .key = "k", .child = root}, w);
    });
  }).is_ok());
  cluster->add_client("client", selector::SelectorKind::kServerOnly, {}, [&](cell::CellClient& c, Env&) {
    for (uint64_t i = 0; i < 200; ++i) {
      auto got = c.get(key_of(i));
      if (!got.is_ok() || !value_was_written_for(key_of(i), *got)) return cluster->failures.fail("get " + key_of(i));
    }
  });
  cluster->run();
  BOOST_TEST_REQUIRE(answers.size() == 4u);
  for (const Status& a : answers) BOOST_TEST(!a.is_ok(), a.to_string());
  BOOST_TEST(answers[2].message().find("tree's key") != std::string::npos, answers[2].to_string());
  BOOST_TEST(answers[3].message().find("insert_child") != std::string::npos, answers[3].to_string());
  BOOST_TEST(d.server(0).refused_internal() == 2u);
  BOOST_TEST(d.server(0).store().root() == root);
}

// One client against std::map over the loopback backend, all operations,
// the path of every step chosen by `kind`; meganode splits run meanwhile
// in the servers' split workers.
void run_differential(selector::SelectorKind kind, uint64_t ops, uint32_t servers) {
  auto cluster = CellCluster::create(servers, tiny_options(), 7 + static_cast<uint64_t>(kind), servers > 2);
  cell::ClientOptions co;
  co.cache_min_distance = 1;  // small trees: cache everything above the leaves
  co.node_cache_bytes = 64 * 1024;
  std::atomic<uint64_t> client_steps{0}, server_steps{0}, cache_hits{0}, path_hits{0};
  cluster->add_client("client0", kind, co, [&](cell::CellClient& c, Env& env) {
    std::map<std::string, std::string> ref;
    auto fail = [&](const std::string& what) { cluster->failures.fail(what); };
    for (uint64_t op = 0; op < ops; ++op) {
      const std::string key = key_of(env.random->uniform(300 + op / 4));
      const uint64_t dice = env.random->uniform(100);
      if (dice < 40) {
        const std::string value = make_value(key, op, env.random->uniform(100));
        if (Status st = c.put(key, value); !st.is_ok()) return fail("put " + key + ": " + st.to_string());
        ref[key] = value;
      } else if (dice < 50) {
        const Status st = c.remove(key);
        const bool had = ref.erase(key) == 1;
        if (st.is_ok() != had || (!had && st.code() != StatusCode::kNotFound)) {
          return fail("delete " + key + ": " + st.to_string());
        }
      } else if (dice < 80) {
        auto got = c.get(key);
        auto it = ref.find(key);
        if (it == ref.end() ? got.status().code() != StatusCode::kNotFound : (!got.is_ok() || *got != it->second)) {
          return fail("get " + key + ": " + got.status().to_string());
        }
      } else if (dice < 95) {
        auto has = c.contains(key);
        if (!has.is_ok() || *has != (ref.count(key) == 1)) return fail("contains " + key);
      } else {
        const std::string end = key_of(env.random->uniform(300 + op / 4));
        const uint32_t limit = static_cast<uint32_t>(1 + env.random->uniform(40));
        Collect got;
        auto n = c.range(key, std::optional<std::string_view>(end), limit, got);
        const auto want = expected_range(ref, key, &end, limit);
        if (!n.is_ok() || got.got != want) {
          std::string diff;
          for (size_t i = 0; i < std::max(want.size(), got.got.size()); ++i) {
            const std::string w = i < want.size() ? want[i].first : "-";
            const std::string g = i < got.got.size() ? got.got[i].first : "-";
            if (w != g || (i < want.size() && i < got.got.size() && want[i].second != got.got[i].second)) {
              diff = " first difference at " + std::to_string(i) + ": want " + w + ", got " + g;
              break;
            }
          }
          return fail("range [" + key + ", " + end + ") limit " + std::to_string(limit) + " wrong: " +
                      n.status().to_string() + ", " + std::to_string(got.got.size()) + " entries, want " +
                      std::to_string(want.size()) + diff);
        }
      }
    }
    Collect all;
    auto n = c.range("", std::nullopt, UINT32_MAX, all);
    if (!n.is_ok() || all.got != expected_range(ref, "", nullptr, UINT32_MAX)) return fail("final scan wrong");
    client_steps = c.stats().client_steps;
    server_steps = c.stats().server_steps;
    cache_hits = c.stats().node_cache_hits;
    path_hits = c.stats().path_cache_hits;
  });
  cluster->run();
  const cell::DeploymentStats s = cluster->deployment->stats();
  BOOST_TEST_MESSAGE(selector::selector_kind_name(kind)
                     << ": " << s.splits << " meganode splits (" << s.remote_placements << " remote), "
                     << s.store.node_splits << " node splits, root level " << s.root_level << "; client steps "
                     << client_steps.load() << ", server steps " << server_steps.load() << ", node cache hits "
                     << cache_hits.load() << ", path cache hits " << path_hits.load());
  BOOST_TEST(s.splits > 10u);
  BOOST_TEST(s.store.node_splits > 100u);
  if (kind != selector::SelectorKind::kServerOnly) BOOST_TEST(client_steps.load() > 0u);
  if (kind != selector::SelectorKind::kClientOnly) BOOST_TEST(server_steps.load() > 0u);
  if (kind == selector::SelectorKind::kClientOnly) BOOST_TEST(cache_hits.load() > 0u);
  BOOST_TEST(path_hits.load() > 0u);
  BOOST_TEST(s.rpc_rejected == 0u);
}

// A node held locked past the client's torn-read budget (a writer
// descheduled mid-write) sends that meganode's step to the server: the
// operations still answer correctly, and once the node is published the
// client reads it again.
BOOST_AUTO_TEST_CASE(a_node_locked_too_long_is_left_to_the_server) {
  auto cluster = CellCluster::create(1, tiny_options());
  cell::Deployment& d = *cluster->deployment;
  std::map<std::string, std::string> ref;
  for (uint64_t i = 0; i < 15; ++i) {  // a few levels, too few for a meganode split
    const std::string key = key_of(i), value = make_value(key, i, 30);
    BOOST_REQUIRE(d.direct_op(OpKind::kPut, key, value).is_ok());
    ref[key] = value;
  }
  cell::Store& store = d.server(0).store();
  cell::NodeWriter lock(cell::StoreTestPeer::node(store, cell::ptr_offset(store.root())), store.geometry());
  cell::ClientOptions co;
  co.torn.max_attempts = 8;
  std::atomic<uint64_t> fallbacks_locked{0}, fallbacks_after{0}, server_steps{0};
  cluster->add_client("client", selector::SelectorKind::kClientOnly, co, [&](cell::CellClient& c, Env&) {
    auto check_all = [&](const char* phase) {
      for (const auto& [key, value] : ref) {
        auto got = c.get(key);
        if (!got.is_ok() || *got != value) return cluster->failures.fail(std::string(phase) + ": get " + key);
      }
      Collect all;
      if (!c.range("", std::nullopt, UINT32_MAX, all).is_ok() || all.got != expected_range(ref, "", nullptr, UINT32_MAX)) {
        cluster->failures.fail(std::string(phase) + ": range");
      }
    };
    lock.begin();  // both versions odd until end()
    check_all("root locked");
    lock.end();
    fallbacks_locked = c.stats().torn_fallbacks;
    server_steps = c.stats().server_steps;
    check_all("root published");
    fallbacks_after = c.stats().torn_fallbacks;
  });
  cluster->run();
  BOOST_TEST(fallbacks_locked.load() >= ref.size() + 1);  // every get, and the range
  BOOST_TEST(server_steps.load() == fallbacks_locked.load());  // the selector itself never picks the server
  BOOST_TEST(fallbacks_after.load() == fallbacks_locked.load());
}

BOOST_AUTO_TEST_CASE(server_side_matches_std_map) { run_differential(selector::SelectorKind::kServerOnly, 6000, 2); }
BOOST_AUTO_TEST_CASE(client_side_matches_std_map) { run_differential(selector::SelectorKind::kClientOnly, 6000, 2); }
BOOST_AUTO_TEST_CASE(mixed_paths_match_std_map) { run_differential(selector::SelectorKind::kFixedRatio, 6000, 3); }
BOOST_AUTO_TEST_CASE(jsq_matches_std_map) { run_differential(selector::SelectorKind::kJsq, 6000, 3); }

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cell_concurrency)

// Writers insert (in a scrambled order), update and delete keys through
// the servers, splitting nodes and meganodes all the time, while readers
// search with RDMA, with RPCs and with JSQ's mix, and scan ranges. A key a
// writer acknowledged before a search began, and never deletes, must be
// found; one whose delete was acknowledged before must not; every value
// returned must be one written for its key.
BOOST_AUTO_TEST_CASE(searches_race_splitting_writers) {
  constexpr uint64_t kWriters = 3;
  constexpr uint64_t kKeysPerWriter = 3000;
  constexpr uint64_t kStride = 7919;  // coprime with kKeysPerWriter: a scrambled insert order
  constexpr uint64_t kDeleteLag = 8;
  auto cluster = CellCluster::create(3, tiny_options(), 99, true);
  struct Progress {
    std::atomic<uint64_t> inserted{0};      // order positions [0, inserted) were put
    std::atomic<uint64_t> deleted_below{0}; // positions p < deleted_below with p % 4 == 0 are gone
  };
  Progress progress[kWriters];
  std::atomic<uint64_t> writers_done{0};
  std::vector<uint64_t> order(kKeysPerWriter), position_of(kKeysPerWriter);
  for (uint64_t p = 0; p < kKeysPerWriter; ++p) {
    order[p] = (p * kStride + 13) % kKeysPerWriter;
    position_of[order[p]] = p;
  }
  auto key_at = [&](uint64_t writer, uint64_t position) { return key_of(order[position] * kWriters + writer); };
  auto deleted = [](uint64_t position) { return position % 4 == 0; };

  for (uint64_t w = 0; w < kWriters; ++w) {
    cluster->add_client("writer" + std::to_string(w), selector::SelectorKind::kFixedRatio, {}, [&, w](cell::CellClient& c, Env& env) {
      auto fail = [&](const std::string& what) { cluster->failures.fail(what); };
      for (uint64_t p = 0; p < kKeysPerWriter; ++p) {
        const std::string key = key_at(w, p);
        if (Status st = c.put(key, make_value(key, 0, env.random->uniform(60))); !st.is_ok()) {
          writers_done.fetch_add(1);
          return fail("put " + key + ": " + st.to_string());
        }
        progress[w].inserted.store(p + 1, std::memory_order_release);
        if (p >= 1 && p % 3 == 1) {  // a new version of an earlier key (new extent, old one freed)
          const std::string k = key_at(w, p - 1);
          if (Status st = c.put(k, make_value(k, p, env.random->uniform(60))); !st.is_ok()) {
            writers_done.fetch_add(1);
            return fail("update " + k + ": " + st.to_string());
          }
        }
        if (p >= kDeleteLag && deleted(p - kDeleteLag)) {
          const std::string k = key_at(w, p - kDeleteLag);
          if (Status st = c.remove(k); !st.is_ok()) {
            writers_done.fetch_add(1);
            return fail("delete " + k + ": " + st.to_string());
          }
          progress[w].deleted_below.store(p - kDeleteLag + 1, std::memory_order_release);
        }
      }
      writers_done.fetch_add(1);
    });
  }

  // Hot keys: one client rewrites the first live keys of writer 0 again and
  // again, so RDMA readers of them meet leaves and extents mid-write.
  constexpr uint64_t kHot = 24;
  cluster->add_client("hot-updater", selector::SelectorKind::kServerOnly, {}, [&](cell::CellClient& c, Env& env) {
    uint64_t version = 1'000'000;
    while (writers_done.load() < kWriters) {
      const uint64_t ins = progress[0].inserted.load(std::memory_order_acquire);
      const uint64_t p = env.random->uniform(std::min(ins, kHot) + 1);
      if (p >= ins || deleted(p)) continue;
      const std::string k = key_at(0, p);
      if (Status st = c.put(k, make_value(k, ++version, env.random->uniform(200))); !st.is_ok()) {
        return cluster->failures.fail("hot update " + k + ": " + st.to_string());
      }
    }
  });

  std::atomic<uint64_t> checks{0}, restarts{0}, torn{0}, extent_retries{0};
  auto point_reader = [&](const std::string& name, selector::SelectorKind kind, bool use_get) {
    cell::ClientOptions co;
    co.cache_min_distance = 1;
    co.node_cache_bytes = 32 * 1024;
    cluster->add_client(name, kind, co, [&, name, use_get](cell::CellClient& c, Env& env) {
      uint64_t n = 0;
      while (writers_done.load() < kWriters) {
        const uint64_t w = env.random->uniform(kWriters);
        const uint64_t gone_below = progress[w].deleted_below.load(std::memory_order_acquire);
        const uint64_t ins = progress[w].inserted.load(std::memory_order_acquire);
        if (ins == 0) continue;
        // Half the searches go to the hot keys.
        const uint64_t p = env.random->uniform(env.random->uniform(2) == 0 ? std::min(ins, kHot) : ins);
        const std::string key = key_at(w, p);
        const bool must_exist = !deleted(p);
        const bool must_be_gone = deleted(p) && p < gone_below;
        bool found = false;
        if (use_get) {
          auto got = c.get(key);
          if (!got.is_ok() && got.status().code() != StatusCode::kNotFound) {
            return cluster->failures.fail(name + " get " + key + ": " + got.status().to_string());
          }
          found = got.is_ok();
          if (found && !value_was_written_for(key, *got)) {
            return cluster->failures.fail(name + " get " + key + " returned a value never written for it");
          }
        } else {
          auto has = c.contains(key);
          if (!has.is_ok()) return cluster->failures.fail(name + " contains " + key + ": " + has.status().to_string());
          found = *has;
        }
        if ((must_exist && !found) || (must_be_gone && found)) {
          return cluster->failures.fail(name + ": " + key + (found ? " found after its delete" : " missed"));
        }
        ++n;
      }
      checks += n;
      restarts += c.stats().restarts;
      torn += c.stats().torn_reads;
      extent_retries += c.stats().extent_retries;
    });
  };
  point_reader("rdma-get0", selector::SelectorKind::kClientOnly, true);
  point_reader("rdma-get1", selector::SelectorKind::kClientOnly, true);
  point_reader("rdma-contains", selector::SelectorKind::kClientOnly, false);
  point_reader("rpc-get", selector::SelectorKind::kServerOnly, true);
  point_reader("jsq-get", selector::SelectorKind::kJsq, true);

  auto range_reader = [&](const std::string& name, selector::SelectorKind kind) {
    cluster->add_client(name, kind, {}, [&, name](cell::CellClient& c, Env& env) {
      uint64_t n = 0;
      while (writers_done.load() < kWriters) {
        uint64_t ins[kWriters], gone_below[kWriters];
        for (uint64_t w = 0; w < kWriters; ++w) {
          gone_below[w] = progress[w].deleted_below.load(std::memory_order_acquire);
          ins[w] = progress[w].inserted.load(std::memory_order_acquire);
        }
        const uint64_t first = env.random->uniform(kKeysPerWriter * kWriters);
        const uint64_t last = first + 1 + env.random->uniform(60);
        const std::string start = key_of(first), end = key_of(last);
        Collect got;
        auto r = c.range(start, std::optional<std::string_view>(end), UINT32_MAX, got);
        if (!r.is_ok()) return cluster->failures.fail(name + " range: " + r.status().to_string());
        std::string prev;
        for (const auto& [k, v] : got.got) {
          if (k < start || k >= end || (!prev.empty() && k <= prev) || !value_was_written_for(k, v)) {
            return cluster->failures.fail(name + " range [" + start + ", " + end + ") returned " + k +
                                          " out of order, out of bounds or with a foreign value");
          }
          prev = k;
        }
        for (uint64_t x = first; x < last && x < kKeysPerWriter * kWriters; ++x) {
          const uint64_t w = x % kWriters, p = position_of[x / kWriters];
          const bool must_exist = p < ins[w] && !deleted(p);
          const bool must_be_gone = deleted(p) && p < gone_below[w];
          const bool found = std::any_of(got.got.begin(), got.got.end(), [&](const auto& e) { return e.first == key_of(x); });
          if ((must_exist && !found) || (must_be_gone && found)) {
            return cluster->failures.fail(name + " range [" + start + ", " + end + "): " + key_of(x) +
                                          (found ? " found after its delete" : " missed"));
          }
        }
        ++n;
      }
      checks += n;
    });
  };
  range_reader("rdma-range", selector::SelectorKind::kClientOnly);
  range_reader("rpc-range", selector::SelectorKind::kServerOnly);

  cluster->run();
  const cell::DeploymentStats s = cluster->deployment->stats();
  BOOST_TEST_MESSAGE("race: " << checks.load() << " checked searches and ranges against " << s.splits
                              << " meganode splits (" << s.remote_placements << " remote) and " << s.store.node_splits
                              << " node splits; restarts " << restarts.load() << ", torn reads " << torn.load()
                              << ", extent retries " << extent_retries.load() << ", busy replies "
                              << s.store.busy_replies);
  BOOST_TEST(checks.load() > 1000u);
  BOOST_TEST(s.splits > 20u);
  BOOST_TEST(s.store.node_splits > 500u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cell_design)

// Cell through the one run path on loopback, end to end on a small YCSB A
// run with scans mixed in: the driver loads a tree spread over two servers
// (64-node meganodes split during the load), JSQ clients run, the servers
// and clients report.
BOOST_AUTO_TEST_CASE(scenario_runs_on_loopback) {
  auto sc = designs::parse_scenario(R"(
[platform]
servers = 2
cores_per_server = 1
[index]
type = "cell"
meganode_bytes = 65536
cache_min_distance = 1
[workload]
standard = "a"
recordcount = 3000
operationcount = 3000
readproportion = 0.45
scanproportion = 0.05
maxscanlength = 20
fieldcount = 2
fieldlength = 50
[selector]
type = "jsq"
[run]
clients = 3
duration_s = 0.6
warmup_s = 0.1
[output]
)", "cell-loopback.toml");
  BOOST_REQUIRE_MESSAGE(sc.is_ok(), sc.status().to_string());
  auto r = runner::run_scenario(*sc, designs::registry(), [](const scenario::Scenario& s) {
    loopback::LoopbackOptions lo;
    lo.seed = s.run.seed;
    return loopback::make_loopback_runtime(lo);
  });
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  const metrics::RunResult& result = r->result;
  BOOST_TEST(result.backend == "loopback");
  BOOST_TEST(result.stats.total_ops() > 100u);
  BOOST_TEST(result.stats.total_failed() == 0u);
  BOOST_TEST(result.stats.counter_value("failed_ops") == 0);
  BOOST_REQUIRE(result.stats.find_op("SCAN") != nullptr);
  BOOST_TEST(result.stats.find_op("SCAN")->latency.count() > 0u);
  BOOST_TEST(result.extra.at("cell.meganode_splits_load") > 0.0);
  BOOST_TEST(result.extra.at("cell.split_failures") == 0.0);
  BOOST_TEST(result.extra.at("cell.keys") >= 3000.0);
  BOOST_TEST_MESSAGE(metrics::format_table({result}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
