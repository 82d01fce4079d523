// The membership interface without ZooKeeper: the static cluster file's
// implementation, the region map's encoding, takeover, and the client's
// region cache (the same behaviour against a real ZooKeeper server is
// zookeeper_membership_test).
#include <boost/test/unit_test.hpp>

#include "core/membership/region_map.h"
#include "core/membership/region_resolver.h"
#include "core/membership/static_membership.h"

namespace locus::membership {
namespace {

std::unique_ptr<StaticMembership> three_servers() {
  auto m = StaticMembership::create(
      {{"server-1", "10.0.0.2:7471"}, {"server-0", "10.0.0.1:7471"}, {"server-2", "10.0.0.3:7471"}});
  BOOST_REQUIRE(m.is_ok());
  return std::move(m).value();
}

BOOST_AUTO_TEST_CASE(static_members_are_the_listed_ones_sorted) {
  auto m = three_servers();
  auto members = m->members();
  BOOST_REQUIRE(members.is_ok());
  BOOST_REQUIRE_EQUAL(members->size(), 3u);
  BOOST_TEST((*members)[0].name == "server-0");
  BOOST_TEST(m->register_member({"server-0", "10.0.0.1:7471"}).is_ok());
  const Status elsewhere = m->register_member({"server-0", "10.0.0.9:7471"});
  BOOST_TEST(elsewhere.message().find("listed at 10.0.0.1:7471") != std::string::npos, elsewhere.to_string());
  BOOST_TEST(!m->register_member({"server-7", "10.0.0.9:7471"}).is_ok());
  BOOST_TEST(!StaticMembership::create({{"a", "x:1"}, {"a", "y:1"}}).is_ok());
  BOOST_TEST(!StaticMembership::create({{"a/b", "x:1"}}).is_ok());
}

BOOST_AUTO_TEST_CASE(compare_and_set_rejects_a_stale_version) {
  auto m = three_servers();
  int changes = 0;
  m->add_listener([&](const Change& c) { changes += c.kind == Change::Kind::kValue && c.key == kRootPointerKey; });
  auto absent = m->get(kRootPointerKey);
  BOOST_REQUIRE(absent.is_ok());
  BOOST_TEST(absent->version == Versioned::kAbsent);
  auto v0 = m->compare_and_set(kRootPointerKey, "region 0 offset 64", Versioned::kAbsent);
  BOOST_REQUIRE(v0.is_ok());
  BOOST_TEST(m->compare_and_set(kRootPointerKey, "x", Versioned::kAbsent).status().code() == StatusCode::kAborted);
  auto v1 = m->compare_and_set(kRootPointerKey, "region 1 offset 0", *v0);
  BOOST_REQUIRE(v1.is_ok());
  BOOST_TEST(m->compare_and_set(kRootPointerKey, "stale", *v0).status().code() == StatusCode::kAborted);
  BOOST_TEST(m->get(kRootPointerKey)->value == "region 1 offset 0");
  BOOST_TEST(changes == 2);
}

BOOST_AUTO_TEST_CASE(region_map_round_trips_and_rejects_garbage) {
  const RegionMap map{{0, "server-0"}, {1, "server-1"}, {4294967295u, "server-2"}};
  auto back = decode_region_map(encode_region_map(map));
  BOOST_REQUIRE(back.is_ok());
  BOOST_TEST((*back == map));
  for (const char* bad : {"0server-0\n", "x server-0\n", "4294967296 s\n", "1 a/b\n", "1 a\n1 b\n", "-1 a\n"}) {
    auto r = decode_region_map(bad);
    BOOST_TEST(r.status().code() == StatusCode::kCorruption, bad);
    BOOST_TEST(r.status().message().find("line ") != std::string::npos, r.status().to_string());
  }
}

BOOST_AUTO_TEST_CASE(takeover_deals_the_dead_servers_regions_to_the_survivors) {
  auto m = three_servers();
  const RegionMap map{{0, "server-0"}, {1, "server-1"}, {2, "server-2"}, {3, "server-1"}, {4, "server-1"}};
  BOOST_REQUIRE(write_region_map(*m, map, Versioned::kAbsent).is_ok());
  auto after = take_over(*m, "server-1", {"server-0", "server-2"});
  BOOST_REQUIRE(after.is_ok());
  const RegionMap expected{{0, "server-0"}, {1, "server-0"}, {2, "server-2"}, {3, "server-2"}, {4, "server-0"}};
  BOOST_TEST((after->regions == expected));
  BOOST_TEST((read_region_map(*m)->regions == expected));
  // A second survivor doing the same finds nothing left to move.
  auto again = take_over(*m, "server-1", {"server-2"});
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST(again->version == after->version);
  BOOST_TEST(!take_over(*m, "server-1", {}).is_ok());
  BOOST_TEST(!take_over(*m, "server-1", {"server-1"}).is_ok());
}

BOOST_AUTO_TEST_CASE(resolver_caches_and_rereads_after_a_change) {
  auto m = three_servers();
  BOOST_REQUIRE(write_region_map(*m, {{7, "server-2"}}, Versioned::kAbsent).is_ok());
  RegionResolver resolver(*m);
  auto owner = resolver.resolve(7);
  BOOST_REQUIRE(owner.is_ok());
  BOOST_TEST(owner->address == "10.0.0.3:7471");
  BOOST_TEST(resolver.resolve(7).is_ok());
  BOOST_TEST(resolver.reloads() == 1u);  // served from the cache
  BOOST_TEST(resolver.resolve(8).status().code() == StatusCode::kNotFound);
  BOOST_REQUIRE(take_over(*m, "server-2", {"server-0"}).is_ok());  // the write notifies: stale
  BOOST_TEST(resolver.resolve(7)->member == "server-0");
  BOOST_TEST(resolver.reloads() == 2u);
  resolver.report_unreachable("server-0");
  BOOST_TEST(resolver.resolve(7).is_ok());
  BOOST_TEST(resolver.reloads() == 3u);
}

}  // namespace
}  // namespace locus::membership
