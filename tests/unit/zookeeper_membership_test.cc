// ZooKeeperMembership against a real ZooKeeper server started for the test
// (tests/support/zookeeper_server.h): ephemeral registrations vanish with
// their session, watches fire on membership changes and survive a server
// restart and a session expiry, compare-and-set on the region map rejects a
// stale version, and a client re-resolves a region after its server stops
// answering and is taken over.
#include "backends/zookeeper/zookeeper_membership.h"

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/membership/region_map.h"
#include "core/membership/region_resolver.h"
#include "tests/support/zookeeper_server.h"

namespace locus::zookeeper {
namespace {

using membership::Change;
using membership::Member;
using membership::Versioned;

testing::ZooKeeperServer& server() {
  static std::unique_ptr<testing::ZooKeeperServer> s =
      testing::ZooKeeperServer::start_or_skip("zookeeper_membership_test");
  return *s;
}

// Each test case its own path, so none sees another's znodes.
std::unique_ptr<ZooKeeperMembership> connect(const std::string& path) {
  auto m = ZooKeeperMembership::connect({.target = {server().address(), path}});
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string() + "\nserver log:\n" + server().log());
  return std::move(m).value();
}

std::vector<std::string> names(ZooKeeperMembership& m) {
  auto members = m.members();
  BOOST_REQUIRE_MESSAGE(members.is_ok(), members.status().to_string());
  std::vector<std::string> out;
  for (const Member& x : *members) out.push_back(x.name);
  return out;
}

// Counts listener calls of one kind; waits for the count to reach a value.
class ChangeCounter {
 public:
  ChangeCounter(membership::Membership& m, Change::Kind kind) : m_(m) {
    id_ = m.add_listener([this, kind](const Change& c) {
      if (c.kind != kind) return;
      std::lock_guard lock(mu_);
      ++count_;
      cv_.notify_all();
    });
  }
  ~ChangeCounter() { m_.remove_listener(id_); }
  bool wait_for(int count, int timeout_ms = 10'000) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return count_ >= count; });
  }
  int count() {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  membership::Membership& m_;
  int id_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Polls `condition` (a read from ZooKeeper) until it holds.
template <typename F>
bool eventually(F condition, int timeout_ms = 10'000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

BOOST_AUTO_TEST_CASE(target_parsing_names_the_problem) {
  auto t = parse_zookeeper_target("10.0.0.5:2181,10.0.0.6:2181/apps/locus");
  BOOST_REQUIRE(t.is_ok());
  BOOST_TEST(t->hosts == "10.0.0.5:2181,10.0.0.6:2181");
  BOOST_TEST(t->path == "/apps/locus");
  BOOST_TEST(parse_zookeeper_target("zk:2181")->path == "/locus");
  for (const char* bad : {"", "zk", ":2181", "zk:0", "zk:99999", "zk:21x", "zk:2181/", "zk:2181/a//b", "zk:2181/a b"}) {
    auto r = parse_zookeeper_target(bad);
    BOOST_TEST(r.status().code() == StatusCode::kInvalidArgument, bad);
  }
}

BOOST_AUTO_TEST_CASE(ephemeral_member_disappears_when_its_session_closes) {
  auto observer = connect("/ephemeral");
  auto a = connect("/ephemeral");
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  auto listed = observer->members();
  BOOST_REQUIRE(listed.is_ok());
  BOOST_REQUIRE_EQUAL(listed->size(), 1u);
  BOOST_TEST((*listed)[0].address == "10.0.0.1:7471");
  auto b = ZooKeeperMembership::connect({.target = {server().address(), "/ephemeral"}});
  BOOST_REQUIRE(b.is_ok());
  a.reset();  // closes the session: the server deletes the znode at once
  BOOST_TEST(names(*observer).empty());
  BOOST_TEST((*b)->register_member({"server-0", "10.0.0.2:7471"}).is_ok());
}

BOOST_AUTO_TEST_CASE(a_name_held_by_a_live_session_is_refused) {
  auto a = connect("/held");
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  // A short session timeout: the wait below lasts two of them plus 1 s.
  auto b_or = ZooKeeperMembership::connect({.target = {server().address(), "/held"}, .session_timeout_ms = 400});
  BOOST_REQUIRE(b_or.is_ok());
  auto& b = *b_or;
  const auto start = std::chrono::steady_clock::now();
  const Status st = b->register_member({"server-0", "10.0.0.2:7471"});
  BOOST_TEST(st.code() == StatusCode::kResourceExhausted, st.to_string());
  BOOST_TEST(st.message().find("another live session") != std::string::npos, st.to_string());
  // It waited for the holder's session to expire first (2 timeouts + 1 s).
  const auto waited_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(waited_ms >= b->negotiated_timeout_ms());
}

BOOST_AUTO_TEST_CASE(watches_fire_on_membership_change) {
  auto observer = connect("/watch");
  ChangeCounter changes(*observer, Change::Kind::kMembers);
  auto a = connect("/watch");
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  BOOST_REQUIRE(changes.wait_for(1));
  auto b = connect("/watch");
  BOOST_REQUIRE(b->register_member({"server-1", "10.0.0.2:7471"}).is_ok());
  BOOST_REQUIRE(changes.wait_for(2));  // the watch was re-armed after firing
  BOOST_TEST((names(*observer) == std::vector<std::string>{"server-0", "server-1"}));
  a.reset();
  BOOST_REQUIRE(changes.wait_for(3));
  BOOST_TEST((names(*observer) == std::vector<std::string>{"server-1"}));
}

BOOST_AUTO_TEST_CASE(compare_and_set_on_the_region_map_rejects_a_stale_version) {
  auto a = connect("/cas");
  auto b = connect("/cas");
  ChangeCounter map_changes(*b, Change::Kind::kValue);
  BOOST_REQUIRE(b->watch(membership::kRegionMapKey).is_ok());
  auto v0 = membership::write_region_map(*a, {{0, "server-0"}, {1, "server-1"}}, Versioned::kAbsent);
  BOOST_REQUIRE_MESSAGE(v0.is_ok(), v0.status().to_string());
  BOOST_TEST(membership::write_region_map(*b, {{0, "server-1"}}, Versioned::kAbsent).status().code() ==
             StatusCode::kAborted);
  BOOST_REQUIRE(map_changes.wait_for(1));  // the watch fired on creation
  auto seen_by_b = membership::read_region_map(*b);
  BOOST_REQUIRE(seen_by_b.is_ok());
  BOOST_TEST(seen_by_b->version == *v0);
  // a writes first; b's write over the version both read is refused.
  auto v1 = membership::write_region_map(*a, {{0, "server-0"}, {1, "server-0"}}, *v0);
  BOOST_REQUIRE(v1.is_ok());
  auto stale = membership::write_region_map(*b, {{0, "server-1"}, {1, "server-1"}}, seen_by_b->version);
  BOOST_TEST(stale.status().code() == StatusCode::kAborted, stale.status().to_string());
  BOOST_TEST((membership::read_region_map(*b)->regions == membership::RegionMap{{0, "server-0"}, {1, "server-0"}}));
  BOOST_REQUIRE(map_changes.wait_for(2));  // and again on the change: re-armed
  // The root pointer is a value like the map.
  BOOST_REQUIRE(a->compare_and_set(membership::kRootPointerKey, "0:4096", Versioned::kAbsent).is_ok());
  BOOST_TEST(b->get(membership::kRootPointerKey)->value == "0:4096");
}

BOOST_AUTO_TEST_CASE(concurrent_takeovers_agree) {
  auto a = connect("/takeover");
  auto b = connect("/takeover");
  membership::RegionMap map;
  for (uint32_t r = 0; r < 30; ++r) map[r] = "server-" + std::to_string(r % 3);
  BOOST_REQUIRE(membership::write_region_map(*a, map, Versioned::kAbsent).is_ok());
  StatusOr<membership::VersionedRegionMap> by_a = internal_error("unset"), by_b = internal_error("unset");
  std::thread ta([&] { by_a = membership::take_over(*a, "server-2", {"server-0", "server-1"}); });
  std::thread tb([&] { by_b = membership::take_over(*b, "server-2", {"server-0", "server-1"}); });
  ta.join();
  tb.join();
  BOOST_REQUIRE_MESSAGE(by_a.is_ok() && by_b.is_ok(), by_a.status().to_string() + by_b.status().to_string());
  auto final_map = membership::read_region_map(*a);
  BOOST_TEST(final_map->version == 1);  // one write won, the other found nothing left to move
  for (const auto& [region, owner] : final_map->regions) BOOST_TEST(owner != "server-2");
}

BOOST_AUTO_TEST_CASE(client_re_resolves_after_a_server_stops_answering) {
  auto a = connect("/resolve");
  auto b = connect("/resolve");
  auto client = connect("/resolve");
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  BOOST_REQUIRE(b->register_member({"server-1", "10.0.0.2:7471"}).is_ok());
  BOOST_REQUIRE(membership::write_region_map(*a, {{0, "server-0"}, {1, "server-1"}}, Versioned::kAbsent).is_ok());
  membership::RegionResolver resolver(*client);
  auto owner = resolver.resolve(0);
  BOOST_REQUIRE_MESSAGE(owner.is_ok(), owner.status().to_string());
  BOOST_TEST(owner->address == "10.0.0.1:7471");
  a.reset();  // server-0 dies; a survivor takes its regions over
  BOOST_REQUIRE(membership::take_over(*b, "server-0", {"server-1"}).is_ok());
  // The client tries its cached owner; if the watch has not reached it yet
  // the server does not answer, the client says so and resolves again.
  owner = resolver.resolve(0);
  BOOST_REQUIRE(owner.is_ok());
  if (owner->member == "server-0") {
    resolver.report_unreachable("server-0");
    owner = resolver.resolve(0);
    BOOST_REQUIRE(owner.is_ok());
  }
  BOOST_TEST(owner->member == "server-1");
  BOOST_TEST(owner->address == "10.0.0.2:7471");
}

BOOST_AUTO_TEST_CASE(session_survives_a_zookeeper_restart_with_its_watches) {
  auto observer = connect("/restart");
  auto a = connect("/restart");
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  ChangeCounter changes(*observer, Change::Kind::kMembers);
  const Status restarted = server().restart();
  BOOST_REQUIRE_MESSAGE(restarted.is_ok(), restarted.to_string());
  // Back within the session timeout: same sessions, member still there.
  BOOST_TEST((names(*observer) == std::vector<std::string>{"server-0"}));
  BOOST_TEST(a->sessions_opened() == 1);
  auto b = connect("/restart");
  BOOST_REQUIRE(b->register_member({"server-1", "10.0.0.2:7471"}).is_ok());
  BOOST_TEST(changes.wait_for(1), "the observer's watch did not survive the reconnect");
}

// Expires `victim`'s session the way ZooKeeper's own tests do: a second
// handle joins the same session and closes it. The victim's reconnects
// take the session back and forth meanwhile, so the watcher records that
// the second handle was connected once rather than sampling its state.
void on_duplicate_event(zhandle_t*, int type, int state, const char*, void* context) {
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) static_cast<std::atomic<bool>*>(context)->store(true);
}

void expire_session(ZooKeeperMembership& victim) {
  const ZooKeeperMembership::Session s = victim.session();
  clientid_t id{};
  id.client_id = s.id;
  std::memcpy(id.passwd, s.password.data(), sizeof id.passwd);
  std::atomic<bool> connected{false};
  zhandle_t* zh = zookeeper_init(server().address().c_str(), on_duplicate_event, 4000, &id, &connected, 0);
  BOOST_REQUIRE(zh != nullptr);
  eventually([&] { return connected.load(); }, 3000);
  zookeeper_close(zh);
}

BOOST_AUTO_TEST_CASE(expired_session_is_renewed_with_registrations_and_watches) {
  auto observer = connect("/expiry");
  auto a = connect("/expiry");
  ChangeCounter sessions(*a, Change::Kind::kSession);
  ChangeCounter member_changes(*a, Change::Kind::kMembers);
  BOOST_REQUIRE(a->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  BOOST_REQUIRE(a->watch(membership::kRootPointerKey).is_ok());
  ChangeCounter value_changes(*a, Change::Kind::kValue);
  // The trick races with the victim's own reconnect, which can take the
  // session back before the second handle closes it: try again then.
  for (int attempt = 0; attempt < 5 && sessions.count() == 0; ++attempt) {
    expire_session(*a);
    sessions.wait_for(1, 3000);
  }
  BOOST_REQUIRE_MESSAGE(sessions.wait_for(1), "no session renewal after expiry");
  BOOST_TEST(a->sessions_opened() == 2);
  BOOST_TEST((names(*observer) == std::vector<std::string>{"server-0"}), "the registration was not re-created");
  // Watches of the new session: members and the watched value.
  const int before = member_changes.count();
  auto b = connect("/expiry");
  BOOST_REQUIRE(b->register_member({"server-1", "10.0.0.2:7471"}).is_ok());
  BOOST_TEST(member_changes.wait_for(before + 1));
  BOOST_REQUIRE(b->compare_and_set(membership::kRootPointerKey, "1:0", Versioned::kAbsent).is_ok());
  BOOST_TEST(value_changes.wait_for(1));
}

BOOST_AUTO_TEST_CASE(connect_to_nothing_fails_clearly) {
  auto m = ZooKeeperMembership::connect({.target = {"127.0.0.1:1", "/x"}, .connect_timeout_ms = 300});
  BOOST_TEST(m.status().code() == StatusCode::kUnavailable);
  BOOST_TEST(m.status().message().find("127.0.0.1:1") != std::string::npos, m.status().to_string());
}

}  // namespace
}  // namespace locus::zookeeper
