// Tests for core/memory/buddy_allocator: block sizes and alignment, no
// overlap between live blocks under long random sequences (checked against a
// plain map of live intervals), full coalescing, exhaustion, rejection of
// bad frees without damage, in-place growth, and no heap use on the data path.
// Also core/common/aligned_buffer: small and mapped (huge-page) buffers are
// aligned, zero-filled and writable, and moves hand them over.
#include "core/memory/buddy_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <ostream>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <rapidcheck/boost_test.h>

#include "core/common/aligned_buffer.h"
#include "core/common/zeroed_array.h"
#include "core/common/random.h"

// Counting global operator new: the only way to see that allocate()/free()
// stay off the heap without instrumenting the allocator itself.
namespace {
std::atomic<uint64_t> g_heap_allocations{0};
}  // namespace

// GCC pairs the inlined malloc/free below with new/delete expressions at the
// call sites and warns of a mismatch that the replacement makes impossible.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t bytes) {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop


namespace {

using locus::StatusCode;
using locus::memory::BuddyAllocator;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

BuddyAllocator make(uint64_t capacity_bytes, uint32_t min_block_bytes) {
  auto created = BuddyAllocator::create(capacity_bytes, min_block_bytes);
  BOOST_TEST_REQUIRE(created.is_ok(), created.status().to_string());
  return std::move(created).value();
}

uint64_t rounded(uint64_t bytes, uint64_t min_block_bytes) {
  return std::bit_ceil(std::max(bytes, min_block_bytes));
}

// The reference model: live blocks as offset -> size. Adding checks that the
// new block is in range, aligned to its size and overlaps no live block.
struct LiveIntervals {
  std::map<uint64_t, uint64_t> blocks;
  uint64_t bytes = 0;

