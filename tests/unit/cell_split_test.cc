// Cell's meganode split protocol under lost replies (issue 16, defect 2):
// every step is idempotent, so a split whose step was applied but whose
// reply was lost still ends with every key in the tree and no meganode
// leaked, and a meganode a split linked into the tree can never be
// abandoned. (Clients sending split steps: cell_test.)
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/deployment.h"
#include "core/index/cell/split_driver.h"
#include "core/index/cell/protocol.h"
#include "tests/support/cell_cluster.h"
#include "tests/support/failure_log.h"

namespace locus {
namespace {

using cell::OpKind;
using testing::CellCluster;
using testing::key_of;
using testing::make_value;
using testing::tiny_options;

void expect_all_readable(cell::Deployment& d, const std::map<std::string, std::string>& ref) {
  for (const auto& [k, v] : ref) {
    auto r = d.direct_op(OpKind::kGet, k);
    BOOST_REQUIRE_MESSAGE(r.is_ok() && r->found && r->value == v, "key " << k << " lost");
  }
  BOOST_REQUIRE_MESSAGE(d.check_invariants().is_ok(), d.check_invariants().to_string());
}

// Passes requests to the servers in place and, for `type`, loses the
// replies of the first `losses` requests after they were applied, as a
// timed-out RPC does. Notes the meganodes splits create.
class LossyCaller final : public cell::Caller {
 public:
  LossyCaller(cell::Deployment& d, uint16_t type, uint32_t losses)
      : direct_(d.server(0).options().max_message_bytes), type_(type), losses_(losses) {
    for (size_t i = 0; i < d.server_count(); ++i) direct_.add(&d.server(i));
  }
  std::span<std::byte> payload_buffer() override { return direct_.payload_buffer(); }
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override {
    uint64_t split_id = 0;
    if (type == cell::kMeganodeCreate) std::memcpy(&split_id, direct_.payload_buffer().data(), sizeof split_id);
    auto body = direct_.call(server, type, payload_bytes);
    if (type == cell::kMeganodeCreate && body.is_ok()) {
      uint64_t root = 0;
      std::memcpy(&root, body->data(), sizeof root);
      created.push_back({server, root, split_id});
    }
    if (type == type_ && lost < losses_) {
      ++lost;
      return timeout_error("test: the reply was lost");
    }
    return body;
  }

  struct Created {
    NodeId server;
    uint64_t root;
    uint64_t split_id;
  };
  std::vector<Created> created;
  uint32_t lost = 0;

 private:
  cell::DirectCaller direct_;
  uint16_t type_;
  uint32_t losses_;
};

// A two-server tree whose only (root) meganode was filled through the
// store until it asked for a split, which nothing has driven yet.
struct RootReadyToSplit {
  std::unique_ptr<CellCluster> cluster = CellCluster::create(2, tiny_options());
  cell::Deployment& d = *cluster->deployment;
  std::map<std::string, std::string> ref;
  uint32_t meganode = 0;

  RootReadyToSplit() {
    for (uint64_t i = 0; !d.server(0).try_take_split(&meganode); ++i) {
      BOOST_REQUIRE(i < 1000);
      const std::string key = key_of(i * 7 % 1000);
      ref[key] = make_value(key, i, 20);
      auto put = d.server(0).store().put(key, ref[key], cell::kNullPtr);
      BOOST_REQUIRE(put.is_ok() && put->outcome == cell::Outcome::kDone);
    }
  }

