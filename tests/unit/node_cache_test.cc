// Cell's client node cache reserves in proportion to what it holds (issue
// 17: scenarios/cell/four-servers.toml reserved a 128 MiB cache for each
// of its 128 clients up front, 17.9 GB of address space for a run that
// used 753 MiB): it grows by doubling as it fills, keeps every image it
// handed out where it was, and still evicts least recently used at its
// bound.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <vector>

#include "core/index/cell/node_cache.h"

namespace locus::cell {
namespace {

constexpr uint32_t kNodeBytes = 1024;

std::vector<std::byte> image(uint64_t ptr) {
  std::vector<std::byte> node(kNodeBytes);
  std::memcpy(node.data(), &ptr, sizeof ptr);
  std::memset(node.data() + sizeof ptr, static_cast<int>(ptr & 0xFF), kNodeBytes - sizeof ptr);
  return node;
}

bool holds(NodeCache& cache, uint64_t ptr) {
  const std::byte* got = cache.lookup(ptr);
  return got != nullptr && std::memcmp(got, image(ptr).data(), kNodeBytes) == 0;
}

BOOST_AUTO_TEST_SUITE(node_cache)

BOOST_AUTO_TEST_CASE(a_large_bound_reserves_nothing_until_used) {
  NodeCache cache(128ull << 20, kNodeBytes);
  BOOST_TEST(cache.enabled());
  BOOST_TEST(cache.capacity_bytes() == (128ull << 20));
  BOOST_TEST(cache.allocated_bytes() == 0u);
  for (uint64_t p = 1; p <= 100; ++p) cache.insert(p * kNodeBytes, image(p * kNodeBytes).data());
  // 100 nodes take the first chunk and one doubling: 128 slots, not 131072.
  BOOST_TEST(cache.allocated_bytes() == 128u * kNodeBytes);
  for (uint64_t p = 1; p <= 100; ++p) BOOST_TEST(holds(cache, p * kNodeBytes));
}

BOOST_AUTO_TEST_CASE(images_stay_put_and_stay_findable_as_it_grows) {
  NodeCache cache(1ull << 30, kNodeBytes);
  cache.insert(7 * kNodeBytes, image(7 * kNodeBytes).data());
  const std::byte* first = cache.lookup(7 * kNodeBytes);
  for (uint64_t p = 100; p < 5000; ++p) cache.insert(p * kNodeBytes, image(p * kNodeBytes).data());
  BOOST_TEST(cache.entries() == 4901u);
  BOOST_TEST(cache.lookup(7 * kNodeBytes) == first);
  for (uint64_t p = 100; p < 5000; p += 37) BOOST_TEST(holds(cache, p * kNodeBytes));
  cache.erase(150 * kNodeBytes);
  BOOST_TEST(cache.lookup(150 * kNodeBytes) == nullptr);
  BOOST_TEST(holds(cache, 151 * kNodeBytes));
}

BOOST_AUTO_TEST_CASE(at_its_bound_it_evicts_the_least_recently_used) {
  NodeCache cache(200 * kNodeBytes, kNodeBytes);  // not a power of two of the first chunk
  for (uint64_t p = 1; p <= 200; ++p) cache.insert(p * kNodeBytes, image(p * kNodeBytes).data());
  BOOST_TEST(cache.allocated_bytes() == 200u * kNodeBytes);
  BOOST_TEST(holds(cache, 1 * kNodeBytes));  // now most recently used
  cache.insert(201 * kNodeBytes, image(201 * kNodeBytes).data());
  BOOST_TEST(cache.entries() == 200u);
  BOOST_TEST(cache.allocated_bytes() == 200u * kNodeBytes);
  BOOST_TEST(cache.lookup(2 * kNodeBytes) == nullptr);  // the least recently used went
  BOOST_TEST(holds(cache, 1 * kNodeBytes));
  BOOST_TEST(holds(cache, 201 * kNodeBytes));
}

BOOST_AUTO_TEST_CASE(a_bound_beyond_32_bit_slots_is_clamped_not_wrapped) {
  // 1 TiB of 256-byte nodes is 2^32 slots: it used to wrap to 0 (no cache).
  NodeCache cache(1ull << 40, 256);
  BOOST_TEST(cache.enabled());
  BOOST_TEST(cache.allocated_bytes() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus::cell