  void add(uint64_t offset, uint64_t size, uint64_t capacity_bytes) {
    BOOST_TEST_REQUIRE(offset % size == 0, "offset " << offset << " size " << size);
    BOOST_TEST_REQUIRE(offset + size <= capacity_bytes);
    auto next = blocks.lower_bound(offset);
    if (next != blocks.end()) BOOST_TEST_REQUIRE(offset + size <= next->first, "overlaps " << next->first);
    if (next != blocks.begin()) {
      auto prev = std::prev(next);
      BOOST_TEST_REQUIRE(prev->first + prev->second <= offset, "overlaps " << prev->first);
    }
    blocks.emplace(offset, size);
    bytes += size;
  }
  std::pair<uint64_t, uint64_t> take_nth(size_t n) {
    auto it = std::next(blocks.begin(), static_cast<long>(n));
    auto block = *it;
    blocks.erase(it);
    bytes -= block.second;
    return block;
  }
};

void check_against(const BuddyAllocator& alloc, const LiveIntervals& live) {
  BOOST_TEST_REQUIRE(alloc.check_consistency().is_ok(), alloc.check_consistency().to_string());
  BOOST_TEST_REQUIRE(alloc.bytes_in_use() == live.bytes);
  BOOST_TEST_REQUIRE(alloc.live_allocations() == live.blocks.size());
  BOOST_TEST_REQUIRE(alloc.free_bytes() == alloc.capacity_bytes() - live.bytes);
  for (const auto& [offset, size] : live.blocks) BOOST_TEST_REQUIRE(alloc.block_size(offset) == size);
}

// Random sizes skewed toward small ones, as Pilaf's key-value extents are.
uint64_t random_request_bytes(locus::Random& rng, uint64_t capacity_bytes) {
  const int max_shift = std::countr_zero(capacity_bytes);
  const int shift = static_cast<int>(rng.uniform(static_cast<uint64_t>(max_shift) + 1));
  return rng.uniform_between(1, uint64_t{1} << shift);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(buddy_allocator)

BOOST_AUTO_TEST_CASE(create_rejects_bad_geometry) {
  BOOST_TEST(BuddyAllocator::create(1 * kMiB, 8).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(1 * kMiB, 48).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(3 * kMiB, 64).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(32, 64).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(0, 64).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(uint64_t{1} << 40, 16).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(BuddyAllocator::create(64, 64).is_ok());  // a single min block is a valid region
}

BOOST_AUTO_TEST_CASE(fresh_allocator_is_one_free_block) {
  auto alloc = make(1 * kMiB, 64);
  const auto s = alloc.stats();
  BOOST_TEST(s.capacity_bytes == 1 * kMiB);
  BOOST_TEST(s.min_block_bytes == 64u);
  BOOST_TEST(s.bytes_in_use == 0u);
  BOOST_TEST(s.free_bytes == 1 * kMiB);
  BOOST_TEST(s.live_allocations == 0u);
  BOOST_TEST(s.largest_free_block_bytes == 1 * kMiB);
  BOOST_TEST(alloc.check_consistency().is_ok());
}

BOOST_AUTO_TEST_CASE(sizes_are_rounded_powers_of_two_aligned_to_size) {
  auto alloc = make(16 * kMiB, 32);
  LiveIntervals live;
  for (uint64_t bytes : {1ull, 31ull, 32ull, 33ull, 64ull, 100ull, 1000ull, 4096ull, 4097ull, 65537ull, 1ull << 20}) {
    auto offset = alloc.allocate(bytes);
    BOOST_TEST_REQUIRE(offset.is_ok(), offset.status().to_string());
    BOOST_TEST(alloc.block_size(*offset) == rounded(bytes, 32));
    live.add(*offset, rounded(bytes, 32), alloc.capacity_bytes());
  }
  check_against(alloc, live);
}

BOOST_AUTO_TEST_CASE(allocate_rejects_zero_and_more_than_capacity) {
  auto alloc = make(64 * kKiB, 16);
  BOOST_TEST(alloc.allocate(0).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(alloc.allocate(64 * kKiB + 1).status().code() == StatusCode::kInvalidArgument);
  BOOST_TEST(alloc.stats().failed_allocations == 0u);
  BOOST_TEST(alloc.allocate(64 * kKiB).is_ok());
}

BOOST_AUTO_TEST_CASE(exhaustion_is_resource_exhausted_naming_the_size) {
  auto alloc = make(4 * kKiB, 64);
  for (int i = 0; i < 64; ++i) BOOST_TEST_REQUIRE(alloc.allocate(40).is_ok());
  BOOST_TEST(alloc.free_bytes() == 0u);
  BOOST_TEST(alloc.largest_free_block_bytes() == 0u);
  auto full = alloc.allocate(40);
  BOOST_TEST(full.status().code() == StatusCode::kResourceExhausted);
  BOOST_TEST(full.status().message().find("64 bytes") != std::string::npos, full.status().message());
  BOOST_TEST(full.status().message().find("40 bytes") != std::string::npos, full.status().message());
  BOOST_TEST(alloc.stats().failed_allocations == 1u);

  // Free space exists but is fragmented: still exhausted for a larger block.
  BOOST_TEST(alloc.free(0).is_ok());
  BOOST_TEST(alloc.free(128).is_ok());
  BOOST_TEST(alloc.allocate(128).status().code() == StatusCode::kResourceExhausted);
  BOOST_TEST(alloc.allocate(64).is_ok());
  BOOST_TEST(alloc.check_consistency().is_ok());
}

BOOST_AUTO_TEST_CASE(freeing_everything_coalesces_into_the_whole_region) {
  auto alloc = make(1 * kMiB, 16);
  locus::Random rng(1);
  std::vector<uint64_t> offsets;
  while (true) {
    auto offset = alloc.allocate(rng.uniform_between(1, 3000));
    if (!offset) break;
    offsets.push_back(*offset);
  }
  BOOST_TEST(offsets.size() > 100u);
  // Free in a random order so that merges happen in every pattern.
  for (size_t i = offsets.size(); i > 1; --i) std::swap(offsets[i - 1], offsets[rng.uniform(i)]);
  for (uint64_t offset : offsets) BOOST_TEST_REQUIRE(alloc.free(offset).is_ok());
  BOOST_TEST(alloc.bytes_in_use() == 0u);
  BOOST_TEST(alloc.largest_free_block_bytes() == 1 * kMiB);
  BOOST_TEST(alloc.check_consistency().is_ok());
  auto whole = alloc.allocate(1 * kMiB);
  BOOST_TEST_REQUIRE(whole.is_ok());
  BOOST_TEST(*whole == 0u);
}

BOOST_AUTO_TEST_CASE(bad_frees_are_rejected_and_change_nothing) {
  auto alloc = make(64 * kKiB, 64);
  const uint64_t a = *alloc.allocate(1024);
  const uint64_t b = *alloc.allocate(64);
  const uint64_t c = *alloc.allocate(200);
  BOOST_TEST_REQUIRE(alloc.free(b).is_ok());
  const auto before = alloc.stats();

  auto expect_rejected = [&](uint64_t offset, StatusCode code) {
    const auto status = alloc.free(offset);
    BOOST_TEST(status.code() == code, "offset " << offset << ": " << status.to_string());
    BOOST_TEST(!status.message().empty());
  };
  expect_rejected(b, StatusCode::kInvalidArgument);             // double free
  expect_rejected(a + 64, StatusCode::kInvalidArgument);        // interior of a live block
  expect_rejected(a + 1, StatusCode::kInvalidArgument);         // misaligned
  expect_rejected(c + 128, StatusCode::kInvalidArgument);       // interior, 256-byte block
  expect_rejected(32 * kKiB, StatusCode::kInvalidArgument);     // start of a free block
  expect_rejected(64 * kKiB, StatusCode::kOutOfRange);          // just past the end
  expect_rejected(~uint64_t{0}, StatusCode::kOutOfRange);

  const auto after = alloc.stats();
  BOOST_TEST(after.bytes_in_use == before.bytes_in_use);
  BOOST_TEST(after.live_allocations == before.live_allocations);
  BOOST_TEST(after.largest_free_block_bytes == before.largest_free_block_bytes);
  BOOST_TEST(alloc.check_consistency().is_ok(), alloc.check_consistency().to_string());
  BOOST_TEST(alloc.block_size(a) == 1024u);
  BOOST_TEST(alloc.block_size(b) == 0u);
  BOOST_TEST(alloc.block_size(a + 64) == 0u);

  // The survivors still free normally, and the region coalesces fully.
  BOOST_TEST(alloc.free(a).is_ok());
  BOOST_TEST(alloc.free(c).is_ok());
  BOOST_TEST(alloc.largest_free_block_bytes() == 64 * kKiB);
}

BOOST_AUTO_TEST_CASE(random_sequences_never_overlap) {
  for (uint64_t seed : {11ull, 12ull, 13ull, 14ull}) {
    BOOST_TEST_MESSAGE("seed " << seed);
    locus::Random rng(seed);
    const uint32_t min_block_bytes = 16u << rng.uniform(3);
    auto alloc = make(256 * kKiB, min_block_bytes);
    LiveIntervals live;
    uint64_t exhausted = 0;
    uint64_t drains = 0;
    bool filling = true;
    for (int step = 0; step < 20000; ++step) {
      // Alternate between filling until an allocation fails and draining to
      // below a tenth, so every seed crosses both the exhausted and the
      // nearly empty regimes several times.
      if (!filling && live.bytes < alloc.capacity_bytes() / 10) {
        filling = true;
        ++drains;
      }
      if (live.blocks.empty() || rng.bernoulli(filling ? 0.8 : 0.2)) {
        const uint64_t bytes = random_request_bytes(rng, alloc.capacity_bytes() / 8);
        auto offset = alloc.allocate(bytes);
        if (offset) {
          live.add(*offset, rounded(bytes, min_block_bytes), alloc.capacity_bytes());
        } else {
          BOOST_TEST_REQUIRE(offset.status().code() == StatusCode::kResourceExhausted);
          BOOST_TEST_REQUIRE(alloc.largest_free_block_bytes() < rounded(bytes, min_block_bytes));
          ++exhausted;
          filling = false;
        }
      } else {
        const auto [offset, size] = live.take_nth(rng.uniform(live.blocks.size()));
        BOOST_TEST_REQUIRE(alloc.block_size(offset) == size);
        BOOST_TEST_REQUIRE(alloc.free(offset).is_ok());
      }
      if (step % 1000 == 0) check_against(alloc, live);
    }
    check_against(alloc, live);
    BOOST_TEST_MESSAGE("  " << exhausted << " exhausted allocations, " << drains << " drains");
    BOOST_TEST(exhausted > 0u);
    BOOST_TEST(drains > 1u);
    while (!live.blocks.empty()) BOOST_TEST_REQUIRE(alloc.free(live.take_nth(0).first).is_ok());
    BOOST_TEST(alloc.allocate(alloc.capacity_bytes()).is_ok());
  }
}

BOOST_AUTO_TEST_CASE(grow_keeps_offsets_and_adds_free_capacity) {
  auto alloc = make(64 * kKiB, 64);
  LiveIntervals live;
  locus::Random rng(5);
  for (int i = 0; i < 20; ++i) {  // at most 40 KiB; with no frees yet, that always fits
    const uint64_t bytes = rng.uniform_between(1, 2000);
    live.add(*alloc.allocate(bytes), rounded(bytes, 64), alloc.capacity_bytes());
  }
  const uint64_t used = alloc.bytes_in_use();

  BOOST_TEST(alloc.grow(64 * kKiB).code() == StatusCode::kInvalidArgument);
  BOOST_TEST(alloc.grow(96 * kKiB).code() == StatusCode::kInvalidArgument);
  BOOST_TEST(alloc.grow(32 * kKiB).code() == StatusCode::kInvalidArgument);
  BOOST_TEST(alloc.capacity_bytes() == 64 * kKiB);

  BOOST_TEST_REQUIRE(alloc.grow(128 * kKiB).is_ok());
  BOOST_TEST(alloc.capacity_bytes() == 128 * kKiB);
  BOOST_TEST(alloc.free_bytes() == 128 * kKiB - used);
  BOOST_TEST(alloc.largest_free_block_bytes() == 64 * kKiB);  // the new upper half
  check_against(alloc, live);

  BOOST_TEST_REQUIRE(alloc.grow(1 * kMiB).is_ok());  // more than doubling at once
  BOOST_TEST(alloc.largest_free_block_bytes() == 512 * kKiB);
  check_against(alloc, live);

  // The new space is usable, and everything still frees back to one block.
  live.add(*alloc.allocate(512 * kKiB), 512 * kKiB, alloc.capacity_bytes());
  while (!live.blocks.empty()) BOOST_TEST_REQUIRE(alloc.free(live.take_nth(0).first).is_ok());
  BOOST_TEST(alloc.largest_free_block_bytes() == 1 * kMiB);
  BOOST_TEST(alloc.check_consistency().is_ok());
}

BOOST_AUTO_TEST_CASE(grow_of_an_empty_region_merges_into_one_block) {
  auto alloc = make(4 * kKiB, 16);
  BOOST_TEST_REQUIRE(alloc.grow(64 * kKiB).is_ok());
  BOOST_TEST(alloc.largest_free_block_bytes() == 64 * kKiB);
  BOOST_TEST(alloc.check_consistency().is_ok());
  BOOST_TEST(alloc.allocate(64 * kKiB).is_ok());
}

BOOST_AUTO_TEST_CASE(data_path_does_not_touch_the_heap) {
  auto alloc = make(4 * kMiB, 64);  // room for every block below: no exhaustion
  locus::Random rng(9);
  std::vector<uint64_t> offsets;
  offsets.reserve(4096);
  uint64_t failures = 0;

  const uint64_t heap_before = g_heap_allocations.load();
  for (int round = 0; round < 4; ++round) {
    while (offsets.size() < offsets.capacity()) {
      auto offset = alloc.allocate(rng.uniform_between(1, 512));
      if (!offset) {
        ++failures;  // exhaustion builds an error message: stop before it
        break;
      }
      offsets.push_back(*offset);
    }
    while (!offsets.empty()) {
      if (!alloc.free(offsets.back())) ++failures;
      offsets.pop_back();
    }
  }
  const uint64_t heap_after = g_heap_allocations.load();

  BOOST_TEST(failures == 0u);
  BOOST_TEST(heap_after == heap_before);
}

// Any sequence of allocations and frees keeps the allocator consistent
// with the reference intervals; rapidcheck shrinks a failure to a short one.
RC_BOOST_PROP(any_operation_sequence_matches_the_model,
              (const std::vector<std::pair<bool, uint32_t>>& operations)) {
  const uint32_t min_block_bytes = *rc::gen::element(16u, 32u, 64u);
  auto created = BuddyAllocator::create(64 * kKiB, min_block_bytes);
  RC_ASSERT(created.is_ok());
  auto alloc = std::move(created).value();
  std::map<uint64_t, uint64_t> live;
  for (const auto& [is_allocate, amount] : operations) {
    if (is_allocate || live.empty()) {
      const uint64_t bytes = amount % (8 * kKiB) + 1;
      auto offset = alloc.allocate(bytes);
      if (!offset) {
        RC_ASSERT(offset.status().code() == StatusCode::kResourceExhausted);
        continue;
      }
      const uint64_t size = rounded(bytes, min_block_bytes);
      RC_ASSERT(*offset % size == 0);
      // Computed first: RC_ASSERT decomposes its expression, and an
      // overloaded || would not short-circuit.
      auto next = live.lower_bound(*offset);
      const bool clear_of_next = next == live.end() || *offset + size <= next->first;
      const bool clear_of_prev =
          next == live.begin() || std::prev(next)->first + std::prev(next)->second <= *offset;
      RC_ASSERT(clear_of_next);
      RC_ASSERT(clear_of_prev);
      live.emplace(*offset, size);
    } else {
      auto it = std::next(live.begin(), static_cast<long>(amount % live.size()));
      RC_ASSERT(alloc.free(it->first).is_ok());
      RC_ASSERT(alloc.free(it->first).code() == StatusCode::kInvalidArgument);  // second free
      live.erase(it);
    }
  }
  RC_ASSERT(alloc.check_consistency().is_ok());
  RC_ASSERT(alloc.live_allocations() == live.size());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(aligned_buffer)

// Zero everywhere, and every byte writable (a page left unmapped by the
// alignment trim would fault).
void check_zero_and_writable(locus::AlignedBuffer& b) {
  BOOST_REQUIRE(b.valid());
  for (size_t i = 0; i < b.size(); i += 4096) BOOST_REQUIRE_EQUAL(static_cast<int>(b.data()[i]), 0);
  BOOST_REQUIRE_EQUAL(static_cast<int>(b.data()[b.size() - 1]), 0);
  for (size_t i = 0; i < b.size(); i += 4096) b.data()[i] = std::byte{0x5A};
  b.data()[b.size() - 1] = std::byte{0xA5};
  BOOST_TEST(static_cast<int>(b.data()[b.size() - 1]) == 0xA5);
}

BOOST_AUTO_TEST_CASE(small_buffers_are_cache_line_aligned_and_zeroed) {
  locus::AlignedBuffer b(1000);
  BOOST_TEST(b.size() == 1000u);
  BOOST_TEST(reinterpret_cast<uintptr_t>(b.data()) % locus::AlignedBuffer::kAlignment == 0u);
  check_zero_and_writable(b);
}

BOOST_AUTO_TEST_CASE(large_buffers_are_huge_page_aligned_mappings_and_zeroed) {
  for (size_t bytes : {locus::AlignedBuffer::kHugePage, 3 * locus::AlignedBuffer::kHugePage + 12345}) {
    locus::AlignedBuffer b(bytes);
    BOOST_TEST(b.size() == bytes);
    BOOST_TEST(reinterpret_cast<uintptr_t>(b.data()) % locus::AlignedBuffer::kHugePage == 0u);
    check_zero_and_writable(b);
  }
}

// How many of the pages of [p, p + bytes) (page aligned) are resident.
size_t resident_pages(const void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  BOOST_REQUIRE_EQUAL(mincore(const_cast<void*>(p), bytes, in.data()), 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

// From 64 KiB a buffer is a mapping the kernel zeroes as it is touched:
// untouched pages are not resident (a cleared heap block would be), which
// is what keeps a 1024-server simulation's posted receives and store
// bookkeeping from costing a page fault each at set-up.
BOOST_AUTO_TEST_CASE(medium_buffers_are_page_aligned_and_cost_nothing_until_touched) {
  for (size_t bytes : {locus::AlignedBuffer::kMappedFrom, size_t{1} << 20, locus::AlignedBuffer::kHugePage - 1}) {
    locus::AlignedBuffer b(bytes);
    BOOST_REQUIRE(b.valid());
    BOOST_TEST(reinterpret_cast<uintptr_t>(b.data()) % 4096 == 0u);
    BOOST_TEST(resident_pages(b.data(), bytes) == 0u, bytes << " bytes");
    check_zero_and_writable(b);
  }
}

BOOST_AUTO_TEST_CASE(moves_hand_the_buffer_over) {
  locus::AlignedBuffer a(locus::AlignedBuffer::kHugePage + 1);
  std::byte* p = a.data();
  p[7] = std::byte{7};
  locus::AlignedBuffer b(std::move(a));
  BOOST_TEST(!a.valid());
  BOOST_TEST(b.data() == p);
  locus::AlignedBuffer c(64);
  c = std::move(b);  // frees c's own buffer, takes b's mapping
  BOOST_TEST(!b.valid());
  BOOST_TEST(c.data() == p);
  BOOST_TEST(static_cast<int>(c.data()[7]) == 7);
  BOOST_TEST(c.size() == locus::AlignedBuffer::kHugePage + 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(zeroed_array)

BOOST_AUTO_TEST_CASE(starts_zero_and_grows_keeping_its_elements) {
  locus::ZeroedArray<uint32_t> a(1000);
  BOOST_REQUIRE_EQUAL(a.size(), 1000u);
  for (size_t i = 0; i < a.size(); ++i) BOOST_REQUIRE_EQUAL(a[i], 0u);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint32_t>(i + 1);
  BOOST_REQUIRE(a.grow(100'000));
  BOOST_REQUIRE_EQUAL(a.size(), 100'000u);
  for (size_t i = 0; i < 1000; ++i) BOOST_REQUIRE_EQUAL(a[i], i + 1);
  for (size_t i = 1000; i < a.size(); ++i) BOOST_REQUIRE_EQUAL(a[i], 0u);
  BOOST_REQUIRE(a.grow(10));  // never shrinks
  BOOST_TEST(a.size() == 100'000u);
  BOOST_TEST(!a.grow(std::numeric_limits<size_t>::max()));  // refused, unchanged
  BOOST_TEST(a.size() == 100'000u);
  BOOST_TEST(a[999] == 1000u);
}

BOOST_AUTO_TEST_CASE(untouched_elements_cost_no_memory) {
  constexpr size_t kCount = size_t{1} << 17;  // 1 MiB: below the huge pages' size
  locus::ZeroedArray<uint64_t> a(kCount);
  a[0] = 1;
  a[kCount - 1] = 2;
  BOOST_TEST(aligned_buffer::resident_pages(&a[0], kCount * sizeof(uint64_t)) == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
