// Helpers for Cell tests: keys and self-describing values, a tiny tree
// geometry on which both kinds of splits happen every few dozen inserts, a
// range sink, the std::map model of a range, and CellCluster (a Cell
// deployment on a loopback runtime plus client actors that each get a
// connected CellClient and their own selector). Header-only.
#pragma once

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/loopback/loopback_runtime.h"
#include "core/index/cell/client.h"
#include "core/index/cell/deployment.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector_config.h"
#include "core/transport/endpoint.h"
#include "tests/support/failure_log.h"

namespace locus::testing {

inline std::string key_of(uint64_t i) {
  std::string k = std::to_string(i);
  return "k" + std::string(7 - std::min<size_t>(7, k.size()), '0') + k;
}

// A value that names its key and version and can be checked by anyone.
inline std::string make_value(std::string_view key, uint64_t version, size_t filler_bytes) {
  std::string v = std::string(key) + "#" + std::to_string(version) + "#";
  const uint64_t seed = std::hash<std::string_view>()(key) ^ (version * 0x9E3779B97F4A7C15ULL);
  for (size_t i = 0; i < filler_bytes; ++i) v.push_back(static_cast<char>('a' + (seed + i * 7) % 26));
  return v;
}

inline bool value_was_written_for(std::string_view key, std::string_view value) {
  if (value.size() < key.size() + 2 || value.substr(0, key.size()) != key || value[key.size()] != '#') return false;
  const size_t end = value.find('#', key.size() + 1);
  if (end == std::string_view::npos || end == key.size() + 1) return false;
  uint64_t version = 0;
  for (size_t i = key.size() + 1; i < end; ++i) {
    if (value[i] < '0' || value[i] > '9') return false;
    version = version * 10 + static_cast<uint64_t>(value[i] - '0');
  }
  return value == make_value(key, version, value.size() - end - 1);
}

// 256-byte nodes of 16-byte keys (3 extents or 5 children per node) in
// meganodes of 32 nodes that split at half full: both kinds of splits
// happen every few dozen inserts.
inline cell::ServerOptions tiny_options() {
  cell::ServerOptions o;
  o.store.geometry.node_bytes = 256;
  o.store.geometry.key_capacity_bytes = 16;
  o.store.geometry.meganode_nodes = 32;
  o.store.geometry.meganodes_per_server = 1024;
  o.store.extents_bytes = 8u << 20;
  o.store.max_kv_bytes = 1024;
  o.store.min_extent_block_bytes = 32;
  o.store.split_fill_fraction = 0.5;
  return o;
}

struct Collect final : cell::RangeSink {
  std::vector<std::pair<std::string, std::string>> got;
  bool accept(std::string_view k, std::string_view v) override {
    got.emplace_back(k, v);
    return true;
  }
};

// Expected [start, end) of at most limit entries from the reference.
inline std::vector<std::pair<std::string, std::string>> expected_range(const std::map<std::string, std::string>& ref,
                                                                const std::string& start, const std::string* end,
                                                                uint32_t limit) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = ref.lower_bound(start); it != ref.end() && out.size() < limit; ++it) {
    if (end != nullptr && it->first >= *end) break;
    out.emplace_back(it->first, it->second);
  }
  return out;
}

// A Cell deployment on a loopback runtime, and client actors.
struct CellCluster {
  std::unique_ptr<Runtime> runtime;               // declared first: destroyed last
  std::unique_ptr<cell::Deployment> deployment;
  testing::FailureLog failures;

  // spread: place every new meganode on the server holding fewest, so
  // traversals cross servers as often as possible.
  static std::unique_ptr<CellCluster> create(uint32_t servers, const cell::ServerOptions& options,
                                             uint64_t seed = 1, bool spread = false) {
    auto c = std::make_unique<CellCluster>();
    loopback::LoopbackOptions lo;
    lo.seed = seed;
    c->runtime = loopback::make_loopback_runtime(lo);
    cell::DeploymentOptions d;
    d.servers = servers;
    d.server = options;
    if (spread) d.split.placement.spread_until_meganodes = UINT32_MAX;
    auto dep = cell::Deployment::create(*c->runtime, d);
    BOOST_REQUIRE_MESSAGE(dep.is_ok(), dep.status().to_string());
    c->deployment = std::move(dep).value();
    return c;
  }

  void add_client(const std::string& name, selector::SelectorKind kind, cell::ClientOptions options,
                  std::function<void(cell::CellClient&, Env&)> body) {
    auto node = runtime->add_node({name, false});
    BOOST_REQUIRE(node.is_ok());
    BOOST_REQUIRE(runtime
                      ->spawn(*node, name, ActorKind::kWorker,
                              [this, name, kind, options, body](Env& env) {
                                Endpoint ep(env);
                                auto rpc = rpc::RpcClient::create(ep, deployment->client_rpc_options());
                                if (!rpc.is_ok()) return failures.fail(name + ": " + rpc.status().to_string());
                                selector::SelectorConfig sc;
                                sc.kind = kind;
                                auto sel = selector::make_selector(sc, *env.random);
                                if (!sel.is_ok()) return failures.fail(name + ": " + sel.status().to_string());
                                auto client = cell::CellClient::connect(ep, **rpc, deployment->bootstrap(), **sel,
                                                                        options);
                                if (!client.is_ok()) return failures.fail(name + ": " + client.status().to_string());
                                body(**client, env);
                              })
                      .is_ok());
  }

  void run() {
    BOOST_REQUIRE(deployment->spawn_daemons().is_ok());
    BOOST_REQUIRE(runtime->run().is_ok());
    const cell::DeploymentStats s = deployment->stats();
    BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first() << " (split failures: " << s.split_failures << " "
                                                             << s.first_split_error << ")");
    BOOST_REQUIRE_MESSAGE(s.split_failures == 0, s.first_split_error);
    BOOST_REQUIRE(deployment->check_invariants().is_ok());
  }
};

}  // namespace locus::testing
