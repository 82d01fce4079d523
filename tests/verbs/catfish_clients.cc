// Catfish clients of the verbs tier: see catfish_clients.h.
#include "tests/verbs/catfish_clients.h"

#include "backends/verbs/verbs_runtime.h"
#include "core/index/catfish/load.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"
#include "tests/support/rtree_oracle.h"

namespace locus::verbs::testing {
namespace {

// The server's largest answer (Catfish's driver's: 6,500 hits); a client
// must take as much.
constexpr uint32_t kMaxResponseBytes = 256 * 1024;

bool intersects(const catfish::Rect& a, const catfish::Rect& b) {
  return a.x_min <= b.x_max && b.x_min <= a.x_max && a.y_min <= b.y_max && b.y_min <= a.y_max;
}

}  // namespace

ServedIndex start_catfish_tree(const std::string& name, const std::string& server_mode,
                               const std::string& serve_verbs) {
  return start_served_index(name, scenario_path("catfish.toml"), {"index.server_mode=" + server_mode},
                            kCatfishEndpoints, serve_verbs);
}

std::vector<uint64_t> loaded_ids_in(const catfish::Rect& q) {
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < kCatfishRectangles; ++id) {
    if (intersects(catfish::loaded_rectangle(kCatfishSeed, id), q)) ids.push_back(id);
  }
  return ids;
}

void with_catfish_client(const ClusterConfig& config, selector::SelectorKind kind, const CatfishClientBody& fn,
                         locus::testing::FailureLog& failures) {
  auto runtime = make_verbs_runtime(config);
  auto node = runtime->add_node({"client0", false});
  if (!node.is_ok()) return failures.fail("client node: " + node.status().to_string());
  Status spawned = runtime->spawn(*node, "client0", ActorKind::kWorker, [&](Env& env) {
    Endpoint ep(env, 20 * kSecond);
    auto rpc = rpc::RpcClient::create(ep);
    if (!rpc.is_ok()) return failures.fail("rpc client: " + rpc.status().to_string());
    selector::SelectorConfig sc;
    sc.kind = kind;
    auto sel = selector::make_selector(sc, *env.random);
    if (!sel.is_ok()) return failures.fail("selector: " + sel.status().to_string());
    catfish::CatfishClientOptions options;
    options.messaging.max_response_bytes = kMaxResponseBytes;
    auto client = catfish::CatfishClient::connect(ep, **rpc, kCatfishConnectNode, **sel, options);
    if (!client.is_ok()) return failures.fail("connect: " + client.status().to_string());
    fn(**client, env);
  });
  if (!spawned.is_ok()) return failures.fail("spawn: " + spawned.to_string());
  if (Status ran = runtime->run(); !ran.is_ok()) failures.fail("run: " + ran.to_string());
}

void check_catfish_searches(catfish::CatfishClient& c, const std::string& tag, uint64_t first, int queries,
                            locus::testing::FailureLog& failures) {
  std::vector<catfish::Hit> by_server, by_client;
  for (uint64_t k = 0; k < static_cast<uint64_t>(queries); ++k) {
    const catfish::Rect r = catfish::loaded_rectangle(kCatfishSeed, (first + k * 373) % kCatfishRectangles);
    const double pad = k % 2 == 0 ? 0.01 : 0.03;
    const catfish::Rect q{r.x_min - pad, r.y_min - pad, r.x_max + pad, r.y_max + pad};
    Status s1 = c.search_by(selector::Path::kServer, q, &by_server);
    Status s2 = c.search_by(selector::Path::kClient, q, &by_client);
    if (!s1.is_ok() || !s2.is_ok()) return failures.fail(tag + " search: " + s1.to_string() + " / " + s2.to_string());
    const std::vector<uint64_t> want = loaded_ids_in(q);
    if (by_server.empty()) return failures.fail(tag + ": a search around a loaded rectangle found nothing");
    if (locus::testing::sorted_ids(by_server) != locus::testing::sorted_ids(by_client)) {
      return failures.fail(tag + ": the two paths differ");
    }
    if (locus::testing::sorted_ids(by_server) != want)
      return failures.fail(tag + ": the answer is not the loaded rectangles");
  }
}

}  // namespace locus::verbs::testing
