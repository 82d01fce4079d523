// The loopback NIC's copies (core/common/dma_copy.h): dma_read returns
// every cache line as it was at one instant even when the line is
// rewritten between the word loads of a copy, which is what Catfish's
// per-line versions need from a NIC; and both copies move exactly the
// bytes asked for at any alignment.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "core/common/dma_copy.h"

namespace locus {
namespace {

constexpr uint32_t kDataWords = 7;  // then the line's version, as Catfish lays a line out

struct alignas(64) VersionedLine {
  uint64_t data[kDataWords] = {};
  uint64_t version = 0;

  // A writer's versioned write: odd, every data word, even.
  void write(uint64_t value) {
    version += 1;
    for (uint64_t& w : data) w = value;
    version += 1;
  }
};
static_assert(sizeof(VersionedLine) == kDmaLineBytes);

// Rewrites the line once, right after the first word of the first load:
// the first load then holds word 0 from before the write and the rest,
// version included, from after it.
struct RewriteOnce {
  VersionedLine* line;
  uint64_t value;
  uint32_t loads = 0;
  bool done = false;

  static void hook(void* ctx, uint64_t offset, uint32_t load) {
    auto* self = static_cast<RewriteOnce*>(ctx);
    self->loads = std::max(self->loads, load + 1);
    if (!self->done && load == 0 && offset == 0) {
      self->line->write(self->value);
      self->done = true;
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(dma_copy_suite)

BOOST_AUTO_TEST_CASE(a_line_rewritten_during_a_read_is_copied_as_one_write) {
  VersionedLine line;
  line.write(7);
  RewriteOnce rewrite{&line, 8};
  VersionedLine copy;
  dma_read(reinterpret_cast<std::byte*>(&copy), reinterpret_cast<const std::byte*>(&line), sizeof line,
           &RewriteOnce::hook, &rewrite);
  BOOST_REQUIRE(rewrite.done);
  BOOST_TEST(rewrite.loads == 3u);  // mixed, then the new line twice
  BOOST_TEST(copy.version == 4u);
  for (uint32_t w = 0; w < kDataWords; ++w) BOOST_TEST(copy.data[w] == 8u, "word " << w);
}

// Each line is settled on its own: a rewrite of one line costs that line a
// third load, not the others.
BOOST_AUTO_TEST_CASE(lines_are_settled_one_at_a_time) {
  std::array<VersionedLine, 4> lines;
  for (auto& l : lines) l.write(1);
  struct Ctx {
    VersionedLine* target;
    std::vector<uint32_t> loads_per_line = std::vector<uint32_t>(4, 0);
    bool done = false;
  } ctx{&lines[2]};
  auto hook = [](void* p, uint64_t offset, uint32_t load) {
    auto* c = static_cast<Ctx*>(p);
    uint32_t& n = c->loads_per_line[offset / kDmaLineBytes];
    n = std::max(n, load + 1);
    if (!c->done && offset == 2 * kDmaLineBytes + 8 && load == 0) {
      c->target->write(2);
      c->done = true;
    }
  };
  std::array<VersionedLine, 4> copy;
  dma_read(reinterpret_cast<std::byte*>(copy.data()), reinterpret_cast<const std::byte*>(lines.data()),
           sizeof lines, hook, &ctx);
  BOOST_TEST(ctx.loads_per_line == (std::vector<uint32_t>{2, 2, 3, 2}), boost::test_tools::per_element());
  for (uint32_t l = 0; l < lines.size(); ++l) {
    const uint64_t want = l == 2 ? 2 : 1;
    BOOST_TEST(copy[l].version == 2 * want, "line " << l);
    for (uint32_t w = 0; w < kDataWords; ++w) BOOST_TEST(copy[l].data[w] == want, "line " << l << " word " << w);
  }
}

// Any offset and length, lines cut wherever the source's 64-byte
// boundaries fall: the bytes copied are exactly the source's.
BOOST_AUTO_TEST_CASE(copies_are_exact_at_any_alignment) {
  std::mt19937_64 rng(5);
  alignas(64) std::array<std::byte, 512> src;
  for (auto& b : src) b = static_cast<std::byte>(rng());
  for (uint32_t off = 0; off < 80; ++off) {
    for (uint32_t len : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, 127u, 200u, 400u}) {
      std::array<std::byte, 512> a{}, b{};
      dma_read(a.data() + 3, src.data() + off, len);
      dma_copy(b.data() + 3, src.data() + off, len);
      BOOST_TEST(std::memcmp(a.data() + 3, src.data() + off, len) == 0, "dma_read off " << off << " len " << len);
      BOOST_TEST(std::memcmp(b.data() + 3, src.data() + off, len) == 0, "dma_copy off " << off << " len " << len);
      BOOST_TEST(std::to_integer<int>(a[3 + len]) == 0);  // nothing past the end
      BOOST_TEST(std::to_integer<int>(b[3 + len]) == 0);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