  // Drives that split (and the new root above it) through `caller`.
  Status split(cell::Caller& caller, cell::SplitDriverStats* stats = nullptr) {
    Env env = cluster->runtime->setup_env(d.server(0).node_id());
    Random rng(1);
    cell::SplitDriverOptions o;
    o.retry_min_ns = o.retry_max_ns = 0;  // nothing to wait for in place
    cell::SplitDriver driver(caller, d.layout(), d.server(0).node_id(), d.server(0).split_ids(), o, rng,
                             *env.clock, [](Nanos) {});
    const Status st = driver.run(meganode);
    if (stats != nullptr) *stats = driver.stats();
    return st;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(cell_split_protocol)

// The first split of the tree is the root meganode's: it runs every step
// (the new meganode's create, appends, seal, the source's finish, and a new
// root meganode installed with kSetRoot). Whichever step's reply is lost
// once after the server applied it, the step is sent again and recognised,
// and the split ends with every key in the tree and no meganode leaked.
// Before the fix a lost kSplitFinish or kSetRoot reply made the driver
// abandon the meganode it had just linked, and the keys in it were gone.
BOOST_AUTO_TEST_CASE(a_lost_reply_to_any_split_step_loses_no_data) {
  for (uint16_t type : {cell::kSplitBegin, cell::kSplitScan, cell::kMeganodeCount, cell::kMeganodeCreate,
                        cell::kMeganodeAppend, cell::kMeganodeSeal, cell::kSplitFinish, cell::kMeganodeLive,
                        cell::kGetRoot, cell::kSetRoot}) {
    BOOST_TEST_CONTEXT("reply lost: request type " << type) {
      RootReadyToSplit t;
      LossyCaller lossy(t.d, type, 1);
      cell::SplitDriverStats stats;
      const Status st = t.split(lossy, &stats);
      BOOST_TEST(st.is_ok(), st.to_string());
      BOOST_TEST(lossy.lost == 1u);
      BOOST_TEST(stats.splits == 1u);
      BOOST_TEST(stats.new_roots == 1u);
      BOOST_TEST(stats.aborted == 0u);
      BOOST_TEST(t.d.server(0).store().root_level() == 1u);
      BOOST_TEST(t.d.stats().store.meganodes_in_use == 3u);  // X, its new sibling and the root above
      expect_all_readable(t.d, t.ref);
    }
  }
}

// No reply to kSplitFinish ever arrives: the driver learns from an abort
// of the split (kAlreadyExists) that the finish was applied, and goes on.
BOOST_AUTO_TEST_CASE(a_finish_never_answered_is_found_applied) {
  RootReadyToSplit t;
  LossyCaller lossy(t.d, cell::kSplitFinish, UINT32_MAX);
  cell::SplitDriverStats stats;
  const Status st = t.split(lossy, &stats);
  BOOST_TEST(st.is_ok(), st.to_string());
  BOOST_TEST(lossy.lost == cell::SplitDriverOptions{}.step_attempts);
  BOOST_TEST(stats.splits == 1u);
  BOOST_TEST(stats.aborted == 0u);
  expect_all_readable(t.d, t.ref);
}

// No reply to kSetRoot ever arrives: the split reports the error but keeps
// the new root meganode, which is installed and holds the tree.
BOOST_AUTO_TEST_CASE(a_set_root_never_answered_keeps_the_new_root) {
  RootReadyToSplit t;
  LossyCaller lossy(t.d, cell::kSetRoot, UINT32_MAX);
  const Status st = t.split(lossy);
  BOOST_TEST(st.code() == StatusCode::kTimeout, st.to_string());
  BOOST_TEST(t.d.server(0).store().root_level() == 1u);
  BOOST_TEST(t.d.stats().store.meganodes_in_use == 3u);
  expect_all_readable(t.d, t.ref);
}

// Abandon frees only a meganode its split has not linked: once a split
// finished, neither its new meganode nor the new root can be abandoned,
// even by that split, and the keys stay.
BOOST_AUTO_TEST_CASE(abandon_of_a_live_meganode_is_refused) {
  RootReadyToSplit t;
  LossyCaller recorder(t.d, cell::kSplitFinish, 0);
  BOOST_REQUIRE(t.split(recorder).is_ok());
  BOOST_REQUIRE(recorder.created.size() == 2u);  // the sibling, then the root above
  cell::DirectCaller direct(t.d.server(0).options().max_message_bytes);
  for (size_t i = 0; i < t.d.server_count(); ++i) direct.add(&t.d.server(i));
  for (const auto& c : recorder.created) {
    rpc::Writer w(direct.payload_buffer());
    w.put(c.root);
    w.put(c.split_id);
    const Status st = direct.call(c.server, cell::kMeganodeAbandon, w.size()).status();
    BOOST_TEST(st.code() == StatusCode::kInvalidArgument, st.to_string());
    BOOST_TEST(st.message().find("live") != std::string::npos);
  }
  BOOST_TEST(t.d.stats().store.meganodes_in_use == 3u);
  expect_all_readable(t.d, t.ref);
}

// A meganode a split built is held back from splitting until that split
// declares it live: one aborted after the seal must not leave its copy's
// own right half linked into the tree.
BOOST_AUTO_TEST_CASE(a_new_meganode_splits_only_once_live) {
  auto cluster = CellCluster::create(2, tiny_options());
  cell::CellServer& server = cluster->deployment->server(1);
  cell::Store& store = server.store();
  constexpr uint64_t kSplit = 77;
  auto root = store.meganode_create(kSplit, 0, cell::Bound{{}, true}, cell::Bound{{}, true}, cell::kNullPtr);
  BOOST_REQUIRE(root.is_ok());
  std::vector<std::byte> chunk(16 * 1024);
  rpc::Writer w(chunk);
  for (uint64_t i = 0; i < 30; ++i) {  // past the split threshold of a tiny meganode, not full
    w.blob(key_of(i));
    w.blob(make_value(key_of(i), 1, 20));
  }
  rpc::Reader entries(std::span<const std::byte>(chunk.data(), w.size()));
  const Status appended = store.meganode_append(*root, kSplit, 0, entries);
  BOOST_REQUIRE_MESSAGE(appended.is_ok(), appended.to_string());
  BOOST_REQUIRE(store.meganode_seal(*root, kSplit).is_ok());
  uint32_t meganode = 0;
  BOOST_TEST(!server.try_take_split(&meganode));
  BOOST_REQUIRE(store.meganode_live(*root, kSplit).is_ok());
  BOOST_TEST(server.try_take_split(&meganode));
  BOOST_TEST(store.meganode_abandon(*root, kSplit).code() == StatusCode::kInvalidArgument);
}

// A meganode asked for twice is queued once, and no request is dropped:
// the queue had room for one entry per meganode and kept duplicates, so
// repeats of one meganode could fill it and another's request was lost
// (that meganode then never split).
BOOST_AUTO_TEST_CASE(split_requests_are_queued_once_and_never_dropped) {
  auto cluster = CellCluster::create(2, tiny_options());
  cell::CellServer& server = cluster->deployment->server(1);
  uint32_t meganode = 0;
  while (server.try_take_split(&meganode)) {
  }
  const uint32_t room = tiny_options().store.geometry.meganodes_per_server;
  for (uint32_t i = 0; i < room + 2; ++i) server.request_split(0);
  server.request_split(1);
  std::vector<uint32_t> taken;
  while (server.try_take_split(&meganode)) taken.push_back(meganode);
  BOOST_TEST(taken == std::vector<uint32_t>({0, 1}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
