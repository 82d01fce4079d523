// Half-built meganodes of a dead source (issue 20, docs/durability.md): the
// server that drives a meganode split dies after each of the split's steps
// in turn, and the takeover of its store (abort the splits it began, settle
// its own builds, then resolve_builds_elsewhere on the live servers) must
// leave no meganode allocated that the tree cannot reach, and every key
// served. Before orphans.h, a split killed between the target's create and
// the source's finish left Y allocated on the live target for good.
#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/orphans.h"
#include "core/index/cell/split_driver.h"
#include "tests/support/cell_cluster.h"

namespace locus {
namespace {

using cell::OpKind;
using testing::CellCluster;
using testing::key_of;
using testing::make_value;
using Model = std::map<std::string, std::string>;

// The source's machine dies after `live_calls` requests: its driver's later
// requests (and retries) go nowhere.
class DyingCaller final : public cell::Caller {
 public:
  DyingCaller(cell::Caller& next, size_t live_calls) : next_(next), left_(live_calls) {}
  std::span<std::byte> payload_buffer() override { return next_.payload_buffer(); }
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override {
    if (left_ == 0) return unavailable("the source's machine died");
    --left_;
    return next_.call(server, type, payload_bytes);
  }
  bool died() const { return left_ == 0; }

 private:
  cell::Caller& next_;
  size_t left_;
};

uint32_t meganodes_in_use(cell::Deployment& d) {
  uint32_t n = 0;
  for (size_t i = 0; i < d.server_count(); ++i) n += d.server(i).store().meganodes_in_use();
  return n;
}

Model tree_of(cell::Deployment& d) {
  testing::Collect all;
  auto n = d.direct_range("", std::nullopt, 1u << 30, all);
  BOOST_REQUIRE_MESSAGE(n.is_ok(), n.status().to_string());
  Model m;
  for (auto& [k, v] : all.got) BOOST_REQUIRE_MESSAGE(m.emplace(k, v).second, "key " << k << " twice");
  return m;
}

// Allocated meganodes against reachable ones: the meganodes in use before
// the split, one more if the split linked Y (the source finished it), one
// more if a new root meganode was installed; nothing locked or half built.
void expect_no_leak(cell::Deployment& d, uint32_t before, const cell::DeploymentStats& stats_before,
                    const std::string& where) {
  const cell::DeploymentStats st = d.stats();
  const uint32_t reachable = before +
                             static_cast<uint32_t>(st.store.meganode_splits - stats_before.store.meganode_splits) +
                             (st.root_level - stats_before.root_level);
  for (size_t i = 0; i < d.server_count(); ++i) {
    BOOST_REQUIRE_MESSAGE(d.server(i).store().pending_splits().empty(), where << ": server " << i << " has a lock");
    BOOST_REQUIRE_MESSAGE(d.server(i).store().pending_builds().empty(),
                          where << ": server " << i << " holds a meganode half built");
  }
  BOOST_REQUIRE_MESSAGE(meganodes_in_use(d) == reachable,
                        where << ": " << meganodes_in_use(d) << " meganodes allocated, " << reachable << " reachable");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_orphan)

BOOST_AUTO_TEST_CASE(a_source_dying_at_any_split_step_leaks_no_meganode) {
  size_t abandoned_somewhere = 0;
  for (size_t live_calls = 0;; ++live_calls) {
    BOOST_REQUIRE(live_calls < 1000);
    const std::string where = "source died after " + std::to_string(live_calls) + " requests";
    auto c = CellCluster::create(2, testing::tiny_options());
    cell::Deployment& d = *c->deployment;
    cell::CellServer& source = d.server(0);
    cell::DirectCaller direct(source.options().max_message_bytes);
    for (size_t i = 0; i < d.server_count(); ++i) direct.add(&d.server(i));
    Model model;
    uint32_t meganode = 0;
    for (uint64_t i = 0; !source.try_take_split(&meganode); ++i) {
      BOOST_REQUIRE(i < 1000);
      const std::string key = key_of(i * 7 % 1000);
      model[key] = make_value(key, i, 20);
      // Through the request path, which leaves the split to a driver: the
      // root meganode's, and server 1 holds none, so Y goes there.
      cell::OpRequest q;
      q.op = OpKind::kPut;
      q.key = key;
      q.value = model[key];
      rpc::Writer w(direct.payload_buffer());
      cell::encode_op_request(q, w);
      BOOST_REQUIRE(direct.call(source.node_id(), cell::kOp, w.size()).is_ok());
    }
    const uint32_t before = meganodes_in_use(d);
    const cell::DeploymentStats stats_before = d.stats();
    DyingCaller dying(direct, live_calls);
    Env env = c->runtime->setup_env(source.node_id());
    Random rng(1);
    cell::SplitDriverOptions o;
    o.retry_min_ns = o.retry_max_ns = 0;
    o.step_attempts = 1;
    o.placement.spread_until_meganodes = UINT32_MAX;  // Y on the other server
    cell::SplitDriver driver(dying, d.layout(), source.node_id(), source.split_ids(), o, rng, *env.clock, [](Nanos) {});
    const Status ran = driver.run(meganode);
    if (!dying.died()) {  // every step done: the last kill point was the one before
      BOOST_REQUIRE_MESSAGE(ran.is_ok(), ran.to_string());
      expect_no_leak(d, before, stats_before, "no death");
      break;
    }
    // The takeover of the source's store (its state is what replaying its
    // log gives, cell_log_test): its begun splits aborted and its own
    // builds settled, then the builds its splits left on live servers.
    BOOST_REQUIRE(
        source.resolve_splits([&](uint64_t id, uint64_t root) { return source.split_linked(id, root); }).is_ok());
    cell::OrphanStats orphans;
    const Status resolved = cell::resolve_builds_elsewhere(
        direct, {d.server(1).node_id()}, source.store().node_region(),
        [&](const cell::Store::PendingBuild& b) -> StatusOr<bool> { return source.split_linked(b.split_id, b.root); },
        &orphans);
    BOOST_REQUIRE_MESSAGE(resolved.is_ok(), where << ": " << resolved.to_string());
    BOOST_TEST_MESSAGE(where << ": " << orphans.abandoned << " abandoned, " << orphans.declared_live
                             << " declared live elsewhere");
    abandoned_somewhere += orphans.abandoned;
    expect_no_leak(d, before, stats_before, where);
    BOOST_REQUIRE_MESSAGE(tree_of(d) == model, where << ": the tree lost or changed keys");
    BOOST_REQUIRE_MESSAGE(d.check_invariants().is_ok(), where);
    // Still a working tree: the meganode splits again (queued again, as a
    // replay of the source's log queues it) and every key is served.
    source.request_split(meganode);
    for (uint64_t i = 0; i < 300; ++i) {
      const std::string key = key_of(i * 11 % 1000);
      model[key] = make_value(key, 1000 + i, 20);
      auto r = d.direct_op(OpKind::kPut, key, model[key]);
      BOOST_REQUIRE_MESSAGE(r.is_ok() && r->outcome == cell::Outcome::kDone, where << ": put " << key);
    }
    BOOST_REQUIRE_MESSAGE(tree_of(d) == model, where << ", then 300 puts");
    BOOST_REQUIRE_MESSAGE(d.check_invariants().is_ok(), where << ", then 300 puts");
  }
  // The deaths between Y's create and the finish left Y on the live server.
  BOOST_REQUIRE(abandoned_somewhere > 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
